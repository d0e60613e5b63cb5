package kafka

import (
	"context"
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
	// Name is its runner's Options.Name; Capacity its Options.Capacity
	// (by default its Workers, the actions it runs at once); Since when
	// it started working, by its clock; Draining its Options.Draining.
	// They are what the member announced when it joined (its assignor's
	// user data, memberData); a member whose user data does not parse (a
	// baton before this one) has its client ID as its name, capacity 0
	// and no time.
	Name     string
	Capacity int
	Since    time.Time
	Draining bool
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
			if d, err := decodeMemberData(m.MemberMetadata.UserData); err == nil {
				w.Name, w.Capacity, w.Since, w.Draining = d.Name, d.Capacity, d.Since, d.Draining
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
