package storetest

import (
	"context"
	"errors"
	"testing"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/store"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// Damage damages the stored record of job id in s, as a disk fault or a
// stray writer would, so that the store can no longer read what it needs
// to list the job, and returns the store to read through: s itself, or a
// store opened again on the same data (having closed s).
type Damage func(t *testing.T, s store.Store, id job.ID) store.Store

// RunDamaged checks what a store does with a job whose record is damaged
// (damage makes it so), among jobs that are not: one damaged record hides
// no other job and stops no listing. List returns every job, the damaged
// one with Info.Damaged set (wrapping job.ErrCorrupt) and its other
// fields zero, at its place in ID order, through prefixes, pages and
// Query.Unfinished (its status is unknown, so it is kept); Load of it
// fails wrapping job.ErrCorrupt and Load of the others works; Stat of it
// fails wrapping job.ErrCorrupt or returns its Info with Damaged set; a
// Deleter deletes it. A store that can hold no damaged record (one in
// memory) has no reason to call RunDamaged. RunDamaged closes every store
// it gets.
func RunDamaged(t *testing.T, newStore func(t *testing.T) store.Store, damage Damage) {
	ctx := context.Background()
	s := newStore(t)
	t.Cleanup(func() { _ = s.Close() })
	a := newDriver(t, "dmg-a", parOf(2))
	b := newDriver(t, "dmg-b", parOf(2))
	c := newDriver(t, "dmg-c", parOf(1))
	for _, d := range []*driver{a, b, c} {
		mustCreate(t, s, d.j)
	}
	mustSave(t, s, a.succeed(1))
	mustSave(t, s, b.succeed(1))
	mustSave(t, s, c.succeed(1)) // finished
	s = damage(t, s, "dmg-b")
	t.Cleanup(func() { _ = s.Close() })
	l := lister(t, s)

	ids := func(infos []store.Info) []job.ID {
		var out []job.ID
		for _, in := range infos {
			out = append(out, in.ID)
		}
		return out
	}
	check := func(q store.Query, want ...job.ID) []store.Info {
		t.Helper()
		got, err := l.List(ctx, q)
		if err != nil {
			t.Fatalf("List(%+v) with job dmg-b damaged: %v; want the jobs listed, dmg-b as damaged", q, err)
		}
		if diff := cmp.Diff(want, ids(got), cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("List(%+v) with job dmg-b damaged (-want +got IDs):\n%s", q, diff)
		}
		for _, in := range got {
			switch in.ID {
			case "dmg-b":
				if !errors.Is(in.Damaged, job.ErrCorrupt) {
					t.Errorf("List(%+v): job dmg-b has Damaged %v; want an error wrapping job.ErrCorrupt", q, in.Damaged)
				}
				if diff := cmp.Diff(store.Info{ID: "dmg-b"}, in, ignoreTimes, cmpopts.IgnoreFields(store.Info{}, "Damaged")); diff != "" {
					t.Errorf("List(%+v): the damaged job's Info tells more than its ID (-want +got):\n%s", q, diff)
				}
			default:
				d := map[job.ID]*driver{"dmg-a": a, "dmg-c": c}[in.ID]
				if diff := cmp.Diff(infoOf(d.j), in, ignoreTimes); diff != "" {
					t.Errorf("List(%+v): job %s (-want +got):\n%s", q, in.ID, diff)
				}
			}
		}
		return got
	}
	check(store.Query{}, "dmg-a", "dmg-b", "dmg-c")
	check(store.Query{Unfinished: true}, "dmg-a", "dmg-b")
	check(store.Query{Prefix: "dmg-b"}, "dmg-b")
	check(store.Query{Limit: 2}, "dmg-a", "dmg-b")
	check(store.Query{After: "dmg-a", Limit: 1}, "dmg-b")
	check(store.Query{After: "dmg-b"}, "dmg-c")

	_, err := s.Load(ctx, "dmg-b")
	wantErr(t, "Load of the damaged job", err, job.ErrCorrupt)
	checkLoad(t, s, a.j)
	checkLoad(t, s, c.j)
	if in, err := store.Stat(ctx, s, "dmg-b"); err == nil && !errors.Is(in.Damaged, job.ErrCorrupt) {
		t.Errorf("Stat of the damaged job: %+v; want an error or Damaged wrapping job.ErrCorrupt", in)
	} else if err != nil {
		wantErr(t, "Stat of the damaged job", err, job.ErrCorrupt)
	}

	ds, ok := s.(store.Deleter)
	if !ok {
		return
	}
	if err := ds.Delete(ctx, "dmg-b"); err != nil {
		t.Fatalf("Delete of the damaged job: %v", err)
	}
	_, err = s.Load(ctx, "dmg-b")
	wantErr(t, "Load of the damaged job after Delete", err, store.ErrNotFound)
	check(store.Query{}, "dmg-a", "dmg-c")
}

// ignoreTimes leaves out of a comparison of Infos the times a store
// stamps with its own clock; checkTimes checks them.
var ignoreTimes = cmpopts.IgnoreFields(store.Info{}, "Created", "Updated")
