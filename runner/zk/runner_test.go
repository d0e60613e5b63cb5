package zk_test

import (
	"sync"
	"testing"
	"time"

	"github.com/batonwf/baton/internal/zktest"
	"github.com/batonwf/baton/runner/runnertest"
	zkrunner "github.com/batonwf/baton/runner/zk"
	"github.com/batonwf/baton/store"
)

// TestConformance runs runner/runnertest against a real ZooKeeper. A
// scenario that wraps the store (the crash scenarios) gets a runner whose
// jobs go through the wrapper (Options.Jobs), saved then queued.
func TestConformance(t *testing.T) {
	srv := zktest.Start(t)
	var mu sync.Mutex
	stores := map[*testing.T]*zkrunner.Store{}
	newStore := func(t *testing.T) store.Store {
		s := openStore(t, srv, zkrunner.Config{SessionTimeout: 2 * time.Second})
		mu.Lock()
		stores[t] = s
		mu.Unlock()
		return s
	}
	runnertest.Run(t, newStore, func(t *testing.T, cfg runnertest.Config) runnertest.Runner {
		mu.Lock()
		zs := stores[t]
		mu.Unlock()
		o := zkrunner.Options{
			Store:        zs,
			Registry:     cfg.Registry,
			DrainTimeout: cfg.DrainTimeout,
			NoResume:     cfg.NoResume,
			Hooks:        cfg.Hooks,
			Workers:      8,
		}
		if s, ok := cfg.Store.(*zkrunner.Store); !ok || s != zs {
			o.Jobs = cfg.Store
		}
		if zs == nil {
			t.Fatal("the runner's store was not made by this test's newStore")
		}
		r, err := zkrunner.New(o)
		if err != nil {
			t.Fatal(err)
		}
		return r
	})
}
