package placement

import "math"

// scores4 is score for four workers at once: the same operations on each
// value as score and ln, in the same order, so each result is bit for bit
// score's; interleaved, the four series' multiply-add chains overlap
// instead of waiting on one another (a Ranks scores every worker for each
// key it ranks).
func scores4(caps *[4]int, hs *[4]uint64) (out [4]float64) {
	var m, s, s2, sum [4]float64
	var e [4]int
	for l := range 4 {
		m[l], e[l] = math.Frexp(unit(hs[l]))
		if m[l] < math.Sqrt2/2 {
			m[l] = float64(m[l] * 2)
			e[l]--
		}
		s[l] = float64(float64(m[l]-1) / float64(m[l]+1))
		s2[l] = float64(s[l] * s[l])
	}
	series := [...]float64{1.0 / 33, 1.0 / 31, 1.0 / 29, 1.0 / 27, 1.0 / 25, 1.0 / 23, 1.0 / 21, 1.0 / 19,
		1.0 / 17, 1.0 / 15, 1.0 / 13, 1.0 / 11, 1.0 / 9, 1.0 / 7, 1.0 / 5, 1.0 / 3, 1}
	for _, c := range series {
		sum[0] = float64(float64(sum[0]*s2[0]) + c)
		sum[1] = float64(float64(sum[1]*s2[1]) + c)
		sum[2] = float64(float64(sum[2]*s2[2]) + c)
		sum[3] = float64(float64(sum[3]*s2[3]) + c)
	}
	for l := range 4 {
		lnm := float64(float64(2*s[l]) * sum[l])
		ln := float64(float64(float64(e[l])*math.Ln2) + lnm)
		if caps[l] > 0 {
			out[l] = float64(caps[l]) / float64(-ln)
		}
	}
	return out
}
