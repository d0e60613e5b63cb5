package runner_test

import (
	"testing"

	"github.com/batonwf/baton/runner"
)

// Every placement kind has a name of its own; an unknown one says its
// number; Placed calls the hook with the event, and is a no-op on nil
// hooks or a nil hook.
func TestPlacementKinds(t *testing.T) {
	seen := map[string]runner.PlacementKind{}
	for k := runner.PlacementClaimed; k <= runner.PlacementUnreadable; k++ {
		s := k.String()
		if s == "" || s[0] == 'P' {
			t.Errorf("kind %d: name %q", k, s)
		}
		if o, dup := seen[s]; dup {
			t.Errorf("kinds %d and %d share the name %q", o, k, s)
		}
		seen[s] = k
	}
	for _, k := range []runner.PlacementKind{0, runner.PlacementUnreadable + 1} {
		if s, want := k.String(), "PlacementKind("; len(s) < len(want) || s[:len(want)] != want {
			t.Errorf("kind %d: %q, want PlacementKind(N)", k, s)
		}
	}
	var got []runner.PlacementEvent
	h := &runner.Hooks{Placement: func(e runner.PlacementEvent) { got = append(got, e) }}
	h.Placed(runner.PlacementSpilled, "a")
	(*runner.Hooks)(nil).Placed(runner.PlacementSpilled, "a")
	(&runner.Hooks{}).Placed(runner.PlacementSpilled, "a")
	if len(got) != 1 || got[0] != (runner.PlacementEvent{Kind: runner.PlacementSpilled, Action: "a"}) {
		t.Errorf("Placed told %v, want one spill of a", got)
	}
	var c runner.Counters
	h2 := c.Hooks(h)
	h2.Placed(runner.PlacementPinMoved, "b")
	if len(got) != 2 || got[1].Kind != runner.PlacementPinMoved {
		t.Errorf("Counters' hooks did not chain Placement: %v", got)
	}
}
