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

// These tests guard the cost of the runner's paths by counting store
// operations, not time: a Wait, a Submit or a transition of one job reads
// that job alone, the same number of times whether the store holds ten
// other jobs or a thousand. (A listing reads every job it passes over, so
// none of these paths may list.)

// fillStore creates n jobs of one action each, other-0 to other-<n-1>,
// half of them finished.
func fillStore(t *testing.T, st store.Store, n int) {
	t.Helper()
	ctx := context.Background()
	for i := range n {
		tr, err := job.New(job.ID(fmt.Sprintf("other-%d", i)), ast.Act("x", nil), job.WithIncarnation(uint64(i+1)))
		if err != nil {
			t.Fatal(err)
		}
		if err := store.Commit(ctx, st, tr); err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			a := tr.Actions[0]
			tr, err = job.Restart(tr.Job, []job.Result{{JobID: a.JobID, ActionID: a.ID, At: time.Unix(1, 0)}})
			if err != nil {
				t.Fatal(err)
			}
			if err := store.Commit(ctx, st, tr); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// stores are the stores the guards run on: memory, and bolt (NoSync: the
// counts are the point, not the fsyncs).
func stores(t *testing.T) map[string]func() store.Store {
	return map[string]func() store.Store{
		"memory": func() store.Store { return store.NewMemory() },
		"bolt": func() store.Store {
			st, err := bolt.Open(filepath.Join(t.TempDir(), fmt.Sprintf("baton-%d.db", time.Now().UnixNano())), &bolt.Options{NoSync: true})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return st
		},
	}
}

// TestWaitPollReadsOneJob: a Wait for a job that another process finishes
// (here the test, writing to the store) polls the store for that job
// alone: one read of it per poll, and a load at the start and at the end,
// never a listing, whatever else the store holds.
func TestWaitPollReadsOneJob(t *testing.T) {
	const polls = 3
	for name, open := range stores(t) {
		for _, others := range []int{10, 1000} {
			t.Run(fmt.Sprintf("%s/%d", name, others), func(t *testing.T) {
				ctx := testCtx(t)
				st := storetest.NewCounting(open())
				fillStore(t, st, others)
				const id = job.ID("waited")
				tr, err := job.New(id, ast.Act("x", nil), job.WithIncarnation(1<<40))
				if err != nil {
					t.Fatal(err)
				}
				if err := st.Create(ctx, tr.Job); err != nil {
					t.Fatal(err)
				}
				r, err := inmem.New(inmem.Options{WorkerOptions: runner.WorkerOptions{Registry: runner.NewRegistry()}, Store: st, NoResume: true})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { r.Close() })

				before, beforeID := st.Counts(), st.CountsOf(id)
				type waited struct {
					j   job.Job
					err error
				}
				done := make(chan waited, 1)
				go func() {
					j, err := r.Wait(ctx, id)
					done <- waited{j, err}
				}()
				// Let the Wait poll a few times (it polls every 50 ms at
				// first) before the job finishes.
				for st.Counts().Sub(before).Reads() < 1+polls {
					select {
					case w := <-done:
						t.Fatalf("Wait returned before the job finished: %v, %v", w.j, w.err)
					case <-ctx.Done():
						t.Fatalf("the Wait made %v in all before the test's deadline", st.Counts().Sub(before))
					case <-time.After(5 * time.Millisecond):
					}
				}
				a := tr.Actions[0]
				next, err := job.Restart(tr.Job, []job.Result{{JobID: id, ActionID: a.ID, At: time.Unix(2, 0)}})
				if err != nil {
					t.Fatal(err)
				}
				if err := store.Commit(ctx, st, next); err != nil {
					t.Fatal(err)
				}
				w := <-done
				if w.err != nil || !w.j.Done() {
					t.Fatalf("Wait = %v, %v; want the finished job", w.j, w.err)
				}
				all, mine := st.Counts().Sub(before), st.CountsOf(id).Sub(beforeID)
				mine.Save-- // the test's own
				all.Save--
				t.Logf("the Wait's store calls: %v", all)
				if all != mine {
					t.Errorf("the Wait made %v, of which only %v for job %s: it reads other jobs", all, mine, id)
				}
				if all.List != 0 {
					t.Errorf("the Wait listed the store %d times: a listing costs every job it passes over", all.List)
				}
				if all.Writes() != 0 {
					t.Errorf("the Wait wrote to the store: %v", all)
				}
				if all.Load > 2 {
					t.Errorf("the Wait loaded job %s %d times, want at most 2 (at the start and once it saw the job finished)", id, all.Load)
				}
				if all.Stat < polls-1 {
					t.Errorf("the Wait made %d reads that are not loads, want one per poll", all.Reads()-all.Load)
				}
			})
		}
	}
}

// TestTransitionsReadTheirJob: a job run by the runner, from Submit to
// Wait, costs a bounded number of store calls per step, all of them on
// that job: one Create, one Save per step, at most one Load per step and
// the Wait's, no listing. The same whether the store holds 10 other jobs
// or 1,000.
func TestTransitionsReadTheirJob(t *testing.T) {
	for name, open := range stores(t) {
		for _, others := range []int{10, 1000} {
			t.Run(fmt.Sprintf("%s/%d", name, others), func(t *testing.T) {
				ctx := testCtx(t)
				st := storetest.NewCounting(open())
				fillStore(t, st, others)
				reg := runner.NewRegistry()
				if err := reg.Register("x", func(context.Context, job.Action) ([]byte, error) { return nil, nil }); err != nil {
					t.Fatal(err)
				}
				var c runner.Counters
				r, _, _ := startRunner(t, inmem.Options{WorkerOptions: runner.WorkerOptions{Registry: reg, Hooks: c.Hooks(nil)}, Store: st, NoResume: true})
				const id = job.ID("run")
				wf := ast.Seq(ast.Par(ast.Act("x", nil), ast.Act("x", nil), ast.Act("x", nil)), ast.Act("x", nil), ast.Act("x", nil))
				before, beforeID := st.Counts(), st.CountsOf(id)
				steps0 := c.Snapshot().Steps
				if err := r.Submit(ctx, id, wf); err != nil {
					t.Fatal(err)
				}
				j, err := r.Wait(ctx, id)
				if err != nil || j.Status() != job.StatusSucceeded {
					t.Fatalf("Wait = %v, %v; want succeeded", j, err)
				}
				all, mine := st.Counts().Sub(before), st.CountsOf(id).Sub(beforeID)
				steps := int(c.Snapshot().Steps - steps0) // the creation included
				all.Sweep = 0                             // Run's, once: these stores keep every job
				t.Logf("%d steps; store calls: %v", steps, all)
				if all != mine {
					t.Errorf("running job %s made %v, of which only %v for it: it reads other jobs", id, all, mine)
				}
				if all.List != 0 || all.Delete != 0 || all.History != 0 {
					t.Errorf("running job %s listed, deleted or read a history: %v", id, all)
				}
				if all.Create != 1 || all.Save != steps-1 {
					t.Errorf("running job %s in %d steps made %d creates and %d saves, want 1 and %d", id, steps, all.Create, all.Save, steps-1)
				}
				// Each Apply loads the job at most once (none when the store's
				// cache holds it); the Wait loads it at the start and at the
				// end, and reads it once per poll.
				if all.Load > all.Save+2 || all.Reads()-all.Load > all.Stat {
					t.Errorf("running job %s in %d steps made %d loads and %d other reads, want at most %d loads and only Stats besides",
						id, steps, all.Load, all.Reads()-all.Load, all.Save+2)
				}
			})
		}
	}
}

// TestWaitOnOwnJobReadsNothing: a Wait for a job whose action this runner
// has in hand reads nothing while it waits (the runner wakes it), however
// long the action takes: a thousand jobs waited on while they run cost no
// polls, whose number would grow with the run's length.
func TestWaitOnOwnJobReadsNothing(t *testing.T) {
	ctx := testCtx(t)
	st := storetest.NewCounting(store.NewMemory())
	fillStore(t, st, 100)
	reg := runner.NewRegistry()
	entered, release := make(chan struct{}), make(chan struct{})
	if err := reg.Register("gate", func(context.Context, job.Action) ([]byte, error) {
		close(entered)
		<-release
		return nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	r, _, _ := startRunner(t, inmem.Options{WorkerOptions: runner.WorkerOptions{Registry: reg}, Store: st, NoResume: true})
	const id = job.ID("gated")
	if err := r.Submit(ctx, id, ast.Act("gate", nil)); err != nil {
		t.Fatal(err)
	}
	<-entered
	before := st.Counts()
	type waited struct {
		j   job.Job
		err error
	}
	done := make(chan waited, 1)
	go func() {
		j, err := r.Wait(ctx, id)
		done <- waited{j, err}
	}()
	for r.Waiting(id) == 0 {
		time.Sleep(time.Millisecond)
	}
	// Four times Wait's first poll interval: a Wait that polled would
	// have read the store three times by now.
	time.Sleep(400 * time.Millisecond)
	during := st.Counts().Sub(before)
	close(release)
	w := <-done
	if w.err != nil || w.j.Status() != job.StatusSucceeded {
		t.Fatalf("Wait = %v, %v; want succeeded", w.j, w.err)
	}
	all := st.Counts().Sub(before)
	t.Logf("store calls while the action ran: %v; in all: %v", during, all)
	if during.Reads() > 1 {
		t.Errorf("the Wait read the store %d times while this runner held the job's action (%v), want at most its first load", during.Reads(), during)
	}
	if all.Reads()-all.Load > 0 || all.Load > 3 {
		t.Errorf("the Wait and the job's one step made %v, want no polls and at most 3 loads", all)
	}
}

// TestResumeListsPages: Run resumes the store's unfinished jobs a page at
// a time (runner.RecoverAll, 1,000 jobs a page): 2,500 unfinished jobs
// among 5,000 cost three listings, never one of everything, and one load
// of each unfinished job.
func TestResumeListsPages(t *testing.T) {
	st := storetest.NewCounting(store.NewMemory())
	fillStore(t, st, 5000) // other-0 ... other-4999, the odd ones unfinished
	before := st.Counts()
	// No handler for x: each job is loaded and left as it is, which is
	// all this test needs of a recovery.
	startRunner(t, inmem.Options{WorkerOptions: runner.WorkerOptions{Registry: runner.NewRegistry()}, Store: st})
	// Run sweeps the store once its recovery is over.
	for st.Counts().Sweep == before.Sweep {
		if d, ok := t.Deadline(); ok && time.Until(d) < time.Second {
			t.Fatal("Run did not get past its recovery")
		}
		time.Sleep(time.Millisecond)
	}
	c := st.Counts().Sub(before)
	if c.List != 3 || c.Load != 2500 {
		t.Errorf("resuming 2,500 unfinished jobs of 5,000 made %v; want 3 listings and 2500 loads", c)
	}
}
