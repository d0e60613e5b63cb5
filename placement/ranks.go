package placement

import (
	"slices"
	"sync"
)

// Ranks memoises preference lists: the order Rank gives each key, over
// one list of workers, computed the first time a key is asked for and
// kept. A Rank reads only the workers' names and capacities, so a Ranks
// stays good while those stay the same, whatever the workers' states,
// loads and quarantines do; a runner keeps one while its registry's names
// and capacities hold, and makes a new one when they change (Fits says
// whether they did).
//
// Given to Decide in View.Ranks, it makes a keyed decision cost a walk of
// the key's cached list (with the default allocator, only down to the
// deciding worker) instead of a hash per worker and a sort, and Decide
// decides the same with and without it. The view's workers must have the
// names and capacities the Ranks was made from, in the same order (Fits,
// which costs a comparison per worker: a runner checks it once per view,
// not per entry); Decide checks only their number.
//
// A Ranks holds at most maxRankCells list elements (16 MiB); past that it
// forgets every list and starts again. It is safe for concurrent use.
type Ranks struct {
	names  []string
	caps   []int
	hashes []uint64 // NameHash of each name
	usable bool     // the names are distinct

	mu      sync.Mutex
	lists   map[uint64][]int32 // key -> indices into names, in preference order
	cells   int                // the elements lists hold
	scratch []scored
}

// maxRankCells bounds what a Ranks keeps: 4 Mi indices (16 MiB), 20,000
// keys of 200 workers.
const maxRankCells = 1 << 22

// NewRanks returns an empty Ranks for workers: their names and
// capacities, in this order (it keeps copies; workers is not retained).
// Workers with the same name make a Ranks that fits nothing.
func NewRanks(workers []Worker) *Ranks {
	r := &Ranks{names: make([]string, len(workers)), caps: make([]int, len(workers)), hashes: make([]uint64, len(workers)),
		lists: map[uint64][]int32{}}
	for i, w := range workers {
		r.names[i], r.caps[i], r.hashes[i] = w.Name, w.Capacity, NameHash(w.Name)
	}
	sorted := slices.Clone(r.names)
	slices.Sort(sorted)
	r.usable = len(slices.Compact(sorted)) == len(r.names)
	return r
}

// Fits reports whether r was made from workers of the same names and
// capacities as workers, in the same order: whether Decide may read
// preference lists from it for a view of workers. A nil Ranks fits
// nothing.
func (r *Ranks) Fits(workers []Worker) bool {
	if r == nil || !r.usable || len(workers) != len(r.names) {
		return false
	}
	for i := range workers {
		if workers[i].Name != r.names[i] || workers[i].Capacity != r.caps[i] {
			return false
		}
	}
	return true
}

// order returns key's preference list as indices into the workers r was
// made from: Rank's order. The slice is shared; nobody modifies it.
func (r *Ranks) order(key uint64) []int32 {
	r.mu.Lock()
	defer r.mu.Unlock()
	if o, ok := r.lists[key]; ok {
		return o
	}
	sc := r.scratch[:0]
	for i, name := range r.names {
		sc = append(sc, scored{score(r.caps[i], pairHash(key, r.hashes[i])), int32(i), name})
	}
	slices.SortFunc(sc, byScore)
	o := make([]int32, len(sc))
	for i := range sc {
		o[i] = sc[i].i
	}
	r.scratch = sc
	if r.cells+len(o) > maxRankCells {
		clear(r.lists)
		r.cells = 0
	}
	r.lists[key] = o
	r.cells += len(o)
	return o
}
