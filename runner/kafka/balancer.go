package kafka

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/batonwf/baton/placement"
	"github.com/batonwf/baton/runner"
)

// memberData is what a member of a runner's consumer groups (the
// restarters' and the workers') tells the group of itself: the user data
// of its assignors (kafka-go's GroupBalancer.UserData), sent with every
// join. The group's leader balances by it (groupBalancer), and the
// coordinator hands it back in the group's description (Store.Workers).
//
// It is encoded as one version byte (memberDataVersion) followed by a
// JSON object:
//
//	{"name":"w1","capacity":4,"since":TIME,"draining":true,
//	 "generation":7,"owned":{"baton.action.ship":[0,3]}}
//
// "owned" are the partitions the member was assigned in generation
// "generation" of that group (absent before its first); "draining" is
// absent when false.
type memberData struct {
	Name     string    `json:"name"`
	Capacity int       `json:"capacity"`
	Since    time.Time `json:"since"`
	Draining bool      `json:"draining,omitempty"`
	// Generation is the group's generation that assigned Owned.
	Generation int32            `json:"generation,omitempty"`
	Owned      map[string][]int `json:"owned,omitempty"`
}

// memberDataVersion is the first byte of a member's user data: the
// format of what follows. A member that reads another version treats the
// data as not parsing.
const memberDataVersion = 1

// errMemberData is wrapped by decodeMemberData's errors.
var errMemberData = errors.New("kafka: member user data")

func (d memberData) encode() []byte {
	b, err := json.Marshal(d)
	if err != nil {
		return nil // a plain struct always marshals
	}
	return append([]byte{memberDataVersion}, b...)
}

// decodeMemberData reads a member's user data; an error says why it is
// not a baton member's (empty, another version, not JSON, no name, a
// negative capacity, generation or partition).
func decodeMemberData(b []byte) (memberData, error) {
	if len(b) == 0 {
		return memberData{}, fmt.Errorf("%w: empty", errMemberData)
	}
	if b[0] != memberDataVersion {
		return memberData{}, fmt.Errorf("%w: version %d, want %d", errMemberData, b[0], memberDataVersion)
	}
	var d memberData
	if err := json.Unmarshal(b[1:], &d); err != nil {
		return memberData{}, fmt.Errorf("%w: %v", errMemberData, err)
	}
	switch {
	case d.Name == "":
		return memberData{}, fmt.Errorf("%w: no name", errMemberData)
	case d.Capacity < 0:
		return memberData{}, fmt.Errorf("%w: capacity %d", errMemberData, d.Capacity)
	case d.Generation < 0:
		return memberData{}, fmt.Errorf("%w: generation %d", errMemberData, d.Generation)
	}
	for topic, ids := range d.Owned {
		for _, id := range ids {
			if id < 0 {
				return memberData{}, fmt.Errorf("%w: owned partition %s/%d", errMemberData, topic, id)
			}
		}
	}
	return d, nil
}

// stickyProtocol is the name of groupBalancer's protocol in the group.
const stickyProtocol = "baton-sticky"

// groupBalancer is the assignor of a runner's member of one consumer
// group: kafka-go's GroupBalancer over placement.Balance. Each member
// sends its memberData (name, capacity, draining flag, and the
// partitions it owns with the generation that assigned them); the
// member elected leader decodes every member's and assigns each topic's
// partitions with Balance among the members subscribed to it: sticky
// (members keep what they own while within one partition of their
// capacity-weighted share, and the fewest partitions move), weighted by
// capacity, nothing for draining members, and a partition claimed by two
// members in one generation trusted to neither.
//
// kafka-go gives an assignor nothing of what its member owns: it calls
// UserData for every join, and hands the generation's assignment only to
// the caller of ConsumerGroup.Next. So the member records what each
// generation assigned it (owned) before it serves it, and the next
// join's UserData carries it. Its methods are safe for concurrent use.
type groupBalancer struct {
	group string
	log   *slog.Logger
	bad   *atomic.Int64 // members whose user data did not parse, counted when this member leads
	hooks *runner.Hooks // told of each of them (PlacementUnreadable); may be nil

	// draining, if set and true, makes the member announce draining
	// (the control topic said so).
	draining *atomic.Bool

	mu sync.Mutex
	me memberData
}

var _ kafka.GroupBalancer = (*groupBalancer)(nil)

func newGroupBalancer(group string, me memberData, log *slog.Logger, bad *atomic.Int64) *groupBalancer {
	return &groupBalancer{group: group, log: log, bad: bad, me: me}
}

// balancers returns the member's assignors, in order of preference: this
// one, then kafka-go's range with the same user data, so that a group
// whose members do not all speak baton-sticky (a baton before it, during
// a rolling upgrade) agrees on range instead of refusing the join.
func (b *groupBalancer) balancers() []kafka.GroupBalancer {
	return []kafka.GroupBalancer{b, rangeWithData{b}}
}

// ProtocolName implements kafka.GroupBalancer.
func (b *groupBalancer) ProtocolName() string { return stickyProtocol }

// UserData implements kafka.GroupBalancer: the member's memberData as of
// now, with what it owns.
func (b *groupBalancer) UserData() ([]byte, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	d := b.me
	if b.draining != nil && b.draining.Load() {
		d.Draining = true
	}
	return d.encode(), nil
}

// owned records the partitions generation gen assigned to the member,
// for its next join. Called before the generation is served.
func (b *groupBalancer) owned(gen int32, assignments map[string][]kafka.PartitionAssignment) {
	owned := make(map[string][]int, len(assignments))
	for topic, pas := range assignments {
		ids := make([]int, 0, len(pas))
		for _, pa := range pas {
			ids = append(ids, pa.ID)
		}
		slices.Sort(ids)
		owned[topic] = ids
	}
	b.mu.Lock()
	b.me.Generation, b.me.Owned = gen, owned
	b.mu.Unlock()
}

// AssignGroups implements kafka.GroupBalancer. A member whose user data
// does not parse is logged and counted, owns nothing and weighs 1. Every
// member has an entry, empty when it gets nothing.
func (b *groupBalancer) AssignGroups(members []kafka.GroupMember, partitions []kafka.Partition) kafka.GroupMemberAssignments {
	out := make(kafka.GroupMemberAssignments, len(members))
	subscribed := map[string][]placement.Member{} // by topic
	for _, gm := range members {
		out[gm.ID] = map[string][]int{}
		m := placement.Member{ID: gm.ID, Name: gm.ID, Capacity: 1}
		if d, err := decodeMemberData(gm.UserData); err != nil {
			b.bad.Add(1)
			b.hooks.Placed(runner.PlacementUnreadable, "")
			b.log.Warn("a group member's user data does not parse: it owns nothing and weighs 1",
				"group", b.group, "member", gm.ID, "err", err)
		} else {
			m.Name, m.Capacity, m.Draining, m.Generation = d.Name, d.Capacity, d.Draining, d.Generation
			for topic, ids := range d.Owned {
				for _, id := range ids {
					m.Owned = append(m.Owned, placement.Partition{Topic: topic, ID: id})
				}
			}
		}
		for _, topic := range gm.Topics {
			subscribed[topic] = append(subscribed[topic], m)
		}
	}
	byTopic := map[string][]placement.Partition{}
	for _, p := range partitions {
		byTopic[p.Topic] = append(byTopic[p.Topic], placement.Partition{Topic: p.Topic, ID: p.ID})
	}
	for topic, ps := range byTopic {
		for id, got := range placement.Balance(subscribed[topic], ps) {
			for _, p := range got {
				out[id][topic] = append(out[id][topic], p.ID)
			}
		}
	}
	return out
}

// rangeWithData is kafka-go's range assignor sending a groupBalancer's
// user data, its fallback.
type rangeWithData struct{ b *groupBalancer }

func (r rangeWithData) ProtocolName() string { return kafka.RangeGroupBalancer{}.ProtocolName() }

func (r rangeWithData) UserData() ([]byte, error) { return r.b.UserData() }

func (r rangeWithData) AssignGroups(members []kafka.GroupMember, partitions []kafka.Partition) kafka.GroupMemberAssignments {
	return kafka.RangeGroupBalancer{}.AssignGroups(members, partitions)
}
