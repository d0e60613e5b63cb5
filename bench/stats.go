package main

import (
	"math"
	"slices"
)

// median returns the median of xs: the middle value, or the mean of the
// middle two for an even count; NaN for none.
func median(xs []float64) float64 {
	n := len(xs)
	if n == 0 {
		return math.NaN()
	}
	s := slices.Sorted(slices.Values(xs))
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// spread returns the smallest and the largest of xs; NaN for none.
func spread(xs []float64) (lo, hi float64) {
	if len(xs) == 0 {
		return math.NaN(), math.NaN()
	}
	return slices.Min(xs), slices.Max(xs)
}

// pairedRatios returns num[i]/den[i] for every i: the ratio of two
// engines within each round. num and den must have the same length.
func pairedRatios(num, den []float64) []float64 {
	if len(num) != len(den) {
		panic("pairedRatios: lengths differ")
	}
	out := make([]float64, len(num))
	for i := range num {
		out[i] = num[i] / den[i]
	}
	return out
}

// ratio is how two engines compare over the rounds.
type ratio struct {
	Paired   float64 // median of the per-round ratios
	Lo, Hi   float64 // smallest and largest per-round ratio
	OfMedian float64 // median of num over median of den
}

// compare returns how num compares with den, paired by round: over the
// rounds both have (an engine with fewer rounds ran in the first ones).
func compare(num, den []float64) ratio {
	n := min(len(num), len(den))
	num, den = num[:n], den[:n]
	rs := pairedRatios(num, den)
	lo, hi := spread(rs)
	return ratio{Paired: median(rs), Lo: lo, Hi: hi, OfMedian: median(num) / median(den)}
}
