package kafka

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/segmentio/kafka-go"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/store"
)

// Queue is what waits in one action topic.
type Queue struct {
	Action string // the action name
	Topic  string
	// Waiting counts the actions after the workers' committed offsets
	// (not taken yet, or taken and not ended) that their jobs still wait
	// for. Past the first 10,000 messages of a partition, every message
	// is counted, unread.
	Waiting int64
	// Withdrawn counts the actions after the committed offsets that their
	// jobs no longer wait for: the job was cancelled, deleted or has
	// finished, or the action was stopped or retried since. A Kafka topic
	// keeps them until its retention removes them; a worker that takes
	// them skips them.
	Withdrawn int64
	// Workers counts the members of the workers group subscribed to the
	// topic: 0 means no worker serves the action, and its actions wait
	// (unless WorkersErr is set).
	Workers int
	// WorkersErr, if not nil, says why the members of the workers group
	// are not known (the group could not be described): Workers is 0
	// then, and says nothing of the workers.
	WorkersErr error
	// Copies is the most copies of a node with replicas among the
	// actions read as waiting (0: none is a copy). Copies go to distinct
	// partitions, so to distinct workers only while the topic has as
	// many Workers.
	Copies int
	// Unmapped counts the actions read as waiting whose affinity is
	// strict or sets a wait: on Kafka a key's actions go to the one
	// reader of its partition, and neither applies.
	Unmapped int64
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
	look := &lookups{jobs: map[job.ID]jobLookup{}, read: map[int]bool{}}
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
			if po.Error != nil || po.LastOffset <= at[po.Partition] {
				continue
			}
			waiting, withdrawn, err := s.inspect(ctx, t, po.Partition, at[po.Partition], po.LastOffset, look, &q)
			if err != nil {
				return nil, fmt.Errorf("kafka: queues: %w", err)
			}
			q.Waiting += waiting
			q.Withdrawn += withdrawn
		}
		out = append(out, q)
	}
	return out, nil
}

// inspectMax bounds the messages of one partition Queues reads.
const inspectMax = 10_000

// inspect reads topic/part from offset from to end (at most inspectMax
// messages; the others are counted waiting) and counts the actions there
// that their jobs wait for, and those they no longer wait for; it
// notes in q the copies and unmapped affinities of those waiting. look
// caches what was looked up.
func (s *Store) inspect(ctx context.Context, topic string, part int, from, end int64, look *lookups, q *Queue) (waiting, withdrawn int64, err error) {
	stop := min(end, from+inspectMax)
	waiting = end - stop
	_, err = s.readRange(ctx, topic, part, from, stop, func(_ int64, m kafka.Message) {
		out, err := decodeOutbound(m.Key, m.Value)
		switch {
		case err != nil:
			waiting++ // not baton's: a worker decides
		case out.claimed:
		case s.waitsFor(ctx, out.a, look):
			waiting++
			for _, h := range m.Headers {
				switch h.Key {
				case hdrReplica:
					if _, of, _, ok := parseReplica(h.Value); ok {
						q.Copies = max(q.Copies, of)
					}
				case hdrAffinityMode:
					q.Unmapped++
				}
			}
		default:
			withdrawn++
		}
	})
	return waiting, withdrawn, err
}

// lookups caches what one Queues call looked up: the jobs, and the state
// partitions read to their ends (once each).
type lookups struct {
	jobs map[job.ID]jobLookup
	read map[int]bool
}

type jobLookup struct {
	j   job.Job
	err error
}

// waitsFor reports whether the job of action a, as stored, still waits
// for a's result (it is outstanding, in the same incarnation); when the
// job cannot be read, it says so (true), so that nothing is skipped for
// want of knowing. c, if not nil, caches the lookups.
func (s *Store) waitsFor(ctx context.Context, a job.Action, c *lookups) bool {
	if c == nil {
		c = &lookups{}
	}
	l, ok := c.jobs[a.JobID]
	if !ok {
		l.j, l.err = s.load(ctx, a.JobID, c.read)
		if c.jobs != nil {
			c.jobs[a.JobID] = l
		}
	}
	switch {
	case errors.Is(l.err, store.ErrNotFound):
		return false
	case l.err != nil:
		return true
	case l.j.Incarnation() != a.Incarnation:
		return false
	}
	_, ok = l.j.Pending(a.ID)
	return ok
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
