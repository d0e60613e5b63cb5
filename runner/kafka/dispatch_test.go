package kafka_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batonwf/baton/ast"

	kafkarunner "github.com/batonwf/baton/runner/kafka"
)

// logBuffer collects a logger's text output, safe for concurrent use.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestFirstDispatchQuiet: the first action dispatched to an action topic
// the restarter has just created (its writer's metadata predates the
// topic) is produced without a warning.
func TestFirstDispatchQuiet(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var logs logBuffer
	cfg := testConfig(t)
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	st := openStore(t, cfg)
	// A restarter and no worker: the action topics are made by the
	// dispatches, the second after the writer fetched its metadata for the
	// first.
	start(t, kafkarunner.Options{Store: st, Role: kafkarunner.RoleRestarter})
	client := start(t, kafkarunner.Options{Store: st, Role: kafkarunner.RoleClient})
	if err := client.Submit(ctx, "two", ast.Seq(ast.Act("first", 1), ast.Act("second", 2))); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"first", "second"} {
		var waiting int64
		waitFor(t, "an action waiting in topic "+cfg.Prefix+".action."+name, func() bool {
			qs, err := st.Queues(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, q := range qs {
				if q.Action == name {
					waiting = q.Waiting
				}
			}
			return waiting == 1
		})
		j, err := client.Status(ctx, "two")
		if err != nil {
			t.Fatal(err)
		}
		acts := j.Outstanding()
		if len(acts) != 1 || acts[0].Name != name {
			t.Fatalf("job two v%d waits for %v, want one %s action", j.Version(), acts, name)
		}
		if err := client.Deliver(ctx, acts[0].Succeed([]byte(`"done"`))); err != nil {
			t.Fatal(err)
		}
	}
	if j, err := client.Wait(ctx, "two"); err != nil || !j.Done() {
		t.Fatalf("job two: %v %v", j, err)
	}
	if l := logs.String(); strings.Contains(l, "level=WARN") || strings.Contains(l, "level=ERROR") {
		t.Errorf("warnings logged:\n%s", l)
	}
}
