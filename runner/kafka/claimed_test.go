package kafka_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"

	kafkarunner "github.com/batonwf/baton/runner/kafka"
)

// syncBuffer is a bytes.Buffer safe for the runner's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) lines(t *testing.T) []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []map[string]any
	for _, l := range bytes.Split(bytes.TrimSpace(s.b.Bytes()), []byte("\n")) {
		var m map[string]any
		if err := json.Unmarshal(l, &m); err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		out = append(out, m)
	}
	return out
}

// TestWorkerLogsClaim: a worker that takes an action logs at DEBUG that
// it claimed it (runner.LogClaimed), naming the action and the topic,
// partition and offset it took it from.
func TestWorkerLogsClaim(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg := testConfig(t)
	var buf syncBuffer
	log := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	reg := runner.NewRegistry()
	if err := reg.Register("noop", func(ctx context.Context, a job.Action) ([]byte, error) { return []byte(`"ok"`), nil }); err != nil {
		t.Fatal(err)
	}
	r := start(t, kafkarunner.Options{WorkerOptions: runner.WorkerOptions{Registry: reg, Logger: log}, Store: openStore(t, cfg)})
	if err := r.Submit(ctx, "c1", ast.Act("noop", "a")); err != nil {
		t.Fatal(err)
	}
	if j, err := r.Wait(ctx, "c1"); err != nil || j.Status() != job.StatusSucceeded {
		t.Fatalf("job c1: %v %v, want succeeded", j.Status(), err)
	}
	var claims []map[string]any
	for _, l := range buf.lines(t) {
		if l["msg"] == "action claimed" {
			claims = append(claims, l)
		}
	}
	if len(claims) != 1 {
		t.Fatalf("%d \"action claimed\" lines, want 1: %v", len(claims), claims)
	}
	c := claims[0]
	if c["level"] != "DEBUG" || c["job"] != "c1" || c["action"] != "root#1" || c["name"] != "noop" ||
		c["topic"] != cfg.Prefix+".action.noop" || c["partition"] == nil || c["offset"] == nil {
		t.Errorf("claim logged as %v, want DEBUG naming job c1, action root#1 (noop), its topic, partition and offset", c)
	}
}
