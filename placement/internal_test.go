package placement

import (
	"fmt"
	"math"
	"testing"

	"pgregory.net/rapid"
)

// The building blocks of the fixed hash against their published vectors:
// FNV-1a 64 (the FNV authors' test suite) and splitmix64 (the first
// output of the generator seeded with 0 is the finaliser of the golden
// gamma).
func TestHashBuildingBlocks(t *testing.T) {
	for _, c := range []struct {
		in   string
		want uint64
	}{
		{"", 0xcbf29ce484222325},
		{"a", 0xaf63dc4c8601ec8c},
		{"foobar", 0x85944171f73967e8},
	} {
		if got := fnv1a(c.in); got != c.want {
			t.Errorf("fnv1a(%q) = %#x, want %#x", c.in, got, c.want)
		}
	}
	if got, want := mix(0x9e3779b97f4a7c15), uint64(0xe220a8397b1dcdaf); got != want {
		t.Errorf("mix(golden gamma) = %#x, want %#x (splitmix64's first output from seed 0)", got, want)
	}
}

// ln agrees with math.Log to about 1e-15 relative over (0,1), including
// the units of hashes that scores use and the interval's edges.
func TestLnAgreesWithMathLog(t *testing.T) {
	check := func(t interface{ Fatalf(string, ...any) }, x float64) {
		got, want := ln(x), math.Log(x)
		if d := math.Abs(got-want) / math.Abs(want); d > 4e-15 {
			t.Fatalf("ln(%v) = %v, math.Log says %v (relative error %.3g)", x, got, want, d)
		}
	}
	for _, x := range []float64{unit(0), unit(math.MaxUint64), 0.5, math.Sqrt2 / 2, 0.25, 1e-300, 0.999999} {
		check(t, x)
	}
	rapid.Check(t, func(t *rapid.T) {
		check(t, unit(rapid.Uint64().Draw(t, "h")))
		check(t, rapid.Float64Range(1e-300, 1).Filter(func(x float64) bool { return x < 1 }).Draw(t, "x"))
	})
}

// unit maps every hash strictly inside (0,1), so ln is finite and the
// score positive.
func TestUnitIsInsideTheOpenInterval(t *testing.T) {
	for _, h := range []uint64{0, 1, 1 << 11, math.MaxUint64 - 1, math.MaxUint64} {
		if u := unit(h); !(u > 0 && u < 1) {
			t.Errorf("unit(%#x) = %v, not in (0,1)", h, u)
		}
		if s := score(1, h); !(s > 0) || math.IsInf(s, 0) {
			t.Errorf("score(1, %#x) = %v", h, s)
		}
	}
}

// A Ranks' cached order is Rank's, for workers of any capacities
// (zero and negative included), asked once or twice, and after a place
// deep in the list was read first (the list orders its head in chunks).
func TestRanksOrderIsRank(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 150).Draw(t, "workers")
		ws := make([]Worker, n)
		for i := range ws {
			ws[i] = Worker{Name: fmt.Sprintf("w%02d", i), Capacity: rapid.IntRange(-1, 5).Draw(t, "capacity")}
		}
		ws = rapid.Permutation(ws).Draw(t, "order")
		r := NewRanks(ws)
		for range 2 {
			key := rapid.Uint64().Draw(t, "key")
			want := Rank(key, ws)
			if n > 0 {
				p := rapid.IntRange(0, n-1).Draw(t, "read first")
				if got := r.list(key).at(r, p); ws[got].Name != want[p].Name {
					t.Fatalf("place %d read first: %s, Rank has %s", p, ws[got].Name, want[p].Name)
				}
			}
			for range 2 {
				got := r.order(key)
				if len(got) != len(want) {
					t.Fatalf("%d indices for %d workers", len(got), len(want))
				}
				for i, j := range got {
					if ws[j].Name != want[i].Name {
						t.Fatalf("place %d: %s, Rank has %s", i, ws[j].Name, want[i].Name)
					}
				}
			}
		}
	})
}

// scores4 is score, bit for bit, lane by lane.
func TestScores4IsScore(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var caps [4]int
		var hs [4]uint64
		for l := range 4 {
			caps[l] = rapid.IntRange(-1, 64).Draw(t, "capacity")
			hs[l] = rapid.OneOf(rapid.Uint64(), rapid.SampledFrom([]uint64{0, 1, 1 << 12, ^uint64(0), ^uint64(0) >> 1, 0x6a09e667f3bcc908})).Draw(t, "hash")
		}
		got := scores4(&caps, &hs)
		for l := range 4 {
			if want := score(caps[l], hs[l]); math.Float64bits(got[l]) != math.Float64bits(want) {
				t.Fatalf("lane %d (capacity %d, hash %#x): %v, score %v", l, caps[l], hs[l], got[l], want)
			}
		}
	})
}

// headByHash gives the first headLen of the exact order, whatever the
// pair hashes: hashes drawn close together (equal after unit's shift,
// or within its margin of each other) and capacities of up to maxGroups
// values, zero and negative among them.
func TestHeadByHashIsExact(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(2*headLen+1, 220).Draw(t, "workers")
		capsOf := rapid.SliceOfNDistinct(rapid.IntRange(1, 64), 1, maxGroups, rapid.ID[int]).Draw(t, "capacities")
		ws := make([]Worker, n)
		for i := range ws {
			c := rapid.SampledFrom(capsOf).Draw(t, "capacity")
			if rapid.IntRange(0, 9).Draw(t, "idle") == 0 {
				c = rapid.IntRange(-1, 0).Draw(t, "no capacity")
			}
			ws[i] = Worker{Name: fmt.Sprintf("w%03d", i), Capacity: c}
		}
		r := NewRanks(ws)
		if r.group == nil {
			t.Skip("fewer than headLen workers with capacity")
		}
		base := rapid.Uint64().Draw(t, "base")
		spreadBits := rapid.SampledFrom([]int{0, 8, 12, 13, 14, 20, 40, 64}).Draw(t, "spread")
		hs := make([]uint64, n)
		for i := range hs {
			off := uint64(0)
			if spreadBits > 0 {
				off = rapid.Uint64Range(0, 1<<min(spreadBits, 63)-1).Draw(t, "offset")
			}
			hs[i] = base + off
		}
		all := make([]int32, n)
		for i := range all {
			all[i] = int32(i)
		}
		want := r.exactOrderOf(hs, all)[:headLen]
		got := r.headByHash(hs)
		for p := range want {
			if got[p] != want[p] {
				t.Fatalf("place %d: %s, the exact order has %s (got %v, want %v)", p, ws[got[p]].Name, ws[want[p]].Name, got, want)
			}
		}
	})
}
