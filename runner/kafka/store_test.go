package kafka_test

import (
	"context"
	"testing"
	"time"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/store"
	"github.com/batonwf/baton/store/storetest"

	kafkarunner "github.com/batonwf/baton/runner/kafka"
)

// ownAll opens a store that owns every partition.
func ownAll(t *testing.T, cfg kafkarunner.Config) *kafkarunner.Store {
	t.Helper()
	st := openStore(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := st.ClaimAll(ctx); err != nil {
		t.Fatal(err)
	}
	return st
}

func TestStoreConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return ownAll(t, testConfig(t)) })
}

func TestStoreConformanceSnapshots(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		cfg := testConfig(t)
		cfg.SnapshotEvery = 40
		return ownAll(t, cfg)
	})
}

// TestStoreDurableSnapshots reopens the store where snapshots are frequent
// (and superseded ones deleted by tombstones): the rebuild starts from a
// job's newest snapshot.
func TestStoreDurableSnapshots(t *testing.T) {
	prefixes := map[string]string{}
	storetest.RunDurable(t, func(t *testing.T, path string) store.Store {
		p, ok := prefixes[path]
		if !ok {
			p = kafkarunner.NewPrefix(t)
			prefixes[path] = p
		}
		cfg := testConfig(t)
		cfg.Prefix = p
		cfg.SnapshotEvery = 7
		return ownAll(t, cfg)
	})
}

// TestStoreDurable reopens the store on the same topics: a new Store that
// claims every partition rebuilds every job from the state topic.
func TestStoreDurable(t *testing.T) {
	prefixes := map[string]string{}
	storetest.RunDurable(t, func(t *testing.T, path string) store.Store {
		p, ok := prefixes[path]
		if !ok {
			p = kafkarunner.NewPrefix(t)
			prefixes[path] = p
		}
		cfg := testConfig(t)
		cfg.Prefix = p
		return ownAll(t, cfg)
	})
}

// TestStoreDamaged: a job whose records do not replay (a step record that
// does not decode) is listed as damaged beside the others, once a store
// reads the state topic again.
func TestStoreDamaged(t *testing.T) {
	cfg := testConfig(t)
	storetest.RunDamaged(t, func(t *testing.T) store.Store { return ownAll(t, cfg) },
		func(t *testing.T, s store.Store, id job.ID) store.Store {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := kafkarunner.DamageJob(ctx, s.(*kafkarunner.Store), id); err != nil {
				t.Fatal(err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			return ownAll(t, cfg)
		})
}
