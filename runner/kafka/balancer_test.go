package kafka

import (
	"bytes"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
)

// The group balancer's tests, through kafka-go's types: members as the
// leader gets them (kafka.GroupMember with the user data their own
// groupBalancer sends), partitions as kafka-go reads them.

// testMember is a member of a test group.
type testMember struct {
	id       string
	data     memberData
	topics   []string
	userData []byte // when set, sent instead of data
}

func (m testMember) group() kafka.GroupMember {
	ud := m.userData
	if ud == nil {
		b := newGroupBalancer("g", m.data, slog.New(slog.DiscardHandler), new(atomic.Int64))
		ud, _ = b.UserData()
	}
	return kafka.GroupMember{ID: m.id, Topics: m.topics, UserData: ud}
}

func topicPartitions(topic string, n int) []kafka.Partition {
	ps := make([]kafka.Partition, n)
	for i := range ps {
		ps[i] = kafka.Partition{Topic: topic, ID: i}
	}
	return ps
}

// assign runs the leader's balancer over ms and returns its assignment
// and how many members' user data it counted bad.
func assign(t *testing.T, ms []testMember, partitions []kafka.Partition) (kafka.GroupMemberAssignments, int64) {
	t.Helper()
	var bad atomic.Int64
	b := newGroupBalancer("g", memberData{Name: "leader"}, slog.New(slog.DiscardHandler), &bad)
	gms := make([]kafka.GroupMember, len(ms))
	for i, m := range ms {
		gms[i] = m.group()
	}
	a := b.AssignGroups(gms, partitions)
	// The same result for any order of the members.
	rev := slices.Clone(gms)
	slices.Reverse(rev)
	if again := b.AssignGroups(rev, partitions); !equalAssignments(a, again) {
		t.Fatalf("members in reverse order: %v; in order: %v", again, a)
	}
	return a, bad.Load() / 2
}

func equalAssignments(a, b kafka.GroupMemberAssignments) bool {
	return maps.EqualFunc(a, b, func(x, y map[string][]int) bool {
		return maps.EqualFunc(x, y, func(p, q []int) bool { return slices.Equal(p, q) })
	})
}

// owners maps topic/partition to the name of the member assigned it.
func owners(ms []testMember, a kafka.GroupMemberAssignments) map[string]string {
	names := map[string]string{}
	for _, m := range ms {
		names[m.id] = m.data.Name
	}
	out := map[string]string{}
	for id, topics := range a {
		for topic, ids := range topics {
			for _, p := range ids {
				key := fmt.Sprintf("%s/%d", topic, p)
				if prev, ok := out[key]; ok {
					panic(fmt.Sprintf("%s assigned to %s and %s", key, prev, names[id]))
				}
				out[key] = names[id]
			}
		}
	}
	return out
}

// counts returns how many partitions each member got, by name.
func counts(ms []testMember, a kafka.GroupMemberAssignments) map[string]int {
	out := map[string]int{}
	for _, m := range ms {
		for _, ids := range a[m.id] {
			out[m.data.Name] += len(ids)
		}
	}
	return out
}

// feedBack returns ms owning what a assigned them in generation gen, as
// their next join says.
func feedBack(ms []testMember, a kafka.GroupMemberAssignments, gen int32) []testMember {
	out := slices.Clone(ms)
	for i := range out {
		out[i].data.Generation = gen
		out[i].data.Owned = map[string][]int{}
		for topic, ids := range a[out[i].id] {
			out[i].data.Owned[topic] = slices.Clone(ids)
		}
	}
	return out
}

func gm(id, name string, capacity int, topics ...string) testMember {
	return testMember{id: id, data: memberData{Name: name, Capacity: capacity}, topics: topics}
}

func moved(before, after map[string]string) (n int, to map[string]int) {
	to = map[string]int{}
	for p, o := range after {
		if before[p] != o {
			n++
			to[o]++
		}
	}
	return n, to
}

// TestBalancerJoinAndLeave: 3 members of equal capacity share 12
// partitions of each of two topics 4 each; a 4th joins and takes 3 of
// each, and only those move, all to it; then one leaves and only its
// partitions move.
func TestBalancerJoinAndLeave(t *testing.T) {
	topics := []string{"b.restarter", "b.action.ship"}
	ps := append(topicPartitions(topics[0], 12), topicPartitions(topics[1], 12)...)
	ms := []testMember{gm("m-3", "a", 4, topics...), gm("m-1", "b", 4, topics...), gm("m-2", "c", 4, topics...)}
	a, _ := assign(t, ms, ps)
	if c := counts(ms, a); c["a"] != 8 || c["b"] != 8 || c["c"] != 8 {
		t.Fatalf("3 members: %v; want 8 each (4 of each topic)", c)
	}
	before := owners(ms, a)

	ms = append(feedBack(ms, a, 1), gm("m-0", "d", 4, topics...))
	a, _ = assign(t, ms, ps)
	after := owners(ms, a)
	n, to := moved(before, after)
	if n != 6 || to["d"] != 6 || len(to) != 1 {
		t.Errorf("a 4th joins: %d partitions moved, to %v; want 6 (3 of each topic), all to d", n, to)
	}
	for _, c := range counts(ms, a) {
		if c != 6 {
			t.Errorf("4 members: %v; want 6 each", counts(ms, a))
			break
		}
	}

	ms = feedBack(ms, a, 2)
	before = after
	leaver := ms[1].data.Name
	ms = slices.Delete(ms, 1, 2)
	a, _ = assign(t, ms, ps)
	after = owners(ms, a)
	for p, o := range before {
		if o != leaver && after[p] != o {
			t.Errorf("%s leaves: %s moved from %s to %s", leaver, p, o, after[p])
		}
	}
	if len(after) != len(ps) {
		t.Errorf("%d of %d partitions assigned after a leave", len(after), len(ps))
	}
}

// TestBalancerCapacity: shares follow the capacities; a member whose
// capacity is 0 weighs 1.
func TestBalancerCapacity(t *testing.T) {
	ms := []testMember{gm("m-1", "a", 1, "t"), gm("m-2", "b", 2, "t"), gm("m-3", "c", 3, "t"), gm("m-4", "z", 0, "t")}
	a, _ := assign(t, ms, topicPartitions("t", 14))
	if c := counts(ms, a); c["a"] != 2 || c["b"] != 4 || c["c"] != 6 || c["z"] != 2 {
		t.Errorf("capacities 1, 2, 3 and 0 over 14 partitions: %v; want 2, 4, 6 and 2", c)
	}
}

// TestBalancerDraining: a draining member gets nothing, not even what it
// owned; the others take its partitions and keep theirs. When every
// member drains, nobody gets anything.
func TestBalancerDraining(t *testing.T) {
	ms := []testMember{gm("m-1", "a", 1, "t"), gm("m-2", "b", 1, "t"), gm("m-3", "c", 1, "t")}
	ps := topicPartitions("t", 6)
	a, _ := assign(t, ms, ps)
	before := owners(ms, a)
	ms = feedBack(ms, a, 1)
	ms[2].data.Draining = true
	a, _ = assign(t, ms, ps)
	after := owners(ms, a)
	if c := counts(ms, a); c["c"] != 0 || c["a"] != 3 || c["b"] != 3 {
		t.Errorf("c drains: %v; want a 3, b 3, c none", c)
	}
	if ids, ok := a["m-3"]; !ok || len(ids["t"]) != 0 {
		t.Errorf("the draining member's entry: %v, %v; want an empty one", ids, ok)
	}
	for p, o := range before {
		if o != "c" && after[p] != o {
			t.Errorf("c drains: %s moved from %s to %s", p, o, after[p])
		}
	}
	for i := range ms {
		ms[i].data.Draining = true
	}
	if a, _ := assign(t, ms, ps); len(owners(ms, a)) != 0 {
		t.Errorf("every member drains, yet %v", a)
	}
}

// TestBalancerDoubleClaim: a partition two members claim in the same
// generation is trusted to neither (it goes where an unowned one would);
// a claim of a newer generation beats an older one.
func TestBalancerDoubleClaim(t *testing.T) {
	ps := topicPartitions("t", 3)
	claim := func(m testMember, gen int32, ids ...int) testMember {
		m.data.Generation, m.data.Owned = gen, map[string][]int{"t": ids}
		return m
	}
	// Unowned partitions go to the members in ID order, lowest first: so
	// m-1, which claims nothing, gets partition 0 only if neither
	// claim of it is trusted.
	ms := []testMember{gm("m-1", "a", 1, "t"), claim(gm("m-2", "b", 1, "t"), 5, 0), claim(gm("m-3", "c", 1, "t"), 5, 0)}
	a, _ := assign(t, ms, ps)
	if got := owners(ms, a)["t/0"]; got != "a" {
		t.Errorf("t/0 claimed by b and c in generation 5: assigned to %s; want a, as if unowned", got)
	}
	ms[2] = claim(ms[2], 6, 0)
	a, _ = assign(t, ms, ps)
	if got := owners(ms, a)["t/0"]; got != "c" {
		t.Errorf("t/0 claimed by b in generation 5, c in 6: assigned to %s; want c", got)
	}
}

// TestBalancerBadUserData: a member whose user data does not parse is
// counted, owns nothing (so what it claims moves) and weighs 1.
func TestBalancerBadUserData(t *testing.T) {
	good := memberData{Name: "x", Capacity: 3, Generation: 9, Owned: map[string][]int{"t": {0, 1, 2, 3}}}.encode()
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"empty", nil},
		{"another version", append([]byte{2}, good[1:]...)},
		{"not JSON", append([]byte{memberDataVersion}, "{name"...)},
		{"no name", memberData{Capacity: 3}.encode()},
		{"negative capacity", memberData{Name: "x", Capacity: -1}.encode()},
		{"negative partition", memberData{Name: "x", Capacity: 3, Owned: map[string][]int{"t": {-1}}}.encode()},
		{"another client's", []byte("baton-worker/1 {\"name\":\"x\",\"capacity\":3}")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := decodeMemberData(tc.data); err == nil {
				t.Fatalf("decodeMemberData(%q) succeeded", tc.data)
			}
			bad := testMember{id: "m-1", data: memberData{Name: "bad"}, topics: []string{"t"}, userData: tc.data}
			if bad.userData == nil {
				bad.userData = []byte{}
			}
			ms := []testMember{bad, gm("m-2", "b", 3, "t")}
			a, n := assign(t, ms, topicPartitions("t", 8))
			if n != 1 {
				t.Errorf("%d members counted bad; want 1", n)
			}
			if c := counts(ms, a); c["bad"] != 2 || c["b"] != 6 {
				t.Errorf("a member with bad user data beside one of capacity 3, 8 partitions: %v; want bad 2 (weight 1), b 6", c)
			}
		})
	}
	var logs bytes.Buffer
	var bad atomic.Int64
	b := newGroupBalancer("g", memberData{Name: "leader"}, slog.New(slog.NewTextHandler(&logs, nil)), &bad)
	b.AssignGroups([]kafka.GroupMember{{ID: "m-9", Topics: []string{"t"}, UserData: []byte("junk")}}, topicPartitions("t", 1))
	if line := logs.String(); bad.Load() != 1 || !strings.Contains(line, "member=m-9") || !strings.Contains(line, "group=g") ||
		!strings.Contains(line, "version 106") {
		t.Errorf("the log of a member whose user data does not parse (counted %d): %q; want its group, its ID and why", bad.Load(), line)
	}
	if d, err := decodeMemberData(good); err != nil || d.Name != "x" || d.Capacity != 3 || d.Generation != 9 || !slices.Equal(d.Owned["t"], []int{0, 1, 2, 3}) {
		t.Errorf("decode(encode): %+v, %v", d, err)
	}
}

// TestBalancerSubscriptions: a member gets partitions only of the topics
// it subscribes to (workers serve different action names), shared by
// capacity among that topic's members.
func TestBalancerSubscriptions(t *testing.T) {
	ms := []testMember{gm("m-1", "a", 1, "ship", "charge"), gm("m-2", "b", 1, "ship"), gm("m-3", "c", 2, "charge")}
	a, _ := assign(t, ms, append(topicPartitions("ship", 4), topicPartitions("charge", 6)...))
	want := map[string]map[string]int{"a": {"ship": 2, "charge": 2}, "b": {"ship": 2}, "c": {"charge": 4}}
	for _, m := range ms {
		got := map[string]int{}
		for topic, ids := range a[m.id] {
			if len(ids) > 0 {
				got[topic] = len(ids)
			}
		}
		if !maps.Equal(got, want[m.data.Name]) {
			t.Errorf("%s: %v; want %v", m.data.Name, got, want[m.data.Name])
		}
	}
}

// TestBalancerOwned: the user data of a member's next join carries what
// its last generation assigned it, with that generation; and it is the
// same for the fallback (range) protocol, so the group's description
// shows it whichever protocol the group chose.
func TestBalancerOwned(t *testing.T) {
	since := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	b := newGroupBalancer("g", memberData{Name: "w1", Capacity: 4, Since: since, Draining: true}, slog.New(slog.DiscardHandler), new(atomic.Int64))
	first, _ := b.UserData()
	if d, err := decodeMemberData(first); err != nil || d.Generation != 0 || len(d.Owned) != 0 {
		t.Errorf("before any generation: %+v, %v", d, err)
	}
	b.owned(7, map[string][]kafka.PartitionAssignment{"t": {{ID: 3}, {ID: 1}}, "u": {}})
	bs := b.balancers()
	if len(bs) != 2 || bs[0].ProtocolName() != stickyProtocol || bs[1].ProtocolName() != "range" {
		t.Fatalf("balancers: %v", bs)
	}
	ud, _ := bs[0].UserData()
	fallback, _ := bs[1].UserData()
	if !bytes.Equal(ud, fallback) {
		t.Errorf("the fallback sends %q, the sticky one %q", fallback, ud)
	}
	d, err := decodeMemberData(ud)
	if err != nil || d.Name != "w1" || d.Capacity != 4 || !d.Since.Equal(since) || !d.Draining || d.Generation != 7 ||
		!slices.Equal(d.Owned["t"], []int{1, 3}) || len(d.Owned["u"]) != 0 {
		t.Errorf("after generation 7: %+v, %v", d, err)
	}
	if !strings.HasPrefix(string(ud[1:]), `{"name":"w1"`) {
		t.Errorf("user data %q: want the version byte, then JSON", ud)
	}
}
