package kafka

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/protocol/metadata"
)

// kafkaTransport is the kafka-go transport of one writer or client
// (Config.transport), with what baton adds to it: a request waits, within
// its context, for the transport's first metadata; and a metadata request
// for a topic that exists waits for metadata that lists it.
//
// kafka-go's transport fetches the cluster's metadata in the background
// (at first use, then every MetadataTTL at most), and bounds each fetch,
// the first one included, by MetadataTTL (short: kafka-go refreshes
// metadata on nothing but its TTL, see Config.transport). The fetch is
// bounded once its connection is made (the dial and the TLS handshake
// under DialTimeout, then SASL); when it takes longer than the TTL (a
// broker slow to answer, a loaded machine), the transport knows no
// broker, and every request fails at once ("Broker Not Available", or
// the fetch's timeout) until a later fetch succeeds, which it never
// replaces with an error.
// So until a fetch has succeeded, a request first asks the transport's
// cache (nothing goes to a broker) as long as the fetches time out, and
// goes out once one succeeded. An error that is not a timeout (a refused
// connection, a failed handshake) is returned at once.
//
// The metadata a transport caches can predate a topic: one created since
// (by baton's admin client, or by another process) is unknown to it until
// its next fetch, and a writer's write to the topic would fail at once
// ("Unknown Topic Or Partition"). So a metadata request (a writer asks the
// cache before each write) that names a topic that exists (exists: baton
// created or checked it) but is not listed waits for a fetch that lists
// it, for up to wait, quietly at first (the next fetch comes within
// MetadataTTL): a warning is logged only once it has waited for
// quietTopicWait.
type kafkaTransport struct {
	*kafka.Transport
	log    *slog.Logger
	exists func(topic string) bool // nil: no topic is waited for
	wait   time.Duration           // bounds a wait for a topic to be listed

	mu    sync.Mutex
	ready map[string]bool // the addresses whose metadata was fetched
}

var _ kafka.RoundTripper = (*kafkaTransport)(nil)

// quietTopicWait is how long a transport waits for metadata that lists a
// topic that exists before it says so in a warning: a few fetches.
const quietTopicWait = 2 * time.Second

// RoundTrip sends req once the transport has the cluster's metadata.
func (t *kafkaTransport) RoundTrip(ctx context.Context, addr net.Addr, req kafka.Request) (kafka.Response, error) {
	if err := t.awaitMetadata(ctx, addr); err != nil {
		return nil, err
	}
	res, err := t.Transport.RoundTrip(ctx, addr, req)
	if m, ok := req.(*metadata.Request); ok && err == nil && t.exists != nil {
		return t.awaitTopics(ctx, addr, m, res.(*metadata.Response))
	}
	return res, err
}

// awaitTopics returns res, the answer to m, if it lists every topic of m
// that exists; else it asks again until an answer does, or for up to
// t.wait, and returns the last answer.
func (t *kafkaTransport) awaitTopics(ctx context.Context, addr net.Addr, m *metadata.Request, res *metadata.Response) (kafka.Response, error) {
	missing := t.unlisted(res)
	if len(missing) == 0 {
		return res, nil
	}
	begin := time.Now()
	warned := false
	for time.Since(begin) < t.wait && sleep(ctx, 20*time.Millisecond) {
		r, err := t.Transport.RoundTrip(ctx, addr, m)
		if err != nil {
			return r, err
		}
		res = r.(*metadata.Response)
		if missing = t.unlisted(res); len(missing) == 0 {
			if warned {
				t.log.Info("the metadata lists the topics now", "topics", m.TopicNames, "waited", time.Since(begin).Round(time.Millisecond))
			}
			return res, nil
		}
		if !warned && time.Since(begin) >= quietTopicWait {
			t.log.Warn("the metadata does not list topics that exist; waiting for a fetch that does", "topics", missing,
				"waited", time.Since(begin).Round(time.Millisecond), "up to", t.wait)
			warned = true
		}
	}
	return res, nil
}

// unlisted returns the topics of res unknown to it that exist.
func (t *kafkaTransport) unlisted(res *metadata.Response) []string {
	var out []string
	for _, tp := range res.Topics {
		if tp.ErrorCode == int16(kafka.UnknownTopicOrPartition) && t.exists(tp.Name) {
			out = append(out, tp.Name)
		}
	}
	return out
}

// CloseIdleConnections closes the transport's connections (kafka-go's
// method); its next request starts from a first metadata fetch again.
func (t *kafkaTransport) CloseIdleConnections() {
	t.mu.Lock()
	clear(t.ready)
	t.mu.Unlock()
	t.Transport.CloseIdleConnections()
}

// awaitMetadata returns once a metadata fetch from addr has succeeded, or
// with the reason none did (without "kafka: ": baton's callers say it of
// their request).
func (t *kafkaTransport) awaitMetadata(ctx context.Context, addr net.Addr) error {
	key := addr.Network() + "/" + addr.String()
	t.mu.Lock()
	ok := t.ready[key]
	t.mu.Unlock()
	if ok {
		return nil
	}
	var last error // the fetch that timed out
	for pause := 10 * time.Millisecond; ; pause = min(2*pause, 100*time.Millisecond) {
		// A metadata request is answered from the transport's cache: the
		// outcome of its latest fetch.
		_, err := t.Transport.RoundTrip(ctx, addr, &metadata.Request{TopicNames: []string{}})
		switch {
		case err == nil:
			t.mu.Lock()
			if t.ready == nil {
				t.ready = map[string]bool{}
			}
			t.ready[key] = true
			t.mu.Unlock()
			if last != nil {
				t.log.Debug("kafka-go's metadata fetched after a fetch timed out", "brokers", addr.String())
			}
			return nil
		case ctx.Err() != nil && last != nil:
			return fmt.Errorf("no metadata of the cluster at %s: %w; every fetch timed out (kafka-go bounds each by the metadata TTL, %v), the last with: %v",
				addr, ctx.Err(), t.MetadataTTL, last)
		case ctx.Err() != nil, !timedOut(err):
			return fmt.Errorf("metadata of the cluster at %s: %w", addr, err)
		}
		if last == nil {
			t.log.Debug("kafka-go's first metadata fetch timed out; waiting for the next", "brokers", addr.String(), "err", err)
		}
		last = err
		sleep(ctx, pause)
	}
}

// timedOut reports whether err is a timeout: a deadline passed.
func timedOut(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()
}
