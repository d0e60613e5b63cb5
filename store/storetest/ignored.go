package storetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/store"
)

// testIgnored: a store that journals ignored results (store.IgnoreJournal)
// returns the newest store.MaxIgnored with the history, oldest first and
// as given, leaves the steps alone, refuses a job it does not hold, and
// forgets them with the job.
func testIgnored(t *testing.T, s store.Store) {
	ij, ok := s.(store.IgnoreJournal)
	if !ok {
		t.Skipf("%T is not a store.IgnoreJournal", s)
	}
	ctx := context.Background()
	d := newDriver(t, "ignored", mixed())
	mustCreate(t, s, d.j)
	d.succeed(1)
	for _, tr := range d.steps() {
		mustSave(t, s, tr)
	}
	if err := ij.JournalIgnored(ctx, "nosuch", store.IgnoredOf(1, []job.Ignored{{Reason: job.IgnoredDuplicate}})); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("JournalIgnored of a missing job: %v, want store.ErrNotFound", err)
	}
	at := time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)
	var want []store.Ignored
	for i := range store.MaxIgnored + 7 {
		res := job.Result{JobID: "ignored", ActionID: fmt.Sprintf("seq[0]#%d", i+1), At: at.Add(time.Duration(i) * time.Second)}
		if i%2 == 1 {
			res.Error = strings.Repeat("é", store.MaxIgnoredError) // clipped at a rune boundary
		}
		ig := []job.Ignored{{Result: res, Reason: job.IgnoredDuplicate}}
		if i%3 == 0 {
			res.At = time.Time{}
			ig = append(ig, job.Ignored{Result: res, Reason: job.IgnoredUnknown, Detail: "no such node"})
		}
		recs := store.IgnoredOf(uint64(1+i%2), ig)
		if err := ij.JournalIgnored(ctx, "ignored", recs); err != nil {
			t.Fatalf("JournalIgnored: %v", err)
		}
		want = append(want, recs...)
	}
	want = want[len(want)-store.MaxIgnored:]
	h := history(t, s, "ignored")
	if diff := cmp.Diff(want, h.Ignored); diff != "" {
		t.Errorf("History.Ignored (-want +got):\n%s", diff)
	}
	for _, x := range h.Ignored {
		if len(x.Error) > store.MaxIgnoredError {
			t.Fatalf("an error of %d bytes kept, over %d", len(x.Error), store.MaxIgnoredError)
		}
	}
	checkHistory(t, h, d)

	del, ok := s.(store.Deleter)
	if !ok {
		return
	}
	if err := del.Delete(ctx, "ignored"); err != nil {
		t.Fatal(err)
	}
	again := newDriver(t, "ignored", mixed())
	mustCreate(t, s, again.j)
	if h := history(t, s, "ignored"); len(h.Ignored) != 0 {
		t.Errorf("a job made again after Delete has %d ignored results", len(h.Ignored))
	}
}
