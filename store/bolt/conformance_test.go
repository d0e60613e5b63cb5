package bolt_test

import (
	"path/filepath"
	"sync"
	"testing"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	"github.com/batonwf/baton/runner/inmem"
	"github.com/batonwf/baton/runner/runnertest"
	"github.com/batonwf/baton/store"
	"github.com/batonwf/baton/store/bolt"
)

// TestConformanceInmem runs runner/runnertest with runner/inmem on this
// store. Its crash scenarios crash the runner at the store's real commit
// seam, the transaction every Create and Save of production commits in
// (bolt.InjectFaults, set from export_test.go): the process dies before
// a transaction commits, or once it committed and before anyone hears of
// it. The test lives here, not beside runner/inmem, because only this
// package's tests can reach the hook, which no exported option carries.
//
// A bolt file has one writer, so the crashing runner and the one that
// takes over share one Store: the hook of each store asks the crash of
// the runner the factory made last, until that runner is closed (a
// killed process makes no request once it is gone).
func TestConformanceInmem(t *testing.T) {
	var mu sync.Mutex
	seams := map[*testing.T]*crashSeam{}
	newStore := func(t *testing.T) store.Store {
		st, err := bolt.Open(filepath.Join(t.TempDir(), "baton.db"), nil)
		if err != nil {
			t.Fatal(err)
		}
		seam := &crashSeam{}
		bolt.InjectFaults(st, seam.hook)
		t.Cleanup(func() { st.Close() })
		mu.Lock()
		seams[t] = seam
		mu.Unlock()
		return st
	}
	runnertest.Run(t, newStore, func(t *testing.T, cfg runnertest.Config) runnertest.Runner {
		r, err := inmem.New(inmem.Options{
			WorkerOptions: runner.WorkerOptions{Name: cfg.Name, Registry: cfg.Registry, DrainTimeout: cfg.DrainTimeout, Hooks: cfg.Hooks, Workers: 8},
			Store:         cfg.Store,
			NoResume:      cfg.NoResume,
		})
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Crash == nil {
			return r
		}
		mu.Lock()
		seam := seams[t]
		mu.Unlock()
		if seam == nil {
			t.Fatal("the crashing runner's store was not made by this test's newStore")
		}
		seam.set(cfg.Crash)
		return crashing{r, seam}
	}, runnertest.InjectsCrashes())
}

// crashSeam is a store's fault hook: while a crash is set, it asks it
// at every request and at the commit of every step (a Create only asks
// whether the process is alive).
type crashSeam struct {
	mu sync.Mutex
	c  *runnertest.Crash
}

func (s *crashSeam) set(c *runnertest.Crash) {
	s.mu.Lock()
	s.c = c
	s.mu.Unlock()
}

func (s *crashSeam) hook(p bolt.FaultPoint, j job.Job, step *job.Step) error {
	s.mu.Lock()
	c := s.c
	s.mu.Unlock()
	switch {
	case c == nil:
		return nil
	case p == bolt.FaultRequest || step == nil:
		return c.Alive()
	case p == bolt.FaultCommit:
		return c.Commit(j, *step)
	default:
		return c.Committed(j, *step)
	}
}

// crashing is a runner that dies of an injected crash: once it is
// closed, its store's hook no longer asks the crash.
type crashing struct {
	*inmem.Runner
	seam *crashSeam
}

func (c crashing) Close() error {
	err := c.Runner.Close()
	c.seam.set(nil)
	return err
}
