package storetest

import (
	"testing"
	"time"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/store"
)

// timesSlack bounds how far a store's clock may be from the test's for
// checkSane: far more than any clock skew between processes on one
// machine, far less than a unit mistake (seconds for milliseconds).
const timesSlack = time.Hour

// testTimes checks Info.Created and Updated as List tells them: both zero
// (the store cannot tell), or both set, in UTC, Created not after
// Updated, near the test's clock; Created kept and Updated not going back
// through Saves. Stat, where it tells times, tells the same.
func testTimes(t *testing.T, s store.Store) {
	lister(t, s)
	start := time.Now()
	d := newDriver(t, "times", parOf(3))
	mustCreate(t, s, d.j)
	first := listOne(t, s, "times")
	if first.Created.IsZero() && first.Updated.IsZero() {
		t.Skipf("%T tells no times", s)
	}
	checkSane(t, "after Create", first, start)
	prev := first
	for range 3 {
		mustSave(t, s, d.succeed(1))
		in := listOne(t, s, "times")
		checkSane(t, "after a Save", in, start)
		if !in.Created.Equal(first.Created) {
			t.Errorf("Created changed from %v to %v at version %d", first.Created, in.Created, in.Version)
		}
		if in.Updated.Before(prev.Updated) {
			t.Errorf("Updated went back from %v to %v at version %d", prev.Updated, in.Updated, in.Version)
		}
		prev = in
	}
	if st, ok := s.(store.Stater); ok {
		in, err := st.Stat(t.Context(), "times")
		if err != nil {
			t.Fatalf("Stat: %v", err)
		}
		if !in.Created.IsZero() && (!in.Created.Equal(prev.Created) || !in.Updated.Equal(prev.Updated)) {
			t.Errorf("Stat tells Created %v, Updated %v; List %v, %v", in.Created, in.Updated, prev.Created, prev.Updated)
		}
	}
}

// listOne returns the Info List gives of job id.
func listOne(t *testing.T, s store.Store, id job.ID) store.Info {
	t.Helper()
	infos := list(t, s, store.Query{Prefix: string(id), Limit: 1})
	if len(infos) != 1 || infos[0].ID != id {
		t.Fatalf("List(prefix %s) gave %+v", id, infos)
	}
	return infos[0]
}

// checkSane fails the test unless in's times are set, in UTC, in order,
// and within timesSlack of the test's clock since start.
func checkSane(t *testing.T, what string, in store.Info, start time.Time) {
	t.Helper()
	switch {
	case in.Created.IsZero() || in.Updated.IsZero():
		t.Errorf("%s: job %s has Created %v, Updated %v; want both or neither", what, in.ID, in.Created, in.Updated)
	case in.Created.Location() != time.UTC || in.Updated.Location() != time.UTC:
		t.Errorf("%s: job %s: times not in UTC: %v, %v", what, in.ID, in.Created, in.Updated)
	case in.Updated.Before(in.Created):
		t.Errorf("%s: job %s updated at %v, before it was created at %v", what, in.ID, in.Updated, in.Created)
	case in.Created.Before(start.Add(-timesSlack)) || in.Updated.After(time.Now().Add(timesSlack)):
		t.Errorf("%s: job %s: Created %v, Updated %v are nowhere near the test's clock (%v)", what, in.ID, in.Created, in.Updated, start)
	}
}
