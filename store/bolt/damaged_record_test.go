package bolt_test

import (
	"context"
	"testing"
	"time"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	"github.com/batonwf/baton/runner/inmem"
	"github.com/batonwf/baton/store"
	"github.com/batonwf/baton/store/bolt"
	"github.com/batonwf/baton/store/storetest"
	"go.etcd.io/bbolt"
)

// damageRecord closes s, changes job id's bucket in the file through
// bbolt with damage, and opens the file again.
func damageRecord(t *testing.T, s store.Store, id job.ID, damage func(jobs, jb *bbolt.Bucket) error) store.Store {
	t.Helper()
	path := s.(*bolt.Store).Path()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bbolt.Tx) error {
		jobs := tx.Bucket([]byte("jobs"))
		return damage(jobs, jobs.Bucket([]byte(id)))
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return open(t, path, &bolt.Options{NoSync: true})
}

// TestDamagedMeta: a job whose meta record is garbage is listed as
// damaged, and the other jobs with it (List failed whole before).
func TestDamagedMeta(t *testing.T) {
	storetest.RunDamaged(t, func(t *testing.T) store.Store {
		return open(t, tempPath(t), &bolt.Options{NoSync: true})
	}, func(t *testing.T, s store.Store, id job.ID) store.Store {
		return damageRecord(t, s, id, func(_, jb *bbolt.Bucket) error {
			return jb.Put([]byte("meta"), []byte("\x03 this is not a meta record"))
		})
	})
}

// TestDamagedMetaMissing: the same with the meta record gone.
func TestDamagedMetaMissing(t *testing.T) {
	storetest.RunDamaged(t, func(t *testing.T) store.Store {
		return open(t, tempPath(t), &bolt.Options{NoSync: true})
	}, func(t *testing.T, s store.Store, id job.ID) store.Store {
		return damageRecord(t, s, id, func(_, jb *bbolt.Bucket) error { return jb.Delete([]byte("meta")) })
	})
}

// TestDamagedSweep: a damaged meta record does not stop retention: Sweep
// deletes the settled jobs that are due around it and leaves it alone
// (it is not known to have finished).
func TestDamagedSweep(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	opts := &bolt.Options{NoSync: true, Retention: time.Hour, Now: func() time.Time { return now }}
	path := tempPath(t)
	s := open(t, path, opts)
	for _, id := range []job.ID{"a", "b", "c"} {
		tr, err := job.New(id, parOf(1), job.StartedAt(now.Add(-3*time.Hour)))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Create(ctx, tr.Job); err != nil {
			t.Fatal(err)
		}
		r := tr.Actions[0].Succeed(nil)
		r.At = now.Add(-2 * time.Hour)
		next, err := job.Restart(tr.Job, []job.Result{r})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Save(ctx, next.Job, next.Step); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bbolt.Tx) error {
		return tx.Bucket([]byte("jobs")).Bucket([]byte("b")).Put([]byte("meta"), []byte("garbage"))
	}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	s = open(t, path, opts)
	res, err := s.Sweep(ctx)
	if err != nil {
		t.Fatalf("Sweep with job b damaged: %v", err)
	}
	if res.Deleted != 2 {
		t.Fatalf("Sweep deleted %d jobs, want 2 (a and c)", res.Deleted)
	}
	infos, err := s.List(ctx, store.Query{})
	if err != nil || len(infos) != 1 || infos[0].ID != "b" || infos[0].Damaged == nil {
		t.Fatalf("after Sweep: %+v, %v; want b alone, damaged", infos, err)
	}
}

// TestDamagedResume: a runner that starts on a file holding a job whose
// meta record is damaged resumes the other jobs and runs them to the end
// (before, the listing it resumes from failed whole, and none was
// resumed); the damaged job stays, listed as damaged.
func TestDamagedResume(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	path := tempPath(t)
	s := open(t, path, &bolt.Options{NoSync: true})
	for _, id := range []job.ID{"a", "b", "c"} {
		tr, err := job.New(id, ast.Act("noop", string(id)))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Create(ctx, tr.Job); err != nil {
			t.Fatal(err)
		}
	}
	st := damageRecord(t, s, "b", func(_, jb *bbolt.Bucket) error { return jb.Put([]byte("meta"), []byte("garbage")) })
	reg := runner.NewRegistry()
	if err := reg.Register("noop", func(context.Context, job.Action) ([]byte, error) { return nil, nil }); err != nil {
		t.Fatal(err)
	}
	r, err := inmem.New(inmem.Options{WorkerOptions: runner.WorkerOptions{Registry: reg}, Store: st})
	if err != nil {
		t.Fatal(err)
	}
	ran := make(chan error, 1)
	go func() { ran <- r.Run(ctx) }()
	defer func() {
		r.Close()
		<-ran
	}()
	for _, id := range []job.ID{"a", "c"} {
		j, err := r.Wait(ctx, id)
		if err != nil || j.Status() != job.StatusSucceeded {
			t.Fatalf("job %s beside a damaged one: %v, %v; want it resumed and succeeded", id, j.Status(), err)
		}
	}
	infos, err := store.List(ctx, st, store.Query{})
	if err != nil || len(infos) != 3 || infos[1].ID != "b" || infos[1].Damaged == nil {
		t.Fatalf("List: %+v, %v", infos, err)
	}
}
