package placement_test

import (
	"fmt"
	"reflect"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/batonwf/baton/placement"
)

// drawGroup draws 1 to 8 members (some draining) and 1 or 2 topics of 1
// to 24 partitions.
func drawGroup(t *rapid.T) ([]placement.Member, []placement.Partition) {
	n := rapid.IntRange(1, 8).Draw(t, "members")
	ms := make([]placement.Member, n)
	for i := range ms {
		ms[i] = placement.Member{
			ID:       fmt.Sprintf("m-%d", rapid.IntRange(0, 1000).Draw(t, "id")) + fmt.Sprint(i),
			Name:     fmt.Sprintf("w%d", i),
			Capacity: rapid.IntRange(0, 4).Draw(t, "capacity"),
			Draining: rapid.IntRange(0, 5).Draw(t, "draining") == 0,
		}
	}
	var ps []placement.Partition
	for _, topic := range []string{"b.restart", "b.act.a"}[:rapid.IntRange(1, 2).Draw(t, "topics")] {
		for id := range rapid.IntRange(1, 24).Draw(t, "partitions") {
			ps = append(ps, placement.Partition{Topic: topic, ID: id})
		}
	}
	return ms, ps
}

// owned feeds an assignment back as the members' claims of generation gen.
func owned(ms []placement.Member, a placement.Assignment, gen int32) []placement.Member {
	out := slices.Clone(ms)
	for i := range out {
		out[i].Owned = a[out[i].ID]
		out[i].Generation = gen
	}
	return out
}

func ownerMap(a placement.Assignment) map[placement.Partition]string {
	m := map[placement.Partition]string{}
	for id, ps := range a {
		for _, p := range ps {
			m[p] = id
		}
	}
	return m
}

// checkBalanced checks the shares: every partition assigned once to a
// member that is not draining, each member's count per topic the floor or
// ceiling of its capacity-weighted share; nothing when all drain.
func checkBalanced(t *rapid.T, ms []placement.Member, ps []placement.Partition, a placement.Assignment) {
	t.Helper()
	if len(a) != len(ms) {
		t.Fatalf("%d entries for %d members", len(a), len(ms))
	}
	seen := map[placement.Partition]string{}
	for id, got := range a {
		for _, p := range got {
			if other, ok := seen[p]; ok {
				t.Fatalf("%v assigned to %s and %s", p, other, id)
			}
			seen[p] = id
		}
	}
	active := slices.DeleteFunc(slices.Clone(ms), func(m placement.Member) bool { return m.Draining })
	if len(active) == 0 {
		if len(seen) != 0 {
			t.Fatalf("every member drains, yet %d partitions were assigned", len(seen))
		}
		return
	}
	if len(seen) != len(ps) {
		t.Fatalf("%d of %d partitions assigned", len(seen), len(ps))
	}
	total := 0
	for _, m := range active {
		total += max(m.Capacity, 1)
	}
	topics := map[string]int{}
	for _, p := range ps {
		topics[p.Topic]++
	}
	for _, m := range ms {
		for topic, n := range topics {
			got := 0
			for _, p := range a[m.ID] {
				if p.Topic == topic {
					got++
				}
			}
			if m.Draining {
				if got != 0 {
					t.Fatalf("draining %s got %d partitions of %s", m.ID, got, topic)
				}
				continue
			}
			lo := n * max(m.Capacity, 1) / total
			hi := lo
			if n*max(m.Capacity, 1)%total != 0 {
				hi++
			}
			if got < lo || got > hi {
				t.Fatalf("%s (capacity %d of %d) got %d of %d partitions of %s, want %d..%d", m.ID, m.Capacity, total, got, n, topic, lo, hi)
			}
		}
	}
}

func TestBalanceProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ms, ps := drawGroup(t)
		a := placement.Balance(ms, ps)
		checkBalanced(t, ms, ps, a)

		// The same for any order of members and partitions.
		if b := placement.Balance(rapid.Permutation(ms).Draw(t, "member order"), rapid.Permutation(ps).Draw(t, "partition order")); !reflect.DeepEqual(a, b) {
			t.Fatalf("the order of the input changed the assignment:\n%v\n%v", a, b)
		}

		// Sticky: the assignment, claimed back, stays as it is.
		stable := owned(ms, a, 1)
		if b := placement.Balance(stable, ps); !reflect.DeepEqual(a, b) {
			t.Fatalf("rebalancing its own assignment moved partitions:\n%v\n%v", a, b)
		}

		// A join moves partitions to the newcomer, and at most one to
		// each other member, which rounds up to its new ceiling from
		// having owned its new floor.
		joiner := placement.Member{ID: "zz-new", Name: "new", Capacity: rapid.IntRange(1, 4).Draw(t, "joiner capacity")}
		joined := append(slices.Clone(stable), joiner)
		b := placement.Balance(joined, ps)
		checkBalanced(t, joined, ps, b)
		before, after := ownerMap(a), ownerMap(b)
		gained := map[string]int{}
		for p, id := range after {
			if before[p] != id {
				gained[id]++
			}
		}
		for id, n := range gained {
			if id == joiner.ID {
				continue
			}
			if n > 1 {
				t.Fatalf("a join moved %d partitions to %s, an old member", n, id)
			}
			if len(b[id]) <= len(a[id]) {
				t.Fatalf("a join moved a partition to %s, which did not grow (%d -> %d)", id, len(a[id]), len(b[id]))
			}
		}

		// A leave moves the leaver's partitions, and another member's only
		// where the new quotas need it: when the weights change, a member
		// may have to give up one it held at its old ceiling so that
		// another reaches its new floor (3 members of weight 1 with 2
		// each beside two of weight 3 growing from 4 to 5). A member then
		// gives up at most one, and shrinks: nobody swaps partitions.
		if len(ms) > 1 {
			gone := rapid.IntRange(0, len(ms)-1).Draw(t, "leaver")
			left := slices.Delete(slices.Clone(stable), gone, gone+1)
			c := placement.Balance(left, ps)
			checkBalanced(t, left, ps, c)
			lost := map[string]int{}
			for p, id := range ownerMap(c) {
				if old, ok := before[p]; ok && old != id && old != ms[gone].ID {
					lost[old]++
				}
			}
			for id, n := range lost {
				if n > 1 || len(c[id]) >= len(a[id]) {
					t.Fatalf("when %s left, %s gave up %d partitions and went from %d to %d", ms[gone].ID, id, n, len(a[id]), len(c[id]))
				}
			}
		}
	})
}

// A partition claimed by two members in the newest generation is owned by
// neither: the result is as if nobody had claimed it. A claim of an older
// generation loses to a newer one.
func TestBalanceDropsDoubleClaims(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ms, ps := drawGroup(t)
		if len(ms) < 2 {
			ms = append(ms, placement.Member{ID: "second", Name: "second"})
		}
		stable := owned(ms, placement.Balance(ms, ps), 3)
		p := rapid.SampledFrom(ps).Draw(t, "partition")
		i, j := 0, 1+rapid.IntRange(0, len(ms)-2).Draw(t, "second claimant")
		withDouble := slices.Clone(stable)
		withNone := slices.Clone(stable)
		for _, k := range []int{i, j} {
			withDouble[k].Owned = append(slices.DeleteFunc(slices.Clone(stable[k].Owned), func(q placement.Partition) bool { return q == p }), p)
			withNone[k].Owned = slices.DeleteFunc(slices.Clone(stable[k].Owned), func(q placement.Partition) bool { return q == p })
		}
		// Drop p from any third claimant too, so only i and j claim it.
		for k := range withDouble {
			if k != i && k != j {
				withDouble[k].Owned = slices.DeleteFunc(slices.Clone(withDouble[k].Owned), func(q placement.Partition) bool { return q == p })
				withNone[k].Owned = withDouble[k].Owned
			}
		}
		if a, b := placement.Balance(withDouble, ps), placement.Balance(withNone, ps); !reflect.DeepEqual(a, b) {
			t.Fatalf("a double claim of %v by %s and %s was trusted:\n%v\nwant\n%v", p, ms[i].ID, ms[j].ID, a, b)
		}
		// An older generation's claim loses: j's claim is stale.
		stale := slices.Clone(withDouble)
		stale[j].Generation = 2
		withOnlyI := slices.Clone(withNone)
		withOnlyI[i].Owned = withDouble[i].Owned
		staleJ := slices.Clone(withOnlyI)
		staleJ[j].Generation = 2
		if a, b := placement.Balance(stale, ps), placement.Balance(staleJ, ps); !reflect.DeepEqual(a, b) {
			t.Fatalf("a stale claim of %v counted:\n%v\nwant\n%v", p, a, b)
		}
	})
}

// The case: 3 workers and 12 partitions, a 4th joins: at most 4
// partitions move (3 do: one from each), and a leave moves only the
// leaver's.
func TestBalanceJoinOfAFourth(t *testing.T) {
	var ps []placement.Partition
	for i := range 12 {
		ps = append(ps, placement.Partition{Topic: "t", ID: i})
	}
	ms := []placement.Member{{ID: "a", Name: "a", Capacity: 4}, {ID: "b", Name: "b", Capacity: 4}, {ID: "c", Name: "c", Capacity: 4}}
	a := placement.Balance(ms, ps)
	for _, m := range ms {
		if len(a[m.ID]) != 4 {
			t.Fatalf("%s got %v", m.ID, a[m.ID])
		}
	}
	joined := append(owned(ms, a, 1), placement.Member{ID: "d", Name: "d", Capacity: 4})
	b := placement.Balance(joined, ps)
	moved := 0
	before := ownerMap(a)
	for p, id := range ownerMap(b) {
		if before[p] != id {
			moved++
		}
	}
	if moved != 3 || len(b["d"]) != 3 {
		t.Fatalf("the 4th joined: %d moved, it got %v", moved, b["d"])
	}
}
