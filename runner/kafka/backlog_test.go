package kafka_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"

	kafkarunner "github.com/batonwf/baton/runner/kafka"
)

// holdFetches makes the broker hold every fetch of topic until release is
// closed (other requests go on): a restarter that takes a partition of it
// over cannot read its backlog meanwhile.
func holdFetches(c *kfake.Cluster, topic string, release <-chan struct{}) {
	c.ControlKey(int16(kmsg.Fetch), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		for _, tp := range req.(*kmsg.FetchRequest).Topics {
			if tp.Topic == topic {
				c.SleepControl(func() { <-release })
				break
			}
		}
		return nil, nil, false
	})
}

// TestCancelInBacklogWins is issue 15's defect 4: a cancel sent while no
// restarter runs waits in the restarter topic; the restarter that starts
// next must apply it before the result its own worker hands it in memory
// (a worker of the same process runs the job's queued action at once).
// Before the fix, the local result came first: the job went on to its
// next action and succeeded, and the cancel was ignored.
func TestCancelInBacklogWins(t *testing.T) {
	c := privateCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg := testConfig(t)
	cfg.Brokers = c.ListenAddrs()
	cfg.Partitions = 1

	// A restarter alone makes the job and queues its first action; it
	// stops before any worker runs it.
	first := start(t, kafkarunner.Options{Store: openStore(t, cfg), Role: kafkarunner.RoleRestarter})
	client := start(t, kafkarunner.Options{Store: openStore(t, cfg), Role: kafkarunner.RoleClient})
	if err := client.Submit(ctx, "b1", ast.Seq(ast.Act("noop", "a"), ast.Act("noop", "b"))); err != nil {
		t.Fatal(err)
	}
	first.stop(t)

	// The cancel waits in the restarter topic.
	cancelled := make(chan error, 1)
	go func() { cancelled <- client.Cancel(ctx, "b1", "given up") }()
	waitMessages(t, ctx, c, cfg.Prefix+".restarter", 2) // the submit and the cancel

	// The next runner restarts and works. Its restarter cannot read its
	// backlog until its worker has run the queued action (and, before the
	// fix, until the job finished or 2s passed).
	release := make(chan struct{})
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	defer free()
	holdFetches(c, cfg.Prefix+".restarter", release)
	ran := make(chan struct{})
	reg := runner.NewRegistry()
	var runOnce sync.Once
	if err := reg.Register("noop", func(ctx context.Context, a job.Action) ([]byte, error) {
		runOnce.Do(func() { close(ran) })
		return []byte(`"ok"`), nil
	}); err != nil {
		t.Fatal(err)
	}
	second := start(t, kafkarunner.Options{WorkerOptions: runner.WorkerOptions{Registry: reg, DrainTimeout: time.Second}, Store: openStore(t, cfg)})
	select {
	case <-ran:
	case <-ctx.Done():
		t.Fatal("the queued action never ran")
	}
	wctx, wcancel := context.WithTimeout(ctx, 2*time.Second)
	_, _ = second.Wait(wctx, "b1")
	wcancel()
	free()

	if err := <-cancelled; err != nil {
		t.Errorf("Cancel: %v", err)
	}
	j, err := second.Wait(ctx, "b1")
	if err != nil {
		t.Fatal(err)
	}
	if why, ok := j.Cancelled(); !ok || j.Status() != job.StatusCancelled {
		t.Errorf("job b1 ended %s (cancel %q, %v), want cancelled by the cancel that waited in the topic\n%s", j.Status(), why, ok, job.Describe(j))
	}
}

// TestCancelOfJobThatEndsFirst: a cancel that waits in the restarter topic
// behind the job's last result is applied after the job ended: Cancel
// says the job finished (runner.ErrFinished), as on ZooKeeper, instead
// of reporting success.
func TestCancelOfJobThatEndsFirst(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg := testConfig(t)
	st := openStore(t, cfg)
	first := start(t, kafkarunner.Options{Store: openStore(t, cfg), Role: kafkarunner.RoleRestarter})
	client := start(t, kafkarunner.Options{Store: st, Role: kafkarunner.RoleClient})
	if err := client.Submit(ctx, "e1", ast.Act("noop", "a")); err != nil {
		t.Fatal(err)
	}
	first.stop(t)
	j, err := client.Status(ctx, "e1")
	if err != nil {
		t.Fatal(err)
	}
	acts := j.Outstanding()
	if len(acts) != 1 {
		t.Fatalf("job e1 has %d outstanding actions, want 1", len(acts))
	}
	res := acts[0].Succeed([]byte(`"done"`))
	res.At = time.Now()
	if err := client.Deliver(ctx, res); err != nil {
		t.Fatal(err)
	}
	cancelled := make(chan error, 1)
	go func() { cancelled <- client.Cancel(ctx, "e1", "too late") }()
	start(t, kafkarunner.Options{Store: openStore(t, cfg), Role: kafkarunner.RoleRestarter})
	err = <-cancelled
	if !errors.Is(err, runner.ErrFinished) {
		t.Errorf("Cancel of a job that succeeded before the cancel was applied: %v, want runner.ErrFinished", err)
	}
	if j, err := client.Wait(ctx, "e1"); err != nil || j.Status() != job.StatusSucceeded {
		t.Errorf("job e1: %v %v, want succeeded", j.Status(), err)
	}
}

// waitMessages waits until topic holds at least n messages.
func waitMessages(t *testing.T, ctx context.Context, c *kfake.Cluster, topic string, n int64) {
	t.Helper()
	tr := &kafka.Transport{}
	defer tr.CloseIdleConnections()
	cl := &kafka.Client{Addr: kafka.TCP(c.ListenAddrs()...), Transport: tr}
	for {
		var got int64
		md, err := cl.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{topic}})
		if err != nil {
			t.Fatal(err)
		}
		req := &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{}}
		for _, tp := range md.Topics {
			for _, p := range tp.Partitions {
				req.Topics[topic] = append(req.Topics[topic], kafka.LastOffsetOf(p.ID))
			}
		}
		res, err := cl.ListOffsets(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		for _, po := range res.Topics[topic] {
			got += po.LastOffset
		}
		if got >= n {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("topic %s holds %d messages, want %d", topic, got, n)
		case <-time.After(20 * time.Millisecond):
		}
	}
}
