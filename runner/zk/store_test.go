package zk_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/batonwf/baton/internal/zktest"
	"github.com/batonwf/baton/job"
	zkrunner "github.com/batonwf/baton/runner/zk"
	"github.com/batonwf/baton/store"
	"github.com/batonwf/baton/store/storetest"
)

// roots hands each store of a test its own root under the server's.
var roots atomic.Int64

// openStore opens a store on a fresh root of srv, closed when t ends.
func openStore(t testing.TB, srv *zktest.Server, cfg zkrunner.Config) *zkrunner.Store {
	t.Helper()
	cfg.Servers = srv.Addrs()
	if cfg.Root == "" {
		cfg.Root = srv.Path(fmt.Sprintf("r%d", roots.Add(1)))
	}
	if cfg.SessionTimeout == 0 {
		cfg.SessionTimeout = 4 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := zkrunner.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestStoreConformance(t *testing.T) {
	srv := zktest.Start(t)
	storetest.Run(t, func(t *testing.T) store.Store { return openStore(t, srv, zkrunner.Config{}) })
}

// TestStoreConformanceSnapshots runs the suite with a snapshot every 7
// steps, so that loads start from snapshots written by Save and replaced
// ones are deleted under concurrent loads.
func TestStoreConformanceSnapshots(t *testing.T) {
	srv := zktest.Start(t)
	storetest.Run(t, func(t *testing.T) store.Store { return openStore(t, srv, zkrunner.Config{SnapshotEvery: 7}) })
}

// TestStoreDamaged: a job whose record is overwritten with garbage (as
// `zkCli.sh set` would) is listed as damaged beside the others.
func TestStoreDamaged(t *testing.T) {
	srv := zktest.Start(t)
	root := srv.Path(fmt.Sprintf("r%d", roots.Add(1)))
	storetest.RunDamaged(t, func(t *testing.T) store.Store {
		return openStore(t, srv, zkrunner.Config{Root: root})
	}, func(t *testing.T, s store.Store, id job.ID) store.Store {
		c := zktest.Connect(t, srv.Addrs(), 4*time.Second)
		if _, err := c.Set(root+"/jobs/"+string(id), []byte(`{"bad`), -1); err != nil {
			t.Fatal(err)
		}
		return s
	})
}
