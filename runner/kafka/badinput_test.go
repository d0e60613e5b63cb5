package kafka_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"

	kafkarunner "github.com/batonwf/baton/runner/kafka"
)

// produce writes raw messages, as a stock tool would.
func produce(t *testing.T, brokers []string, topic string, msgs ...kafka.Message) {
	t.Helper()
	w := &kafka.Writer{Addr: kafka.TCP(brokers...), Topic: topic, Balancer: &kafka.Murmur2Balancer{},
		BatchTimeout: time.Millisecond, RequiredAcks: kafka.RequireAll, Transport: &kafka.Transport{MetadataTTL: 500 * time.Millisecond}}
	defer w.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := w.WriteMessages(ctx, msgs...); err != nil {
		t.Fatal(err)
	}
}

// TestMalformedMessages: messages that are not baton's on the restarter
// topic (not JSON, an unknown type, a key that is no job ID, a result for
// a job that does not exist) and on an action topic are skipped, logged
// and counted, and their offsets committed: the jobs around them run, and
// a restarter that takes the partitions over later does not read them
// again.
func TestMalformedMessages(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg := testConfig(t)
	st := openStore(t, cfg)
	c := newCounter(t)
	r := start(t, kafkarunner.Options{WorkerOptions: runner.WorkerOptions{Registry: c.reg}, Store: st})
	restarter := cfg.Prefix + ".restarter"
	var junk []kafka.Message
	for _, id := range []string{"a", "b", "c", "d", "e"} {
		junk = append(junk,
			kafka.Message{Key: []byte(id), Value: []byte("not json")},
			kafka.Message{Key: []byte(id), Value: []byte(`{"v":1,"type":"launch"}`)},
			kafka.Message{Key: []byte(id), Value: []byte(`{"v":9,"type":"result","action":"root#1"}`)},
		)
	}
	junk = append(junk,
		kafka.Message{Key: []byte("has space"), Value: []byte(`{"v":1,"type":"cancel","reason":"x"}`)},
		kafka.Message{Key: nil, Value: []byte(`{}`)},
		kafka.Message{Key: []byte("ghost"), Value: []byte(`{"v":1,"type":"result","action":"root#1","output":1}`)},
	)
	produce(t, cfg.Brokers, restarter, junk...)
	for _, id := range []job.ID{"a", "b", "c", "d", "e"} {
		if err := r.Submit(ctx, id, fanJob()); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []job.ID{"a", "b", "c", "d", "e"} {
		j, err := r.Wait(ctx, id)
		if err != nil || j.Status() != job.StatusSucceeded {
			t.Fatalf("job %s: %v %v", id, j, err)
		}
	}
	// The action topic exists now.
	produce(t, cfg.Brokers, cfg.Prefix+".action.noop", kafka.Message{Key: []byte("x/root#1"), Value: []byte("garbage")})
	waitFor(t, "the malformed messages are counted", func() bool {
		s := r.Stats()
		return s.Malformed >= 17 && s.UnknownJobs >= 1 && s.MalformedActions >= 1
	})
	t.Logf("first restarter: %+v", r.Stats())
	r.stop(t)

	again := start(t, kafkarunner.Options{WorkerOptions: runner.WorkerOptions{Registry: c.reg}, Store: openStore(t, cfg)})
	if err := again.Submit(ctx, "f", fanJob()); err != nil {
		t.Fatal(err)
	}
	if _, err := again.Wait(ctx, "f"); err != nil {
		t.Fatal(err)
	}
	if s := again.Stats(); s.Malformed != 0 || s.UnknownJobs != 0 || s.MalformedActions != 0 {
		t.Errorf("the next restarter read the skipped messages again: %+v", s)
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not so after 20s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestSizes: with a small MaxMessageBytes, a workflow too large for one
// message is refused by Submit, saying so; an action whose inputs make it
// too large fails (Final) saying so, and so does a result too large; a
// rescue sees those failures.
func TestSizes(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg := testConfig(t)
	cfg.MaxMessageBytes = 8192
	st := openStore(t, cfg)
	reg := runner.NewRegistry()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	big := `"` + strings.Repeat("x", 5000) + `"`
	must(reg.Register("make", func(ctx context.Context, a job.Action) ([]byte, error) { return []byte(big), nil }))
	must(reg.Register("huge", func(ctx context.Context, a job.Action) ([]byte, error) { return []byte(big + big), nil }))
	must(reg.Register("use", func(ctx context.Context, a job.Action) ([]byte, error) { return []byte(`"used"`), nil }))
	must(reg.Register("note", func(ctx context.Context, a job.Action) ([]byte, error) {
		if a.Failure == nil {
			return nil, errors.New("no failure to note")
		}
		return []byte(`"noted"`), nil
	}))
	r := start(t, kafkarunner.Options{WorkerOptions: runner.WorkerOptions{Registry: reg}, Store: st})

	err := r.Submit(ctx, "too-big", ast.Act("use", strings.Repeat("y", 9000)))
	if err == nil || !strings.Contains(err.Error(), "over the limit of") {
		t.Fatalf("Submit of a workflow over the limit: %v", err)
	}

	root := ast.Seq(
		ast.Par(ast.Act("make", 1).Named("one"), ast.Act("make", 2).Named("two")),
		ast.Try(ast.Act("use", nil).WithInputs("one", "two"), ast.Rescue(ast.Act("note", nil))),
		ast.Try(ast.Act("huge", nil), ast.Rescue(ast.Act("note", nil))),
	)
	must(r.Submit(ctx, "inputs", root))
	j, err := r.Wait(ctx, "inputs")
	must(err)
	if j.Status() != job.StatusSucceeded {
		t.Fatalf("%s\n%s", j.Status(), job.Describe(j))
	}
	var msgs []string
	j.Walk(func(n job.NodeInfo) bool {
		if n.Error != "" {
			msgs = append(msgs, n.Path+": "+n.Error)
		}
		return true
	})
	if len(msgs) != 2 || !strings.Contains(msgs[0], "over the limit of") || !strings.Contains(msgs[1], "over the limit of") {
		t.Errorf("failures %q, want the action and the result over the limit", msgs)
	}
	if s := r.Stats(); s.Oversized != 2 {
		t.Errorf("stats %+v, want 2 oversized", s)
	}
}

// TestActionNobodyServes: an action whose name no worker serves stays in
// its topic, and Queues shows it waiting with no worker; once a worker
// that serves it starts, the job finishes.
func TestActionNobodyServes(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg := testConfig(t)
	st := openStore(t, cfg)
	c := newCounter(t)
	start(t, kafkarunner.Options{WorkerOptions: runner.WorkerOptions{Registry: c.reg}, Store: st})
	client := start(t, kafkarunner.Options{Store: openStore(t, cfg), Role: kafkarunner.RoleClient})
	if err := client.Submit(ctx, "orphan", ast.Seq(ast.Act("noop", 1), ast.Act("rare", 2))); err != nil {
		t.Fatal(err)
	}
	var qs []kafkarunner.Queue
	waitFor(t, "the rare action waits in its topic with no worker, the noop one is served and done", func() bool {
		var err error
		qs, err = st.Queues(ctx)
		if err != nil {
			t.Fatal(err)
		}
		rare, noop := false, false
		for _, q := range qs {
			rare = rare || q.Action == "rare" && q.Waiting == 1 && q.Workers == 0
			noop = noop || q.Action == "noop" && q.Waiting == 0 && q.Workers == 1
		}
		return rare && noop
	})
	t.Logf("queues: %+v", qs)
	if j, err := st.Load(ctx, "orphan"); err != nil || j.Done() {
		t.Fatalf("the job should wait for its rare action: %v %v", j, err)
	}
	reg := runner.NewRegistry()
	if err := reg.Register("rare", func(ctx context.Context, a job.Action) ([]byte, error) { return nil, nil }); err != nil {
		t.Fatal(err)
	}
	start(t, kafkarunner.Options{WorkerOptions: runner.WorkerOptions{Registry: reg}, Store: openStore(t, cfg), Role: kafkarunner.RoleWorker})
	j, err := client.Wait(ctx, "orphan")
	if err != nil || j.Status() != job.StatusSucceeded {
		t.Fatalf("after a worker for rare started: %v %v", j, err)
	}
}
