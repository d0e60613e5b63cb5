package kafka_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	kafkarunner "github.com/batonwf/baton/runner/kafka"
)

// TestWorkers: a Store lists the live workers of its runners, as members
// of the workers' group: each with the name, capacity and join time it
// announced and the actions it serves; a worker that stops leaves the
// list.
func TestWorkers(t *testing.T) {
	cfg := testConfig(t)
	st := openStore(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if ws, err := st.Workers(ctx); err != nil || len(ws) != 0 {
		t.Fatalf("before any worker: %+v, %v", ws, err)
	}
	before := time.Now()
	reg := runner.NewRegistry()
	for _, name := range []string{"ship", "charge"} {
		if err := reg.Register(name, func(context.Context, job.Action) ([]byte, error) { return nil, nil }); err != nil {
			t.Fatal(err)
		}
	}
	a := start(t, kafkarunner.Options{WorkerOptions: runner.WorkerOptions{Name: "worker-a", Registry: reg, Workers: 3}, Store: openStore(t, cfg), Role: kafkarunner.RoleWorker})
	counter := newCounter(t)
	start(t, kafkarunner.Options{WorkerOptions: runner.WorkerOptions{Name: "worker-b", Registry: counter.reg, Workers: 5}, Store: openStore(t, cfg), Role: kafkarunner.RoleWorker})
	var ws []kafkarunner.WorkerInfo
	waitFor(t, "both workers in the group", func() bool {
		var err error
		ws, err = st.Workers(ctx)
		if err != nil {
			t.Fatal(err)
		}
		// Members of a group that is rebalancing are described
		// without their metadata: wait for it to settle.
		return len(ws) == 2 && len(ws[0].Actions) > 0 && len(ws[1].Actions) > 0
	})
	for i, want := range []struct {
		name     string
		capacity int
		actions  []string
	}{{"worker-a", 3, []string{"charge", "ship"}}, {"worker-b", 5, []string{"noop"}}} {
		w := ws[i]
		if w.Name != want.name || w.Capacity != want.capacity || !slices.Equal(w.Actions, want.actions) || w.Member == "" ||
			w.Since.Before(before.Add(-time.Second)) || w.Since.After(time.Now()) {
			t.Errorf("worker %d: %+v; want %s, capacity %d, actions %v, since the test began", i, w, want.name, want.capacity, want.actions)
		}
	}
	a.stop(t)
	waitFor(t, "the stopped worker gone from the list", func() bool {
		ws, err := st.Workers(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return len(ws) == 1 && ws[0].Name == "worker-b"
	})
}
