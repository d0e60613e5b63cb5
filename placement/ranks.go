package placement

import (
	"math"
	"slices"
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
// A Ranks holds at most maxRankCells list elements (64 MiB); past that it
// forgets every list and starts again. It is not safe for concurrent use
// (a decision may extend a list): one goroutine decides with it at a
// time.
type Ranks struct {
	names  []string
	caps   []int
	hashes []uint64 // NameHash of each name
	index  map[string]int32
	usable bool // the names are distinct

	lists map[uint64]*rankList
	cells int // the elements lists hold
}

// maxRankCells bounds what a Ranks keeps: 4 Mi elements (64 MiB), 20,000
// keys of 200 workers.
const maxRankCells = 1 << 22

// NewRanks returns an empty Ranks for workers: their names and
// capacities, in this order (it keeps copies; workers is not retained).
// Workers with the same name make a Ranks that fits nothing.
func NewRanks(workers []Worker) *Ranks {
	r := &Ranks{names: make([]string, len(workers)), caps: make([]int, len(workers)), hashes: make([]uint64, len(workers)),
		index: make(map[string]int32, len(workers)), lists: map[uint64]*rankList{}}
	for i, w := range workers {
		r.names[i], r.caps[i], r.hashes[i] = w.Name, w.Capacity, NameHash(w.Name)
		r.index[w.Name] = int32(i)
	}
	r.usable = len(r.index) == len(workers)
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

// list returns key's preference list, ordered as far as it was asked
// for (rankList.at orders more).
func (r *Ranks) list(key uint64) *rankList {
	if l, ok := r.lists[key]; ok {
		return l
	}
	// Scores are never negative nor NaN (see score), so their bits order
	// as they do: by the bits' complement, highest score first.
	n := len(r.names)
	keys := make([]rankKey, n)
	i := 0
	for ; i+4 <= n; i += 4 {
		var caps [4]int
		var hs [4]uint64
		for l := range 4 {
			caps[l], hs[l] = r.caps[i+l], pairHash(key, r.hashes[i+l])
		}
		sc := scores4(&caps, &hs)
		for l := range 4 {
			keys[i+l] = rankKey{^math.Float64bits(sc[l]), int32(i + l)}
		}
	}
	for ; i < n; i++ {
		keys[i] = rankKey{^math.Float64bits(score(r.caps[i], pairHash(key, r.hashes[i]))), int32(i)}
	}
	if r.cells+len(keys) > maxRankCells {
		clear(r.lists)
		r.cells = 0
	}
	l := &rankList{keys: keys}
	r.lists[key] = l
	r.cells += len(keys)
	return l
}

// order returns key's whole preference list as indices into the workers
// r was made from: Rank's order.
func (r *Ranks) order(key uint64) []int32 {
	l := r.list(key)
	out := make([]int32, len(l.keys))
	for p := range out {
		out[p] = l.at(r, p)
	}
	return out
}

// rankKey is a worker's index and the complement of its score's bits.
type rankKey struct {
	bits uint64
	i    int32
}

// rankList is one key's preference list: keys[:sorted] are the first
// workers in order; the others, in any order, all come after them. A
// decision that stops early (at Self, or once the delay is MaxDelay)
// orders only the head of the list.
type rankList struct {
	keys   []rankKey
	sorted int
}

// before reports whether a ranks before b: by score, then by name (as
// byScore).
func (r *Ranks) before(a, b rankKey) bool {
	if a.bits != b.bits {
		return a.bits < b.bits
	}
	return r.names[a.i] < r.names[b.i]
}

// at returns the index of the worker at place p of the list, p <
// len(l.keys), ordering the list as far as p first: in chunks that
// double, each found by one pass over the rest keeping its best, so a
// list read to its end costs about what a sort costs.
func (l *rankList) at(r *Ranks, p int) int32 {
	for p >= l.sorted {
		rest := l.keys[l.sorted:]
		k := max(16, l.sorted)
		if 2*k >= len(rest) {
			slices.SortFunc(rest, func(a, b rankKey) int {
				if r.before(a, b) {
					return -1
				}
				if r.before(b, a) {
					return 1
				}
				return 0
			})
			l.sorted = len(l.keys)
			break
		}
		// best holds the k best of rest so far, in order.
		best := make([]rankKey, 0, k)
		for _, x := range rest {
			if len(best) == k && !r.before(x, best[k-1]) {
				continue
			}
			j := len(best)
			if j < k {
				best = append(best, x)
			}
			for j > 0 && r.before(x, best[j-1]) {
				if j < k {
					best[j] = best[j-1]
				}
				j--
			}
			best[j] = x
		}
		// Move them to the front (names are distinct: exactly k of rest
		// rank no later than the k-th), in order.
		last, front := best[k-1], 0
		for i, x := range rest {
			if !r.before(last, x) {
				rest[front], rest[i] = rest[i], rest[front]
				front++
			}
		}
		copy(rest, best)
		l.sorted += k
	}
	return l.keys[p].i
}
