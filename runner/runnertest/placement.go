package runnertest

import (
	"sync"

	"github.com/batonwf/baton/runner"
)

// PlacementTally counts a runner's placement events (runner.Hooks'
// Placement) by kind, so that a test can compare them with the counts a
// runner keeps in its own Stats.
type PlacementTally struct {
	mu sync.Mutex
	n  map[runner.PlacementKind]int64
}

// TallyPlacement returns next (which may be nil) with its Placement hook
// wrapped to count into a new tally first, then call next's.
func TallyPlacement(next *runner.Hooks) (*runner.Hooks, *PlacementTally) {
	p := &PlacementTally{n: map[runner.PlacementKind]int64{}}
	var h runner.Hooks
	if next != nil {
		h = *next
	}
	h.Placement = func(e runner.PlacementEvent) {
		p.mu.Lock()
		p.n[e.Kind]++
		p.mu.Unlock()
		next.Placed(e.Kind, e.Action)
	}
	return &h, p
}

// Count returns how many events of kind k the hook was told.
func (p *PlacementTally) Count(k runner.PlacementKind) int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.n[k]
}
