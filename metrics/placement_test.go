package metrics_test

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/batonwf/baton/metrics"
	"github.com/batonwf/baton/runner"
)

// placementFamilies are the metrics the Placement hook moves.
var placementFamilies = []string{
	"baton_claims_total", "baton_spills_total", "baton_pins_allocated_total", "baton_pin_moves_total",
	"baton_lease_renewals_total", "baton_leases_broken_total", "baton_quarantines_total",
	"baton_worker_wedged_total", "baton_worker_draining", "baton_placement_unreadable_total",
}

// placementValues returns every series of placementFamilies as
// "name{label=value}" -> value.
func placementValues(t *testing.T, g prometheus.Gatherer) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for _, name := range placementFamilies {
		for _, m := range family(t, g, name).GetMetric() {
			var ls []string
			for _, l := range m.GetLabel() {
				ls = append(ls, l.GetName()+"="+l.GetValue())
			}
			v := m.GetCounter().GetValue()
			if m.Gauge != nil {
				v = m.GetGauge().GetValue()
			}
			out[name+"{"+strings.Join(ls, ",")+"}"] = v
		}
	}
	return out
}

// TestPlacementHookMovesItsMetric: each kind of placement event moves
// its own series by one (the draining gauge to 1, then back to 0), and
// nothing else; an action name not registered counts as other; the next
// hooks see every event.
func TestPlacementHookMovesItsMetric(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := metrics.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	m.Actions(handlers(nil))
	var seen []runner.PlacementEvent
	h := m.Hooks(&runner.Hooks{Placement: func(e runner.PlacementEvent) { seen = append(seen, e) }})

	steps := []struct {
		kind   runner.PlacementKind
		action string
		series string
		want   float64
	}{
		{runner.PlacementClaimed, "ok", "baton_claims_total{outcome=claimed}", 1},
		{runner.PlacementClaimedInTransition, "ok", "baton_claims_total{outcome=in_transition}", 1},
		{runner.PlacementClaimLost, "ok", "baton_claims_total{outcome=lost}", 1},
		{runner.PlacementSpilled, "ok", "baton_spills_total{action=ok}", 1},
		{runner.PlacementSpilled, "nobody-registered-this", "baton_spills_total{action=other}", 1},
		{runner.PlacementPinAllocated, "ok", "baton_pins_allocated_total{}", 1},
		{runner.PlacementPinMoved, "ok", "baton_pin_moves_total{}", 1},
		{runner.PlacementLeaseRenewed, "slow", "baton_lease_renewals_total{}", 1},
		{runner.PlacementLeaseBroken, "", "baton_leases_broken_total{}", 1},
		{runner.PlacementQuarantined, "fail", "baton_quarantines_total{action=fail}", 1},
		{runner.PlacementWedged, "", "baton_worker_wedged_total{}", 1},
		{runner.PlacementDraining, "", "baton_worker_draining{}", 1},
		{runner.PlacementUndrained, "", "baton_worker_draining{}", 0},
		{runner.PlacementUnreadable, "", "baton_placement_unreadable_total{}", 1},
	}
	before := placementValues(t, reg)
	for _, s := range steps {
		if _, ok := before[s.series]; !ok {
			t.Fatalf("no series %s before any event (want every series at zero from New and Actions)", s.series)
		}
	}
	for _, s := range steps {
		h.Placed(s.kind, s.action)
		after := placementValues(t, reg)
		var moved []string
		for k, v := range after {
			if v != before[k] {
				moved = append(moved, fmt.Sprintf("%s %v -> %v", k, before[k], v))
			}
		}
		sort.Strings(moved)
		if after[s.series] != s.want || len(moved) != 1 {
			t.Errorf("%v(%q): %s = %v, want %v; moved: %v", s.kind, s.action, s.series, after[s.series], s.want, moved)
		}
		before = after
	}
	if len(seen) != len(steps) {
		t.Fatalf("the next hooks saw %d events, want %d", len(seen), len(steps))
	}
	for i, s := range steps {
		if seen[i] != (runner.PlacementEvent{Kind: s.kind, Action: s.action}) {
			t.Errorf("next hook's event %d: %+v, want %v %q", i, seen[i], s.kind, s.action)
		}
	}
	// A kind this version does not know moves nothing, and does not panic.
	h.Placed(runner.PlacementKind(200), "ok")
	if after := placementValues(t, reg); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("an unknown kind moved something: %v, was %v", after, before)
	}
}

// TestPlacementLint: with the placement metrics holding samples, the
// linter finds nothing to say about them.
func TestPlacementLint(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := metrics.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	h := m.Hooks(nil)
	for k := runner.PlacementClaimed; k <= runner.PlacementUnreadable; k++ {
		h.Placed(k, "ok")
	}
	for _, name := range placementFamilies {
		problems, err := testutil.GatherAndLint(reg, name)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range problems {
			t.Errorf("lint: %s: %s", p.Metric, p.Text)
		}
	}
}
