package zk

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/batonwf/baton/job"
)

// TestOrder: workers decide entries by priority first; within a priority,
// round-robin over jobs (the oldest entry of each job in turn, jobs in
// the order of their oldest entry), so a job with many queued actions
// does not starve one queued after it; malformed names come last;
// nothing is lost or doubled.
func TestOrder(t *testing.T) {
	at := time.Now().UnixMilli()
	mk := func(prio int, id job.ID, i int, ms int64) string {
		return entryName(job.Action{JobID: id, ID: fmt.Sprintf("a%02d#1", i), Name: "act", Priority: prio}, ms)
	}
	var names []string
	for i := range 100 {
		names = append(names, mk(0, "big", i, at+int64(i)))
	}
	names = append(names, mk(0, "late", 0, at+200), mk(0, "late", 1, at+201), mk(5, "urgent", 0, at+300), "not-an-entry")
	got := slices.Clone(names)
	slices.Reverse(got)
	order(got)
	if !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(names))) {
		t.Fatalf("order lost or doubled names: %v", got)
	}
	want := []string{mk(5, "urgent", 0, at+300), mk(0, "big", 0, at), mk(0, "late", 0, at+200), mk(0, "big", 1, at+1), mk(0, "late", 1, at+201), mk(0, "big", 2, at+2)}
	if !slices.Equal(got[:len(want)], want) {
		t.Fatalf("order starts %v, want %v", got[:len(want)], want)
	}
	if got[len(got)-1] != "not-an-entry" {
		t.Fatalf("malformed name not last: %v", got[len(got)-1])
	}
}
