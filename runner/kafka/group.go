package kafka

import (
	"context"
	"errors"
	"log/slog"
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

type genCommitter struct{ gen *kafka.Generation }

func (c genCommitter) commit(topic string, part int, offset int64) error {
	return c.gen.CommitOffsets(map[string]map[int]int64{topic: {part: offset}})
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
		n := 0
		for topic, parts := range gen.Assignments {
			for _, pa := range parts {
				n++
				gen.Start(func(gctx context.Context) {
					m.serve(ctx, gctx, genCommitter{gen}, gen.ID, topic, pa.ID, pa.Offset)
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
