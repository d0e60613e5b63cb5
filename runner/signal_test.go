package runner_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	"github.com/batonwf/baton/store"
)

// TestEngineDuplicateSignalDispatchesNothing: a signal sent again (its ID
// applied before) is ignored as a duplicate, and that says nothing about
// a lost dispatch: unlike a worker's result delivered again, it does not
// make the engine dispatch the job's outstanding actions again (on
// ZooKeeper a listing of the whole queue).
func TestEngineDuplicateSignalDispatchesNothing(t *testing.T) {
	ctx := context.Background()
	st := store.NewMemory()
	d := &collect{}
	eng, err := runner.NewEngine(runner.EngineOptions[struct{}]{Store: st, Transport: runner.SaveThenDispatch(st, d)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Submit(ctx, "j", ast.Par(ast.Act("log", "a"), ast.Wait("approval"), ast.Wait("approval"))); err != nil {
		t.Fatal(err)
	}
	if len(d.acts) != 1 {
		t.Fatalf("dispatched %v, want the log action", d.acts)
	}
	s, err := runner.NewSignal("j", "approval", "s1", []byte(`1`), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if tr, err := eng.Apply(ctx, "j", []job.Result{job.SignalResult("j", s)}); err != nil || !tr.Changed() {
		t.Fatalf("the signal: %+v, %v", tr.Step, err)
	}
	tr, err := eng.Apply(ctx, "j", []job.Result{job.SignalResult("j", s)})
	if err != nil || tr.Changed() || len(tr.Ignored) != 1 || tr.Ignored[0].Reason != job.IgnoredDuplicate {
		t.Fatalf("the signal again: %+v, ignored %+v, %v", tr.Step, tr.Ignored, err)
	}
	if len(d.acts) != 1 {
		t.Fatalf("a duplicate signal dispatched the outstanding actions again: %v", d.acts)
	}
	// A worker's result delivered again still does.
	if _, err := eng.Apply(ctx, "j", []job.Result{d.acts[0].Succeed(nil)}); err != nil {
		t.Fatal(err)
	}
}

// TestEngineCancelNode: Engine.CancelNode refuses a bad name, an empty
// reason, a missing job (store.ErrNotFound) and a finished one
// (runner.ErrFinished), and cancels a running node.
func TestEngineCancelNode(t *testing.T) {
	ctx := context.Background()
	st := store.NewMemory()
	d := &collect{}
	eng, err := runner.NewEngine(runner.EngineOptions[struct{}]{Store: st, Transport: runner.SaveThenDispatch(st, d)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Submit(ctx, "j", ast.Try(ast.Wait("approval").Named("ask"), ast.Rescue(ast.Act("log", "rescued")))); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		id, name, reason string
		is               error
	}{
		{"j", "no good", "r", nil},
		{"j", "ask", "", nil},
		{"nope", "ask", "r", store.ErrNotFound},
	} {
		_, err := eng.CancelNode(ctx, job.ID(c.id), c.name, c.reason)
		if err == nil || (c.is != nil && !errors.Is(err, c.is)) {
			t.Errorf("CancelNode(%q, %q, %q): %v, want an error (%v)", c.id, c.name, c.reason, err, c.is)
		}
	}
	tr, err := eng.CancelNode(ctx, "j", "ask", "no answer")
	if err != nil || !tr.Changed() || len(d.acts) != 1 || d.acts[0].Name != "log" {
		t.Fatalf("CancelNode: %+v, %v, dispatched %v (want the rescue)", tr.Step, err, d.acts)
	}
	if _, err := eng.Apply(ctx, "j", []job.Result{d.acts[0].Succeed(nil)}); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.CancelNode(ctx, "j", "ask", "again"); !errors.Is(err, runner.ErrFinished) {
		t.Errorf("CancelNode of a finished job: %v, want runner.ErrFinished", err)
	}
}
