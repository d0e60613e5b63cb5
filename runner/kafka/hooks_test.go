package kafka_test

import (
	"testing"

	"github.com/batonwf/baton/runner"
	kafkarunner "github.com/batonwf/baton/runner/kafka"
	"github.com/batonwf/baton/runner/runnertest"
)

// checkPlacement says where the hook's counts differ from the runner's Stats,
// which count the same events: once Run returned, every event counted
// in one was told to the other. Every runner start starts is checked so
// when its test ends: the tests that quarantine a worker, wedge one or
// feed it bad control records prove that the hook tells each.
func checkPlacement(p *runnertest.PlacementTally, t testing.TB, name string, s kafkarunner.Stats) {
	t.Helper()
	for _, c := range []struct {
		kind  runner.PlacementKind
		stats int64
	}{
		{runner.PlacementQuarantined, s.Quarantines}, {runner.PlacementWedged, s.Wedged},
		{runner.PlacementUnreadable, s.BadControl + s.BadMembers},
	} {
		if got := p.Count(c.kind); got != c.stats {
			t.Errorf("runner %s: the Placement hook told %d %v events, its Stats count %d", name, got, c.kind, c.stats)
		} else if got > 0 && testing.Verbose() {
			t.Logf("runner %s: %d %v events, told and counted", name, got, c.kind)
		}
	}
}
