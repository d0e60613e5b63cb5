package kafka

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/segmentio/kafka-go"
)

// Queue is what waits in one action topic.
type Queue struct {
	Action string // the action name
	Topic  string
	// Waiting counts the messages after the workers' committed offsets:
	// actions not taken yet, or taken and not ended (and the claims of
	// at-most-once ones among them).
	Waiting int64
	// Workers counts the members of the workers group subscribed to the
	// topic: 0 means no worker serves the action, and its actions wait
	// (unless WorkersErr is set).
	Workers int
	// WorkersErr, if not nil, says why the members of the workers group
	// are not known (the group could not be described): Workers is 0
	// then, and says nothing of the workers.
	WorkersErr error
}

// Queues returns the action topics under the store's prefix, sorted by
// action name, with what waits in each and how many workers serve it: what
// a status command shows to find actions no worker consumes. When the
// workers group cannot be described, the queues are returned with
// WorkersErr set.
func (s *Store) Queues(ctx context.Context) ([]Queue, error) {
	if err := s.usable(ctx); err != nil {
		return nil, err
	}
	md, err := s.cl.Metadata(ctx, &kafka.MetadataRequest{})
	if err != nil {
		return nil, fmt.Errorf("kafka: queues: metadata: %w", err)
	}
	prefix := s.cfg.actionPrefix()
	parts := map[string][]int{}
	var topics []string
	for _, t := range md.Topics {
		if !strings.HasPrefix(t.Name, prefix) || t.Error != nil {
			continue
		}
		topics = append(topics, t.Name)
		for _, p := range t.Partitions {
			parts[t.Name] = append(parts[t.Name], p.ID)
		}
	}
	slices.Sort(topics)
	if len(topics) == 0 {
		return nil, nil
	}
	req := &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{}}
	for _, t := range topics {
		for _, p := range parts[t] {
			req.Topics[t] = append(req.Topics[t], kafka.OffsetRequest{Partition: p, Timestamp: kafka.LastOffset})
		}
	}
	ends, err := s.cl.ListOffsets(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("kafka: queues: end offsets: %w", err)
	}
	for _, t := range topics {
		for i := range req.Topics[t] {
			req.Topics[t][i].Timestamp = kafka.FirstOffset
		}
	}
	starts, err := s.cl.ListOffsets(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("kafka: queues: start offsets: %w", err)
	}
	committed, err := s.cl.OffsetFetch(ctx, &kafka.OffsetFetchRequest{GroupID: s.cfg.workerGroup(), Topics: parts})
	if err != nil {
		return nil, fmt.Errorf("kafka: queues: committed offsets of group %s: %w", s.cfg.workerGroup(), err)
	}
	members, werr := s.workers(ctx)
	out := make([]Queue, 0, len(topics))
	for _, t := range topics {
		q := Queue{Action: strings.TrimPrefix(t, prefix), Topic: t, Workers: members[t], WorkersErr: werr}
		at := map[int]int64{}
		for _, po := range starts.Topics[t] {
			at[po.Partition] = po.FirstOffset
		}
		for _, c := range committed.Topics[t] {
			if c.Error == nil && c.CommittedOffset >= 0 {
				at[c.Partition] = c.CommittedOffset
			}
		}
		for _, po := range ends.Topics[t] {
			if po.Error == nil && po.LastOffset > at[po.Partition] {
				q.Waiting += po.LastOffset - at[po.Partition]
			}
		}
		out = append(out, q)
	}
	return out, nil
}

// workers counts the members of the workers group subscribed to each
// topic.
func (s *Store) workers(ctx context.Context) (map[string]int, error) {
	group := s.cfg.workerGroup()
	dg, err := s.cl.DescribeGroups(ctx, &kafka.DescribeGroupsRequest{GroupIDs: []string{group}})
	if err != nil {
		return nil, fmt.Errorf("kafka: queues: describe group %s: %w", group, err)
	}
	members := map[string]int{}
	for _, g := range dg.Groups {
		if g.Error != nil {
			return nil, fmt.Errorf("kafka: queues: describe group %s: %w", group, g.Error)
		}
		for _, m := range g.Members {
			for _, t := range m.MemberMetadata.Topics {
				members[t]++
			}
		}
	}
	return members, nil
}
