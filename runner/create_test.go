package runner_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	"github.com/batonwf/baton/store"
)

// TestEngineCreate: Create commits a transition job.New made elsewhere
// (its incarnation and start kept), after the same handler check as
// Submit, and refuses a transition that makes no new job.
func TestEngineCreate(t *testing.T) {
	ctx := context.Background()
	st := store.NewMemory()
	d := &collect{}
	reg := runner.NewRegistry()
	_ = reg.Register("log", func(context.Context, job.Action) ([]byte, error) { return nil, nil })
	var counts runner.Counters
	eng, err := runner.NewEngine(runner.EngineOptions[struct{}]{Store: st, Transport: runner.SaveThenDispatch(st, d), Registry: reg, Hooks: counts.Hooks(nil)})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	typo, err := job.New("typo", ast.Act("lgo", nil), job.WithIncarnation(7), job.StartedAt(t0))
	if err != nil {
		t.Fatal(err)
	}
	_, err = eng.Create(ctx, typo)
	_, serr := eng.Submit(ctx, "typo", ast.Act("lgo", nil))
	if !errors.Is(err, runner.ErrUnknownActions) || err.Error() != serr.Error() {
		t.Fatalf("Create with an unknown action: %v; want Submit's error %v", err, serr)
	}
	if _, err := st.Load(ctx, "typo"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a refused Create stored the job: %v", err)
	}

	tr, err := job.New("j", ast.Seq(ast.Act("log", "a"), ast.Act("log", "b")), job.WithIncarnation(7), job.StartedAt(t0))
	if err != nil {
		t.Fatal(err)
	}
	got, err := eng.Create(ctx, tr)
	if err != nil {
		t.Fatal(err)
	}
	j, err := st.Load(ctx, "j")
	if err != nil || j.Incarnation() != 7 || got.Job.Incarnation() != 7 {
		t.Fatalf("stored %v (%v), want incarnation 7", j, err)
	}
	if len(d.acts) != 1 || d.acts[0].ID != "seq[0]#1" || d.acts[0].Incarnation != 7 {
		t.Fatalf("dispatched %v", d.acts)
	}
	if c := counts.Snapshot(); c.Steps != 1 {
		t.Errorf("hooks saw %d steps, want the creation's 1", c.Steps)
	}
	if _, err := eng.Create(ctx, tr); !errors.Is(err, store.ErrExists) {
		t.Errorf("Create of a job made again: %v, want store.ErrExists", err)
	}

	next, err := job.Restart(j, []job.Result{d.acts[0].Succeed(nil)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Create(ctx, next); err == nil || !strings.Contains(err.Error(), "not a new job") {
		t.Errorf("Create of a step: %v, want it refused", err)
	}
	if j, _ := st.Load(ctx, "j"); j.Version() != 1 {
		t.Errorf("a refused Create saved the step: v%d", j.Version())
	}
}
