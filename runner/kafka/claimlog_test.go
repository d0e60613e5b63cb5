package kafka

import (
	"slices"
	"testing"
)

// TestClaimLogSuperseded: which claims a new owner deletes. A claim whose
// range holds records of its own token, or of the token of the claim kept
// before it (a zombie's writes, fenced only by this claim), stays; the
// others go, and so do the claims that never counted, unless a kept claim
// has their key.
func TestClaimLogSuperseded(t *testing.T) {
	var c claimLog
	c.counted("/claim/0/1", 1)
	c.record(1) // C1 wrote: kept
	c.counted("/claim/0/2", 2)
	c.record(1) // a zombie of C1 wrote after C2: C2 fences it, kept
	c.counted("/claim/0/3", 3)
	c.outranked("/claim/0/9") // a late claim that never counted
	c.outranked("/claim/0/1") // a late copy of C1, which is kept
	c.counted("/claim/0/4", 4)
	c.record(7) // only a record of another token: C4 decides nothing
	c.counted("/claim/0/5", 5)
	c.counted("/claim/0/6", 6) // the claim that counts now
	got := c.superseded()
	if want := []string{"/claim/0/3", "/claim/0/4", "/claim/0/5", "/claim/0/9"}; !slices.Equal(got, want) {
		t.Fatalf("superseded %q, want %q", got, want)
	}

	// Their tombstones read: the log is as compaction leaves it, and
	// nothing more is superseded until a new claim comes.
	for _, k := range got {
		c.deleted(k)
	}
	if got := c.superseded(); len(got) != 0 {
		t.Errorf("superseded after the tombstones: %q", got)
	}
	// C2 and C6 now border: a new claim supersedes C6, which decides
	// nothing, but not C2.
	c.counted("/claim/0/10", 10)
	if got, want := c.superseded(), []string{"/claim/0/6"}; !slices.Equal(got, want) {
		t.Errorf("superseded %q, want %q", got, want)
	}
}
