package kafka_test

import (
	"sync"
	"testing"

	"github.com/batonwf/baton/runner/runnertest"
	"github.com/batonwf/baton/store"

	kafkarunner "github.com/batonwf/baton/runner/kafka"
)

// A Runner is what the conformance suite drives.
var _ runnertest.Runner = (*kafkarunner.Runner)(nil)

// TestConformance runs runner/runnertest. Each scenario gets topics of its
// own; its runners share the scenario's Store, and load and save jobs
// through the suite's wrapper of it where the suite gives one
// (Options.Jobs).
func TestConformance(t *testing.T) {
	var mu sync.Mutex
	stores := map[*testing.T]*kafkarunner.Store{}
	newStore := func(t *testing.T) store.Store {
		s := openStore(t, testConfig(t))
		mu.Lock()
		stores[t] = s
		mu.Unlock()
		return s
	}
	runnertest.Run(t, newStore, func(t *testing.T, cfg runnertest.Config) runnertest.Runner {
		mu.Lock()
		ks := stores[t]
		mu.Unlock()
		if ks == nil {
			t.Fatal("the runner's store was not made by this test's newStore")
		}
		o := kafkarunner.Options{
			Store:        ks,
			Registry:     cfg.Registry,
			DrainTimeout: cfg.DrainTimeout,
			NoResume:     cfg.NoResume,
			Hooks:        cfg.Hooks,
		}
		if s, ok := cfg.Store.(*kafkarunner.Store); !ok || s != ks {
			o.Jobs = cfg.Store
		}
		r, err := kafkarunner.New(o)
		if err != nil {
			t.Fatal(err)
		}
		return r
	})
}
