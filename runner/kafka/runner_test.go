package kafka_test

import (
	"sync"
	"testing"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	"github.com/batonwf/baton/runner/runnertest"
	"github.com/batonwf/baton/store"

	kafkarunner "github.com/batonwf/baton/runner/kafka"
)

// A Runner is what the conformance suite drives.
var _ runnertest.Runner = (*kafkarunner.Runner)(nil)

// TestConformance runs runner/runnertest. Each scenario gets topics of its
// own; its runners share the scenario's Store, except one that must die
// of a crash (Config.Crash): it runs on a store of its own on the same
// topics, whose fault hook injects the crash at the runner's real state
// write and fails its every produce, fetch and offset commit once it died.
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
			WorkerOptions: runner.WorkerOptions{Name: cfg.Name, Registry: cfg.Registry, DrainTimeout: cfg.DrainTimeout, Hooks: cfg.Hooks},
			Store:         ks,
		}
		if cfg.NoResume {
			o = kafkarunner.WithoutResume(o)
		}
		if s, ok := cfg.Store.(*kafkarunner.Store); !ok || s != ks {
			t.Logf("the suite handed a wrapper of the store (%T): this runner works on the store itself", cfg.Store)
		}
		if cfg.Crash != nil {
			o.Store = openStore(t, kafkarunner.InjectFaults(ks.Config(), crashAt(cfg.Crash)))
		}
		r, err := kafkarunner.New(o)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}, runnertest.InjectsCrashes())
}

// crashAt is the fault hook that makes a runner die of c: every request
// fails once it died, and the commit of a step asks c before its state is
// written and once it was (the commit of a created job is no step).
func crashAt(c *runnertest.Crash) func(kafkarunner.FaultPoint, string, *job.Transition) error {
	return func(p kafkarunner.FaultPoint, _ string, tr *job.Transition) error {
		switch {
		case p == kafkarunner.FaultRequest || tr.Created():
			return c.Alive()
		case p == kafkarunner.FaultCommit:
			return c.Commit(tr.Job, tr.Step)
		default:
			return c.Committed(tr.Job, tr.Step)
		}
	}
}
