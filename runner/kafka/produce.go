package kafka

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"syscall"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/protocol/metadata"

	"github.com/batonwf/baton/runner"
)

// producer is baton's writer: it produces messages to the partitions of
// topics, with acks from every in-sync replica, and WriteMessages returns
// once every message it was given is acknowledged (or failed).
//
// It keeps one request in flight per partition, and no linger: a
// message for a partition that has no request in flight goes out at once,
// alone if nothing else is queued; the messages that come while a request
// is in flight wait for it and go together in the next one (as many as
// fit in maxBytes). So a lone write costs one round trip, and concurrent
// writes share requests as they would in a batch. (kafka-go's Writer
// holds a batch that is not full for its BatchTimeout: a lone
// synchronous write waits that long for nothing; with BatchSize 1 it sends
// one message per request, and concurrent writes queue behind each
// other.)
//
// The messages of a partition are appended in the order they reached the
// producer (those of one call in their order): a request's messages are
// retried before the next request goes out. A request that fails with a
// retriable error (the broker's temporary errors, a timeout, a connection
// lost) is sent again after a back-off, up to maxAttempts times in all,
// whether or not its callers still wait: as with kafka-go's Writer, a
// write whose caller gave up may still land (at least once). Each attempt
// is bounded by attemptTimeout.
type producer struct {
	cfg      *Config       // its fault hook (Config.fault) is asked before every produce
	cl       *kafka.Client // its transport is the producer's own
	topic    string        // "": every message names its topic
	balancer kafka.Balancer
	maxBytes int // a request's messages as size counts them; a message alone may be up to this

	mu     sync.Mutex
	closed bool
	queues map[topicPartition]*sendQueue
	parts  map[string]partList // by topic: read from the metadata within metadataTTL
	wg     sync.WaitGroup      // senders
}

// partList lists the partitions of a topic, as the metadata did at a
// time.
type partList struct {
	ids []int
	at  time.Time
}

// Retries of a request: kafka-go's Writer's defaults (10 attempts, each
// bounded by 10s), with the back-off baton gave its Writers (runner.Backoff
// from backoffMin, doubling, at most backoffMax).
const (
	maxAttempts    = 10
	attemptTimeout = 10 * time.Second
	backoffMin     = 20 * time.Millisecond
	backoffMax     = 500 * time.Millisecond
)

type topicPartition struct {
	topic string
	part  int
}

// sendQueue holds the messages of one partition not yet sent; busy when a
// sender works on it.
type sendQueue struct {
	items []sendItem
	busy  bool
}

type sendItem struct {
	m    kafka.Message
	size int
	c    *sendCall
}

// sendCall is one WriteMessages: it ends when each of its messages was
// acknowledged or failed.
type sendCall struct {
	mu   sync.Mutex
	left int
	err  error // the first failure
	done chan struct{}
}

func (c *sendCall) end(n int, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil && c.err == nil {
		c.err = err
	}
	if c.left -= n; c.left == 0 {
		close(c.done)
	}
}

// errProducerClosed is the answer of a producer closed.
var errProducerClosed = fmt.Errorf("kafka: writer closed: %w", io.ErrClosedPipe)

// WriteMessages produces msgs (to the producer's topic, or each to its
// own) and waits until each is acknowledged by every in-sync replica, or
// failed, or ctx ends (the messages queued go out all the same; none is
// queued if ctx has ended). It returns the first failure.
func (p *producer) WriteMessages(ctx context.Context, msgs ...kafka.Message) error {
	if len(msgs) == 0 {
		return nil
	}
	if p.isClosed() {
		return errProducerClosed
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("kafka: %w", err) // nothing sent
	}
	topic := p.topic
	if topic == "" {
		topic = msgs[0].Topic
	}
	if err := p.cfg.fault(faultRequest, topic, nil); err != nil {
		return err // nothing sent
	}
	tps := make([]topicPartition, len(msgs))
	counts := map[string][]int{}
	now := time.Now()
	items := make([]sendItem, len(msgs))
	for i, m := range msgs {
		topic := p.topic
		if topic == "" {
			topic = m.Topic
		}
		if topic == "" {
			return errors.New("kafka: a message names no topic")
		}
		n := size(m)
		if n > p.maxBytes {
			return fmt.Errorf("kafka: a message of %d bytes to %s, over the limit of %d", n, topic, p.maxBytes)
		}
		parts, ok := counts[topic]
		if !ok {
			var err error
			if parts, err = p.partitions(ctx, topic, now); err != nil {
				return err
			}
			counts[topic] = parts
		}
		tps[i] = topicPartition{topic, p.balancer.Balance(m, parts...)}
		if m.Time.IsZero() {
			m.Time = now
		}
		items[i] = sendItem{m: m, size: n}
	}
	c := &sendCall{left: len(msgs), done: make(chan struct{})}
	var start []topicPartition
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return errProducerClosed
	}
	for i, tp := range tps {
		q := p.queues[tp]
		if q == nil {
			q = &sendQueue{}
			p.queues[tp] = q
		}
		items[i].c = c
		q.items = append(q.items, items[i])
		if !q.busy {
			q.busy = true
			p.wg.Add(1)
			start = append(start, tp)
		}
	}
	p.mu.Unlock()
	for _, tp := range start {
		go p.send(tp)
	}
	select {
	case <-c.done:
		return c.err
	case <-ctx.Done():
		return fmt.Errorf("kafka: %w", ctx.Err())
	}
}

// send sends the queue of tp, one request at a time, until it is empty.
func (p *producer) send(tp topicPartition) {
	defer p.wg.Done()
	for {
		p.mu.Lock()
		q := p.queues[tp]
		n, bytes := 0, 0
		for n < len(q.items) && (n == 0 || bytes+q.items[n].size <= p.maxBytes) {
			bytes += q.items[n].size
			n++
		}
		if n == 0 {
			q.busy = false
			delete(p.queues, tp)
			p.mu.Unlock()
			return
		}
		batch := q.items[:n:n]
		q.items = q.items[n:]
		if len(q.items) == 0 {
			q.items = nil
		}
		p.mu.Unlock()

		err := p.produce(tp, batch)
		for i := 0; i < len(batch); {
			c, j := batch[i].c, i+1
			for j < len(batch) && batch[j].c == c {
				j++
			}
			c.end(j-i, err)
			i = j
		}
	}
}

// produce sends one request of batch to tp, again while it fails with a
// retriable error, up to maxAttempts times.
func (p *producer) produce(tp topicPartition, batch []sendItem) error {
	attempts := 0
	err := runner.Backoff{Base: backoffMin, Max: backoffMax}.Retry(context.Background(),
		func(err error) bool { return attempts < maxAttempts && retriable(err) },
		func() error {
			attempts++
			return p.produceOnce(tp, batch)
		})
	if err != nil {
		return fmt.Errorf("kafka: produce %d messages to %s/%d: %w", len(batch), tp.topic, tp.part, err)
	}
	return nil
}

func (p *producer) produceOnce(tp topicPartition, batch []sendItem) error {
	recs := make([]kafka.Record, len(batch))
	for i, it := range batch {
		recs[i] = kafka.Record{Time: it.m.Time, Key: kafka.NewBytes(it.m.Key), Value: kafka.NewBytes(it.m.Value), Headers: it.m.Headers}
	}
	ctx, cancel := context.WithTimeout(context.Background(), attemptTimeout)
	defer cancel()
	res, err := p.cl.Produce(ctx, &kafka.ProduceRequest{
		Topic:        tp.topic,
		Partition:    tp.part,
		RequiredAcks: kafka.RequireAll,
		Records:      kafka.NewRecordReader(recs...),
	})
	if err == nil && res != nil {
		err = res.Error
	}
	return err
}

// retriable reports whether a request that failed with err may succeed
// if sent again: kafka-go's rule for its Writer (an error that says it is
// temporary: the broker's retriable errors, timeouts; a connection
// refused, reset or cut short), and a connection closed.
func retriable(err error) bool {
	var temp interface{ Temporary() bool }
	if errors.As(err, &temp) && temp.Temporary() {
		return true
	}
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || timedOut(err)
}

// partitions returns the partitions of topic: those the producer read
// from the metadata less than metadataTTL ago, else those the
// transport's metadata lists now (kafkaTransport: it waits for metadata
// that lists a topic that exists).
func (p *producer) partitions(ctx context.Context, topic string, now time.Time) ([]int, error) {
	p.mu.Lock()
	pl, ok := p.parts[topic]
	p.mu.Unlock()
	if ok && now.Sub(pl.at) < metadataTTL {
		return pl.ids, nil
	}
	r, err := p.cl.Transport.RoundTrip(ctx, p.cl.Addr, &metadata.Request{TopicNames: []string{topic}})
	if err != nil {
		return nil, fmt.Errorf("kafka: metadata of %s: %w", topic, err)
	}
	n := -1
	for _, t := range r.(*metadata.Response).Topics {
		if t.Name != topic {
			continue
		}
		if t.ErrorCode != 0 {
			return nil, fmt.Errorf("kafka: metadata of %s: %w", topic, kafka.Error(t.ErrorCode))
		}
		n = len(t.Partitions)
	}
	switch {
	case n < 0:
		return nil, fmt.Errorf("kafka: metadata of %s: %w", topic, kafka.UnknownTopicOrPartition)
	case n == 0:
		return nil, fmt.Errorf("kafka: metadata of %s: no partitions", topic)
	}
	ids := make([]int, n)
	for i := range ids {
		ids[i] = i
	}
	p.mu.Lock()
	p.parts[topic] = partList{ids: ids, at: now}
	p.mu.Unlock()
	return ids, nil
}

func (p *producer) isClosed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closed
}

// Close refuses new writes, waits for the requests of those queued (as
// kafka-go's Writer does), and closes the producer's connections.
func (p *producer) Close() error {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.wg.Wait()
	closeTransport(p.cl.Transport)
	return nil
}
