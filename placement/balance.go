package placement

import (
	"cmp"
	"slices"
)

// Partition is one partition of a topic.
type Partition struct {
	Topic string
	ID    int
}

func comparePartitions(a, b Partition) int {
	if c := cmp.Compare(a.Topic, b.Topic); c != 0 {
		return c
	}
	return cmp.Compare(a.ID, b.ID)
}

// Member is one member of a consumer group as Balance sees it: what it
// sent in its join (on Kafka, in the member's UserData).
type Member struct {
	// ID is the member's ID in the group; Balance's answer is keyed by
	// it. IDs are unique among the members given.
	ID string
	// Name is the worker's durable name. It breaks ties, so a worker that
	// rejoins under a new member ID is ranked as before.
	Name string
	// Capacity weighs the member's share; less than 1 weighs 1 (a member
	// whose UserData did not parse weighs 1 and owns nothing).
	Capacity int
	// Draining members get no partition.
	Draining bool
	// Generation is the group generation in which the member was given
	// Owned.
	Generation int32
	// Owned are the partitions it owned before this rebalance.
	Owned []Partition
}

// Assignment maps a member's ID to its partitions, sorted by topic and ID.
// Every member given to Balance has an entry, empty if it gets nothing.
type Assignment map[string][]Partition

// Balance assigns the partitions to the members: a sticky,
// capacity-weighted assignment, topic by topic, the same for any order of
// members and partitions.
//
//   - Shares. In each topic every member that is not draining gets
//     either the floor or the ceiling of its capacity-weighted share of
//     the topic's partitions; draining members get none. Where several
//     members could take the ceiling, those that own more than their
//     floor take it first (so fewer partitions move), then those with the
//     larger fraction, then an order drawn from a hash of the topic and
//     the member's name (so the extra partitions of different topics do
//     not all fall to one member).
//   - Stickiness. A member keeps the partitions it owned, its lowest
//     partition IDs first, up to its quota; only the others move, so
//     balancing an assignment Balance made again, with the same members,
//     moves nothing. On a join, partitions move to the newcomer, and at
//     most one to each other member that owned its new floor and now
//     rounds up to its ceiling; on a leave, the leaver's partitions
//     move, and another member's only where the new quotas need it (the
//     weights changed, and a member at its old ceiling gives up one so
//     that another reaches its new floor): at most one each, and nobody
//     swaps. With equal capacities only the leaver's move. (Property
//     tests check both; they are not proven here.)
//   - Double claims. A partition is owned by the member that claims it in
//     the newest generation among its claims; a partition claimed by two
//     members in that generation is owned by neither (a claim built on
//     stale data, as KAFKA-12984 saw) and is assigned as if nobody owned
//     it. A claim of a partition not given is ignored.
//
// When every member is draining, nobody gets anything: the partitions wait
// for a member that is not.
func Balance(members []Member, partitions []Partition) Assignment {
	ms := slices.Clone(members)
	slices.SortFunc(ms, func(a, b Member) int { return cmp.Compare(a.ID, b.ID) })
	ps := slices.Clone(partitions)
	slices.SortFunc(ps, comparePartitions)
	ps = slices.Compact(ps)
	out := make(Assignment, len(ms))
	for _, m := range ms {
		out[m.ID] = []Partition{}
	}
	for len(ps) > 0 {
		n := 1
		for n < len(ps) && ps[n].Topic == ps[0].Topic {
			n++
		}
		balanceTopic(ms, ps[:n], out)
		ps = ps[n:]
	}
	for id := range out {
		slices.SortFunc(out[id], comparePartitions)
	}
	return out
}

// balanceTopic assigns the partitions of one topic, sorted by ID.
func balanceTopic(ms []Member, ps []Partition, out Assignment) {
	topic := ps[0].Topic
	owner := owners(ms, ps)

	type slot struct {
		m          *Member
		weight     int
		floor, rem int
		quota      int
		owned      []Partition // its valid claims in this topic, sorted
		tie        uint64
	}
	var slots []*slot
	total := 0
	for i := range ms {
		if ms[i].Draining {
			continue
		}
		s := &slot{m: &ms[i], weight: max(ms[i].Capacity, 1), tie: PairHash(KeyHash(topic), ms[i].Name)}
		total += s.weight
		slots = append(slots, s)
	}
	if len(slots) == 0 {
		return
	}
	for _, p := range ps {
		if id, ok := owner[p.ID]; ok {
			for _, s := range slots {
				if s.m.ID == id {
					s.owned = append(s.owned, p)
				}
			}
		}
	}
	extra := len(ps)
	for _, s := range slots {
		s.floor = len(ps) * s.weight / total
		s.rem = len(ps) * s.weight % total
		s.quota = s.floor
		extra -= s.floor
	}
	byClaim := slices.Clone(slots)
	slices.SortFunc(byClaim, func(a, b *slot) int {
		ka, kb := len(a.owned) > a.floor, len(b.owned) > b.floor
		if ka != kb {
			if ka {
				return -1
			}
			return 1
		}
		if c := cmp.Compare(b.rem, a.rem); c != 0 {
			return c
		}
		if c := cmp.Compare(a.tie, b.tie); c != 0 {
			return c
		}
		return cmp.Compare(a.m.ID, b.m.ID)
	})
	for _, s := range byClaim {
		if extra == 0 {
			break
		}
		if s.rem > 0 {
			s.quota++
			extra--
		}
	}

	taken := make(map[int]bool, len(ps))
	got := make([][]Partition, len(slots))
	for i, s := range slots {
		got[i] = slices.Clip(s.owned[:min(len(s.owned), s.quota)])
		for _, p := range got[i] {
			taken[p.ID] = true
		}
	}
	next := 0
	for i, s := range slots {
		for len(got[i]) < s.quota {
			for taken[ps[next].ID] {
				next++
			}
			taken[ps[next].ID] = true
			got[i] = append(got[i], ps[next])
		}
		out[s.m.ID] = append(out[s.m.ID], got[i]...)
	}
}

// owners returns, per partition ID of one topic, the member ID that owns
// it: the only member that claims it in the newest generation of its
// claims. Partitions claimed twice in that generation have no owner.
func owners(ms []Member, ps []Partition) map[int]string {
	type claim struct {
		gen    int32
		member string
		double bool
	}
	given := make(map[int]bool, len(ps))
	for _, p := range ps {
		given[p.ID] = true
	}
	claims := map[int]claim{}
	for _, m := range ms {
		seen := map[int]bool{}
		for _, p := range m.Owned {
			if p.Topic != ps[0].Topic || !given[p.ID] || seen[p.ID] {
				continue
			}
			seen[p.ID] = true
			c, ok := claims[p.ID]
			switch {
			case !ok || m.Generation > c.gen:
				claims[p.ID] = claim{gen: m.Generation, member: m.ID}
			case m.Generation == c.gen:
				c.double = true
				claims[p.ID] = c
			}
		}
	}
	out := make(map[int]string, len(claims))
	for id, c := range claims {
		if !c.double {
			out[id] = c.member
		}
	}
	return out
}
