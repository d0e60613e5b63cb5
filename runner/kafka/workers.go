package kafka

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/segmentio/kafka-go"
)

// WorkerInfo is a live worker of a Store's runners: a member of the
// workers' consumer group (PREFIX.workers), as the group coordinator
// tells it (DescribeGroups). A worker is listed while the broker counts
// it a member: from its join until it leaves, or until its session
// times out (GroupTiming.SessionTimeout) if it dies.
type WorkerInfo struct {
	// Name is its runner's Options.Name; Capacity its Workers (the
	// actions it runs at once); Since when it joined, by its clock. They
	// are what the member announced when it joined (its assignor's user
	// data); a member that announced nothing (a baton before this one)
	// has its client ID as its name, capacity 0 and no time.
	Name     string
	Capacity int
	Since    time.Time
	// Member is its member ID in the group; Host the address the broker
	// sees it from.
	Member, Host string
	// Actions are the actions it serves (the action topics it
	// subscribes to), sorted.
	Actions []string
}

// Workers returns the live workers of the store's runners, sorted by
// name then member ID. It reads the group's description (one request to
// the coordinator): what they run at the moment is not in it. While the
// group rebalances (a worker joining or leaving, about a second) the
// coordinator may describe its members without what they announced and
// subscribe to: such a member is listed under its client ID, with no
// actions.
func (s *Store) Workers(ctx context.Context) ([]WorkerInfo, error) {
	group := s.cfg.workerGroup()
	dg, err := s.cl.DescribeGroups(ctx, &kafka.DescribeGroupsRequest{GroupIDs: []string{group}})
	if err != nil {
		return nil, fmt.Errorf("kafka: workers: describe group %s: %w", group, err)
	}
	prefix := s.cfg.actionTopic("")
	out := []WorkerInfo{}
	for _, g := range dg.Groups {
		if g.Error != nil {
			return nil, fmt.Errorf("kafka: workers: describe group %s: %w", group, g.Error)
		}
		for _, m := range g.Members {
			w := WorkerInfo{Name: m.ClientID, Member: m.MemberID, Host: m.ClientHost, Actions: []string{}}
			if a, ok := parseAnnouncement(m.MemberMetadata.UserData); ok {
				w.Name, w.Capacity, w.Since = a.Name, a.Capacity, a.Since
			}
			for _, t := range m.MemberMetadata.Topics {
				if name, ok := strings.CutPrefix(t, prefix); ok {
					w.Actions = append(w.Actions, name)
				}
			}
			slices.Sort(w.Actions)
			out = append(out, w)
		}
	}
	slices.SortFunc(out, func(a, b WorkerInfo) int {
		if c := strings.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		return strings.Compare(a.Member, b.Member)
	})
	return out, nil
}

// announcement is what a worker's member tells the group of itself: the
// user data of its assignors (kafka-go's GroupBalancer.UserData), which
// the coordinator hands back in the group's description. It is JSON after
// announceMagic, so that user data of another kind is told apart.
type announcement struct {
	Name     string    `json:"name"`
	Capacity int       `json:"capacity"`
	Since    time.Time `json:"since"`
}

const announceMagic = "baton-worker/1 "

// announce returns kafka-go's default assignors (range, then round
// robin: the same protocols as a member without them, so that members
// of either kind agree on one) carrying a.
func announce(a announcement) []kafka.GroupBalancer {
	b, err := json.Marshal(a)
	if err != nil {
		return nil // a plain struct always marshals
	}
	data := append([]byte(announceMagic), b...)
	return []kafka.GroupBalancer{
		announcing{kafka.RangeGroupBalancer{}, data},
		announcing{kafka.RoundRobinGroupBalancer{}, data},
	}
}

// announcing is an assignor whose user data is an announcement.
type announcing struct {
	kafka.GroupBalancer
	data []byte
}

func (a announcing) UserData() ([]byte, error) { return a.data, nil }

// parseAnnouncement reads a member's announcement, if it made one.
func parseAnnouncement(b []byte) (announcement, bool) {
	rest, ok := bytes.CutPrefix(b, []byte(announceMagic))
	if !ok {
		return announcement{}, false
	}
	var a announcement
	if json.Unmarshal(rest, &a) != nil {
		return announcement{}, false
	}
	return a, true
}
