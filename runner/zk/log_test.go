package zk_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/internal/zktest"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	zkrunner "github.com/batonwf/baton/runner/zk"
)

// lockedBuffer is a bytes.Buffer safe for concurrent writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) lines(t *testing.T) []map[string]any {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	for _, line := range bytes.Split(l.b.Bytes(), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

// TestLogsClaims: a worker logs at DEBUG each action it claims, with the
// queue entry it claimed: one claimed from the queue (submitted by a
// runner without handlers), and one its own transition claimed for it.
func TestLogsClaims(t *testing.T) {
	srv := zktest.Start(t)
	st := openStore(t, srv, zkrunner.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), zktest.Patience(t))
	defer cancel()
	reg := runner.NewRegistry()
	if err := reg.Register("noop", func(context.Context, job.Action) ([]byte, error) { return nil, nil }); err != nil {
		t.Fatal(err)
	}
	var buf lockedBuffer
	log := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	runRunner(t, zkrunner.Options{WorkerOptions: runner.WorkerOptions{Registry: reg, Workers: 1, Logger: log}, Store: st})
	sub, err := zkrunner.New(zkrunner.Options{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	if err := sub.Submit(ctx, "logged", ast.Seq(ast.Act("noop", 1), ast.Act("noop", 2))); err != nil {
		t.Fatal(err)
	}
	if j, err := sub.Wait(ctx, "logged"); err != nil || j.Status() != job.StatusSucceeded {
		t.Fatalf("job: %v %v", j.Status(), err)
	}
	// The second action's claim is logged before it runs, so before the
	// job ends; the worker's lines are all written by now.
	claimed := map[string]map[string]any{}
	deadline := time.Now().Add(10 * time.Second)
	for len(claimed) < 2 && time.Now().Before(deadline) {
		for _, m := range buf.lines(t) {
			if m["msg"] == "action claimed" && m["job"] == "logged" {
				claimed[m["action"].(string)] = m
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	first, second := claimed["seq[0]#1"], claimed["seq[1]#1"]
	if first == nil || second == nil {
		t.Fatalf("claims logged: %v; want seq[0]#1 and seq[1]#1", claimed)
	}
	for _, m := range []map[string]any{first, second} {
		if e, _ := m["entry"].(string); e == "" || m["name"] != "noop" {
			t.Errorf("claim logged without its entry or action name: %v", m)
		}
	}
	if first["in_transition"] == true || second["in_transition"] != true {
		t.Errorf("seq[0]#1 is claimed from the queue and seq[1]#1 by the transition that made it: logged %v and %v", first, second)
	}
}
