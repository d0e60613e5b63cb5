package zk

import (
	"testing"

	"github.com/batonwf/baton/placement"
)

// The work loop keeps its Ranks while the registry's workers keep their
// names and capacities (a load, a state or a live node changing leaves
// the lists good), makes a new one when a worker joins or a capacity
// changes, and asks for no reasons.
func TestRankedKeepsRanks(t *testing.T) {
	ws := []placement.Worker{{Name: "a", Capacity: 2, Live: true}, {Name: "b", Capacity: 4, Live: true}}
	v, r1 := ranked(placement.View{Self: "a", Workers: ws}, nil)
	if r1 == nil || v.Ranks != r1 || !v.NoReasons {
		t.Fatalf("first view: Ranks %p (kept %p), NoReasons %v", v.Ranks, r1, v.NoReasons)
	}
	moved := []placement.Worker{{Name: "a", Capacity: 2, Live: true, Load: placement.Load{Running: 2}}, {Name: "b", Capacity: 4, State: placement.StateDraining}}
	if _, r2 := ranked(placement.View{Self: "a", Workers: moved}, r1); r2 != r1 {
		t.Errorf("a change of load, state and liveness made a new Ranks")
	}
	for _, other := range [][]placement.Worker{
		{{Name: "a", Capacity: 2}, {Name: "b", Capacity: 3}},
		{{Name: "a", Capacity: 2}, {Name: "b", Capacity: 4}, {Name: "c", Capacity: 1}},
	} {
		if v, r2 := ranked(placement.View{Self: "a", Workers: other}, r1); r2 == r1 || v.Ranks != r2 || !r2.Fits(other) {
			t.Errorf("workers %v: the old Ranks kept", other)
		}
	}
}
