package servertest

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
)

// Actions returns the registry of the actions the suite's workflows use:
//
//	ok     succeeds with its payload as output
//	fail   fails with "boom"
//	block  runs until its context ends (a cancel, a shutdown)
//	big    succeeds with 300 bytes of output (clipped in node lists)
//	gate   succeeds once the test lets one through (Env.release), or ends with its context
func Actions() *runner.Registry {
	return newActions().reg
}

// actions is the registry of Actions and what its handlers saw.
type actions struct {
	reg *runner.Registry
	// started counts the block actions that started, stopped those whose
	// context ended.
	started, stopped atomic.Int64
	// gate lets one gate action through per send.
	gate chan struct{}
}

func newActions() *actions {
	acts := &actions{reg: runner.NewRegistry(), gate: make(chan struct{})}
	reg := acts.reg
	must := func(err error) {
		if err != nil {
			panic(err)
		}
	}
	must(reg.Register("ok", func(_ context.Context, a job.Action) ([]byte, error) { return a.Payload, nil }))
	must(reg.Register("fail", func(context.Context, job.Action) ([]byte, error) { return nil, errors.New("boom") }))
	must(reg.Register("block", func(ctx context.Context, _ job.Action) ([]byte, error) {
		acts.started.Add(1)
		<-ctx.Done()
		acts.stopped.Add(1)
		return nil, context.Cause(ctx)
	}))
	must(reg.Register("big", func(context.Context, job.Action) ([]byte, error) {
		return []byte(`"` + strings.Repeat("x", 298) + `"`), nil
	}))
	must(reg.Register("gate", func(ctx context.Context, a job.Action) ([]byte, error) {
		select {
		case <-acts.gate:
			return a.Payload, nil
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	}))
	return acts
}
