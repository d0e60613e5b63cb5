package bolt

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/store"
	"go.etcd.io/bbolt"
)

// TestGroupCommit: writes that wait while a commit is in progress share
// the next one, each with its own outcome: the refused one (a conflict)
// fails alone, the others are durable when they return.
func TestGroupCommit(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "baton.db")
	s, err := Open(path, &Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const n = 8
	trs := make([]job.Transition, n)
	for i := range trs {
		tr, err := job.New(job.ID(fmt.Sprintf("g-%d", i)), ast.Par(ast.Act("log", 1), ast.Act("log", 2)), job.WithIncarnation(uint64(i+1)))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Create(ctx, tr.Job); err != nil {
			t.Fatal(err)
		}
		if trs[i], err = job.Restart(tr.Job, []job.Result{tr.Actions[0].Succeed(nil)}); err != nil {
			t.Fatal(err)
		}
	}
	// A rival of g-0's version 2: saved in the same group, after it, it
	// must be refused alone.
	first, _ := s.Load(ctx, "g-0")
	rival, err := job.Restart(first, []job.Result{first.Outstanding()[1].Succeed(nil)})
	if err != nil {
		t.Fatal(err)
	}
	before := s.Stats()

	// Hold the writer: the first Save leads and waits; the others queue.
	s.wmu.Lock()
	errs := make([]error, n+1)
	var wg sync.WaitGroup
	wg.Go(func() { errs[0] = s.Save(ctx, trs[0].Job, trs[0].Step) })
	waitQueued(t, s, 0) // the leader took its own write
	for i := 1; i < n; i++ {
		wg.Go(func() { errs[i] = s.Save(ctx, trs[i].Job, trs[i].Step) })
	}
	waitQueued(t, s, n-1)
	wg.Go(func() { errs[n] = s.Save(ctx, rival.Job, rival.Step) })
	waitQueued(t, s, n)
	s.wmu.Unlock()
	wg.Wait()

	for i := range n {
		if errs[i] != nil {
			t.Errorf("Save of g-%d: %v", i, errs[i])
		}
		got, err := s.Load(ctx, trs[i].Job.ID())
		if err != nil || got.Version() != 2 {
			t.Errorf("g-%d after the group commit: %v, %v", i, got, err)
		}
	}
	if !errors.Is(errs[n], store.ErrConflict) {
		t.Errorf("the rival's Save: %v, want ErrConflict", errs[n])
	}
	st := s.Stats()
	if c, w := st.GroupCommits-before.GroupCommits, st.GroupWrites-before.GroupWrites; c != 2 || w != n+1 || st.LargestGroup != n {
		t.Errorf("%d commits carried %d writes (largest %d); want 2 commits: the leader's, then the %d that waited", c, w, st.LargestGroup, n)
	}
	if txs := st.WriteTxs - before.WriteTxs; txs != 2 {
		t.Errorf("%d write transactions, want 2", txs)
	}
}

// waitQueued waits until n writes wait for the next group commit.
func waitQueued(t *testing.T, s *Store, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		s.group.mu.Lock()
		q := len(s.group.queue)
		s.group.mu.Unlock()
		if q == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d writes queued, want %d", q, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestGroupCommitFailure: when the shared transaction fails, every write
// in it fails, and none is stored.
func TestGroupCommitFailure(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "baton.db")
	s, err := Open(path, &Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	boom := errors.New("boom")
	var ok, bad *groupWrite
	made := false
	ok = &groupWrite{ctx: ctx, apply: func(tx *bbolt.Tx, w *writes) error { made = true; return nil }}
	bad = &groupWrite{ctx: ctx, apply: func(tx *bbolt.Tx, w *writes) error { return boom }}
	s.commitBatch([]*groupWrite{ok, bad})
	if !made || !errors.Is(ok.err, boom) || !errors.Is(bad.err, boom) {
		t.Errorf("after a failed transaction: %v, %v; want both to fail with it", ok.err, bad.err)
	}
}
