package kafka_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/batonwf/baton/runner"
	kafkarunner "github.com/batonwf/baton/runner/kafka"
)

// privateCluster starts a kfake cluster for one test (faults, restarts);
// the test is skipped when KAFKA_BROKERS points the tests at a real
// cluster, whose faults the test cannot choose.
func privateCluster(t *testing.T, opts ...kfake.Opt) *kfake.Cluster {
	t.Helper()
	if os.Getenv("KAFKA_BROKERS") != "" {
		t.Skip("fault injection needs the in-process broker (KAFKA_BROKERS is set)")
	}
	c, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(1)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// TestFaults runs 60 jobs on two runners while the broker fails requests
// of every kind the runner makes: state writes answered "timed out" after
// they were applied (so they are written twice, or a Save fails that
// landed), writes refused as "not leader", duplicated actions and
// results, failed offset commits (the restarter gives its partition up
// and claims it again), failed fetches, heartbeats told to rebalance.
// Every job completes, and each job's history holds every step once.
func TestFaults(t *testing.T) {
	c := privateCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cfg := testConfig(t)
	cfg.Brokers = c.ListenAddrs()
	clientStore := openStore(t, cfg) // creates the topics
	counter := newCounter(t)
	for range 2 {
		start(t, kafkarunner.Options{WorkerOptions: runner.WorkerOptions{Registry: counter.reg, DrainTimeout: time.Second}, Store: openStore(t, cfg)})
	}
	client := start(t, kafkarunner.Options{Store: clientStore, Role: kafkarunner.RoleClient})

	state, restarter := cfg.Prefix+".state", cfg.Prefix+".restarter"
	action := cfg.Prefix + ".action.noop"
	faults := c.Fault(
		kfake.Fault{Keys: []kmsg.Key{kmsg.Produce}, Topic: state, Err: kerr.RequestTimedOut, Count: 12},
		kfake.Fault{Keys: []kmsg.Key{kmsg.Produce}, Topic: state, Err: kerr.NotLeaderForPartition, Count: 6},
		kfake.Fault{Keys: []kmsg.Key{kmsg.Produce}, Topic: action, Err: kerr.RequestTimedOut, Count: 8},
		kfake.Fault{Keys: []kmsg.Key{kmsg.Produce}, Topic: restarter, Err: kerr.RequestTimedOut, Count: 8},
		kfake.Fault{Keys: []kmsg.Key{kmsg.Fetch}, Topic: restarter, Err: kerr.NotLeaderForPartition, Count: 6},
		kfake.Fault{Keys: []kmsg.Key{kmsg.OffsetCommit}, Err: kerr.UnknownServerError, Count: 3},
		kfake.Fault{Keys: []kmsg.Key{kmsg.Heartbeat}, Err: kerr.RebalanceInProgress, TopLevel: true, Count: 2},
	)
	defer faults.Remove()

	ids, errs := submitAll(ctx, client, 60, "fault")
	for err := range errs {
		t.Error(err)
	}
	extra := finishAll(t, ctx, client, clientStore, counter, ids)
	t.Logf("%d requests faulted; %d extra runs of actions (at least once)", faults.Hits(), extra)
	if faults.Hits() == 0 {
		t.Error("no fault was injected")
	}
}
