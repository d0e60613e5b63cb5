package zk

import (
	"slices"
	"testing"
	"time"

	"github.com/batonwf/baton/job"
)

// TestOrder: workers try entries by priority first, their own jobs' first
// within a priority, each group from a random one of its first window
// entries and then on in age order, wrapping round; nothing is lost or
// doubled.
func TestOrder(t *testing.T) {
	at := time.Now().UnixMilli()
	mk := func(prio int, id job.ID, i int) string {
		return entryName(job.Action{JobID: id, ID: string(rune('a'+i)) + "#1", Priority: prio}, at+int64(i))
	}
	var names []string
	for i := range 6 {
		names = append(names, mk(0, "other", i), mk(0, "mine", i), mk(5, "urgent", i))
	}
	names = append(names, "not-an-entry")
	own := func(id job.ID) bool { return id == "mine" }
	for range 50 {
		got := slices.Clone(names)
		order(got, own, 3)
		if !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(names))) {
			t.Fatalf("order lost or doubled names: %v", got)
		}
		var groups []job.ID
		for _, n := range got {
			_, _, id, _, ok := entryKey(n)
			if !ok {
				id = "?"
			}
			if len(groups) == 0 || groups[len(groups)-1] != id {
				groups = append(groups, id)
			}
		}
		// The malformed name sorts by its first 7 bytes, here last.
		if want := []job.ID{"urgent", "mine", "other", "?"}; !slices.Equal(groups, want) {
			t.Fatalf("groups in order %v, want %v (%v)", groups, want, got)
		}
		// Each group is a rotation of its age order, starting within the window.
		for g := range 3 {
			part := got[6*g : 6*(g+1)]
			start := slices.Index(names, part[0])
			sorted := slices.Sorted(slices.Values(part))
			off := slices.Index(sorted, part[0])
			if off < 0 || off >= 3 {
				t.Fatalf("group %d starts at its entry %d (%s), past the window of 3", g, off, names[start])
			}
			if !slices.Equal(part, append(slices.Clone(sorted[off:]), sorted[:off]...)) {
				t.Fatalf("group %d is not a rotation of its age order: %v", g, part)
			}
		}
	}
}
