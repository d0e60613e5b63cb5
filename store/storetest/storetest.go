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
//
// The optional capabilities are tested when the store has them: listing
// (store.Lister), history (store.Historian), the journal of ignored
// results (store.IgnoreJournal) and deletion (store.Deleter).
// A subtest that needs one the store lacks says so and is skipped; the
// ListQuery subtest, for one, needs a Lister.
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
		{"Ignored", testIgnored},
		{"List", testList},
		{"ListQuery", testListQuery},
		{"Stat", testStat},
		{"Times", testTimes},
		{"Incarnation", testIncarnation},
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

func mustSave(t *testing.T, s store.Store, tr job.Transition) {
	t.Helper()
	if err := s.Save(context.Background(), tr.Job, tr.Step); err != nil {
		t.Fatalf("Save(%s v%d): %v", tr.Job.ID(), tr.Job.Version(), err)
	}
}

// save saves a transition's job and step.
func save(ctx context.Context, s store.Store, tr job.Transition) error {
	return s.Save(ctx, tr.Job, tr.Step)
}

// history returns the history of job id, skipping the test if the store
// keeps none.
func history(t *testing.T, s store.Store, id job.ID) store.History {
	t.Helper()
	hs := historian(t, s)
	h, err := hs.History(context.Background(), id)
	if err != nil {
		t.Fatalf("History(%s): %v", id, err)
	}
	return h
}

func historian(t *testing.T, s store.Store) store.Historian {
	t.Helper()
	hs, ok := s.(store.Historian)
	if !ok {
		t.Skipf("%T is not a store.Historian", s)
	}
	return hs
}

func lister(t *testing.T, s store.Store) store.Lister {
	t.Helper()
	l, ok := s.(store.Lister)
	if !ok {
		t.Skipf("%T is not a store.Lister", s)
	}
	return l
}

func deleter(t *testing.T, s store.Store) store.Deleter {
	t.Helper()
	d, ok := s.(store.Deleter)
	if !ok {
		t.Skipf("%T is not a store.Deleter", s)
	}
	return d
}

// list lists the jobs q selects, skipping the test if the store cannot.
func list(t *testing.T, s store.Store, q store.Query) []store.Info {
	t.Helper()
	infos, err := lister(t, s).List(context.Background(), q)
	if err != nil {
		t.Fatalf("List(%+v): %v", q, err)
	}
	return infos
}

// infoOf is the Info a store must list for j.
func infoOf(j job.Job) store.Info { return store.InfoOf(j) }

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
	d.succeed(1)          // a
	d.succeed(2)          // b, c
	d.succeed(1)          // d; charge starts
	d.fail("no")          // charge fails; refund starts
	d.succeed(1)          // refund; release starts
	d.succeed(1)          // release; e starts
	j := d.succeed(1).Job // e
	if j.Status() != job.StatusSucceeded {
		t.Fatalf("the driven job did not succeed:\n%s", job.Describe(j))
	}
	for _, tr := range d.steps() {
		mustSave(t, s, tr)
		checkLoad(t, s, tr.Job)
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
		next, err := job.Restart(loaded, rs)
		if err != nil {
			t.Fatalf("Restart of the loaded job: %v", err)
		}
		live := d.apply(1, rs)
		sameJob(t, "Restart of the loaded job", live.Job, next.Job)
		mustSave(t, s, next)
		checkLoad(t, s, live.Job)
	}
}

func testConflict(t *testing.T, s store.Store) {
	ctx := context.Background()
	d := newDriver(t, "conflict", parOf(4))
	mustCreate(t, s, d.j)
	v1 := d.j
	a := d.succeed(1)
	mustSave(t, s, a)

	b, err := job.Restart(v1, []job.Result{d.pending[0].Succeed(nil)})
	if err != nil {
		t.Fatal(err)
	}
	wantErr(t, "Save of a second version 2", save(ctx, s, b), store.ErrConflict)
	checkLoad(t, s, a.Job)

	d.succeed(1)
	c := d.succeed(1) // version 4: version 3 was never saved
	wantErr(t, "Save of version 4 over version 2", save(ctx, s, c), store.ErrConflict)
	checkLoad(t, s, a.Job)
	h := history(t, s, "conflict")
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
		rivals := make([]job.Transition, n)
		for i := range rivals {
			a := d.pending[i]
			tr, err := job.Restart(d.j, []job.Result{a.Succeed(output(a))})
			if err != nil {
				t.Fatal(err)
			}
			rivals[i] = tr
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
				errs[i] = save(context.Background(), s, rivals[i])
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
		checkLoad(t, s, rivals[winner].Job)
	}
}

func testNoStep(t *testing.T, s store.Store) {
	ctx := context.Background()
	d := newDriver(t, "nostep", parOf(3))
	mustCreate(t, s, d.j)
	wantErr(t, "Save of the created job with New's step", s.Save(ctx, d.j, d.trs[0].Step), store.ErrNoStep)
	wantErr(t, "Save with the zero step", s.Save(ctx, d.j, job.Step{}), store.ErrNoStep)
	same, err := job.Restart(d.j, nil)
	if err != nil {
		t.Fatal(err)
	}
	wantErr(t, "Save of Restart(v1, nil)", save(ctx, s, same), store.ErrNoStep)
	dup := d.pending[0].Succeed(nil)
	v2 := d.apply(1, []job.Result{dup})
	wantErr(t, "Save of a step with another version", s.Save(ctx, v2.Job, job.Step{Version: 3, Results: v2.Step.Results}), store.ErrNoStep)
	mustSave(t, s, v2)

	nothing, err := job.Restart(v2.Job, []job.Result{dup})
	if err != nil {
		t.Fatal(err)
	}
	if nothing.Changed() {
		t.Fatalf("a duplicate result was applied: %+v", nothing.Step)
	}
	wantErr(t, "Save of a Restart that applied nothing", save(ctx, s, nothing), store.ErrNoStep)
	// The step that made the stored version, again: a stale save.
	wantErr(t, "Save of the saved step again", save(ctx, s, v2), store.ErrConflict)
	checkLoad(t, s, v2.Job)
	if h, ok := s.(store.Historian); ok {
		h, err := h.History(ctx, "nostep")
		if err != nil {
			t.Fatal(err)
		}
		if len(h.Steps) != 1 {
			t.Fatalf("History has %d steps, want 1", len(h.Steps))
		}
	}
}

func testNotFound(t *testing.T, s store.Store) {
	ctx := context.Background()
	d := newDriver(t, "ghost", parOf(2))
	v2 := d.succeed(1)
	wantErr(t, "Save of an unknown job", save(ctx, s, v2), store.ErrNotFound)
	wantErr(t, "Load of an unknown job", loadErr(s, "ghost"), store.ErrNotFound)
	if hs, ok := s.(store.Historian); ok {
		_, err := hs.History(ctx, "ghost")
		wantErr(t, "History of an unknown job", err, store.ErrNotFound)
	}
	if ds, ok := s.(store.Deleter); ok {
		wantErr(t, "Delete of an unknown job", ds.Delete(ctx, "ghost"), store.ErrNotFound)
	}
	if l, ok := s.(store.Lister); ok {
		infos, err := l.List(ctx, store.Query{})
		if err != nil || len(infos) != 0 {
			t.Fatalf("List of an empty store = %v, %v; want nothing", infos, err)
		}
	}
}

func testHistory(t *testing.T, s store.Store) {
	historian(t, s)
	d := newDriver(t, "history", mixed())
	mustCreate(t, s, d.j)
	d.succeed(1)
	d.succeed(1)
	d.succeed(2)
	// A result names the worker that made it: the store keeps the name.
	declined := d.pending[0].Fail("card declined")
	declined.Worker = "w-7"
	d.apply(1, []job.Result{declined})
	d.succeed(1)
	d.succeed(1)
	d.succeed(1)
	for _, tr := range d.steps() {
		mustSave(t, s, tr)
	}
	checkHistory(t, history(t, s, "history"), d)
}

// checkHistory checks h against every version d made.
func checkHistory(t *testing.T, h store.History, d *driver) {
	t.Helper()
	sameJob(t, "History.Origin", d.version(1), h.Origin)
	var live []job.Step
	for _, tr := range d.steps() {
		live = append(live, tr.Step)
	}
	if diff := cmp.Diff(live, h.Steps, cmpopts.EquateEmpty()); diff != "" {
		t.Fatalf("History.Steps differ from the live steps (-live +got):\n%s", diff)
	}
	for i, tr := range d.trs {
		v := uint64(i + 1)
		got, err := h.At(v)
		if err != nil {
			t.Fatalf("History.At(%d): %v", v, err)
		}
		sameJob(t, fmt.Sprintf("History.At(%d)", v), tr.Job, got)
	}
	latest, err := h.Latest()
	if err != nil {
		t.Fatalf("History.Latest: %v", err)
	}
	sameJob(t, "History.Latest", d.j, latest)
	last := uint64(len(d.trs))
	for _, v := range []uint64{0, last + 1} {
		if _, err := h.At(v); err == nil {
			t.Fatalf("History.At(%d) of a job with versions 1 to %d succeeded", v, last)
		}
	}
}

func testList(t *testing.T, s store.Store) {
	lister(t, s)
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
	got := list(t, s, store.Query{})
	want := []store.Info{
		{ID: "list-a", Version: 3, Status: job.StatusRunning, Settled: 2, Total: 3},
		{ID: "list-b", Version: 2, Status: job.StatusSucceeded, Settled: 1, Total: 1},
		{ID: "list-c", Version: 2, Status: job.StatusFailed, Settled: 1, Total: 2},
	}
	if diff := cmp.Diff(want, got, ignoreTimes); diff != "" {
		t.Fatalf("List (-want +got):\n%s", diff)
	}
}

// testListQuery checks every field of store.Query, alone and together.
func testListQuery(t *testing.T, s store.Store) {
	lister(t, s)
	var all []store.Info
	for _, id := range []job.ID{"a-1", "a-2", "a-3", "ab", "b-1", "b-2"} {
		d := newDriver(t, id, parOf(2))
		mustCreate(t, s, d.j)
		if id == "a-2" || id == "b-1" {
			mustSave(t, s, d.succeed(2)) // finished
		}
		all = append(all, infoOf(d.j))
	}
	pick := func(ids ...job.ID) []store.Info {
		var out []store.Info
		for _, in := range all {
			for _, id := range ids {
				if in.ID == id {
					out = append(out, in)
				}
			}
		}
		return out
	}
	for _, tc := range []struct {
		q    store.Query
		want []store.Info
	}{
		{store.Query{}, all},
		{store.Query{Prefix: "a-"}, pick("a-1", "a-2", "a-3")},
		{store.Query{Prefix: "a"}, pick("a-1", "a-2", "a-3", "ab")},
		{store.Query{Prefix: "c"}, nil},
		{store.Query{After: "a-2"}, pick("a-3", "ab", "b-1", "b-2")},
		{store.Query{After: "b-2"}, nil},
		{store.Query{After: "a"}, all},
		{store.Query{Limit: 2}, pick("a-1", "a-2")},
		{store.Query{After: "a-2", Limit: 2}, pick("a-3", "ab")},
		{store.Query{Unfinished: true}, pick("a-1", "a-3", "ab", "b-2")},
		{store.Query{Unfinished: true, Prefix: "b", Limit: 5}, pick("b-2")},
		{store.Query{Unfinished: true, After: "a-1", Limit: 2}, pick("a-3", "ab")},
	} {
		got := list(t, s, tc.q)
		if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty(), ignoreTimes); diff != "" {
			t.Errorf("List(%+v) (-want +got):\n%s", tc.q, diff)
		}
	}
}

// testIncarnation: a Save made from a job that was deleted must not land
// on a new job made under the same ID, even at the version it expects.
func testIncarnation(t *testing.T, s store.Store) {
	ds := deleter(t, s)
	ctx := context.Background()
	old := newDriver(t, "reborn", parOf(3))
	mustCreate(t, s, old.j)
	if err := ds.Delete(ctx, "reborn"); err != nil {
		t.Fatal(err)
	}
	again := newDriver(t, "reborn", parOf(3)) // same tree, another incarnation
	if again.j.Incarnation() == old.j.Incarnation() {
		t.Fatal("the drivers made two jobs of one incarnation")
	}
	mustCreate(t, s, again.j)
	wantErr(t, "Save of the deleted job's version 2 over the new job's version 1", save(ctx, s, old.succeed(1)), store.ErrConflict)
	checkLoad(t, s, again.j)
	mustSave(t, s, again.succeed(1))
	checkLoad(t, s, again.j)
}

func testDelete(t *testing.T, s store.Store) {
	ds := deleter(t, s)
	ctx := context.Background()
	d := newDriver(t, "doomed", parOf(3))
	mustCreate(t, s, d.j)
	mustSave(t, s, d.succeed(1))
	keep := newDriver(t, "kept", parOf(2))
	mustCreate(t, s, keep.j)
	checkLoad(t, s, d.j) // fill any cache

	if err := ds.Delete(ctx, "doomed"); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	wantErr(t, "Load after Delete", loadErr(s, "doomed"), store.ErrNotFound)
	if hs, ok := s.(store.Historian); ok {
		_, err := hs.History(ctx, "doomed")
		wantErr(t, "History after Delete", err, store.ErrNotFound)
	}
	wantErr(t, "Save after Delete", save(ctx, s, d.succeed(1)), store.ErrNotFound)
	wantErr(t, "second Delete", ds.Delete(ctx, "doomed"), store.ErrNotFound)
	if l, ok := s.(store.Lister); ok {
		infos, err := l.List(ctx, store.Query{})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]store.Info{infoOf(keep.j)}, infos, ignoreTimes); diff != "" {
			t.Fatalf("List after Delete (-want +got):\n%s", diff)
		}
	}
	checkLoad(t, s, keep.j)

	// The ID is free again, and nothing of the old job shows through.
	again := newDriver(t, "doomed", mixed())
	mustCreate(t, s, again.j)
	checkLoad(t, s, again.j)
	mustSave(t, s, again.succeed(1))
	checkLoad(t, s, again.j)
	if l, ok := s.(store.Lister); ok {
		infos, err := l.List(ctx, store.Query{})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]store.Info{infoOf(again.j), infoOf(keep.j)}, infos, ignoreTimes); diff != "" {
			t.Fatalf("List after Delete and Create again (-want +got):\n%s", diff)
		}
	}
	if _, ok := s.(store.Historian); ok {
		checkHistory(t, history(t, s, "doomed"), again)
	}
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
	wantErr(t, "Save after Close", save(ctx, s, v2), store.ErrClosed)
	wantErr(t, "Load after Close", loadErr(s, "closed"), store.ErrClosed)
	if hs, ok := s.(store.Historian); ok {
		_, err := hs.History(ctx, "closed")
		wantErr(t, "History after Close", err, store.ErrClosed)
	}
	if l, ok := s.(store.Lister); ok {
		_, err := l.List(ctx, store.Query{})
		wantErr(t, "List after Close", err, store.ErrClosed)
	}
	if ds, ok := s.(store.Deleter); ok {
		wantErr(t, "Delete after Close", ds.Delete(ctx, "closed"), store.ErrClosed)
	}
}

func testCancelled(t *testing.T, s store.Store) {
	d := newDriver(t, "cancelled", parOf(2))
	mustCreate(t, s, d.j)
	v2 := d.succeed(1)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	other := newDriver(t, "other", parOf(2))
	wantErr(t, "Create with a cancelled context", s.Create(ctx, other.j), context.Canceled)
	wantErr(t, "Save with a cancelled context", save(ctx, s, v2), context.Canceled)
	_, err := s.Load(ctx, "cancelled")
	wantErr(t, "Load with a cancelled context", err, context.Canceled)
	if hs, ok := s.(store.Historian); ok {
		_, err = hs.History(ctx, "cancelled")
		wantErr(t, "History with a cancelled context", err, context.Canceled)
	}
	if l, ok := s.(store.Lister); ok {
		_, err = l.List(ctx, store.Query{})
		wantErr(t, "List with a cancelled context", err, context.Canceled)
	}
	if ds, ok := s.(store.Deleter); ok {
		wantErr(t, "Delete with a cancelled context", ds.Delete(ctx, "cancelled"), context.Canceled)
	}
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
	if _, ok := s.(store.Historian); !ok {
		return
	}
	h := history(t, s, "long")
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
			tr, err := job.New(id, parOf(leaves), job.WithIncarnation(incarnations.Add(1)))
			if err != nil {
				t.Error(err)
				return
			}
			j := tr.Job
			if err := s.Create(ctx, j); err != nil {
				t.Errorf("Create(%s): %v", id, err)
				return
			}
			for _, a := range tr.Actions {
				next, err := job.Restart(j, []job.Result{a.Succeed(output(a))})
				if err != nil {
					t.Error(err)
					return
				}
				if err := save(ctx, s, next); err != nil {
					t.Errorf("Save(%s v%d): %v", id, next.Job.Version(), err)
					return
				}
				got, err := s.Load(ctx, id)
				if err != nil {
					t.Errorf("Load(%s): %v", id, err)
					return
				}
				if diff := diffJob(next.Job, got); diff != "" {
					t.Errorf("Load(%s): %s", id, diff)
					return
				}
				j = next.Job
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	if _, ok := s.(store.Lister); !ok {
		return
	}
	infos := list(t, s, store.Query{})
	var want []store.Info
	for w := range workers {
		want = append(want, store.Info{ID: job.ID(fmt.Sprintf("jobs-%d", w)), Version: leaves + 1, Status: job.StatusSucceeded, Settled: leaves, Total: leaves})
	}
	if diff := cmp.Diff(want, infos, ignoreTimes); diff != "" {
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
				out := j.Outstanding()
				if len(out) == 0 {
					t.Errorf("runner %d: %v has no outstanding action", r, j)
					return
				}
				a := out[(r+try)%len(out)]
				next, err := job.Restart(j, []job.Result{a.Succeed(output(a))})
				if err != nil {
					t.Errorf("runner %d: Restart: %v", r, err)
					return
				}
				switch err := save(ctx, s, next); {
				case err == nil, errors.Is(err, store.ErrConflict):
				default:
					t.Errorf("runner %d: Save(v%d): %v", r, next.Job.Version(), err)
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
	if _, ok := s.(store.Historian); !ok {
		return
	}
	latest, err := history(t, s, "shared").Latest()
	if err != nil {
		t.Fatal(err)
	}
	sameJob(t, "History.Latest", j, latest)
}
