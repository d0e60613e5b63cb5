package kafka_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/placement"
	"github.com/batonwf/baton/runner"

	kafkarunner "github.com/batonwf/baton/runner/kafka"
)

// gauge counts the handlers running at once, and the most seen.
type gauge struct {
	now, peak atomic.Int64
}

func (g *gauge) enter() {
	n := g.now.Add(1)
	for {
		p := g.peak.Load()
		if n <= p || g.peak.CompareAndSwap(p, n) {
			return
		}
	}
}

func (g *gauge) leave() { g.now.Add(-1) }

// waitJobs waits for every job of ids and checks each succeeded.
func waitJobs(t *testing.T, ctx context.Context, client *running, ids []job.ID) []job.Job {
	t.Helper()
	out := make([]job.Job, 0, len(ids))
	for _, id := range ids {
		j, err := client.Wait(ctx, id)
		if err != nil {
			t.Fatalf("job %s: %v", id, err)
		}
		if j.Status() != job.StatusSucceeded {
			t.Errorf("job %s: %s\n%s", id, j.Status(), job.Describe(j))
		}
		out = append(out, j)
	}
	return out
}

// TestCapacityLive: a worker of Capacity 2 (Workers 4) never runs more
// than 2 handlers at once, and reaches 2; a Limit of 1 on one name is
// honoured beside it.
func TestCapacityLive(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg := testConfig(t)
	cfg.ActionPartitions = 4
	var all, limited gauge
	reg := runner.NewRegistry()
	for _, name := range []string{"busy", "lim"} {
		if err := reg.Register(name, func(ctx context.Context, a job.Action) ([]byte, error) {
			all.enter()
			defer all.leave()
			if a.Name == "lim" {
				limited.enter()
				defer limited.leave()
			}
			time.Sleep(20 * time.Millisecond)
			return nil, nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	start(t, kafkarunner.Options{WorkerOptions: runner.WorkerOptions{Registry: reg, Workers: 4, Name: "w-cap"},
		Store: openStore(t, cfg), Capacity: 2, Limits: map[string]int{"lim": 1}})
	client := start(t, kafkarunner.Options{Store: openStore(t, cfg), Role: kafkarunner.RoleClient})
	ids, errs := submitAllWith(ctx, client, 20, "cap", func() ast.Node {
		return ast.Par(ast.Act("busy", 1), ast.Act("busy", 2), ast.Act("busy", 3), ast.Act("lim", 1), ast.Act("lim", 2))
	})
	for err := range errs {
		t.Fatal(err)
	}
	waitJobs(t, ctx, client, ids)
	if p := all.peak.Load(); p != 2 {
		t.Errorf("at most %d handlers ran at once; want the capacity, 2", p)
	}
	if p := limited.peak.Load(); p != 1 {
		t.Errorf("at most %d handlers of lim ran at once; want its limit, 1", p)
	}
}

// TestLimitsRefused: a limit for a name without a handler, or above the
// capacity, or under 1, and a name with '/', are refused by New.
func TestLimitsRefused(t *testing.T) {
	st := openStore(t, testConfig(t))
	reg := runner.NewRegistry()
	_ = reg.Register("a", func(context.Context, job.Action) ([]byte, error) { return nil, nil })
	for _, o := range []kafkarunner.Options{
		{Limits: map[string]int{"b": 1}},
		{Limits: map[string]int{"a": 5}, Capacity: 4},
		{Limits: map[string]int{"a": 0}},
		{WorkerOptions: runner.WorkerOptions{Name: "x/y"}},
	} {
		o.Store = st
		if o.Registry == nil {
			o.Registry = reg
		}
		if _, err := kafkarunner.New(o); err == nil {
			t.Errorf("New(%+v): no error", o)
		}
	}
}

// TestCommitsInOrderLive: a worker that ran a fast action queued after a
// slow one it still runs commits neither; once it dies, the next worker
// runs the slow one again (and reads the fast one again: it skips it, or
// runs it and its second result is ignored), and the job succeeds.
func TestCommitsInOrderLive(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg := testConfig(t)
	cfg.ActionPartitions = 1
	var slowRuns, fastRuns atomic.Int64
	fastDone := make(chan struct{}, 10)
	mk := func(block bool) *runner.Registry {
		reg := runner.NewRegistry()
		_ = reg.Register("step", func(ctx context.Context, a job.Action) ([]byte, error) {
			if string(a.Payload) == `"fast"` {
				fastRuns.Add(1)
				fastDone <- struct{}{}
				return nil, nil
			}
			slowRuns.Add(1)
			if block {
				<-ctx.Done()
				return nil, ctx.Err()
			}
			return nil, nil
		})
		return reg
	}
	start(t, kafkarunner.Options{Store: openStore(t, cfg), Role: kafkarunner.RoleRestarter, WorkerOptions: runner.WorkerOptions{Name: "r"}})
	first := start(t, kafkarunner.Options{Store: openStore(t, cfg), Role: kafkarunner.RoleWorker,
		WorkerOptions: runner.WorkerOptions{Registry: mk(true), Name: "w-first", DrainTimeout: -1}})
	client := start(t, kafkarunner.Options{Store: openStore(t, cfg), Role: kafkarunner.RoleClient})
	if err := client.Submit(ctx, "order", ast.Par(ast.Act("step", "slow"), ast.Act("step", "fast"))); err != nil {
		t.Fatal(err)
	}
	<-fastDone
	waitFor(t, "the slow action runs and the fast one's result is applied", func() bool {
		j, err := client.Status(ctx, "order")
		if err != nil {
			return false
		}
		_, fastOut := j.Pending("par[1]#1")
		return slowRuns.Load() == 1 && !fastOut
	})
	first.stop(t) // hands the slow action back at once: nothing past it is committed
	cl := &kafka.Client{Addr: kafka.TCP(cfg.Brokers...), Timeout: 10 * time.Second}
	topic := cfg.Prefix + ".action.step"
	of, err := cl.OffsetFetch(ctx, &kafka.OffsetFetchRequest{GroupID: cfg.Prefix + ".workers", Topics: map[string][]int{topic: {0}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range of.Topics[topic] {
		if p.CommittedOffset > 0 {
			t.Errorf("committed offset %d: past the slow action (offset 0), which never finished", p.CommittedOffset)
		}
	}
	start(t, kafkarunner.Options{Store: openStore(t, cfg), Role: kafkarunner.RoleWorker,
		WorkerOptions: runner.WorkerOptions{Registry: mk(false), Name: "w-next"}})
	waitJobs(t, ctx, client, []job.ID{"order"})
	if n := slowRuns.Load(); n != 2 {
		t.Errorf("the slow action ran %d times; want 2 (its offset was never committed)", n)
	}
	// The fast one's offset is after the slow one's, so it was not
	// committed either: the next worker reads it again, and runs it
	// again unless it sees that its job no longer waits for it.
	if n := fastRuns.Load(); n != 1 && n != 2 {
		t.Errorf("the fast action ran %d times; want 1 or 2", n)
	}
}

// byWorker is a registry per worker whose "keyed" handler records, per
// affinity key (the payload), which workers ran its actions.
type byWorker struct {
	mu   sync.Mutex
	seen map[string]map[string]int // key -> worker -> runs
}

func (b *byWorker) registry(t *testing.T, worker string) *runner.Registry {
	reg := runner.NewRegistry()
	if err := reg.Register("keyed", func(ctx context.Context, a job.Action) ([]byte, error) {
		b.mu.Lock()
		defer b.mu.Unlock()
		key := string(a.Payload)
		if b.seen[key] == nil {
			b.seen[key] = map[string]int{}
		}
		b.seen[key][worker]++
		return nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	return reg
}

// TestKeyedStayLive: 1,000 actions of 4 affinity keys, on 3 workers and
// 6 action partitions whose membership is stable: each key's actions all
// run on one worker.
func TestKeyedStayLive(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cfg := testConfig(t)
	cfg.ActionPartitions = 6
	b := &byWorker{seen: map[string]map[string]int{}}
	names := []string{"w-a", "w-b", "w-c"}
	for _, n := range names {
		start(t, kafkarunner.Options{Store: openStore(t, cfg), WorkerOptions: runner.WorkerOptions{Registry: b.registry(t, n), Name: n}})
	}
	client := start(t, kafkarunner.Options{Store: openStore(t, cfg), Role: kafkarunner.RoleClient})
	cl := &kafka.Client{Addr: kafka.TCP(cfg.Brokers...), Timeout: 10 * time.Second}
	describeSettled(t, ctx, cl, cfg.Prefix+".workers", map[string]int{cfg.Prefix + ".action.keyed": 6}, names...)
	keys := []string{"k-one", "k-two", "k-three", "k-four"}
	ids, errs := submitAllWith(ctx, client, 50, "keyed", func() ast.Node {
		var kids []ast.Node
		for i := range 20 {
			k := keys[i%len(keys)]
			kids = append(kids, ast.Act("keyed", k).WithAffinity(ast.Affinity{Key: k}))
		}
		return ast.Par(kids...)
	})
	for err := range errs {
		t.Fatal(err)
	}
	waitJobs(t, ctx, client, ids)
	b.mu.Lock()
	defer b.mu.Unlock()
	total := 0
	for _, k := range keys {
		for _, n := range b.seen[`"`+k+`"`] {
			total += n
		}
		if w := b.seen[`"`+k+`"`]; len(w) != 1 {
			t.Errorf("key %s ran on %d workers: %v; want one", k, len(w), w)
		}
	}
	if total < 1000 {
		t.Errorf("%d keyed actions ran; want 1,000", total)
	}
}

// TestReplicasDistinctPartitionsLive: the 3 copies of a node with
// replicas go to 3 distinct partitions of their action topic, in every
// job.
func TestReplicasDistinctPartitionsLive(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg := testConfig(t)
	cfg.ActionPartitions = 4
	c := newCounter(t)
	start(t, kafkarunner.Options{Store: openStore(t, cfg), WorkerOptions: runner.WorkerOptions{Registry: c.reg, Name: "w"}})
	client := start(t, kafkarunner.Options{Store: openStore(t, cfg), Role: kafkarunner.RoleClient})
	ids, errs := submitAllWith(ctx, client, 12, "rep", func() ast.Node {
		return ast.Seq(ast.Act("noop", "x").WithReplicas(3))
	})
	for err := range errs {
		t.Fatal(err)
	}
	waitJobs(t, ctx, client, ids)
	// Read back where each copy went.
	cl := &kafka.Client{Addr: kafka.TCP(cfg.Brokers...), Timeout: 10 * time.Second}
	parts := map[string]map[int]bool{} // job -> partitions of its copies
	copies := map[string]int{}
	for p := range 4 {
		res, err := cl.Fetch(ctx, &kafka.FetchRequest{Topic: cfg.Prefix + ".action.noop", Partition: p, Offset: 0, MaxBytes: 1 << 20})
		if err != nil || res.Error != nil {
			t.Fatalf("fetch partition %d: %v %v", p, err, res.Error)
		}
		for {
			rec, err := res.Records.ReadRecord()
			if err != nil {
				break
			}
			key, _ := readAll(rec.Key)
			id, _, _ := cutSlash(string(key))
			if parts[id] == nil {
				parts[id] = map[int]bool{}
			}
			parts[id][p] = true
			copies[id]++
		}
	}
	for _, id := range ids {
		if copies[string(id)] < 3 || len(parts[string(id)]) != 3 {
			t.Errorf("job %s: %d copies on partitions %v; want 3 on 3 distinct partitions", id, copies[string(id)], slices.Sorted(maps.Keys(parts[string(id)])))
		}
	}
}

// TestDrainLive: under load, a worker marked draining in the control
// topic (Store.Drain) takes no partition after the rebalance, its
// running actions finish (none is handed back), its Run returns nil
// without Close, and every job succeeds with an exact history. Draining
// an unknown name is an *UnknownWorkerError listing the known ones.
func TestDrainLive(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cfg := testConfig(t)
	cfg.ActionPartitions = 4
	var handedBack atomic.Int64
	hooks := &runner.Hooks{ActionHandedBack: func(job.Action) { handedBack.Add(1) }}
	mk := func(n string) *running {
		c := newCounter(t)
		if err := c.reg.Register("pause", func(ctx context.Context, a job.Action) ([]byte, error) {
			time.Sleep(100 * time.Millisecond)
			return nil, nil
		}); err != nil {
			t.Fatal(err)
		}
		return start(t, kafkarunner.Options{Store: openStore(t, cfg),
			WorkerOptions: runner.WorkerOptions{Registry: c.reg, Name: n, Hooks: hooks}})
	}
	a, b := mk("w-a"), mk("w-b")
	clientStore := openStore(t, cfg)
	client := start(t, kafkarunner.Options{Store: clientStore, Role: kafkarunner.RoleClient})
	cl := &kafka.Client{Addr: kafka.TCP(cfg.Brokers...), Timeout: 10 * time.Second}
	workers := map[string]int{cfg.Prefix + ".action.noop": 4, cfg.Prefix + ".action.pause": 4}
	describeSettled(t, ctx, cl, cfg.Prefix+".workers", workers, "w-a", "w-b")

	var unknown *kafkarunner.UnknownWorkerError
	if err := clientStore.Drain(ctx, "w-zz"); !errors.As(err, &unknown) || !slices.Equal(unknown.Known, []string{"w-a", "w-b"}) ||
		!errors.Is(err, placement.ErrUnknownWorker) {
		t.Errorf("drain of an unknown worker: %v; want an UnknownWorkerError listing w-a and w-b", err)
	}

	ids, errs := submitAllWith(ctx, client, 40, "drain", pausedFanJob)
	waitFor(t, "w-b runs actions (its published load)", func() bool {
		control, _, err := clientStore.Control(ctx)
		return err == nil && control["w-b"].Load["pause"].Succeeded > 0
	})
	if err := clientStore.Drain(ctx, "w-b"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-b.done:
		if err != nil {
			t.Errorf("the drained runner's Run: %v", err)
		}
		if !b.Drained() {
			t.Errorf("Run returned, but Drained is false")
		}
		b.done <- nil
	case <-ctx.Done():
		t.Fatal("the drained runner's Run did not return")
	}
	v := describeSettled(t, ctx, cl, cfg.Prefix+".workers", workers, "w-a")
	if len(v.count["w-b"]) != 0 {
		t.Errorf("w-b still has partitions after its drain: %v", v.count["w-b"])
	}
	for err := range errs {
		t.Error(err)
	}
	for _, j := range waitJobs(t, ctx, client, ids) {
		checkHistory(t, ctx, clientStore, j)
	}
	if n := handedBack.Load(); n != 0 {
		t.Errorf("%d actions were handed back; a drain finishes what runs", n)
	}
	control, bad, err := clientStore.Control(ctx)
	if err != nil || bad != 0 {
		t.Fatalf("control: %v, %d bad", err, bad)
	}
	if _, ok := control["w-b"]; ok {
		t.Errorf("the drained worker's records are still in the control topic: %+v", control["w-b"])
	}
	if _, ok := control["w-a"]; !ok {
		t.Errorf("w-a published no load: %+v", control)
	}
	_ = a
}

// TestBadControlRecord: a control-topic record that does not parse is
// skipped, logged and counted; the runner goes on (a drain written after
// it is obeyed).
func TestBadControlRecord(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg := testConfig(t)
	st := openStore(t, cfg)
	c := newCounter(t)
	w := start(t, kafkarunner.Options{Store: openStore(t, cfg), WorkerOptions: runner.WorkerOptions{Registry: c.reg, Name: "w-bad"}})
	waitFor(t, "the control topic exists", func() bool {
		_, _, err := st.Control(ctx)
		ws, _ := st.Workers(ctx)
		return err == nil && len(ws) == 1
	})
	produce(t, cfg.Brokers, cfg.Prefix+".workers", kafka.Message{Key: []byte("w-bad"), Value: []byte("{not json")},
		kafka.Message{Key: []byte("w-bad"), Value: []byte(`{"v":1,"type":"admin","state":"sideways","at":"2026-01-01T00:00:00Z"}`)})
	waitFor(t, "both bad records counted", func() bool { return w.Stats().BadControl == 2 })
	if _, bad, err := st.Control(ctx); err != nil || bad != 2 {
		t.Errorf("Control: %v, %d bad; want 2", err, bad)
	}
	if err := st.Drain(ctx, "w-bad"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-w.done:
		w.done <- err
	case <-ctx.Done():
		t.Fatal("the runner did not drain after the bad records")
	}
}

// TestWedgedLive: a worker of capacity 1 whose handler blocks, with an
// action waiting behind it, leaves the workers' group after its claim
// lease (kafka-go would go on heartbeating for it) and stays out while
// its handler hangs; the other worker takes the partition and runs both
// actions, and the job succeeds.
func TestWedgedLive(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg := testConfig(t)
	cfg.ActionPartitions = 1
	var blocked, ran atomic.Int64
	stuck := runner.NewRegistry()
	_ = stuck.Register("step", func(ctx context.Context, a job.Action) ([]byte, error) {
		blocked.Add(1)
		<-ctx.Done()
		return nil, ctx.Err()
	})
	fine := runner.NewRegistry()
	_ = fine.Register("step", func(ctx context.Context, a job.Action) ([]byte, error) {
		ran.Add(1)
		return nil, nil
	})
	cl := &kafka.Client{Addr: kafka.TCP(cfg.Brokers...), Timeout: 10 * time.Second}
	topics := map[string]int{cfg.Prefix + ".action.step": 1}
	wedged := start(t, kafkarunner.Options{Store: openStore(t, cfg), Role: kafkarunner.RoleWorker, Capacity: 1, ClaimLease: time.Second,
		WorkerOptions: runner.WorkerOptions{Registry: stuck, Name: "w-stuck"}})
	describeSettled(t, ctx, cl, cfg.Prefix+".workers", topics, "w-stuck")
	start(t, kafkarunner.Options{Store: openStore(t, cfg), Role: kafkarunner.RoleWorker,
		WorkerOptions: runner.WorkerOptions{Registry: fine, Name: "w-fine"}})
	v := describeSettled(t, ctx, cl, cfg.Prefix+".workers", topics, "w-stuck", "w-fine")
	if v.owner[cfg.Prefix+".action.step/0"] != "w-stuck" {
		t.Fatalf("the partition went to %s; the test needs it on w-stuck (sticky)", v.owner[cfg.Prefix+".action.step/0"])
	}
	start(t, kafkarunner.Options{Store: openStore(t, cfg), Role: kafkarunner.RoleRestarter, WorkerOptions: runner.WorkerOptions{Name: "r"}})
	clientStore := openStore(t, cfg)
	client := start(t, kafkarunner.Options{Store: clientStore, Role: kafkarunner.RoleClient})
	if err := client.Submit(ctx, "wedge", ast.Par(ast.Act("step", 1), ast.Act("step", 2))); err != nil {
		t.Fatal(err)
	}
	waitJobs(t, ctx, client, []job.ID{"wedge"})
	if blocked.Load() == 0 {
		t.Errorf("the stuck worker never ran an action: the test proved nothing")
	}
	if n := wedged.Stats().Wedged; n == 0 {
		t.Errorf("the stuck worker never counted itself wedged")
	}
	// While its handler still hangs, it stays out of the group.
	describeSettled(t, ctx, cl, cfg.Prefix+".workers", topics, "w-fine")
	h, err := clientStore.History(ctx, "wedge")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range h.Steps {
		for _, r := range s.Results {
			if r.Worker != "w-fine" {
				t.Errorf("%s: result by %q; want w-fine", r.ActionID, r.Worker)
			}
		}
	}
}

// TestQuarantineLive: a worker whose handler of one action always fails
// while a peer's succeeds leaves that action's topic only (it keeps the
// others); a worker alone is never quarantined.
func TestQuarantineLive(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cfg := testConfig(t)
	q := placement.Quarantine{After: 2, First: time.Minute}
	mk := func(fail bool) *runner.Registry {
		c := newCounter(t)
		_ = c.reg.Register("flaky", func(ctx context.Context, a job.Action) ([]byte, error) {
			if fail {
				return nil, errors.New("this worker's disk is full")
			}
			return nil, nil
		})
		return c.reg
	}
	clientStore := openStore(t, cfg)
	bad := start(t, kafkarunner.Options{Store: openStore(t, cfg), Quarantine: q, WorkerOptions: runner.WorkerOptions{Registry: mk(true), Name: "w-bad"}})
	good := start(t, kafkarunner.Options{Store: openStore(t, cfg), Quarantine: q, WorkerOptions: runner.WorkerOptions{Registry: mk(false), Name: "w-good"}})
	client := start(t, kafkarunner.Options{Store: clientStore, Role: kafkarunner.RoleClient})
	cl := &kafka.Client{Addr: kafka.TCP(cfg.Brokers...), Timeout: 10 * time.Second}
	describeSettled(t, ctx, cl, cfg.Prefix+".workers",
		map[string]int{cfg.Prefix + ".action.noop": 2, cfg.Prefix + ".action.flaky": 2}, "w-bad", "w-good")
	retry := ast.Retry{Attempts: 20, Initial: 10 * time.Millisecond, Multiplier: 1}
	var ids []job.ID
	for round := 0; bad.Stats().Quarantines == 0; round++ {
		if round == 30 {
			t.Fatalf("w-bad was never quarantined: %+v", bad.Stats())
		}
		more, errs := submitAllWith(ctx, client, 4, fmt.Sprintf("q%02d", round), func() ast.Node {
			return ast.Par(ast.Act("flaky", 1).WithRetry(retry), ast.Act("flaky", 2).WithRetry(retry), ast.Act("noop", 3))
		})
		for err := range errs {
			t.Fatal(err)
		}
		waitJobs(t, ctx, client, more)
		ids = append(ids, more...)
	}
	if n := good.Stats().Quarantines; n != 0 {
		t.Errorf("w-good was quarantined %d times", n)
	}
	// w-bad keeps noop and leaves flaky.
	waitFor(t, "w-bad subscribed to noop only", func() bool {
		ws, err := clientStore.Workers(ctx)
		if err != nil {
			return false
		}
		for _, w := range ws {
			if w.Name == "w-bad" {
				return slices.Equal(w.Actions, []string{"noop"})
			}
		}
		return false
	})
	_ = ids

	// Alone, a failing worker is never quarantined.
	cfg2 := testConfig(t)
	cfg2.Prefix += "-solo"
	solo := start(t, kafkarunner.Options{Store: openStore(t, cfg2), Quarantine: q, WorkerOptions: runner.WorkerOptions{Registry: mk(true), Name: "w-solo"}})
	client2 := start(t, kafkarunner.Options{Store: openStore(t, cfg2), Role: kafkarunner.RoleClient})
	few := ast.Retry{Attempts: 4, Initial: 10 * time.Millisecond, Multiplier: 1}
	more, errs := submitAllWith(ctx, client2, 3, "solo", func() ast.Node { return ast.Act("flaky", 1).WithRetry(few) })
	for err := range errs {
		t.Fatal(err)
	}
	for _, id := range more {
		j, err := client2.Wait(ctx, id)
		if err != nil || j.Status() != job.StatusFailed {
			t.Errorf("job %s: %v %v; want failed by its retry policy", id, j.Status(), err)
		}
	}
	if n := solo.Stats().Quarantines; n != 0 {
		t.Errorf("a worker alone was quarantined %d times", n)
	}
}

func readAll(b kafka.Bytes) ([]byte, error) {
	if b == nil {
		return nil, nil
	}
	defer b.Close()
	return io.ReadAll(b)
}

func cutSlash(s string) (before, after string, ok bool) { return strings.Cut(s, "/") }

// TestQueuesPlacementLive: Store.Queues notes, among the actions waiting
// in a topic, the most copies of a node with replicas, and counts those
// whose affinity is strict or sets a wait (neither applies on Kafka).
func TestQueuesPlacementLive(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg := testConfig(t)
	cfg.ActionPartitions = 4
	st := openStore(t, cfg)
	start(t, kafkarunner.Options{Store: openStore(t, cfg), Role: kafkarunner.RoleRestarter, WorkerOptions: runner.WorkerOptions{Name: "r"}})
	client := start(t, kafkarunner.Options{Store: openStore(t, cfg), Role: kafkarunner.RoleClient})
	strict := true
	for id, n := range map[job.ID]ast.Node{
		"rep":    ast.Act("noop", 1).WithReplicas(3),
		"strict": ast.Act("noop", 2).WithAffinity(ast.Affinity{Key: "k1", Strict: &strict}),
		"wait":   ast.Act("noop", 3).WithAffinity(ast.Affinity{Key: "k2", Wait: 2 * time.Second}),
		"soft":   ast.Act("noop", 4).WithAffinity(ast.Affinity{Key: "k3"}),
	} {
		if err := client.Submit(ctx, id, n); err != nil {
			t.Fatal(err)
		}
	}
	var q kafkarunner.Queue
	waitFor(t, "6 actions queued", func() bool {
		qs, err := st.Queues(ctx)
		if err != nil || len(qs) != 1 {
			return false
		}
		q = qs[0]
		return q.Waiting == 6
	})
	if q.Copies != 3 || q.Unmapped != 2 || q.Workers != 0 {
		t.Errorf("queue %+v; want 3 copies, 2 unmapped, no worker", q)
	}
}
