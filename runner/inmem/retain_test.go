package inmem_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	"github.com/batonwf/baton/runner/inmem"
	"github.com/batonwf/baton/store"
	"github.com/batonwf/baton/store/bolt"
	"github.com/batonwf/baton/store/storetest"
)

// TestRunSweepsRetention: a runner on a store with a retention sweeps it:
// the settled jobs older than the retention go, the others stay, and the
// sweeps are not made per transition.
func TestRunSweepsRetention(t *testing.T) {
	ctx := testCtx(t)
	// The store's clock is a day ahead: every job settled before the test
	// is past an hour's retention; none that the runner finishes is.
	ahead := func() time.Time { return time.Now().Add(24 * time.Hour) }
	st, err := bolt.Open(filepath.Join(t.TempDir(), "baton.db"), &bolt.Options{NoSync: true, Retention: time.Hour, Now: ahead})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	cst := storetest.NewCounting(st)
	past := time.Now()
	for i := range 10 {
		id := job.ID(fmt.Sprintf("old-%d", i))
		tr, err := job.New(id, ast.Act("x", nil), job.StartedAt(past))
		if err != nil {
			t.Fatal(err)
		}
		if err := store.Commit(ctx, st, tr); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			continue // still running: kept
		}
		next, err := job.Restart(tr.Job, []job.Result{{JobID: id, ActionID: tr.Actions[0].ID, At: past}})
		if err != nil {
			t.Fatal(err)
		}
		if err := store.Commit(ctx, st, next); err != nil {
			t.Fatal(err)
		}
	}
	reg := runner.NewRegistry()
	if err := reg.Register("x", func(context.Context, job.Action) ([]byte, error) { return nil, nil }); err != nil {
		t.Fatal(err)
	}
	r, _, _ := startRunner(t, inmem.Options{WorkerOptions: runner.WorkerOptions{Registry: reg}, Store: cst, NoResume: true})
	for {
		infos, err := st.List(ctx, store.Query{})
		if err != nil {
			t.Fatal(err)
		}
		if len(infos) == 1 {
			if infos[0].ID != "old-0" {
				t.Fatalf("the sweep left %v, want the running job old-0", infos)
			}
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the runner did not sweep the settled jobs: the store holds %d", len(infos))
		case <-time.After(10 * time.Millisecond):
		}
	}

	// A job of 40 steps, run now: kept, and not swept step by step.
	before := cst.Counts().Sweep
	acts := make([]ast.Node, 40)
	for i := range acts {
		acts[i] = ast.Act("x", nil)
	}
	if err := r.Submit(ctx, "new", ast.Seq(acts...)); err != nil {
		t.Fatal(err)
	}
	if j, err := r.Wait(ctx, "new"); err != nil || j.Status() != job.StatusSucceeded {
		t.Fatalf("Wait = %v, %v", j, err)
	}
	if n := cst.Counts().Sweep - before; n > 10 {
		t.Errorf("%d sweeps while a job made 40 steps: the runner sweeps per transition", n)
	}
	if _, err := st.Load(ctx, "new"); err != nil {
		t.Errorf("the job just finished: %v, want it kept", err)
	}
}
