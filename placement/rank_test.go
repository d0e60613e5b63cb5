package placement_test

import (
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/batonwf/baton/placement"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the golden files in testdata")

// golden compares got with testdata/name, or writes it there under
// -rewrite.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *rewrite {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -rewrite to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from what the code computes (a change of hash or score moves keys in running clusters):\n%s", path, diff(string(want), got))
	}
}

// diff lists the lines that differ, want first.
func diff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for i := 0; i < max(len(w), len(g)); i++ {
		var a, c string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			c = g[i]
		}
		if a != c {
			fmt.Fprintf(&b, "line %d:\n  want %s\n  got  %s\n", i+1, a, c)
		}
	}
	return b.String()
}

// TestGoldenVectors pins the hash, the scores and the preference lists:
// every version of baton on every platform must compute these exact
// values, or processes of one cluster would disagree on every key's
// holder. Scores are compared bit for bit.
func TestGoldenVectors(t *testing.T) {
	var b strings.Builder
	b.WriteString("# placement's fixed hash (FNV-1a 64, then splitmix64's finaliser), weighted\n")
	b.WriteString("# rendezvous scores and preference lists. Every version and platform must\n")
	b.WriteString("# compute exactly these. Written by go test ./placement -run GoldenVectors -rewrite.\n")
	keys := []string{"", "a", "dataset-42", "job/j-42/par[1]", "ünïcödé ✓", strings.Repeat("k", 256)}
	names := []string{"w1", "w2", "w3", "host-a.example", "ä", ""}
	for _, k := range keys {
		fmt.Fprintf(&b, "key %q %016x\n", clip(k), placement.KeyHash(k))
	}
	for _, n := range names {
		fmt.Fprintf(&b, "name %q %016x\n", n, placement.NameHash(n))
	}
	for _, k := range keys[:4] {
		for _, n := range names[:4] {
			h := placement.KeyHash(k)
			s := placement.Score(h, n, 3)
			fmt.Fprintf(&b, "pair %q %q %016x score(capacity 3) %016x %.17g\n", clip(k), n, placement.PairHash(h, n), math.Float64bits(s), s)
		}
	}
	fleets := [][]placement.Worker{
		{{Name: "w1", Capacity: 1}, {Name: "w2", Capacity: 1}, {Name: "w3", Capacity: 1}},
		{{Name: "w1", Capacity: 1}, {Name: "w2", Capacity: 2}, {Name: "w3", Capacity: 4}, {Name: "w4", Capacity: 8}},
		{{Name: "a", Capacity: 3}, {Name: "b", Capacity: 0}, {Name: "c", Capacity: 3}, {Name: "d", Capacity: 1}, {Name: "e", Capacity: 16}},
	}
	for _, fleet := range fleets {
		for i := range 8 {
			k := fmt.Sprintf("key-%d", i)
			var in, out []string
			for _, w := range fleet {
				in = append(in, fmt.Sprintf("%s:%d", w.Name, w.Capacity))
			}
			for _, w := range placement.Rank(placement.KeyHash(k), fleet) {
				out = append(out, w.Name)
			}
			fmt.Fprintf(&b, "rank %q %s -> %s\n", k, strings.Join(in, " "), strings.Join(out, " "))
		}
	}
	golden(t, "rank.txt", b.String())
}

func clip(s string) string {
	if len(s) > 20 {
		return fmt.Sprintf("%s...(%d bytes)", s[:20], len(s))
	}
	return s
}

// fleet draws 2 to 10 workers named w0, w1, ... with capacities 1 to 8.
func fleet(t *rapid.T) []placement.Worker {
	n := rapid.IntRange(2, 10).Draw(t, "workers")
	ws := make([]placement.Worker, n)
	for i := range ws {
		ws[i] = placement.Worker{Name: fmt.Sprintf("w%d", i), Capacity: rapid.IntRange(1, 8).Draw(t, "capacity")}
	}
	return ws
}

// Rank is a permutation of its input, and the same for any input order.
func TestRankIsAPermutationIndependentOfOrder(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ws := fleet(t)
		key := rapid.Uint64().Draw(t, "key")
		r1 := names(placement.Rank(key, ws))
		perm := rapid.Permutation(ws).Draw(t, "order")
		r2 := names(placement.Rank(key, perm))
		if !slices.Equal(r1, r2) {
			t.Fatalf("Rank depends on the input's order: %v, then %v", r1, r2)
		}
		sorted := slices.Sorted(slices.Values(r1))
		if want := slices.Sorted(slices.Values(names(ws))); !slices.Equal(sorted, want) {
			t.Fatalf("Rank returned %v for workers %v", r1, want)
		}
	})
}

func names(ws []placement.Worker) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.Name
	}
	return out
}

const shareKeys = 100_000

// holder is the head of Rank (computed without Rank's sort, so 100,000
// keys stay cheap; TestHolderIsRanksHead checks it is the same).
func holder(key uint64, ws []placement.Worker, skip string) string {
	best, bestScore := "", -1.0
	for _, w := range ws {
		if w.Name == skip {
			continue
		}
		s := placement.Score(key, w.Name, w.Capacity)
		if s > bestScore || s == bestScore && w.Name < best {
			best, bestScore = w.Name, s
		}
	}
	return best
}

func TestHolderIsRanksHead(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ws := fleet(t)
		key := rapid.Uint64().Draw(t, "key")
		if h, r := holder(key, ws, ""), placement.Rank(key, ws)[0].Name; h != r {
			t.Fatalf("holder %s, Rank's head %s", h, r)
		}
	})
}

// The movement and share properties of weighted rendezvous over 100,000
// keys: shares within 2 percentage points of capacity shares; removing a
// worker moves only the keys it held; adding one moves keys only to it,
// and its share is within 2 points of its weight's share.
func TestRendezvousMovesAndShares(t *testing.T) {
	keys := make([]uint64, shareKeys)
	for i := range keys {
		keys[i] = placement.KeyHash(fmt.Sprintf("key-%d", i))
	}
	checks := 0
	rapid.Check(t, func(t *rapid.T) {
		checks++
		if checks > 20 { // each check ranks 100,000 keys; twenty fleets are plenty
			return
		}
		ws := fleet(t)
		gone := ws[rapid.IntRange(0, len(ws)-1).Draw(t, "leaver")].Name
		joiner := placement.Worker{Name: "new", Capacity: rapid.IntRange(1, 8).Draw(t, "joiner capacity")}
		joined := append(slices.Clone(ws), joiner)
		total := 0
		for _, w := range ws {
			total += w.Capacity
		}
		heads := map[string]int{}
		scores := make([]float64, len(joined))
		for _, k := range keys {
			for i, w := range joined {
				scores[i] = placement.Score(k, w.Name, w.Capacity)
			}
			before, afterLeave, afterJoin := best(joined, scores, len(ws), ""), best(joined, scores, len(ws), gone), best(joined, scores, len(joined), "")
			heads[before]++
			if afterLeave != before && before != gone {
				t.Fatalf("removing %s moved key %016x from %s to %s", gone, k, before, afterLeave)
			}
			if afterJoin != before {
				if afterJoin != joiner.Name {
					t.Fatalf("adding %s moved key %016x from %s to %s", joiner.Name, k, before, afterJoin)
				}
				heads["+"+joiner.Name]++
			}
		}
		for _, w := range ws {
			share, want := float64(heads[w.Name])/shareKeys, float64(w.Capacity)/float64(total)
			if math.Abs(share-want) > 0.02 {
				t.Fatalf("%s (capacity %d of %d) heads %.4f of the keys, its weight's share is %.4f", w.Name, w.Capacity, total, share, want)
			}
		}
		share := float64(heads["+"+joiner.Name]) / shareKeys
		want := float64(joiner.Capacity) / float64(total+joiner.Capacity)
		if math.Abs(share-want) > 0.02 {
			t.Fatalf("joiner (capacity %d, total %d) took %.4f of the keys, its weight's share is %.4f", joiner.Capacity, total+joiner.Capacity, share, want)
		}
	})
}

// best is the name of the highest score among the first n workers but
// skip (ties to the smaller name, as Rank orders them).
func best(ws []placement.Worker, scores []float64, n int, skip string) string {
	name, top := "", -1.0
	for i, w := range ws[:n] {
		if w.Name == skip {
			continue
		}
		if s := scores[i]; s > top || s == top && w.Name < name {
			name, top = w.Name, s
		}
	}
	return name
}
