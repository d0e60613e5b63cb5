package placement

import (
	"cmp"
	"slices"
)

// Rank returns the preference list of a key: the workers ordered by their
// weighted rendezvous score for it, highest first. A worker's score is
// Capacity / -ln(u), with u the PairHash of (key, its name) mapped into
// (0,1); equal scores (vanishingly rare unless capacities are zero) order
// by name. Rank reads only the workers' names and capacities: it ranks
// down, draining and quarantined workers too, and Decide skips those.
//
// The list is the same in every process given the same workers in any
// order. Removing a worker leaves the others' order unchanged, so only the
// keys it headed move, and they go to their next workers, spread over all
// of them by weight; a worker that joins heads a share of keys equal in
// expectation to its share of the total capacity, taken from every other.
//
// Rank returns a new slice the caller owns (the Worker values are copied;
// their maps are shared with the input). It costs one hash per worker and
// a sort.
func Rank(key uint64, workers []Worker) []Worker {
	ps := make([]*Worker, len(workers))
	for i := range workers {
		ps[i] = &workers[i]
	}
	rankPtrs(key, ps)
	out := make([]Worker, len(ps))
	for i, w := range ps {
		out[i] = *w
	}
	return out
}

// scored is a worker's index in some list and its score for one key or
// entry (an index, not a pointer: sorting moves no pointer).
type scored struct {
	s    float64
	i    int32
	name string
}

// byScore orders by score, highest first, then by name.
func byScore(a, b scored) int {
	if c := cmp.Compare(b.s, a.s); c != 0 {
		return c
	}
	return cmp.Compare(a.name, b.name)
}

// rankPtrs orders ws by their scores for key, as Rank does, computing
// each score once.
func rankPtrs(key uint64, ws []*Worker) {
	sc := make([]scored, len(ws))
	for i, w := range ws {
		sc[i] = scored{score(w.Capacity, PairHash(key, w.Name)), int32(i), w.Name}
	}
	slices.SortFunc(sc, byScore)
	orig := slices.Clone(ws)
	for i := range sc {
		ws[i] = orig[sc[i].i]
	}
}

// Score returns the weighted rendezvous score of a worker of the given
// name and capacity for a key (the value Rank orders by, highest first).
// It is the same bit for bit on every platform.
func Score(key uint64, name string, capacity int) float64 {
	return score(capacity, PairHash(key, name))
}
