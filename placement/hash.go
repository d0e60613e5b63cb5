package placement

import "math"

// The fixed 64-bit hash of placement: FNV-1a (64-bit) followed by
// splitmix64's finaliser. Both are fully specified, so every version of
// baton on every platform computes the same value (hash/maphash is seeded
// per process, so two processes would disagree on every key). FNV-1a is in
// the standard library and is already job's hash for retry jitter; its high
// bits barely move with the last bytes written, which the finaliser fixes
// by mixing all 64 bits into each. Nothing here resists an adversary: a
// workflow's author chooses its keys anyway.

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// fnv1a returns the 64-bit FNV-1a hash of s.
func fnv1a(s string) uint64 {
	h := uint64(fnvOffset)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= fnvPrime
	}
	return h
}

// mix is splitmix64's finaliser: a bijection of 64-bit values in which
// every input bit moves every output bit.
func mix(x uint64) uint64 {
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// KeyHash returns the 64-bit hash of an affinity key: the value a queue
// entry's route token carries (Route.Key) and Rank ranks workers by.
func KeyHash(key string) uint64 { return mix(fnv1a(key)) }

// NameHash returns the 64-bit hash of a worker's name. Rank combines it
// with a key's hash; a runner may compute it once per worker.
func NameHash(name string) uint64 { return mix(fnv1a(name) ^ 0x9e3779b97f4a7c15) }

// PairHash is the hash of (key, worker) that weighted rendezvous scores:
// the key's hash and the worker's name hash mixed again, so that for any
// two workers the pairs' hashes over many keys behave as independent.
func PairHash(key uint64, name string) uint64 { return pairHash(key, NameHash(name)) }

func pairHash(key, nameHash uint64) uint64 { return mix(key ^ nameHash) }

// unit maps a hash into the open interval (0,1): its top 52 bits and a
// half, over 2^52, every step exact in float64 (with 53 bits the largest
// value would round to 1), so neither 0 nor 1 is ever reached.
func unit(h uint64) float64 {
	return (float64(h>>12) + 0.5) / (1 << 52)
}

// score is the weighted rendezvous score of a worker of the given capacity
// for a key whose pair hash is h: capacity / -ln(u), u = unit(h). A
// larger score ranks first. A capacity of zero or less scores 0: such a
// worker ranks after every worker that can run anything.
func score(capacity int, h uint64) float64 {
	if capacity <= 0 {
		return 0
	}
	return float64(capacity) / float64(-ln(unit(h)))
}

// ln is the natural logarithm of x in (0,1), computed with basic
// operations only, each rounded to float64 by an explicit conversion: the
// Go spec lets a compiler fuse a multiply and an add (arm64, ppc64 and
// s390x do) unless a conversion forbids it, and math.Log is assembly on
// some platforms and Go on others. So the score, and the order of a
// preference list, are bit for bit the same everywhere; accuracy is
// about 1e-15 relative, far more than ranking needs.
//
// x = m * 2^e with m in [1/2, 1) (math.Frexp is exact), then m is scaled
// into [sqrt(1/2), sqrt(2)) and ln(m) = 2 atanh(s), s = (m-1)/(m+1),
// |s| < 0.172, summed as a series to s^33.
func ln(x float64) float64 {
	m, e := math.Frexp(x)
	if m < math.Sqrt2/2 {
		m = float64(m * 2)
		e--
	}
	s := float64(float64(m-1) / float64(m+1))
	s2 := float64(s * s)
	// The coefficients 1/33, 1/31, ..., 1/1, highest first (Horner's
	// order): constant expressions are exact in Go, rounded once to
	// float64, the same on every platform.
	series := [...]float64{1.0 / 33, 1.0 / 31, 1.0 / 29, 1.0 / 27, 1.0 / 25, 1.0 / 23, 1.0 / 21, 1.0 / 19,
		1.0 / 17, 1.0 / 15, 1.0 / 13, 1.0 / 11, 1.0 / 9, 1.0 / 7, 1.0 / 5, 1.0 / 3, 1}
	sum := 0.0
	for _, c := range series {
		sum = float64(float64(sum*s2) + c)
	}
	lnm := float64(float64(2*s) * sum)
	return float64(float64(float64(e)*math.Ln2) + lnm)
}
