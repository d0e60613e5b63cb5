package kafka

import (
	"context"

	"github.com/segmentio/kafka-go"

	"github.com/batonwf/baton/job"
)

// faultPoint is where a fault hook (Config.faults) is asked whether the
// process dies.
type faultPoint int

const (
	// faultRequest: before every produce (topic is the first message's),
	// every fetch and every offset commit, and once a fetch returned,
	// before its record is used (tr is nil).
	faultRequest faultPoint = iota
	// faultCommit: before a transition's state is written (W1).
	faultCommit
	// faultCommitted: once a transition's state was written, before the
	// runner acts on it (publishes its stops, produces its actions).
	faultCommitted
)

// fault asks the configuration's fault hook about point p: nil, or the
// error the request or commit fails with. Production sets no hook; the
// package's tests set one (export_test.go) to crash a runner at the
// writes and reads production makes.
func (c *Config) fault(p faultPoint, topic string, tr *job.Transition) error {
	if c == nil || c.faults == nil {
		return nil
	}
	return c.faults(p, topic, tr)
}

// fetch fetches the next record of rd, asking the fault hook before the
// fetch and once it returned (a dead process uses no record).
func (c *Config) fetch(ctx context.Context, rd *kafka.Reader) (kafka.Message, error) {
	topic := rd.Config().Topic
	if err := c.fault(faultRequest, topic, nil); err != nil {
		return kafka.Message{}, err
	}
	m, err := rd.FetchMessage(ctx)
	if err != nil {
		return m, err
	}
	if err := c.fault(faultRequest, topic, nil); err != nil {
		return kafka.Message{}, err
	}
	return m, nil
}
