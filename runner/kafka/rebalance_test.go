package kafka_test

import (
	"context"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"

	kafkarunner "github.com/batonwf/baton/runner/kafka"
)

// TestRebalance: while 100 jobs run, a second and a third restarter join
// the group and leave it again (each join and leave moves partitions, and
// each restarter that takes one over rebuilds it and recovers its jobs).
// Every job completes, and each job's history holds every step once.
func TestRebalance(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cfg := testConfig(t)
	cfg.Partitions = 6
	clientStore := openStore(t, cfg)
	c := newCounter(t)
	if err := c.reg.Register("pause", func(ctx context.Context, a job.Action) ([]byte, error) {
		time.Sleep(250 * time.Millisecond)
		return nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	start(t, kafkarunner.Options{WorkerOptions: runner.WorkerOptions{Registry: c.reg, Workers: 8, DrainTimeout: time.Second}, Store: openStore(t, cfg), Role: kafkarunner.RoleWorker})
	start(t, kafkarunner.Options{Store: openStore(t, cfg), Role: kafkarunner.RoleRestarter})
	client := start(t, kafkarunner.Options{Store: clientStore, Role: kafkarunner.RoleClient})

	ids, errs := submitAllWith(ctx, client, 100, "rebalance", pausedFanJob)
	unfinished := func(when string) {
		n := 0
		for _, id := range ids {
			if j, err := clientStore.Load(ctx, id); err != nil || !j.Done() {
				n++
			}
		}
		t.Logf("%s: %d of %d jobs unfinished", when, n, len(ids))
	}
	time.Sleep(200 * time.Millisecond)
	unfinished("the second restarter joins")
	second := start(t, kafkarunner.Options{Store: openStore(t, cfg), Role: kafkarunner.RoleRestarter})
	time.Sleep(500 * time.Millisecond)
	unfinished("the third restarter joins")
	third := start(t, kafkarunner.Options{Store: openStore(t, cfg), Role: kafkarunner.RoleRestarter})
	time.Sleep(500 * time.Millisecond)
	unfinished("the second restarter leaves")
	second.stop(t)
	time.Sleep(500 * time.Millisecond)
	unfinished("the third restarter leaves")
	third.stop(t)
	for err := range errs {
		t.Error(err)
	}
	extra := finishAll(t, ctx, client, clientStore, c, ids)
	t.Logf("%d extra runs of actions (at least once)", extra)
}

// TestBrokerRestart: the broker is stopped and started again on the same
// port and data directory while 40 jobs run; the runners reconnect, and
// every job completes with an exact history: nothing is lost.
func TestBrokerRestart(t *testing.T) {
	dir := t.TempDir()
	c1 := privateCluster(t, kfake.DataDir(dir), kfake.SyncWrites())
	addr := c1.ListenAddrs()[0]
	_, portText, _ := net.SplitHostPort(addr)
	port, _ := strconv.Atoi(portText)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cfg := testConfig(t)
	cfg.Brokers = []string{addr}
	clientStore := openStore(t, cfg)
	c := newCounter(t)
	if err := c.reg.Register("pause", func(ctx context.Context, a job.Action) ([]byte, error) {
		time.Sleep(100 * time.Millisecond)
		return nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	start(t, kafkarunner.Options{WorkerOptions: runner.WorkerOptions{Registry: c.reg, Workers: 4, DrainTimeout: time.Second}, Store: openStore(t, cfg)})
	client := start(t, kafkarunner.Options{Store: clientStore, Role: kafkarunner.RoleClient})
	ids, errs := submitAllWith(ctx, client, 40, "restart", pausedFanJob)
	time.Sleep(300 * time.Millisecond)
	n := 0
	for _, id := range ids {
		if j, err := clientStore.Load(ctx, id); err != nil || !j.Done() {
			n++
		}
	}
	t.Logf("the broker stops with %d of %d jobs unfinished", n, len(ids))
	c1.Close()
	time.Sleep(500 * time.Millisecond)
	c2, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.Ports(port), kfake.DataDir(dir), kfake.SyncWrites())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c2.Close)
	for err := range errs {
		t.Error(err)
	}
	extra := finishAll(t, ctx, client, clientStore, c, ids)
	t.Logf("%d extra runs of actions (at least once)", extra)
}
