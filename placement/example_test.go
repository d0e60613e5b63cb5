package placement_test

import (
	"fmt"
	"time"

	"github.com/batonwf/baton/placement"
)

// The preference list of a key over three workers, one of them with twice
// the capacity: any process computes the same list from the same
// registry.
func ExampleRank() {
	workers := []placement.Worker{
		{Name: "w1", Capacity: 4},
		{Name: "w2", Capacity: 8},
		{Name: "w3", Capacity: 4},
	}
	for _, key := range []string{"dataset-42", "dataset-43", "dataset-44"} {
		fmt.Print(key, ":")
		for _, w := range placement.Rank(placement.KeyHash(key), workers) {
			fmt.Print(" ", w.Name)
		}
		fmt.Println()
	}
	// Output:
	// dataset-42: w2 w3 w1
	// dataset-43: w1 w3 w2
	// dataset-44: w2 w3 w1
}

// Three workers agree on a view; an entry of a soft key with a 2 s wait
// arrives while the key's holder is busy. Each decides alone: the holder
// passes, the next in the key's order spills after the wait, the third
// waits a step behind it.
func ExampleDecide() {
	t0 := time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)
	worker := func(name string, running int) placement.Worker {
		return placement.Worker{Name: name, State: placement.StateAvailable, Live: true, Capacity: 2,
			Actions: []string{"resize"}, Load: placement.Load{Running: running}}
	}
	key := placement.KeyHash("dataset-42")
	view := placement.View{Workers: []placement.Worker{worker("w1", 0), worker("w2", 2), worker("w3", 1)}}
	route := placement.Route{Kind: placement.RouteSoft, Key: key, Wait: 2 * time.Second}
	tok, _ := route.Token()
	entry := placement.Entry{ID: "a-0000000042-" + tok, Action: "resize", Route: route, Seen: t0}
	for _, self := range placement.Rank(key, view.Workers) {
		view.Self = self.Name
		fmt.Printf("%s at +0s: %s\n", self.Name, placement.Decide(view, entry, t0))
	}
	view.Self = "w1"
	fmt.Printf("w1 at +2s: %s\n", placement.Decide(view, entry, t0.Add(2*time.Second)))
	// Output:
	// w2 at +0s: pass: w2 is full: 2/2
	// w3 at +0s: wait: holder w2 busy 2/2, spill at +2s
	// w1 at +0s: wait: holder w2 busy 2/2, spill to w3 first, here at +2.1s
	// w1 at +2s: wait: holder w2 busy 2/2, spill to w3 first, here at +50ms
}

// Three members share twelve partitions; a fourth joins and takes one from
// each; a member that drains gives all of its away.
func ExampleBalance() {
	var parts []placement.Partition
	for i := range 12 {
		parts = append(parts, placement.Partition{Topic: "baton.restart", ID: i})
	}
	members := []placement.Member{{ID: "a", Name: "w1", Capacity: 4}, {ID: "b", Name: "w2", Capacity: 4}, {ID: "c", Name: "w3", Capacity: 4}}
	show := func(a placement.Assignment, ms []placement.Member) {
		for _, m := range ms {
			fmt.Printf(" %s%v", m.Name, ids(a[m.ID]))
		}
		fmt.Println()
	}
	a := placement.Balance(members, parts)
	show(a, members)

	claim := func(a placement.Assignment, gen int32) {
		for i := range members {
			members[i].Owned, members[i].Generation = a[members[i].ID], gen
		}
	}
	claim(a, 1)
	members = append(members, placement.Member{ID: "d", Name: "w4", Capacity: 4})
	a = placement.Balance(members, parts)
	show(a, members)

	claim(a, 2)
	members[0].Draining = true
	show(placement.Balance(members, parts), members)
	// Output:
	//  w1[0 1 2 3] w2[4 5 6 7] w3[8 9 10 11]
	//  w1[0 1 2] w2[4 5 6] w3[8 9 10] w4[3 7 11]
	//  w1[] w2[0 4 5 6] w3[1 8 9 10] w4[2 3 7 11]
}

func ids(ps []placement.Partition) []int {
	out := []int{}
	for _, p := range ps {
		out = append(out, p.ID)
	}
	return out
}
