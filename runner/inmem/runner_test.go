package inmem_test

import (
	"testing"

	"github.com/batonwf/baton/runner/inmem"
	"github.com/batonwf/baton/runner/runnertest"
	"github.com/batonwf/baton/store"
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
