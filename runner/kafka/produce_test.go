package kafka

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// producerCluster starts a cluster of the test's own with a 1-partition
// topic, and returns it, the topic and a producer to it.
func producerCluster(t *testing.T) (*kfake.Cluster, string, *producer) {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "p"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	cfg := Config{Brokers: c.ListenAddrs()}
	if err := cfg.fill(); err != nil {
		t.Fatal(err)
	}
	p := cfg.writer("p", jobBalancer{}, 1<<20, nil)
	t.Cleanup(func() { _ = p.Close() })
	return c, "p", p
}

// produced reads the keys of topic's partition 0 from its start.
func produced(t *testing.T, brokers []string, topic string) []string {
	t.Helper()
	cl := &kafka.Client{Addr: kafka.TCP(brokers...), Timeout: 10 * time.Second}
	var keys []string
	for off := int64(0); ; {
		res, err := cl.Fetch(context.Background(), &kafka.FetchRequest{Topic: topic, Partition: 0, Offset: off, MinBytes: 1, MaxBytes: 1 << 20, MaxWait: 50 * time.Millisecond})
		if err == nil {
			err = res.Error
		}
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for {
			r, err := res.Records.ReadRecord()
			if err != nil {
				break
			}
			if r.Offset < off {
				continue
			}
			k, _ := kafka.ReadAll(r.Key)
			keys = append(keys, string(k))
			off = r.Offset + 1
			n++
		}
		if n == 0 {
			return keys
		}
	}
}

// TestProducerBatchesWhileBusy: a write to a partition with no request in
// flight goes out at once and alone; the writes that come while it is in
// flight go together in the next request, after it, each call's messages
// in their order.
func TestProducerBatchesWhileBusy(t *testing.T) {
	c, topic, p := producerCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	var mu sync.Mutex
	var sizes []int // records per produce request, in order
	first := make(chan struct{})
	release := make(chan struct{})
	c.ControlKey(int16(kmsg.Produce), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		n := 0
		for _, tp := range req.(*kmsg.ProduceRequest).Topics {
			for _, pp := range tp.Partitions {
				var b kmsg.RecordBatch
				if err := b.ReadFrom(pp.Records); err == nil {
					n += int(b.NumRecords)
				}
			}
		}
		mu.Lock()
		sizes = append(sizes, n)
		isFirst := len(sizes) == 1
		mu.Unlock()
		if isFirst {
			close(first)
			c.SleepControl(func() { <-release })
		}
		return nil, nil, false
	})

	errs := make(chan error, 100)
	go func() { errs <- p.WriteMessages(ctx, kafka.Message{Key: []byte("lone")}) }()
	<-first
	const writers = 20
	for i := range writers {
		go func() {
			errs <- p.WriteMessages(ctx, kafka.Message{Key: []byte(fmt.Sprintf("w%d-a", i))}, kafka.Message{Key: []byte(fmt.Sprintf("w%d-b", i))})
		}()
	}
	// Wait until every writer's messages are queued behind the request in
	// flight, then let it through.
	for deadline := time.Now().Add(10 * time.Second); ; {
		p.mu.Lock()
		q := p.queues[topicPartition{topic, 0}]
		n := len(q.items)
		p.mu.Unlock()
		if n == 2*writers {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d messages queued, want %d", n, 2*writers)
		}
		time.Sleep(time.Millisecond)
	}
	close(release)
	for range writers + 1 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	got := fmt.Sprint(sizes)
	mu.Unlock()
	if want := fmt.Sprint([]int{1, 2 * writers}); got != want {
		t.Errorf("records per request %s, want %s: the lone write alone, the others together", got, want)
	}
	keys := produced(t, c.ListenAddrs(), topic)
	if len(keys) != 2*writers+1 || keys[0] != "lone" {
		t.Fatalf("read %v", keys)
	}
	pos := map[string]int{}
	for i, k := range keys {
		pos[k] = i
	}
	for i := range writers {
		if a, b := pos[fmt.Sprintf("w%d-a", i)], pos[fmt.Sprintf("w%d-b", i)]; a > b {
			t.Errorf("writer %d's messages out of order: %v", i, keys)
		}
	}
}

// TestProducerSplitsLargeQueues: the messages queued are sent in requests
// of at most maxBytes, in order.
func TestProducerSplitsLargeQueues(t *testing.T) {
	c, topic, p := producerCluster(t)
	p.maxBytes = 3 * size(kafka.Message{Key: []byte("m00"), Value: make([]byte, 1000)})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var msgs []kafka.Message
	for i := range 10 {
		msgs = append(msgs, kafka.Message{Key: []byte(fmt.Sprintf("m%02d", i)), Value: make([]byte, 1000)})
	}
	if err := p.WriteMessages(ctx, msgs...); err != nil {
		t.Fatal(err)
	}
	keys := produced(t, c.ListenAddrs(), topic)
	for i, k := range keys {
		if k != fmt.Sprintf("m%02d", i) {
			t.Fatalf("read %v", keys)
		}
	}
	if len(keys) != 10 {
		t.Fatalf("read %v", keys)
	}
	big := kafka.Message{Key: []byte("big"), Value: make([]byte, p.maxBytes)}
	if err := p.WriteMessages(ctx, big); err == nil {
		t.Error("a message over maxBytes was written")
	}
}

// TestProducerRetries: a request refused with a retriable error is sent
// again; one refused with an error that is not retriable fails the
// write, once.
func TestProducerRetries(t *testing.T) {
	c, topic, p := producerCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	f := c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Produce}, Topic: topic, Err: kerr.NotLeaderForPartition, Count: 2})
	if err := p.WriteMessages(ctx, kafka.Message{Key: []byte("a")}); err != nil {
		t.Fatalf("a write refused twice as not leader: %v", err)
	}
	if f.Hits() != 2 {
		t.Errorf("%d faults hit, want 2", f.Hits())
	}
	f.Remove()
	f = c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Produce}, Topic: topic, Err: kerr.TopicAuthorizationFailed, Count: -1})
	err := p.WriteMessages(ctx, kafka.Message{Key: []byte("b")})
	if !errors.Is(err, kafka.TopicAuthorizationFailed) {
		t.Errorf("a write refused as not authorized: %v", err)
	}
	if f.Hits() != 1 {
		t.Errorf("%d requests refused as not authorized, want 1 (no retry)", f.Hits())
	}
	f.Remove()
	if keys := produced(t, c.ListenAddrs(), topic); fmt.Sprint(keys) != "[a]" {
		t.Errorf("read %v, want [a]", keys)
	}
}

// TestProducerClose: Close waits for the requests of the messages queued,
// those in flight and those behind them; a write after it fails.
func TestProducerClose(t *testing.T) {
	c, topic, p := producerCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	first := make(chan struct{})
	release := make(chan struct{})
	c.ControlKey(int16(kmsg.Produce), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.DropControl() // the first request only
		close(first)
		c.SleepControl(func() { <-release })
		return nil, nil, false
	})
	errs := make(chan error, 2)
	go func() { errs <- p.WriteMessages(ctx, kafka.Message{Key: []byte("a")}) }()
	<-first
	go func() { errs <- p.WriteMessages(ctx, kafka.Message{Key: []byte("b")}) }()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		p.mu.Lock()
		n := len(p.queues[topicPartition{topic, 0}].items)
		p.mu.Unlock()
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the second write is not queued")
		}
	}
	closed := make(chan error, 1)
	go func() { closed <- p.Close() }()
	select {
	case err := <-closed:
		t.Fatalf("Close returned (%v) with a request in flight", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if keys := produced(t, c.ListenAddrs(), topic); fmt.Sprint(keys) != "[a b]" {
		t.Errorf("read %v, want [a b]", keys)
	}
	if err := p.WriteMessages(ctx, kafka.Message{Key: []byte("after")}); !errors.Is(err, io.ErrClosedPipe) {
		t.Errorf("a write after Close: %v", err)
	}
}

// TestProducerGivesUp: a request refused as retriable every time is sent
// maxAttempts times in all (kafka-go's Writer's bound), then the write
// fails with the broker's error.
func TestProducerGivesUp(t *testing.T) {
	c, topic, p := producerCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	f := c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Produce}, Topic: topic, Err: kerr.NotLeaderForPartition, Count: -1})
	defer f.Remove()
	err := p.WriteMessages(ctx, kafka.Message{Key: []byte("a")})
	if !errors.Is(err, kafka.NotLeaderForPartition) {
		t.Errorf("a write refused as not leader every time: %v, want kafka.NotLeaderForPartition", err)
	}
	if f.Hits() != maxAttempts {
		t.Errorf("%d requests refused, want %d (maxAttempts)", f.Hits(), maxAttempts)
	}
}
