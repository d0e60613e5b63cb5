package kafka

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/protocol/metadata"
)

type lockedBuilder struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuilder) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuilder) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestAwaitTopicsPersists: a topic said to exist that the metadata never
// lists is waited for up to the transport's bound, with one warning once
// the quiet wait has passed; then the answer says it is unknown, as
// kafka-go's does.
func TestAwaitTopicsPersists(t *testing.T) {
	var logs lockedBuilder
	cfg := Config{Brokers: ClusterFor(t), Timeout: quietTopicWait + 500*time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))}
	if err := cfg.fill(); err != nil {
		t.Fatal(err)
	}
	topic := testPrefix(t) + ".never"
	tr := cfg.transport(func(name string) bool { return name == topic })
	defer tr.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	begin := time.Now()
	res, err := tr.RoundTrip(ctx, cfg.addr(), &metadata.Request{TopicNames: []string{topic}})
	if err != nil {
		t.Fatal(err)
	}
	waited := time.Since(begin)
	if waited < cfg.Timeout {
		t.Errorf("returned after %v, before the bound %v", waited, cfg.Timeout)
	}
	ts := res.(*metadata.Response).Topics
	if len(ts) != 1 || ts[0].ErrorCode != int16(kafka.UnknownTopicOrPartition) {
		t.Errorf("answer %+v, want the topic unknown", ts)
	}
	l := logs.String()
	if n := strings.Count(l, "level=WARN"); n != 1 || !strings.Contains(l, topic) {
		t.Errorf("want one warning naming %s, got:\n%s", topic, l)
	}
}
