package server_test

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/batonwf/baton/api"
	"github.com/batonwf/baton/internal/zktest"
	"github.com/batonwf/baton/runner"
	zkrunner "github.com/batonwf/baton/runner/zk"
	"github.com/batonwf/baton/server"
	"github.com/batonwf/baton/server/servertest"
	"github.com/batonwf/baton/store"
)

// zkServed is a ZooKeeper runner as a server's Runner: it submits and
// cancels through the runner, and tells the workers and actions the
// workers announced on the root.
type zkServed struct {
	*zkrunner.Runner
	st *zkrunner.Store
}

func (z zkServed) Workers(ctx context.Context) ([]api.Worker, error) {
	infos, err := z.st.Workers(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]api.Worker, len(infos))
	for i, w := range infos {
		since := w.Started.UTC()
		out[i] = api.Worker{Name: w.Name, Capacity: w.Capacity, Busy: len(w.Running), Actions: w.Actions, Since: &since}
	}
	return out, nil
}

func (z zkServed) Actions(ctx context.Context) ([]string, error) {
	ws, err := z.Workers(ctx)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, w := range ws {
		names = append(names, w.Actions...)
	}
	slices.Sort(names)
	return slices.Compact(names), nil
}

var zkRoots atomic.Int64

// TestZK runs the suite on runner/zk's store, against a real ZooKeeper,
// each test on a root of its own with one worker of the suite's actions.
func TestZK(t *testing.T) {
	srv := zktest.Start(t)
	servertest.Run(t, checked(func(t *testing.T, reg *runner.Registry) (store.Store, any) {
		root := fmt.Sprintf("%s/s%d", srv.Root(), zkRoots.Add(1))
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		st, err := zkrunner.Open(ctx, zkrunner.Config{Servers: srv.Addrs(), Root: root, SessionTimeout: 4 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		r, err := zkrunner.New(zkrunner.Options{WorkerOptions: runner.WorkerOptions{Name: "w", Registry: reg, Workers: 4, DrainTimeout: -1}, Store: st})
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
		// The worker is announced before the suite asks for its actions.
		served := zkServed{r, st}
		for {
			if names, err := served.Actions(ctx); err == nil && len(names) > 0 {
				break
			}
			select {
			case <-ctx.Done():
				t.Fatal("the worker was never announced")
			case <-time.After(10 * time.Millisecond):
			}
		}
		return st, served
	}))
}

var _ server.WorkerLister = zkServed{}
