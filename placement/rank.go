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
	out := slices.Clone(workers)
	rankInPlace(key, out)
	return out
}

func rankInPlace(key uint64, ws []Worker) {
	type scored struct {
		s float64
		w Worker
	}
	sc := make([]scored, len(ws))
	for i, w := range ws {
		sc[i] = scored{score(w.Capacity, PairHash(key, w.Name)), w}
	}
	slices.SortFunc(sc, func(a, b scored) int {
		if c := cmp.Compare(b.s, a.s); c != 0 {
			return c
		}
		return cmp.Compare(a.w.Name, b.w.Name)
	})
	for i := range sc {
		ws[i] = sc[i].w
	}
}

// Score returns the weighted rendezvous score of a worker of the given
// name and capacity for a key (the value Rank orders by, highest first).
// It is the same bit for bit on every platform.
func Score(key uint64, name string, capacity int) float64 {
	return score(capacity, PairHash(key, name))
}
