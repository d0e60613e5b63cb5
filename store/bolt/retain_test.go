package bolt_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/store"
	"github.com/batonwf/baton/store/bolt"
)

// fakeClock is a clock the test moves.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// putJob creates job id of one action, started at start, and, unless end
// is zero, finishes it with a result at end (failed if fail).
func putJob(t *testing.T, s store.Store, id job.ID, start, end time.Time, fail bool) {
	t.Helper()
	ctx := context.Background()
	tr, err := job.New(id, ast.Act("x", nil), job.StartedAt(start))
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Commit(ctx, s, tr); err != nil {
		t.Fatal(err)
	}
	if end.IsZero() {
		return
	}
	res := job.Result{JobID: id, ActionID: tr.Actions[0].ID, At: end}
	if fail {
		res.Error = "no"
	}
	next, err := job.Restart(tr.Job, []job.Result{res})
	if err != nil {
		t.Fatal(err)
	}
	if !next.Job.Done() {
		t.Fatalf("job %s not finished by its result", id)
	}
	if err := store.Commit(ctx, s, next); err != nil {
		t.Fatal(err)
	}
}

// ids returns the IDs the store lists.
func ids(t *testing.T, s store.Lister) []job.ID {
	t.Helper()
	infos, err := s.List(context.Background(), store.Query{})
	if err != nil {
		t.Fatal(err)
	}
	out := make([]job.ID, len(infos))
	for i, in := range infos {
		out[i] = in.ID
	}
	return out
}

// TestSweepRetention: with a retention, Sweep deletes the settled jobs
// whose clock (their last result) is older than it, by the store's clock,
// and keeps the running ones and the recent ones.
func TestSweepRetention(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)
	clock := &fakeClock{t: t0}
	s := open(t, tempPath(t), &bolt.Options{NoSync: true, Retention: time.Hour, Now: clock.Now})
	putJob(t, s, "old-ok", t0.Add(-3*time.Hour), t0.Add(-2*time.Hour), false)
	putJob(t, s, "old-failed", t0.Add(-3*time.Hour), t0.Add(-90*time.Minute), true)
	putJob(t, s, "old-running", t0.Add(-3*time.Hour), time.Time{}, false)
	putJob(t, s, "recent", t0.Add(-3*time.Hour), t0.Add(-30*time.Minute), false)

	res, err := s.Sweep(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.Deleted != 2 || res.Next <= 0 {
		t.Errorf("Sweep = %+v, want 2 deleted and a pause before the next", res)
	}
	if got, want := fmt.Sprint(ids(t, s)), "[old-running recent]"; got != want {
		t.Errorf("after the sweep at %v the store holds %s, want %s", clock.Now(), got, want)
	}
	if _, err := s.Load(ctx, "old-ok"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Load of a swept job: %v, want ErrNotFound", err)
	}

	// Nothing more is due until "recent" is an hour old.
	clock.set(t0.Add(29 * time.Minute))
	if res, err := s.Sweep(ctx); err != nil || res.Deleted != 0 {
		t.Errorf("Sweep 29 minutes on = %+v, %v; want nothing deleted", res, err)
	}
	clock.set(t0.Add(31 * time.Minute))
	if res, err := s.Sweep(ctx); err != nil || res.Deleted != 1 {
		t.Errorf("Sweep 31 minutes on = %+v, %v; want one deleted", res, err)
	}
	clock.set(t0.Add(100 * time.Hour))
	if res, err := s.Sweep(ctx); err != nil || res.Deleted != 0 {
		t.Errorf("Sweep 100 hours on = %+v, %v; want nothing deleted (the running job stays)", res, err)
	}
	if got, want := fmt.Sprint(ids(t, s)), "[old-running]"; got != want {
		t.Errorf("the store holds %s, want %s", got, want)
	}
	// A job made again under a swept ID is a new job.
	putJob(t, s, "old-ok", clock.Now(), time.Time{}, false)
	if j, err := s.Load(ctx, "old-ok"); err != nil || j.Done() {
		t.Errorf("Load of a job made again under a swept ID: %v, %v", j, err)
	}
}

// TestSweepBounded: each Sweep reads and deletes a bounded number of jobs,
// and says to come back at once until its round through the store is over.
func TestSweepBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("makes 3,000 jobs")
	}
	ctx := context.Background()
	t0 := time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)
	clock := &fakeClock{t: t0}
	s := open(t, tempPath(t), &bolt.Options{NoSync: true, Retention: time.Minute, Now: clock.Now})
	const n = 3000
	for i := range n {
		end := t0.Add(-time.Hour)
		if i%3 == 0 {
			end = t0 // recent: kept
		}
		putJob(t, s, job.ID(fmt.Sprintf("j-%04d", i)), t0.Add(-2*time.Hour), end, false)
	}
	calls, deleted := 0, 0
	for {
		res, err := s.Sweep(ctx)
		if err != nil {
			t.Fatal(err)
		}
		calls++
		if res.Deleted > 256 {
			t.Fatalf("one Sweep deleted %d jobs, want at most 256", res.Deleted)
		}
		deleted += res.Deleted
		if res.Next > 0 {
			break
		}
		if calls > 100 {
			t.Fatalf("100 Sweeps and the round is not over (%d deleted)", deleted)
		}
	}
	if deleted != 2000 || len(ids(t, s)) != 1000 {
		t.Errorf("a round of %d Sweeps deleted %d jobs and left %d, want 2,000 and 1,000", calls, deleted, len(ids(t, s)))
	}
	if calls < 2000/256 {
		t.Errorf("a round took %d Sweeps to delete 2,000 jobs: more than 256 a Sweep", calls)
	}
	// The next round starts over, and finds nothing more.
	if res, err := s.Sweep(ctx); err != nil || res.Deleted != 0 {
		t.Errorf("Sweep after the round = %+v, %v; want nothing deleted", res, err)
	}
}

// TestSweepOff: without a retention, a store keeps every job, and says so.
func TestSweepOff(t *testing.T) {
	s := open(t, tempPath(t), &bolt.Options{NoSync: true})
	putJob(t, s, "old", time.Unix(1, 0), time.Unix(2, 0), false)
	if _, err := store.Sweep(context.Background(), s); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("Sweep without a retention: %v, want ErrUnsupported", err)
	}
	if got := ids(t, s); len(got) != 1 {
		t.Errorf("the store holds %v, want the job kept", got)
	}
}
