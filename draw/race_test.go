//go:build race

package draw

// raceEnabled: the race detector makes values escape that do not
// otherwise, so exact allocation counts hold only without it.
const raceEnabled = true
