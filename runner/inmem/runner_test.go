package inmem_test

import (
	"path/filepath"
	"testing"

	"github.com/batonwf/baton/runner/inmem"
	"github.com/batonwf/baton/runner/runnertest"
	"github.com/batonwf/baton/store"
	"github.com/batonwf/baton/store/bolt"
)

func factory(t *testing.T, cfg runnertest.Config) runnertest.Runner {
	r, err := inmem.New(inmem.Options{Store: cfg.Store, Registry: cfg.Registry, DrainTimeout: cfg.DrainTimeout, Workers: 8})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestConformanceMemory(t *testing.T) {
	runnertest.Run(t, func(t *testing.T) store.Store { return store.NewMemory() }, factory)
}

func TestConformanceBolt(t *testing.T) {
	runnertest.Run(t, func(t *testing.T) store.Store {
		st, err := bolt.Open(filepath.Join(t.TempDir(), "baton.db"), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}, factory)
}
