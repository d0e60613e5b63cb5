package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/store"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// LongRunLeaves is the size of the par that the long-run subtests finish one
// result per Save.
const LongRunLeaves = 2000

// Run runs the conformance suite against the stores newStore makes, one
// fresh, empty store per subtest. Run closes every store it gets.
func Run(t *testing.T, newStore func(t *testing.T) store.Store) {
	open := func(t *testing.T) store.Store {
		t.Helper()
		s := newStore(t)
		if s == nil {
			t.Fatal("newStore returned nil")
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
	tests := []struct {
		name string
		f    func(t *testing.T, s store.Store)
	}{
		{"CreateLoad", testCreateLoad},
		{"CreateErrors", testCreateErrors},
		{"SaveSteps", testSaveSteps},
		{"SaveFromLoad", testSaveFromLoad},
		{"Conflict", testConflict},
		{"ConcurrentSavers", testConcurrentSavers},
		{"NoStep", testNoStep},
		{"NotFound", testNotFound},
		{"History", testHistory},
		{"List", testList},
		{"Delete", testDelete},
		{"Closed", testClosed},
		{"CancelledContext", testCancelled},
		{"LongRun", testLongRun},
		{"ConcurrentJobs", testConcurrentJobs},
		{"ConcurrentRunners", testConcurrentRunners},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.f(t, open(t)) })
	}
}

func mustCreate(t *testing.T, s store.Store, j job.Job) {
	t.Helper()
	if err := s.Create(context.Background(), j); err != nil {
		t.Fatalf("Create(%s): %v", j.ID(), err)
	}
}

func mustSave(t *testing.T, s store.Store, j job.Job) {
	t.Helper()
	if err := s.Save(context.Background(), j); err != nil {
		t.Fatalf("Save(%s v%d): %v", j.ID(), j.Version(), err)
	}
}

func mustLoad(t *testing.T, s store.Store, id job.ID) job.Job {
	t.Helper()
	j, err := s.Load(context.Background(), id)
	if err != nil {
		t.Fatalf("Load(%s): %v", id, err)
	}
	return j
}

// checkLoad fails the test unless Load returns live, byte for byte.
func checkLoad(t *testing.T, s store.Store, live job.Job) {
	t.Helper()
	got := mustLoad(t, s, live.ID())
	if got.Version() != live.Version() {
		t.Fatalf("Load(%s) returned version %d, want %d", live.ID(), got.Version(), live.Version())
	}
	sameJob(t, fmt.Sprintf("Load(%s)", live.ID()), live, got)
}

func wantErr(t *testing.T, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("%s: got error %v, want one wrapping %q", what, err, target)
	}
}

func testCreateLoad(t *testing.T, s store.Store) {
	d := newDriver(t, "create-load", mixed())
	mustCreate(t, s, d.j)
	checkLoad(t, s, d.j)
}

func testCreateErrors(t *testing.T, s store.Store) {
	ctx := context.Background()
	d := newDriver(t, "twice", mixed())
	mustCreate(t, s, d.j)
	wantErr(t, "second Create", s.Create(ctx, d.j), store.ErrExists)
	other := newDriver(t, "twice", parOf(3))
	wantErr(t, "Create of another job with a taken ID", s.Create(ctx, other.j), store.ErrExists)
	checkLoad(t, s, d.j)

	late := newDriver(t, "late", mixed())
	late.succeed(1)
	if err := s.Create(ctx, late.j); err == nil {
		t.Fatalf("Create of a job at version %d succeeded; only version 1 may be created", late.j.Version())
	}
	wantErr(t, "Load after a refused Create", loadErr(s, "late"), store.ErrNotFound)
	if err := s.Create(ctx, job.Job{}); err == nil {
		t.Fatal("Create of a zero Job succeeded")
	}
}

func loadErr(s store.Store, id job.ID) error {
	_, err := s.Load(context.Background(), id)
	return err
}

// testSaveSteps saves every version of a job that goes through a failure
// and a rescue, checking Load after each.
func testSaveSteps(t *testing.T, s store.Store) {
	d := newDriver(t, "steps", mixed())
	mustCreate(t, s, d.j)
	d.succeed(1)      // a
	d.succeed(2)      // b, c
	d.succeed(1)      // d; charge starts
	d.fail("no")      // charge fails; refund starts
	d.succeed(1)      // refund; release starts
	d.succeed(1)      // release; e starts
	j := d.succeed(1) // e
	if j.Status() != job.StatusSucceeded {
		t.Fatalf("the driven job did not succeed:\n%s", job.Describe(j))
	}
	for _, v := range d.versions[1:] {
		mustSave(t, s, v)
		checkLoad(t, s, v)
	}
}

// testSaveFromLoad drives a job the way a runner does: each step is a
// Restart of the job just loaded.
func testSaveFromLoad(t *testing.T, s store.Store) {
	d := newDriver(t, "from-load", parOf(6))
	mustCreate(t, s, d.j)
	for !d.j.Done() {
		loaded := mustLoad(t, s, d.j.ID())
		rs := []job.Result{d.pending[0].Succeed(output(d.pending[0]))}
		next, _, err := job.Restart(loaded, rs)
		if err != nil {
			t.Fatalf("Restart of the loaded job: %v", err)
		}
		live := d.apply(1, rs)
		sameJob(t, "Restart of the loaded job", live, next)
		mustSave(t, s, next)
		checkLoad(t, s, live)
	}
}

func testConflict(t *testing.T, s store.Store) {
	ctx := context.Background()
	d := newDriver(t, "conflict", parOf(4))
	mustCreate(t, s, d.j)
	v1 := d.j
	a := d.succeed(1)
	mustSave(t, s, a)

	b, _, err := job.Restart(v1, []job.Result{d.pending[0].Succeed(nil)})
	if err != nil {
		t.Fatal(err)
	}
	wantErr(t, "Save of a second version 2", s.Save(ctx, b), store.ErrConflict)
	checkLoad(t, s, a)

	d.succeed(1)
	c := d.succeed(1) // version 4: version 3 was never saved
	wantErr(t, "Save of version 4 over version 2", s.Save(ctx, c), store.ErrConflict)
	checkLoad(t, s, a)
	h, err := s.History(ctx, "conflict")
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Steps) != 1 {
		t.Fatalf("History after refused saves has %d steps, want 1", len(h.Steps))
	}
}

func testConcurrentSavers(t *testing.T, s store.Store) {
	const n = 8
	for round := range 3 {
		id := job.ID(fmt.Sprintf("race-%d", round))
		d := newDriver(t, id, parOf(n))
		mustCreate(t, s, d.j)
		rivals := make([]job.Job, n)
		for i := range rivals {
			a := d.pending[i]
			j, _, err := job.Restart(d.j, []job.Result{a.Succeed(output(a))})
			if err != nil {
				t.Fatal(err)
			}
			rivals[i] = j
		}
		errs := make([]error, n)
		var ready, done sync.WaitGroup
		startGun := make(chan struct{})
		ready.Add(n)
		done.Add(n)
		for i := range rivals {
			go func() {
				defer done.Done()
				ready.Done()
				<-startGun
				errs[i] = s.Save(context.Background(), rivals[i])
			}()
		}
		ready.Wait()
		close(startGun)
		done.Wait()
		winner := -1
		for i, err := range errs {
			switch {
			case err == nil && winner >= 0:
				t.Fatalf("round %d: savers %d and %d both won the save of version 2", round, winner, i)
			case err == nil:
				winner = i
			case !errors.Is(err, store.ErrConflict):
				t.Fatalf("round %d: saver %d: got %v, want nil or ErrConflict", round, i, err)
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: no saver won: %v", round, errs)
		}
		checkLoad(t, s, rivals[winner])
	}
}

func testNoStep(t *testing.T, s store.Store) {
	ctx := context.Background()
	d := newDriver(t, "nostep", parOf(3))
	mustCreate(t, s, d.j)
	wantErr(t, "Save of the created job", s.Save(ctx, d.j), store.ErrNoStep)
	same, _, err := job.Restart(d.j, nil)
	if err != nil {
		t.Fatal(err)
	}
	wantErr(t, "Save of Restart(v1, nil)", s.Save(ctx, same), store.ErrNoStep)
	dup := d.pending[0].Succeed(nil)
	v2 := d.apply(1, []job.Result{dup})
	mustSave(t, s, v2)

	decoded, err := job.Decode(encode(t, v2))
	if err != nil {
		t.Fatal(err)
	}
	wantErr(t, "Save of a decoded job", s.Save(ctx, decoded), store.ErrNoStep)
	// A job keeps the step that made it, so a loaded job and a Restart
	// that applied nothing to a saved job look like stale saves.
	loaded := mustLoad(t, s, "nostep")
	if err := s.Save(ctx, loaded); !errors.Is(err, store.ErrNoStep) && !errors.Is(err, store.ErrConflict) {
		t.Fatalf("Save of a loaded job: got %v, want ErrNoStep or ErrConflict", err)
	}
	nothing, _, err := job.Restart(v2, []job.Result{dup})
	if err != nil {
		t.Fatal(err)
	}
	if nothing.Version() != v2.Version() {
		t.Fatalf("a duplicate result was applied: version %d", nothing.Version())
	}
	if err := s.Save(ctx, nothing); !errors.Is(err, store.ErrNoStep) && !errors.Is(err, store.ErrConflict) {
		t.Fatalf("Save of a Restart that applied nothing: got %v, want ErrNoStep or ErrConflict", err)
	}
	checkLoad(t, s, v2)
	h, err := s.History(ctx, "nostep")
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Steps) != 1 {
		t.Fatalf("History has %d steps, want 1", len(h.Steps))
	}
}

func testNotFound(t *testing.T, s store.Store) {
	ctx := context.Background()
	d := newDriver(t, "ghost", parOf(2))
	v2 := d.succeed(1)
	wantErr(t, "Save of an unknown job", s.Save(ctx, v2), store.ErrNotFound)
	wantErr(t, "Load of an unknown job", loadErr(s, "ghost"), store.ErrNotFound)
	_, err := s.History(ctx, "ghost")
	wantErr(t, "History of an unknown job", err, store.ErrNotFound)
	wantErr(t, "Delete of an unknown job", s.Delete(ctx, "ghost"), store.ErrNotFound)
	infos, err := s.List(ctx)
	if err != nil || len(infos) != 0 {
		t.Fatalf("List of an empty store = %v, %v; want nothing", infos, err)
	}
}

func testHistory(t *testing.T, s store.Store) {
	ctx := context.Background()
	d := newDriver(t, "history", mixed())
	mustCreate(t, s, d.j)
	d.succeed(1)
	d.succeed(1)
	d.succeed(2)
	d.fail("card declined")
	d.succeed(1)
	d.succeed(1)
	d.succeed(1)
	for _, v := range d.versions[1:] {
		mustSave(t, s, v)
	}
	h, err := s.History(ctx, "history")
	if err != nil {
		t.Fatal(err)
	}
	checkHistory(t, h, d)
}

// checkHistory checks h against every version d made.
func checkHistory(t *testing.T, h store.History, d *driver) {
	t.Helper()
	sameJob(t, "History.Origin", d.versions[0], h.Origin)
	var live []job.Step
	for _, v := range d.versions[1:] {
		live = append(live, v.Step())
	}
	if diff := cmp.Diff(live, h.Steps, cmpopts.EquateEmpty()); diff != "" {
		t.Fatalf("History.Steps differ from the live steps (-live +got):\n%s", diff)
	}
	for i, want := range d.versions {
		v := uint64(i + 1)
		got, err := h.At(v)
		if err != nil {
			t.Fatalf("History.At(%d): %v", v, err)
		}
		sameJob(t, fmt.Sprintf("History.At(%d)", v), want, got)
	}
	latest, err := h.Latest()
	if err != nil {
		t.Fatalf("History.Latest: %v", err)
	}
	sameJob(t, "History.Latest", d.j, latest)
	last := uint64(len(d.versions))
	for _, v := range []uint64{0, last + 1} {
		if _, err := h.At(v); err == nil {
			t.Fatalf("History.At(%d) of a job with versions 1 to %d succeeded", v, last)
		}
	}
}

func testList(t *testing.T, s store.Store) {
	ctx := context.Background()
	a := newDriver(t, "list-a", parOf(3))
	b := newDriver(t, "list-b", ast.Act("log", "b"))
	c := newDriver(t, "list-c", ast.Seq(ast.Act("log", "c1"), ast.Act("log", "c2")))
	for _, d := range []*driver{c, a, b} {
		mustCreate(t, s, d.j)
	}
	mustSave(t, s, a.succeed(1))
	mustSave(t, s, a.succeed(1))
	mustSave(t, s, b.succeed(1))
	mustSave(t, s, c.fail("boom"))
	got, err := s.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []store.Info{
		{ID: "list-a", Version: 3, Status: job.StatusRunning},
		{ID: "list-b", Version: 2, Status: job.StatusSucceeded},
		{ID: "list-c", Version: 2, Status: job.StatusFailed},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("List (-want +got):\n%s", diff)
	}
}

func testDelete(t *testing.T, s store.Store) {
	ctx := context.Background()
	d := newDriver(t, "doomed", parOf(3))
	mustCreate(t, s, d.j)
	mustSave(t, s, d.succeed(1))
	keep := newDriver(t, "kept", parOf(2))
	mustCreate(t, s, keep.j)
	checkLoad(t, s, d.j) // fill any cache

	if err := s.Delete(ctx, "doomed"); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	wantErr(t, "Load after Delete", loadErr(s, "doomed"), store.ErrNotFound)
	_, err := s.History(ctx, "doomed")
	wantErr(t, "History after Delete", err, store.ErrNotFound)
	wantErr(t, "Save after Delete", s.Save(ctx, d.succeed(1)), store.ErrNotFound)
	wantErr(t, "second Delete", s.Delete(ctx, "doomed"), store.ErrNotFound)
	infos, err := s.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]store.Info{{ID: "kept", Version: 1, Status: job.StatusRunning}}, infos); diff != "" {
		t.Fatalf("List after Delete (-want +got):\n%s", diff)
	}
	checkLoad(t, s, keep.j)

	// The ID is free again, and nothing of the old job shows through.
	again := newDriver(t, "doomed", mixed())
	mustCreate(t, s, again.j)
	checkLoad(t, s, again.j)
	mustSave(t, s, again.succeed(1))
	checkLoad(t, s, again.j)
	h, err := s.History(ctx, "doomed")
	if err != nil {
		t.Fatal(err)
	}
	checkHistory(t, h, again)
}

func testClosed(t *testing.T, s store.Store) {
	ctx := context.Background()
	d := newDriver(t, "closed", parOf(2))
	mustCreate(t, s, d.j)
	v2 := d.succeed(1)
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	other := newDriver(t, "other", parOf(2))
	wantErr(t, "Create after Close", s.Create(ctx, other.j), store.ErrClosed)
	wantErr(t, "Save after Close", s.Save(ctx, v2), store.ErrClosed)
	wantErr(t, "Load after Close", loadErr(s, "closed"), store.ErrClosed)
	_, err := s.History(ctx, "closed")
	wantErr(t, "History after Close", err, store.ErrClosed)
	_, err = s.List(ctx)
	wantErr(t, "List after Close", err, store.ErrClosed)
	wantErr(t, "Delete after Close", s.Delete(ctx, "closed"), store.ErrClosed)
}

func testCancelled(t *testing.T, s store.Store) {
	d := newDriver(t, "cancelled", parOf(2))
	mustCreate(t, s, d.j)
	v2 := d.succeed(1)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	other := newDriver(t, "other", parOf(2))
	wantErr(t, "Create with a cancelled context", s.Create(ctx, other.j), context.Canceled)
	wantErr(t, "Save with a cancelled context", s.Save(ctx, v2), context.Canceled)
	_, err := s.Load(ctx, "cancelled")
	wantErr(t, "Load with a cancelled context", err, context.Canceled)
	_, err = s.History(ctx, "cancelled")
	wantErr(t, "History with a cancelled context", err, context.Canceled)
	_, err = s.List(ctx)
	wantErr(t, "List with a cancelled context", err, context.Canceled)
	wantErr(t, "Delete with a cancelled context", s.Delete(ctx, "cancelled"), context.Canceled)
}

// testLongRun finishes a par of LongRunLeaves one result per Save, which
// makes durable stores write snapshots and replay journals. The outputs
// are padded so that the journal outweighs the job's encoding a few times
// over, as it does in jobs whose actions return data.
func testLongRun(t *testing.T, s store.Store) {
	d := newDriver(t, "long", parOf(LongRunLeaves))
	mustCreate(t, s, d.j)
	for i := 1; !d.j.Done(); i++ {
		a := d.pending[0]
		mustSave(t, s, d.apply(1, []job.Result{a.Succeed(padded(a))}))
		if i%500 == 0 {
			checkLoad(t, s, d.j)
		}
	}
	checkLoad(t, s, d.j)
	h, err := s.History(context.Background(), "long")
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Steps) != LongRunLeaves {
		t.Fatalf("History has %d steps, want %d", len(h.Steps), LongRunLeaves)
	}
	latest, err := h.Latest()
	if err != nil {
		t.Fatal(err)
	}
	sameJob(t, "History.Latest", d.j, latest)
}

// testConcurrentJobs runs one job per goroutine.
func testConcurrentJobs(t *testing.T, s store.Store) {
	const workers, leaves = 8, 25
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			ctx := context.Background()
			id := job.ID(fmt.Sprintf("jobs-%d", w))
			j, acts, err := job.New(id, parOf(leaves))
			if err != nil {
				t.Error(err)
				return
			}
			if err := s.Create(ctx, j); err != nil {
				t.Errorf("Create(%s): %v", id, err)
				return
			}
			for _, a := range acts {
				next, _, err := job.Restart(j, []job.Result{a.Succeed(output(a))})
				if err != nil {
					t.Error(err)
					return
				}
				if err := s.Save(ctx, next); err != nil {
					t.Errorf("Save(%s v%d): %v", id, next.Version(), err)
					return
				}
				got, err := s.Load(ctx, id)
				if err != nil {
					t.Errorf("Load(%s): %v", id, err)
					return
				}
				if diff := diffJob(next, got); diff != "" {
					t.Errorf("Load(%s): %s", id, diff)
					return
				}
				j = next
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	infos, err := s.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var want []store.Info
	for w := range workers {
		want = append(want, store.Info{ID: job.ID(fmt.Sprintf("jobs-%d", w)), Version: leaves + 1, Status: job.StatusSucceeded})
	}
	if diff := cmp.Diff(want, infos); diff != "" {
		t.Fatalf("List (-want +got):\n%s", diff)
	}
}

// testConcurrentRunners has several goroutines drive one job the way
// runners do: Load, Restart with one result, Save, and on ErrConflict start
// over. Every result must be applied exactly once.
func testConcurrentRunners(t *testing.T, s store.Store) {
	const runners, leaves = 4, 40
	d := newDriver(t, "shared", parOf(leaves))
	mustCreate(t, s, d.j)
	var wg sync.WaitGroup
	for r := range runners {
		wg.Go(func() {
			ctx := context.Background()
			for try := 0; try < 100*leaves; try++ {
				j, err := s.Load(ctx, "shared")
				if err != nil {
					t.Errorf("runner %d: Load: %v", r, err)
					return
				}
				if j.Done() {
					return
				}
				_, out, err := job.Restart(j, nil)
				if err != nil || len(out) == 0 {
					t.Errorf("runner %d: recovery of %v gave %d actions, %v", r, j, len(out), err)
					return
				}
				a := out[(r+try)%len(out)]
				next, _, err := job.Restart(j, []job.Result{a.Succeed(output(a))})
				if err != nil {
					t.Errorf("runner %d: Restart: %v", r, err)
					return
				}
				switch err := s.Save(ctx, next); {
				case err == nil, errors.Is(err, store.ErrConflict):
				default:
					t.Errorf("runner %d: Save(v%d): %v", r, next.Version(), err)
					return
				}
			}
			t.Errorf("runner %d: the job did not finish", r)
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	j := mustLoad(t, s, "shared")
	if j.Status() != job.StatusSucceeded || j.Version() != leaves+1 {
		t.Fatalf("after the runners: %v, want version %d succeeded", j, leaves+1)
	}
	h, err := s.History(context.Background(), "shared")
	if err != nil {
		t.Fatal(err)
	}
	latest, err := h.Latest()
	if err != nil {
		t.Fatal(err)
	}
	sameJob(t, "History.Latest", j, latest)
}
