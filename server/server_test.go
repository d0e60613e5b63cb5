package server_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/runner"
	"github.com/batonwf/baton/runner/inmem"
	"github.com/batonwf/baton/server"
	"github.com/batonwf/baton/server/servertest"
	"github.com/batonwf/baton/store"
	"github.com/batonwf/baton/store/bolt"
)

// runLocal starts an inmem runner of reg on st, closed by t.Cleanup.
func runLocal(t *testing.T, st store.Store, reg *runner.Registry) any {
	r, err := inmem.New(inmem.Options{WorkerOptions: runner.WorkerOptions{Registry: reg, Workers: 4, DrainTimeout: -1}, Store: st})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("runner: %v", err)
		}
	})
	return server.Local{Runner: r, Registry: reg, Capacity: 4}
}

func TestMemory(t *testing.T) {
	servertest.Run(t, checked(func(t *testing.T, reg *runner.Registry) (store.Store, any) {
		st := store.NewMemory()
		t.Cleanup(func() { st.Close() })
		return st, runLocal(t, st, reg)
	}))
}

func TestBolt(t *testing.T) {
	servertest.Run(t, checked(func(t *testing.T, reg *runner.Registry) (store.Store, any) {
		st, err := bolt.Open(filepath.Join(t.TempDir(), "jobs.db"), &bolt.Options{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st, runLocal(t, st, reg)
	}))
}

func mustDecode(t *testing.T, s string) ast.Node {
	n, err := ast.Decode([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return n
}
