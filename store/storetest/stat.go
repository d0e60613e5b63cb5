package storetest

import (
	"context"
	"testing"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/store"
	"github.com/google/go-cmp/cmp"
)

// testStat checks store.Stat against store.InfoOf of the job at every
// version, and its errors. Through store.Stat, it also checks the Load
// that stands in for it in a store that is no store.Stater.
func testStat(t *testing.T, s store.Store) {
	ctx := context.Background()
	d := newDriver(t, "stat", parOf(3))
	other := newDriver(t, "stat-other", parOf(1))
	mustCreate(t, s, d.j)
	mustCreate(t, s, other.j)
	check := func(j job.Job) {
		t.Helper()
		in, err := store.Stat(ctx, s, j.ID())
		if err != nil {
			t.Fatalf("Stat(%s) at v%d: %v", j.ID(), j.Version(), err)
		}
		if diff := cmp.Diff(store.InfoOf(j), in, ignoreTimes); diff != "" {
			t.Errorf("Stat(%s) at v%d (-want +got):\n%s", j.ID(), j.Version(), diff)
		}
	}
	check(d.j)
	for range 3 {
		mustSave(t, s, d.succeed(1))
		check(d.j)
	}
	if !d.j.Done() {
		t.Fatalf("job %s not finished after its three results: %v", d.j.ID(), d.j.Status())
	}
	check(other.j)
	_, err := store.Stat(ctx, s, "stat-missing")
	wantErr(t, "Stat of a missing job", err, store.ErrNotFound)
	if _, err := store.Stat(ctx, s, "sta"); err == nil {
		t.Errorf("Stat of %q, a prefix of stored IDs: no error, want store.ErrNotFound", "sta")
	}
	if ds, ok := s.(store.Deleter); ok {
		if err := ds.Delete(ctx, "stat"); err != nil {
			t.Fatalf("Delete: %v", err)
		}
		_, err := store.Stat(ctx, s, "stat")
		wantErr(t, "Stat after Delete", err, store.ErrNotFound)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	_, err = store.Stat(ctx, s, "stat-other")
	wantErr(t, "Stat after Close", err, store.ErrClosed)
}
