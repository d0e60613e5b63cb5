package storetest

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/store"
	"github.com/google/go-cmp/cmp"
)

// RunDurable checks that a store keeps everything across Close and a new
// open of the same path: jobs, their latest versions byte for byte, their
// histories, List, deletions, and the version that optimistic concurrency
// checks. open must open (creating if needed) the store at path; each
// subtest gives it a fresh path in its own temporary directory and opens the
// same path several times, closing the previous store first. RunDurable
// closes every store it gets.
func RunDurable(t *testing.T, open func(t *testing.T, path string) store.Store) {
	tests := []struct {
		name string
		f    func(t *testing.T, reopen func() store.Store)
	}{
		{"Reopen", testReopen},
		{"ReopenLongRun", testReopenLong},
		{"ReopenDelete", testReopenDelete},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "baton.db")
			var cur store.Store
			reopen := func() store.Store {
				t.Helper()
				if cur != nil {
					if err := cur.Close(); err != nil {
						t.Fatalf("Close before reopening %s: %v", path, err)
					}
				}
				cur = open(t, path)
				if cur == nil {
					t.Fatalf("open(%s) returned nil", path)
				}
				s := cur
				t.Cleanup(func() { _ = s.Close() })
				return cur
			}
			tt.f(t, reopen)
		})
	}
}

func testReopen(t *testing.T, reopen func() store.Store) {
	ctx := context.Background()
	s := reopen()
	d := newDriver(t, "durable", mixed())
	mustCreate(t, s, d.j)
	other := newDriver(t, "other", parOf(3))
	mustCreate(t, s, other.j)
	d.succeed(1)
	d.succeed(2)
	d.succeed(1)
	for _, tr := range d.steps() {
		mustSave(t, s, tr)
	}
	var before store.Info
	if _, ok := s.(store.Lister); ok {
		before = listOne(t, s, "durable")
	}

	s = reopen()
	if _, ok := s.(store.Lister); ok {
		after := listOne(t, s, "durable")
		if !after.Created.Equal(before.Created) || !after.Updated.Equal(before.Updated) {
			t.Errorf("times after reopening: Created %v, Updated %v; before: %v, %v", after.Created, after.Updated, before.Created, before.Updated)
		}
	}
	checkLoad(t, s, d.j)
	checkLoad(t, s, other.j)
	if _, ok := s.(store.Historian); ok {
		checkHistory(t, history(t, s, "durable"), d)
	}
	if _, ok := s.(store.Lister); ok {
		infos := list(t, s, store.Query{})
		want := []store.Info{infoOf(d.j), infoOf(other.j)}
		if diff := cmp.Diff(want, infos, ignoreTimes); diff != "" {
			t.Fatalf("List after reopening (-want +got):\n%s", diff)
		}
	}

	// The stored version is what Save checks, after a reopen too.
	prev := d.version(len(d.trs) - 1)
	out := prev.Outstanding()
	if len(out) == 0 {
		t.Fatalf("%v has no outstanding action", prev)
	}
	stale, err := job.Restart(prev, []job.Result{out[0].Succeed(nil)})
	if err != nil || stale.Job.Version() != d.j.Version() {
		t.Fatalf("a rival of version %d: %v, %v", d.j.Version(), stale.Job, err)
	}
	wantErr(t, "Save of a stale version after reopening", save(ctx, s, stale), store.ErrConflict)

	// Go on from the loaded job, as a runner does after a restart.
	loaded := mustLoad(t, s, "durable")
	rs := []job.Result{d.pending[0].Fail("declined")}
	rs[0].Worker = "w-after-reopen" // kept by the store, read back after it reopens
	next, err := job.Restart(loaded, rs)
	if err != nil {
		t.Fatal(err)
	}
	live := d.apply(1, rs)
	sameJob(t, "Restart of the reloaded job", live.Job, next.Job)
	mustSave(t, s, next)
	for !d.j.Done() {
		mustSave(t, s, d.succeed(1))
	}

	s = reopen()
	checkLoad(t, s, d.j)
	if _, ok := s.(store.Historian); ok {
		checkHistory(t, history(t, s, "durable"), d)
	}
}

func testReopenLong(t *testing.T, reopen func() store.Store) {
	s := reopen()
	d := newDriver(t, "long", parOf(LongRunLeaves))
	mustCreate(t, s, d.j)
	for i := 1; !d.j.Done(); i++ {
		mustSave(t, s, d.succeed(1))
		if i == LongRunLeaves/2+7 {
			s = reopen()
			checkLoad(t, s, d.j)
		}
	}
	s = reopen()
	checkLoad(t, s, d.j)
	if _, ok := s.(store.Historian); !ok {
		return
	}
	h := history(t, s, "long")
	if len(h.Steps) != LongRunLeaves {
		t.Fatalf("History after reopening has %d steps, want %d", len(h.Steps), LongRunLeaves)
	}
	latest, err := h.Latest()
	if err != nil {
		t.Fatal(err)
	}
	sameJob(t, "History.Latest after reopening", d.j, latest)
}

func testReopenDelete(t *testing.T, reopen func() store.Store) {
	ctx := context.Background()
	s := reopen()
	d := newDriver(t, "gone", parOf(3))
	mustCreate(t, s, d.j)
	mustSave(t, s, d.succeed(1))
	if err := deleter(t, s).Delete(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	s = reopen()
	wantErr(t, "Load of a deleted job after reopening", loadErr(s, "gone"), store.ErrNotFound)
	again := newDriver(t, "gone", mixed())
	mustCreate(t, s, again.j)
	mustSave(t, s, again.succeed(1))
	s = reopen()
	checkLoad(t, s, again.j)
}
