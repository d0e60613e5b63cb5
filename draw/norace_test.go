//go:build !race

package draw

const raceEnabled = false
