package placement

import (
	"math"
	"slices"
	"strings"
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
// A key's list is first ordered only as far as its head (the first 16
// workers, what a decision without reasons nearly always reads): when the
// workers have at most four distinct capacities, by selecting each
// capacity's best by hash (no logarithm) and scoring those alone; else by
// an approximate score of every worker. Either gives Rank's order.
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

	// group numbers each worker's capacity among the distinct positive
	// ones (-1 for a capacity of zero or less), when there are at most
	// maxGroups of them and at least headLen workers have one; else
	// group is nil and head scores every worker approximately.
	group   []int8
	ngroups int
	scratch []uint64 // head's pair hashes, one per worker (a Ranks is not safe for concurrent use)

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
	r.groupCapacities()
	return r
}

// maxGroups bounds the distinct capacities head selects by hash within
// (headLen candidates each at least): past it, scoring every worker
// approximately costs less.
const maxGroups = 4

// groupCapacities sets group and ngroups (see Ranks).
func (r *Ranks) groupCapacities() {
	var caps []int
	group := make([]int8, len(r.caps))
	positive := 0
	for i, c := range r.caps {
		if c <= 0 {
			group[i] = -1
			continue
		}
		positive++
		g := slices.Index(caps, c)
		if g < 0 {
			if len(caps) == maxGroups {
				return
			}
			g = len(caps)
			caps = append(caps, c)
		}
		group[i] = int8(g)
	}
	if positive < headLen {
		return
	}
	r.group, r.ngroups, r.scratch = group, len(caps), make([]uint64, len(r.caps))
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
// for (rankList.at orders the rest when asked for more).
func (r *Ranks) list(key uint64) *rankList {
	if l, ok := r.lists[key]; ok {
		return l
	}
	l := &rankList{key: key, n: len(r.names)}
	switch {
	case l.n <= 2*headLen:
		l.head, l.whole = r.exactOrder(key, nil), true
	case r.group != nil:
		for i, h := range r.hashes {
			r.scratch[i] = pairHash(key, h)
		}
		l.head = r.headByHash(r.scratch)
	default:
		l.head = r.head(key)
	}
	if r.cells+len(l.head) > maxRankCells {
		clear(r.lists)
		r.cells = 0
	}
	r.lists[key] = l
	r.cells += len(l.head)
	return l
}

// headLen is how many workers a list orders first: a decision without
// reasons rarely reads further (the holder, and MaxDelay / StepDelay
// workers with room after it).
const headLen = 16

// headByHash returns the first headLen workers of a key's preference
// list, in order, given hs, the pair hash of the key and each worker;
// r.group must be set. Among workers of one capacity, score orders as
// unit(h) does, since -ln is decreasing: so the first headLen of the list
// are among the first headLen of each capacity by hash, found with
// integer compares and no logarithm, and only those are scored exactly.
// A margin keeps the workers whose hashes come within 2^-39 of a group's
// headLen-th (in unit): ln's rounding (about 1e-15 relative, so under
// 4e-14 for any unit(h)) could order those against it otherwise than
// their hashes do, while any worker past the margin scores below it by
// a gap of at least 2^-39 in -ln, which no rounding closes.
func (r *Ranks) headByHash(hs []uint64) []int32 {
	var best [maxGroups][headLen]uint64 // each group's largest hashes >> 12, largest first
	var nb [maxGroups]int
	for i, h := range hs {
		g := r.group[i]
		if g < 0 {
			continue
		}
		u := h >> 12 // what unit reads
		b, n := &best[g], nb[g]
		if n == headLen && u <= b[headLen-1] {
			continue
		}
		j := n
		if n < headLen {
			nb[g]++
		} else {
			j = headLen - 1
		}
		for j > 0 && b[j-1] < u {
			b[j] = b[j-1]
			j--
		}
		b[j] = u
	}
	const margin = 1 << 13 // 2^-39 in unit
	var cut [maxGroups]uint64
	for g := range r.ngroups {
		if nb[g] == headLen {
			cut[g] = best[g][headLen-1] - min(best[g][headLen-1], margin)
		}
	}
	cands := make([]int32, 0, headLen*r.ngroups+8)
	for i, h := range hs {
		if g := r.group[i]; g >= 0 && h>>12 >= cut[g] {
			cands = append(cands, int32(i))
		}
	}
	order := r.exactOrderOf(hs, cands)
	return order[:headLen:headLen]
}

// head returns the first headLen workers of key's preference list, in
// order, scoring exactly only those that may be among them: every worker
// is scored first by approxScore, whose relative error is below
// approxErr (see approxNegLn), and a worker whose approximate score is
// below (1-3·approxErr) times the headLen-th best approximate score
// cannot be among the first headLen by exact score.
func (r *Ranks) head(key uint64) []int32 {
	approx := make([]float64, len(r.names))
	var best [headLen]float64 // the largest approximate scores, largest first
	nb := 0
	for i := range r.names {
		a := 0.0
		if r.caps[i] > 0 {
			a = float64(r.caps[i]) / approxNegLn(pairHash(key, r.hashes[i]))
		}
		approx[i] = a
		if nb == headLen && a <= best[headLen-1] {
			continue
		}
		j := nb
		if nb < headLen {
			nb++
		} else {
			j = headLen - 1
		}
		for j > 0 && best[j-1] < a {
			best[j] = best[j-1]
			j--
		}
		best[j] = a
	}
	cut := best[headLen-1] * (1 - 3*approxErr)
	var cands []int32
	for i, a := range approx {
		if a >= cut { // with cut 0 (fewer workers with capacity than headLen), every worker
			cands = append(cands, int32(i))
		}
	}
	order := r.exactOrder(key, cands)
	return order[:headLen:headLen]
}

// exactOrder orders the workers of the given indices (nil: every worker)
// by their exact scores for key, as Rank does.
func (r *Ranks) exactOrder(key uint64, idx []int32) []int32 {
	return r.order4(func(i int32) uint64 { return pairHash(key, r.hashes[i]) }, idx)
}

// exactOrderOf is exactOrder given the pair hashes hs of the key and
// every worker.
func (r *Ranks) exactOrderOf(hs []uint64, idx []int32) []int32 {
	return r.order4(func(i int32) uint64 { return hs[i] }, idx)
}

// order4 orders the workers of the given indices (nil: every worker) by
// their exact scores, hash(i) being worker i's pair hash.
func (r *Ranks) order4(hash func(int32) uint64, idx []int32) []int32 {
	n := len(idx)
	if idx == nil {
		n = len(r.names)
	}
	at := func(p int) int32 {
		if idx == nil {
			return int32(p)
		}
		return idx[p]
	}
	// Scores are never negative nor NaN (see score), so their bits order
	// as they do: by the bits' complement, highest score first.
	keys := make([]rankKey, n)
	p := 0
	for ; p+4 <= n; p += 4 {
		var caps [4]int
		var hs [4]uint64
		for l := range 4 {
			i := at(p + l)
			caps[l], hs[l] = r.caps[i], hash(i)
		}
		sc := scores4(&caps, &hs)
		for l := range 4 {
			keys[p+l] = rankKey{^math.Float64bits(sc[l]), at(p + l)}
		}
	}
	for ; p < n; p++ {
		i := at(p)
		keys[p] = rankKey{^math.Float64bits(score(r.caps[i], hash(i))), i}
	}
	slices.SortFunc(keys, func(a, b rankKey) int {
		if a.bits != b.bits {
			if a.bits < b.bits {
				return -1
			}
			return 1
		}
		return strings.Compare(r.names[a.i], r.names[b.i])
	})
	out := make([]int32, n)
	for p := range keys {
		out[p] = keys[p].i
	}
	return out
}

// order returns key's whole preference list as indices into the workers
// r was made from: Rank's order.
func (r *Ranks) order(key uint64) []int32 {
	l := r.list(key)
	out := make([]int32, l.n)
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

// rankList is one key's preference list over n workers: head holds the
// first of them in order (headLen), or all of them once whole.
type rankList struct {
	key   uint64
	n     int
	head  []int32
	whole bool
}

// at returns the index of the worker at place p < l.n of the list,
// ordering the whole list first if p is past its head.
func (l *rankList) at(r *Ranks, p int) int32 {
	if p >= len(l.head) && !l.whole {
		r.cells += l.n - len(l.head)
		l.head, l.whole = r.exactOrder(l.key, nil), true
	}
	return l.head[p]
}

// approxErr bounds the relative error of approxNegLn (and so of an
// approximate score against score), with a wide margin: the series'
// remainder is below 1e-7 (see approxNegLn) and each rounding adds about
// 1e-16.
const approxErr = 1e-6

// approxNegLn is -ln(unit(h)), as ln computes it but with the series
// cut after four terms, and free to fuse operations: ln(m) = 2s(1 + s²/3
// + s⁴/5 + s⁶/7 + R) with |s| < 0.1716, so |R| < s⁸/(9(1-s²)) < 9e-8
// relative to ln(m), all terms having one sign; and when ln(u) = e·ln2 +
// ln(m) with e < 0, |ln(m)| ≤ ln(√2) ≤ |e·ln2 + ln(m)|, so the relative
// error of the sum is no larger.
func approxNegLn(h uint64) float64 {
	m, e := math.Frexp(unit(h))
	if m < math.Sqrt2/2 {
		m *= 2
		e--
	}
	s := (m - 1) / (m + 1)
	s2 := s * s
	lnm := 2 * s * (1 + s2*(1.0/3+s2*(1.0/5+s2*(1.0/7))))
	return -(float64(e)*math.Ln2 + lnm)
}
