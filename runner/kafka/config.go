package kafka

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/sasl"

	"github.com/batonwf/baton/job"

	"github.com/batonwf/baton/ast"
)

// Config says how to reach the cluster and how baton's topics are named
// and made. Open takes it; every runner on a store shares it.
type Config struct {
	// Brokers are the bootstrap addresses ("host:port"); required.
	Brokers []string
	// Prefix names every topic and group ("PREFIX.restarter", ...);
	// default "baton". 1 to 40 bytes of letters, digits, '.', '_' and '-'.
	Prefix string
	// Partitions is the partition count of the restarter and state topics
	// when Open creates them; default 12. Existing topics keep theirs.
	Partitions int
	// ActionPartitions is the partition count of an action topic when it
	// is created; default 6.
	ActionPartitions int
	// ReplicationFactor of the topics baton creates; default -1, the
	// broker's default.
	ReplicationFactor int
	// NoCreate makes baton create no topic: Open only checks that the
	// restarter, state and stops topics exist and are configured right,
	// and fails with a *MissingTopicsError naming those that do not exist
	// and the prefix; an action topic that does not exist is not created
	// either (its dispatch fails and is tried again; a worker that serves
	// it waits, logging the error). For tools that only read, and users
	// without the permission to create topics; a misspelled prefix then
	// leaves no topics behind.
	NoCreate bool
	// MaxMessageBytes bounds every message baton produces (key, value and
	// headers); default 1,000,000. Open lowers it to fit the topics'
	// max.message.bytes.
	MaxMessageBytes int
	// Retention is how long a settled job (succeeded, failed, cancelled)
	// is kept, counted from its clock (job.Job.Clock: the time of the last
	// result or cancel it applied); the restarter that owns its partition
	// then deletes it with tombstones, which compaction drops. 0 means
	// DefaultRetention; a negative value keeps settled jobs until they
	// are deleted by hand (Runner.Delete). Each restarter applies its own
	// store's setting to the partitions it owns.
	Retention time.Duration
	// SnapshotEvery, when > 0, writes a job's snapshot at least every so
	// many steps, besides store.SnapshotDue's rule by size.
	SnapshotEvery uint64
	// TLS, if set, encrypts every connection (kafka-go's Dialer.TLS and
	// Transport.TLS).
	TLS *tls.Config
	// SASL, if set, authenticates every connection (kafka-go's
	// Dialer.SASLMechanism and Transport.SASL).
	SASL sasl.Mechanism
	// ClientID is sent to the brokers; default "baton".
	ClientID string
	// Timeout bounds each request to the cluster (admin requests, fetches
	// of the state), and a writer's wait for metadata that lists a topic
	// created since its last fetch; default 10s. Writes are bounded by
	// their contexts.
	Timeout time.Duration
	// Logger receives the store's logs; nil discards them.
	Logger *slog.Logger

	// dial, if set, makes the connections of the transports (writers,
	// admin and fetch requests) instead of a net.Dialer. For tests.
	dial func(ctx context.Context, network, address string) (net.Conn, error)
	// faults, set only by the package's tests (export_test.go), injects
	// faults at the runner's writes and reads (see fault).
	faults func(p faultPoint, topic string, tr *job.Transition) error
}

// DefaultRetention is Config.Retention's default: a week.
const DefaultRetention = 7 * 24 * time.Hour

// retention returns how long settled jobs are kept; <= 0: for ever.
func (c *Config) retention() time.Duration {
	if c.Retention == 0 {
		return DefaultRetention
	}
	return c.Retention
}

// maxPrefix bounds Config.Prefix so that "PREFIX.action.NAME" stays under
// Kafka's 249 bytes for every action name.
const maxPrefix = 249 - len(".action.") - ast.MaxActionName

// messageOverhead is what a record costs besides its key, value and
// headers in a record batch of one (the batch header and the record's
// own fields), rounded up.
const messageOverhead = 128

func (c *Config) fill() error {
	if len(c.Brokers) == 0 {
		return errors.New("kafka: Config.Brokers is empty")
	}
	if c.Prefix == "" {
		c.Prefix = "baton"
	}
	if err := CheckPrefix(c.Prefix); err != nil {
		return err
	}
	if c.Partitions <= 0 {
		c.Partitions = 12
	}
	if c.ActionPartitions <= 0 {
		c.ActionPartitions = 6
	}
	if c.ReplicationFactor == 0 {
		c.ReplicationFactor = -1
	}
	if c.MaxMessageBytes <= 0 {
		c.MaxMessageBytes = 1_000_000
	}
	if c.MaxMessageBytes < 4096 {
		return fmt.Errorf("kafka: Config.MaxMessageBytes is %d; at least 4096 are needed", c.MaxMessageBytes)
	}
	if c.ClientID == "" {
		c.ClientID = "baton"
	}
	if c.Timeout <= 0 {
		c.Timeout = 10 * time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return nil
}

// Topic and group names.
func (c *Config) restarterTopic() string         { return c.Prefix + ".restarter" }
func (c *Config) stateTopic() string             { return c.Prefix + ".state" }
func (c *Config) stopsTopic() string             { return c.Prefix + ".stops" }
func (c *Config) actionTopic(name string) string { return c.Prefix + ".action." + name }
func (c *Config) actionPrefix() string           { return c.Prefix + ".action." }
func (c *Config) restarterGroup() string         { return c.Prefix + ".restarters" }
func (c *Config) workerGroup() string            { return c.Prefix + ".workers" }

// metadataTTL is how old the metadata of the cluster a transport (and a
// producer's partition counts) may be.
const metadataTTL = 500 * time.Millisecond

// transport returns a new kafka-go transport: one per writer and client,
// since a shared one can hold stale metadata of a topic. kafka-go does not
// refresh metadata on "not leader for partition": a short MetadataTTL
// does. kafka-go bounds every metadata fetch by the TTL too, the first
// included: its requests wait for a fetch that succeeds (kafkaTransport).
// Its metadata requests that name a topic for which exists is true wait
// for metadata that lists it (exists may be nil).
func (c *Config) transport(exists func(topic string) bool) *kafkaTransport {
	return &kafkaTransport{log: c.Logger, exists: exists, wait: c.Timeout, Transport: &kafka.Transport{
		Dial:        c.dial,
		DialTimeout: 5 * time.Second,
		MetadataTTL: metadataTTL,
		ClientID:    c.ClientID,
		TLS:         c.TLS,
		SASL:        c.SASL,
	}}
}

// dialer returns the dialer of consumer groups and readers.
func (c *Config) dialer() *kafka.Dialer {
	return &kafka.Dialer{
		ClientID:      c.ClientID,
		Timeout:       5 * time.Second,
		DualStack:     true,
		TLS:           c.TLS,
		SASLMechanism: c.SASL,
	}
}

func (c *Config) addr() net.Addr { return kafka.TCP(c.Brokers...) }

// client returns an admin and fetch client (exists: see transport).
func (c *Config) client(exists func(topic string) bool) *kafka.Client {
	return &kafka.Client{Addr: c.addr(), Timeout: c.Timeout, Transport: c.transport(exists)}
}

// writer returns a producer whose acks come from every in-sync replica
// (see producer: no linger, one request in flight per partition). topic
// "" lets each message name its topic. Its first write to a topic for
// which exists is true waits for metadata that lists it.
func (c *Config) writer(topic string, b kafka.Balancer, maxBytes int, exists func(topic string) bool) *producer {
	return &producer{
		cfg:      c,
		cl:       &kafka.Client{Addr: c.addr(), Timeout: attemptTimeout, Transport: c.transport(exists)},
		topic:    topic,
		balancer: b,
		maxBytes: maxBytes + messageOverhead,
		queues:   map[topicPartition]*sendQueue{},
		parts:    map[string]partList{},
	}
}

// reader returns a reader of one partition, from offset.
func (c *Config) reader(topic string, partition int, maxBytes int) *kafka.Reader {
	return kafka.NewReader(kafka.ReaderConfig{
		Brokers:        c.Brokers,
		Topic:          topic,
		Partition:      partition,
		Dialer:         c.dialer(),
		MinBytes:       1,
		MaxBytes:       max(maxBytes+messageOverhead, 1<<20) * 4,
		MaxWait:        250 * time.Millisecond,
		ReadBackoffMin: 20 * time.Millisecond,
		ReadBackoffMax: time.Second,
		MaxAttempts:    3,
		ErrorLogger:    c.kafkaLog(topic, partition),
	})
}

// kafkaLog returns a logger for kafka-go's errors about a reader of
// topic/partition: kafka-go retries them, so they are logged at debug
// level.
func (c *Config) kafkaLog(topic string, partition int) kafka.Logger {
	return kafka.LoggerFunc(func(format string, args ...any) {
		c.Logger.Debug("kafka-go: "+fmt.Sprintf(format, args...), "topic", topic, "partition", partition)
	})
}

// closeWriter closes w and the connections of its transport.
func closeWriter(w *producer) error { return w.Close() }

// closeTransport closes the connections of a transport baton made: those
// idle at once, those in use when their request ends.
func closeTransport(rt kafka.RoundTripper) {
	if t, ok := rt.(*kafkaTransport); ok {
		t.CloseIdleConnections()
	}
}
