package server_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/batonwf/baton/runner"
	kafkarunner "github.com/batonwf/baton/runner/kafka"
	"github.com/batonwf/baton/server/servertest"
	"github.com/batonwf/baton/store"
)

// kafkaServed is a Kafka runner (restarter and worker) as a server's
// Runner: it submits and cancels through the runner; its actions are its
// registry's. The workers of a Kafka group are not listed here.
type kafkaServed struct {
	*kafkarunner.Runner
	reg *runner.Registry
}

func (k kafkaServed) Actions(context.Context) ([]string, error) { return k.reg.Names(), nil }

var kafkaPrefixes atomic.Int64

// TestKafka runs the suite on runner/kafka's store, on the in-process
// Kafka broker (kfake), each test under a prefix of its own with one
// runner, restarter and worker, of the suite's actions.
func TestKafka(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	servertest.Run(t, checked(func(t *testing.T, reg *runner.Registry) (store.Store, any) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		st, err := kafkarunner.Open(ctx, kafkarunner.Config{Brokers: c.ListenAddrs(), Prefix: fmt.Sprintf("s%d", kafkaPrefixes.Add(1)), Partitions: 2, ActionPartitions: 1})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		r, err := kafkarunner.New(kafkarunner.Options{WorkerOptions: runner.WorkerOptions{Name: "w", Registry: reg, Workers: 4, DrainTimeout: -1}, Store: st})
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- r.Run(context.Background()) }()
		t.Cleanup(func() {
			r.Close()
			if err := <-done; err != nil {
				t.Errorf("runner: %v", err)
			}
		})
		return st, kafkaServed{r, reg}
	}))
}
