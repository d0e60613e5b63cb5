package kafka_test

import (
	"sync"
	"testing"

	"github.com/batonwf/baton/runner"
	kafkarunner "github.com/batonwf/baton/runner/kafka"
)

// placementTally counts a runner's placement events (runner.Hooks'
// Placement), by kind.
type placementTally struct {
	mu sync.Mutex
	n  map[runner.PlacementKind]int64
}

// tallyPlacement returns next (which may be nil) with its Placement hook
// wrapped to count into a new tally first.
func tallyPlacement(next *runner.Hooks) (*runner.Hooks, *placementTally) {
	p := &placementTally{n: map[runner.PlacementKind]int64{}}
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

func (p *placementTally) get(k runner.PlacementKind) int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.n[k]
}

// check says where the hook's counts differ from the runner's Stats,
// which count the same events: once Run returned, every event counted
// in one was told to the other. Every runner start starts is checked so
// when its test ends: the tests that quarantine a worker, wedge one or
// feed it bad control records prove that the hook tells each.
func (p *placementTally) check(t testing.TB, name string, s kafkarunner.Stats) {
	t.Helper()
	for _, c := range []struct {
		kind  runner.PlacementKind
		stats int64
	}{
		{runner.PlacementQuarantined, s.Quarantines}, {runner.PlacementWedged, s.Wedged},
		{runner.PlacementUnreadable, s.BadControl + s.BadMembers},
	} {
		if got := p.get(c.kind); got != c.stats {
			t.Errorf("runner %s: the Placement hook told %d %v events, its Stats count %d", name, got, c.kind, c.stats)
		} else if got > 0 && testing.Verbose() {
			t.Logf("runner %s: %d %v events, told and counted", name, got, c.kind)
		}
	}
}
