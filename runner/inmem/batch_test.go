package inmem_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	"github.com/batonwf/baton/runner/inmem"
	"github.com/batonwf/baton/store"
)

// Results handed in together are applied in batches of at most MaxBatch,
// in Restarts of their own, and every step saved keeps the results it
// applied: the runner reuses its arrays of pending results, never one that
// a saved step still holds. Then, the same results again change nothing.
func TestBatchesOfPendingResults(t *testing.T) {
	ctx := context.Background()
	st := store.NewMemory()
	reg := runner.NewRegistry()
	must(t, reg.Register("task", func(context.Context, job.Action) ([]byte, error) { return nil, nil }))
	// Not run: the actions wait in the queue, and their results come in
	// through Deliver, all at once.
	r, err := inmem.New(inmem.Options{WorkerOptions: runner.WorkerOptions{Registry: reg}, Store: st, MaxBatch: 3, NoResume: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for round := range 3 { // later rounds reuse the drained entries
		id := job.ID(fmt.Sprintf("j%d", round))
		kids := make([]ast.Node, 20)
		for i := range kids {
			kids[i] = ast.Act("task", nil)
		}
		must(t, r.Submit(ctx, id, ast.Par(kids...)))
		j, err := r.Status(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		var results []job.Result
		var want []string
		for _, a := range j.Outstanding() {
			results = append(results, a.Succeed([]byte(fmt.Sprintf(`"%s"`, a.ID))))
			want = append(want, a.ID)
		}
		must(t, r.Deliver(ctx, results...))
		must(t, r.Deliver(ctx, results...))
		if j, err = r.Status(ctx, id); err != nil || j.Status() != job.StatusSucceeded || j.Version() != 1+7 {
			t.Fatalf("%s: %v at v%d (%v), want succeeded at v8 (20 results, 3 a step)", id, j.Status(), j.Version(), err)
		}
		h, err := st.History(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, s := range h.Steps {
			if len(s.Results) == 0 || len(s.Results) > 3 {
				t.Errorf("%s: step v%d applied %d results, want 1 to 3", id, s.Version, len(s.Results))
			}
			for _, res := range s.Results {
				if string(res.Output) != fmt.Sprintf(`"%s"`, res.ActionID) || res.JobID != id {
					t.Errorf("%s: step v%d holds %+v", id, s.Version, res)
				}
				got = append(got, res.ActionID)
			}
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s: the steps applied %q, want %q", id, got, want)
		}
	}
}

// Wait for a job that has finished reads it and returns: it arms no timer
// (it makes one only when it has to look at the store again), so it costs
// its waiter's channel and entry, and nothing more.
func TestWaitFinishedAllocations(t *testing.T) {
	ctx := context.Background()
	reg := runner.NewRegistry()
	must(t, reg.Register("task", func(context.Context, job.Action) ([]byte, error) { return nil, nil }))
	r, err := inmem.New(inmem.Options{WorkerOptions: runner.WorkerOptions{Registry: reg}, NoResume: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	must(t, r.Submit(ctx, "j", ast.Act("task", nil)))
	j, err := r.Status(ctx, "j")
	if err != nil {
		t.Fatal(err)
	}
	must(t, r.Deliver(ctx, j.Outstanding()[0].Succeed(nil)))
	n := testing.AllocsPerRun(50, func() {
		if j, err := r.Wait(ctx, "j"); err != nil || !j.Done() {
			t.Fatalf("Wait = %v, %v", j.Status(), err)
		}
	})
	if n > 2 {
		t.Errorf("Wait for a finished job: %v allocations, want at most 2 (its channel, its entry)", n)
	}
}
