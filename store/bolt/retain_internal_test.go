package bolt

import (
	"context"
	"encoding/binary"
	"path/filepath"
	"testing"
	"time"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/store"
	"go.etcd.io/bbolt"
)

// TestSweepFormat2Meta: a job finished under the previous meta format,
// which has no clock, is swept by the clock of the job itself.
func TestSweepFormat2Meta(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "baton.db")
	t0 := time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)
	s, err := Open(path, &Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	for i, id := range []job.ID{"old", "recent"} {
		tr, err := job.New(id, ast.Act("x", nil), job.StartedAt(t0.Add(-3*time.Hour)), job.WithIncarnation(uint64(i+1)))
		if err != nil {
			t.Fatal(err)
		}
		if err := store.Commit(ctx, s, tr); err != nil {
			t.Fatal(err)
		}
		end := t0.Add(-2 * time.Hour)
		if id == "recent" {
			end = t0.Add(-time.Minute)
		}
		next, err := job.Restart(tr.Job, []job.Result{{JobID: id, ActionID: tr.Actions[0].ID, At: end}})
		if err != nil {
			t.Fatal(err)
		}
		if err := store.Commit(ctx, s, next); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// Rewrite both meta records in format 2: as the newest, less the clock
	// and the times.
	db, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bbolt.Tx) error {
		for _, id := range []string{"old", "recent"} {
			jb := tx.Bucket(jobsBucket).Bucket([]byte(id))
			b := jb.Get(metaKey)
			if len(b) != metaLen || b[0] != metaFormat {
				t.Fatalf("meta of %s: %d bytes, format %d", id, len(b), b[0])
			}
			old := append([]byte{metaFormat2}, b[1:metaLen2-4]...)
			old = binary.BigEndian.AppendUint32(old, checksum(old))
			if err := jb.Put(metaKey, old); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	s, err = Open(path, &Options{NoSync: true, Retention: time.Hour, Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, id := range []job.ID{"old", "recent"} {
		if in, err := s.Stat(ctx, id); err != nil || !in.Status.Settled() {
			t.Fatalf("Stat(%s) of a format 2 meta record: %+v, %v", id, in, err)
		}
	}
	res, err := s.Sweep(ctx)
	if err != nil || res.Deleted != 1 {
		t.Fatalf("Sweep = %+v, %v; want one job deleted", res, err)
	}
	if _, err := s.Load(ctx, "old"); err == nil {
		t.Errorf("the job that finished two hours ago is still there")
	}
	if _, err := s.Load(ctx, "recent"); err != nil {
		t.Errorf("the job that finished a minute ago: %v", err)
	}
}
