//go:build race

package server_test

// raceEnabled: the race detector makes values escape that do not
// otherwise, so allocation counts hold only without it.
const raceEnabled = true
