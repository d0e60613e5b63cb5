package runner_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	"github.com/batonwf/baton/store"
)

// stopper is a Dispatcher that can stop actions: it records what it was
// told to stop.
type stopper struct {
	collect
	smu     sync.Mutex
	stopped []string
}

func (s *stopper) Stop(_ context.Context, acts []job.Action) {
	s.smu.Lock()
	defer s.smu.Unlock()
	for _, a := range acts {
		s.stopped = append(s.stopped, a.ID)
	}
}

// TestEngineCancel: Engine.Cancel saves the cancel and, through
// SaveThenDispatch, tells a Dispatcher that is a Stopper which actions to
// stop; the finally block it leaves is dispatched. A second cancel
// changes nothing, also once the job has ended cancelled; a job that
// finished otherwise, a missing job and an empty reason are errors.
func TestEngineCancel(t *testing.T) {
	ctx := context.Background()
	st := store.NewMemory()
	d := &stopper{}
	eng, err := runner.NewEngine(runner.EngineOptions[struct{}]{Store: st, Transport: runner.SaveThenDispatch(st, d)})
	if err != nil {
		t.Fatal(err)
	}
	root := ast.Par(ast.Act("a", nil), ast.Try(ast.Act("b", nil), ast.Finally(ast.Act("f", nil))))
	if _, err := eng.Submit(ctx, "c", root); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Cancel(ctx, "c", ""); err == nil {
		t.Error("a cancel without a reason was accepted")
	}
	tr, err := eng.Cancel(ctx, "c", "enough")
	if err != nil {
		t.Fatal(err)
	}
	if d.stopped == nil || len(d.stopped) != 2 || d.stopped[0] != "par[0]#1" || d.stopped[1] != "par[1].body#1" {
		t.Errorf("stopped %v, want par[0]#1 and par[1].body#1", d.stopped)
	}
	if len(tr.Actions) != 1 || tr.Actions[0].ID != "par[1].finally#1" {
		t.Fatalf("actions after the cancel %v, want the finally", tr.Actions)
	}
	stored, err := st.Load(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	if why, ok := stored.Cancelled(); !ok || why != "enough" || stored.Done() {
		t.Errorf("stored job: cancelled %q %v, done %v", why, ok, stored.Done())
	}
	again, err := eng.Cancel(ctx, "c", "twice")
	if err != nil || again.Changed() {
		t.Errorf("second cancel: changed %v, err %v", again.Changed(), err)
	}
	done, err := eng.Apply(ctx, "c", []job.Result{tr.Actions[0].Succeed(nil)})
	if err != nil || done.Job.Status() != job.StatusCancelled {
		t.Fatalf("after the finally: %s, %v", done.Job.Status(), err)
	}
	if late, err := eng.Cancel(ctx, "c", "late"); err != nil || late.Changed() {
		t.Errorf("cancel of a job that ended cancelled: changed %v, err %v; want nothing, no error", late.Changed(), err)
	}
	if _, err := eng.Submit(ctx, "s", ast.Act("a", nil)); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Apply(ctx, "s", []job.Result{{JobID: "s", ActionID: "root#1"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Cancel(ctx, "s", "late"); !errors.Is(err, runner.ErrFinished) {
		t.Errorf("cancel of a job that succeeded: %v, want ErrFinished", err)
	}
	if _, err := eng.Cancel(ctx, "nosuch", "x"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("cancel of a missing job: %v, want ErrNotFound", err)
	}
}
