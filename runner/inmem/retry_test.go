package inmem_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	"github.com/batonwf/baton/runner/inmem"
	"github.com/batonwf/baton/store"
)

// TestKindsAndTimeouts: an attempt that overruns its leaf's timeout fails
// with kind timeout (retried), a handler's WithKind listed as
// non-retryable stops the retries, and Final stops them too.
func TestKindsAndTimeouts(t *testing.T) {
	reg := runner.NewRegistry()
	var slowCalls atomic.Int32
	must(t, reg.Register("slow", func(ctx context.Context, a job.Action) ([]byte, error) {
		if slowCalls.Add(1) == 1 {
			<-ctx.Done()
			return nil, ctx.Err()
		}
		return nil, nil
	}))
	must(t, reg.Register("decline", func(ctx context.Context, a job.Action) ([]byte, error) {
		return nil, runner.WithKind(errors.New("card declined"), "card_declined")
	}))
	must(t, reg.Register("broken", func(ctx context.Context, a job.Action) ([]byte, error) {
		return nil, runner.Final(errors.New("bad request"))
	}))
	r, _, _ := startRunner(t, inmem.Options{WorkerOptions: runner.WorkerOptions{Registry: reg}})
	ctx := testCtx(t)
	policy := ast.Retry{Attempts: 3, Initial: time.Millisecond, NonRetryable: []string{"card_declined"}}
	must(t, r.Submit(ctx, "slow", ast.Act("slow", nil).WithTimeout(20*time.Millisecond).WithRetry(policy)))
	must(t, r.Submit(ctx, "decline", ast.Act("decline", nil).WithRetry(policy)))
	must(t, r.Submit(ctx, "broken", ast.Act("broken", nil).WithRetry(policy)))
	j, err := r.Wait(ctx, "slow")
	must(t, err)
	if j.Status() != job.StatusSucceeded || slowCalls.Load() != 2 {
		t.Errorf("slow: %s after %d calls", j.Status(), slowCalls.Load())
	}
	for _, tc := range []struct {
		id, kind string
	}{{"decline", "card_declined"}, {"broken", ""}} {
		j, err := r.Wait(ctx, job.ID(tc.id))
		must(t, err)
		f, _ := j.Failure()
		if j.Status() != job.StatusFailed || f.Kind != tc.kind {
			t.Errorf("%s: %s, failure %+v", tc.id, j.Status(), f)
		}
		var attempts int
		j.Walk(func(n job.NodeInfo) bool { attempts = max(attempts, n.Attempt); return true })
		if attempts != 1 {
			t.Errorf("%s ran %d attempts, want 1: not retried", tc.id, attempts)
		}
	}
}

// TestAtMostOnceLost: an at-most-once action that a stopped runner left
// outstanding is not run again by the next one: it fails with kind lost,
// and its retry policy runs the next attempt.
func TestAtMostOnceLost(t *testing.T) {
	reg := runner.NewRegistry()
	started := make(chan struct{}, 1)
	var calls atomic.Int32
	must(t, reg.Register("pay", func(ctx context.Context, a job.Action) ([]byte, error) {
		if calls.Add(1) == 1 {
			started <- struct{}{}
			<-ctx.Done() // the runner stops under it
			return nil, ctx.Err()
		}
		return nil, nil
	}))
	st := store.NewMemory()
	r1, ran1, cancel1 := startRunner(t, inmem.Options{WorkerOptions: runner.WorkerOptions{Registry: reg, DrainTimeout: -1}, Store: st})
	ctx := testCtx(t)
	w := ast.Seq(ast.Act("pay", 1).AtMostOnce().WithRetry(ast.Retry{Attempts: 2, Initial: time.Millisecond}), ast.Act("pay", 2))
	must(t, r1.Submit(ctx, "p", w))
	<-started
	cancel1()
	must(t, <-ran1)

	r2, _, _ := startRunner(t, inmem.Options{WorkerOptions: runner.WorkerOptions{Registry: reg}, Store: st})
	j, err := r2.Wait(ctx, "p")
	must(t, err)
	h, err := store.LoadHistory(ctx, st, "p")
	must(t, err)
	if j.Status() != job.StatusSucceeded {
		for _, s := range h.Steps {
			t.Logf("v%d %+v", s.Version, s.Results)
		}
		t.Fatalf("%s\n%s", j.Status(), job.Describe(j))
	}
	first := h.Steps[0].Results[0]
	if first.ActionID != "seq[0]#1" || first.Kind != job.KindLost {
		t.Errorf("the first step applied %+v, want seq[0]#1 lost", first)
	}
	if n := calls.Load(); n != 3 {
		t.Errorf("pay ran %d times, want 3: attempt 1 (interrupted, lost, not rerun), attempt 2, then the next leaf", n)
	}
}
