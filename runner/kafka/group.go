package kafka

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"
)

// member is one member of a consumer group, with explicit generations:
// for each partition a generation assigns it, it runs serve until the
// generation ends (a rebalance) or ctx ends, and gives serve the means to
// commit offsets in that generation. kafka-go's Reader hides generations;
// baton needs them, since taking a partition over is when a restarter
// rebuilds its jobs.
type member struct {
	cfg    *Config
	group  string
	topics []string
	log    *slog.Logger
	timing GroupTiming
	// balancer is the member's assignor (and, when it leads, the
	// group's): it announces the member (memberData) and balances the
	// group sticky by capacity. The member tells it what each generation
	// assigned it, for its next join.
	balancer *groupBalancer
	// serve handles one assigned partition, from offset (kafka.FirstOffset
	// when the group has committed none). gctx ends with the generation;
	// ctx with the member. serve must return soon after either ends: the
	// next generation starts only once every serve of this one returned.
	serve func(ctx, gctx context.Context, c committer, gen int32, topic string, part int, offset int64)
}

// GroupTiming tunes the consumer groups of a Runner.
type GroupTiming struct {
	// SessionTimeout: a member silent this long is dropped; default 10s,
	// at least 6s (brokers refuse less by default).
	SessionTimeout time.Duration
	// HeartbeatInterval: how often members check in, and so how soon they
	// learn of a rebalance; default 500ms.
	HeartbeatInterval time.Duration
	// RebalanceTimeout: how long the coordinator waits for members to
	// rejoin; default 30s.
	RebalanceTimeout time.Duration
}

func (g *GroupTiming) fill() {
	if g.SessionTimeout <= 0 {
		g.SessionTimeout = 10 * time.Second
	}
	if g.HeartbeatInterval <= 0 {
		g.HeartbeatInterval = 500 * time.Millisecond
	}
	if g.RebalanceTimeout <= 0 {
		g.RebalanceTimeout = 30 * time.Second
	}
}

// committer commits offsets in one generation.
type committer interface {
	commit(topic string, part int, offset int64) error
}

// genCommitter commits the offsets of one generation, for every
// partition it assigned: the commits asked for while one is under way
// are merged into the next (the newest offset of each partition), so
// that one request at a time uses the connection to the group's
// coordinator (kafka-go's connection spins when several requests wait
// on it). A commit returns once a request that holds its offset (or a
// newer one of its partition) is answered, with that answer.
type genCommitter struct {
	gen *kafka.Generation
	cfg *Config // its fault hook is asked before every commit

	mu      sync.Mutex
	next    map[string]map[int]int64 // the offsets of the next request
	waiters []chan error             // of the next request
	busy    bool                     // a request is under way
}

var _ committer = (*genCommitter)(nil)

func newGenCommitter(gen *kafka.Generation, cfg *Config) *genCommitter {
	return &genCommitter{gen: gen, cfg: cfg}
}

func (c *genCommitter) commit(topic string, part int, offset int64) error {
	if err := c.cfg.fault(faultRequest, topic, nil); err != nil {
		return err
	}
	ch := make(chan error, 1)
	c.mu.Lock()
	if c.next == nil {
		c.next = map[string]map[int]int64{}
	}
	if c.next[topic] == nil {
		c.next[topic] = map[int]int64{}
	}
	if cur, ok := c.next[topic][part]; !ok || offset > cur {
		c.next[topic][part] = offset
	}
	c.waiters = append(c.waiters, ch)
	start := !c.busy
	c.busy = true
	c.mu.Unlock()
	if start {
		go c.run()
	}
	return <-ch
}

// run sends the merged commits, one request at a time, until none is
// asked for.
func (c *genCommitter) run() {
	for {
		c.mu.Lock()
		offsets, waiters := c.next, c.waiters
		c.next, c.waiters = nil, nil
		if len(waiters) == 0 {
			c.busy = false
			c.mu.Unlock()
			return
		}
		c.mu.Unlock()
		err := c.gen.CommitOffsets(offsets)
		for _, w := range waiters {
			w <- err
		}
	}
}

// run joins the group and serves the partitions of each generation until
// ctx ends; then it leaves the group.
func (m *member) run(ctx context.Context) {
	cg, err := kafka.NewConsumerGroup(kafka.ConsumerGroupConfig{
		ID:                m.group,
		Brokers:           m.cfg.Brokers,
		Dialer:            m.cfg.dialer(),
		Topics:            m.topics,
		HeartbeatInterval: m.timing.HeartbeatInterval,
		SessionTimeout:    m.timing.SessionTimeout,
		RebalanceTimeout:  m.timing.RebalanceTimeout,
		JoinGroupBackoff:  500 * time.Millisecond,
		GroupBalancers:    m.balancer.balancers(),
		StartOffset:       kafka.FirstOffset,
		Timeout:           m.cfg.Timeout,
	})
	if err != nil {
		m.log.Error("consumer group", "group", m.group, "err", err)
		return
	}
	defer cg.Close()
	for {
		gen, err := cg.Next(ctx)
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, kafka.ErrGroupClosed) {
				return
			}
			m.log.Warn("joining the consumer group", "group", m.group, "err", err)
			select {
			case <-ctx.Done():
				return
			case <-time.After(500 * time.Millisecond):
			}
			continue
		}
		// Recorded before anything of the generation runs: its end sends
		// the next join, whose user data says what this one owned.
		m.balancer.owned(gen.ID, gen.Assignments)
		n := 0
		c := newGenCommitter(gen, m.cfg)
		for topic, parts := range gen.Assignments {
			for _, pa := range parts {
				n++
				gen.Start(func(gctx context.Context) {
					m.serve(ctx, gctx, c, gen.ID, topic, pa.ID, pa.Offset)
				})
			}
		}
		m.log.Debug("generation", "group", m.group, "id", gen.ID, "partitions", n)
		// The generation also ends when ctx does: a serve that returns
		// ends it (kafka-go ends a generation when any of its functions
		// returns).
		gen.Start(func(gctx context.Context) {
			select {
			case <-gctx.Done():
			case <-ctx.Done():
			}
		})
	}
}
