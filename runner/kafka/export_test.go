package kafka

import (
	"context"
	"net"
	"os"
	"sync"
	"testing"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/batonwf/baton/job"
)

// ClusterFor returns brokers for one test: KAFKA_BROKERS when set, else
// those of an in-process cluster of the test's own (the same for every
// call in the test), closed when it ends: the package's shared one would
// carry every earlier test's topics and groups.
func ClusterFor(t testing.TB) []string {
	if os.Getenv("KAFKA_BROKERS") != "" {
		return testBrokers
	}
	if addrs, ok := clusters.Load(t); ok {
		return addrs.([]string)
	}
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	addrs := c.ListenAddrs()
	clusters.Store(t, addrs)
	t.Cleanup(func() {
		clusters.Delete(t)
		c.Close()
	})
	return addrs
}

var clusters sync.Map // testing.TB -> []string

// NewPrefix returns a topic prefix no other test uses.
func NewPrefix(t testing.TB) string { return testPrefix(t) }

// FaultPoint is where a fault hook is asked (faultPoint).
type FaultPoint = faultPoint

// The fault points.
const (
	FaultRequest   = faultRequest
	FaultCommit    = faultCommit
	FaultCommitted = faultCommitted
)

// InjectFaults returns cfg with the fault hook f: every produce, fetch
// and offset commit of a store opened with it, and of a runner on that
// store, asks f first (FaultRequest, with the request's topic; a fetch
// asks again once it returned), and a transition's commit asks it before
// its state is written (FaultCommit) and once it was (FaultCommitted);
// an error f returns is the request's or the commit's.
func InjectFaults(cfg Config, f func(p FaultPoint, topic string, tr *job.Transition) error) Config {
	cfg.faults = f
	return cfg
}

// WithDial returns cfg whose transports (writers, admin and fetch
// requests) make their connections with d.
func WithDial(cfg Config, d func(ctx context.Context, network, address string) (net.Conn, error)) Config {
	cfg.dial = d
	return cfg
}

// LiveKeys returns the keys of the state topic whose latest record is not
// a tombstone, with that record's value: what compaction leaves, once it
// has run.
func (s *Store) LiveKeys(ctx context.Context) (map[string][]byte, error) {
	live := map[string][]byte{}
	for part := range s.nparts {
		if _, err := s.readState(ctx, part, 0, func(_ int64, m kafka.Message) {
			live[string(m.Key)] = m.Value
		}); err != nil {
			return nil, err
		}
	}
	for k, v := range live {
		if v == nil {
			delete(live, k)
		}
	}
	return live, nil
}

// Owns returns how many restarter partitions the runner owns.
func (r *Runner) Owns() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.loops)
}

// ClaimOwner returns the owner a claim record's value names.
func ClaimOwner(v []byte) (string, error) {
	var c claimMsg
	err := decodeStrict(v, &c)
	return c.Owner, err
}

// WithoutResume returns o for a runner whose restarter does not recover
// the jobs of the partitions it takes over.
func WithoutResume(o Options) Options {
	o.noResume = true
	return o
}

// MemberName returns the name a group member announced in its user data
// (memberData), if it parses.
func MemberName(userData []byte) (string, bool) {
	d, err := decodeMemberData(userData)
	return d.Name, err == nil
}
