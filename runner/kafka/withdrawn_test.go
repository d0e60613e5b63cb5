package kafka_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"

	kafkarunner "github.com/batonwf/baton/runner/kafka"
)

// TestQueuesSkipWithdrawnActions is issue 15's defect 7 on Kafka: actions
// queued for a name no worker serves, of jobs then cancelled or deleted,
// are not waiting work: Queues does not count them (it used to, for
// ever), and the worker that starts later for the name skips them instead
// of running them.
func TestQueuesSkipWithdrawnActions(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg := testConfig(t)
	st := openStore(t, cfg)
	counter := newCounter(t)
	start(t, kafkarunner.Options{WorkerOptions: runner.WorkerOptions{Registry: counter.reg, DrainTimeout: time.Second}, Store: openStore(t, cfg)})
	client := start(t, kafkarunner.Options{Store: st, Role: kafkarunner.RoleClient})

	for _, id := range []job.ID{"gone-1", "gone-2", "live-1"} {
		if err := client.Submit(ctx, id, ast.Seq(ast.Act("noop", 1), ast.Act("email.send", string(id)))); err != nil {
			t.Fatal(err)
		}
	}
	queue := func() kafkarunner.Queue {
		t.Helper()
		qs, err := st.Queues(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range qs {
			if q.Action == "email.send" {
				return q
			}
		}
		return kafkarunner.Queue{}
	}
	waitFor(t, "three email.send actions queued", func() bool { return queue().Waiting == 3 })

	if err := client.Cancel(ctx, "gone-1", "not needed"); err != nil {
		t.Fatal(err)
	}
	if err := client.Delete(ctx, "gone-2"); err != nil {
		t.Fatal(err)
	}
	if q := queue(); q.Waiting != 1 || q.Withdrawn != 2 {
		t.Errorf("email.send: %d waiting, %d withdrawn; want 1 and 2 (the cancelled and the deleted job's)", q.Waiting, q.Withdrawn)
	}

	// A worker for email.send starts: it runs live-1's action only.
	var ran atomic.Int64
	reg := runner.NewRegistry()
	if err := reg.Register("email.send", func(ctx context.Context, a job.Action) ([]byte, error) {
		ran.Add(1)
		if a.JobID != "live-1" {
			return nil, errors.New("ran an action of " + string(a.JobID))
		}
		return nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	start(t, kafkarunner.Options{WorkerOptions: runner.WorkerOptions{Registry: reg, DrainTimeout: time.Second}, Store: openStore(t, cfg), Role: kafkarunner.RoleWorker})
	if j, err := client.Wait(ctx, "live-1"); err != nil || j.Status() != job.StatusSucceeded {
		t.Fatalf("live-1: %v %v", j.Status(), err)
	}
	waitFor(t, "the email.send queue consumed", func() bool { q := queue(); return q.Waiting == 0 && q.Withdrawn == 0 })
	if n := ran.Load(); n != 1 {
		t.Errorf("email.send ran %d times, want once (live-1's)", n)
	}
}
