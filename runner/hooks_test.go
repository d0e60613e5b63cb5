package runner_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	"github.com/batonwf/baton/store"
)

// hookLog records the calls of hooks, in order, as text.
type hookLog struct {
	mu    sync.Mutex
	calls []string
}

func (l *hookLog) add(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, s)
}

func (l *hookLog) take() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := strings.Join(l.calls, "; ")
	l.calls = nil
	return s
}

func (l *hookLog) hooks() *runner.Hooks {
	ids := func(acts []job.Action) string {
		var s []string
		for _, a := range acts {
			s = append(s, a.ID)
		}
		return strings.Join(s, ",")
	}
	return &runner.Hooks{
		Committed: func(tr job.Transition, took time.Duration) {
			if took < 0 {
				l.add("negative took")
			}
			l.add(fmt.Sprintf("committed v%d results %d", tr.Job.Version(), len(tr.Step.Results)))
		},
		Dispatched:     func(acts []job.Action) { l.add("dispatched " + ids(acts)) },
		Step:           func(j job.Job, n int) { l.add("step") },
		ActionPanicked: func(a job.Action) { l.add("panicked " + a.ID) },
		ActionFinished: func(a job.Action, r job.Result, _ time.Duration) { l.add("finished " + a.ID) },
	}
}

// TestHooksCommittedDispatched: the engine tells Committed (with the
// version, 1 for a creation) and Dispatched for every commit, before
// Step, and Dispatched again for what a redelivery or Recover dispatches
// again; not for a commit whose dispatch failed.
func TestHooksCommittedDispatched(t *testing.T) {
	ctx := context.Background()
	st := store.NewMemory()
	d := &failingDispatch{}
	var l hookLog
	var counts runner.Counters
	eng, err := runner.NewEngine(runner.EngineOptions[struct{}]{Store: st, Transport: runner.SaveThenDispatch(st, d), Hooks: counts.Hooks(l.hooks())})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := eng.Submit(ctx, "j", ast.Seq(ast.Act("log", "a"), ast.Par(ast.Act("log", "b"), ast.Act("log", "c"))))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := l.take(), "committed v1 results 0; dispatched seq[0]#1; step"; got != want {
		t.Errorf("Submit: hooks %q, want %q", got, want)
	}
	d.fails = 1
	res := tr.Actions[0].Succeed(nil)
	if _, err := eng.Apply(ctx, "j", []job.Result{res}); err == nil {
		t.Fatal("Apply with a failing dispatch succeeded")
	}
	if got, want := l.take(), "committed v2 results 1; step"; got != want {
		t.Errorf("Apply, dispatch failed: hooks %q, want %q", got, want)
	}
	if _, err := eng.Apply(ctx, "j", []job.Result{res}); err != nil {
		t.Fatal(err)
	}
	if got, want := l.take(), "dispatched seq[1].par[0]#1,seq[1].par[1]#1"; got != want {
		t.Errorf("redelivery: hooks %q, want %q", got, want)
	}
	if _, err := eng.Recover(ctx, "j"); err != nil {
		t.Fatal(err)
	}
	if got, want := l.take(), "dispatched seq[1].par[0]#1,seq[1].par[1]#1"; got != want {
		t.Errorf("Recover: hooks %q, want %q", got, want)
	}
}

// TestHooksActionPanicked: a panicking handler is told to ActionPanicked,
// then to ActionFinished with its failure; a failing one only to
// ActionFinished.
func TestHooksActionPanicked(t *testing.T) {
	reg := runner.NewRegistry()
	_ = reg.Register("panic", func(context.Context, job.Action) ([]byte, error) { panic("boom") })
	_ = reg.Register("fail", func(context.Context, job.Action) ([]byte, error) { return nil, context.Canceled })
	var l hookLog
	var counts runner.Counters
	h := counts.Hooks(l.hooks())
	for _, name := range []string{"panic", "fail"} {
		r, err := runner.Execute(context.Background(), reg, act(name, ""), runner.ExecOptions{Hooks: h})
		if err != nil || !r.Failed() {
			t.Fatalf("%s: %v, %v", name, r, err)
		}
	}
	if got, want := l.take(), "panicked root#1; finished root#1; finished root#1"; got != want {
		t.Errorf("hooks %q, want %q", got, want)
	}
}
