package server_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	"github.com/batonwf/baton/server"
	"github.com/batonwf/baton/store"
)

// stepClock is a clock that moves only when told.
type stepClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *stepClock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// slowLister is a store whose listings take listTime on the clock, and
// are counted.
type slowLister struct {
	store.Store
	clock    *stepClock
	listTime time.Duration
	lists    atomic.Int32
}

func (s *slowLister) List(ctx context.Context, q store.Query) ([]store.Info, error) {
	s.lists.Add(1)
	s.clock.advance(s.listTime)
	return s.Store.(store.Lister).List(ctx, q)
}

// TestUnfinishedListedByItsCost: the count of unfinished jobs (for
// MaxUnfinished) is listed again no sooner than 100 times the last
// listing's duration, so that listings, which read every job the store
// holds, take at most a hundredth of the server's time. A listing of
// 50ms is taken again after 5s, not after a second as before (when a
// store of 100,000 finished jobs was listed every second, the memory
// store's lock held meanwhile).
func TestUnfinishedListedByItsCost(t *testing.T) {
	mem := store.NewMemory()
	t.Cleanup(func() { mem.Close() })
	clock := &stepClock{now: time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)}
	st := &slowLister{Store: mem, clock: clock, listTime: 50 * time.Millisecond}
	reg := runner.NewRegistry()
	if err := runner.Handle(reg, "noop", func(context.Context, struct{}) (struct{}, error) { return struct{}{}, nil }); err != nil {
		t.Fatal(err)
	}
	h, err := server.New(server.Options{Store: st, Runner: runLocal(t, mem, reg), Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	submit := func(id job.ID) {
		t.Helper()
		req := httptest.NewRequest(http.MethodPost, "/api/v1/jobs?id="+string(id), bytes.NewReader([]byte(`{"version": 1, "root": {"act": "noop"}}`)))
		req.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusCreated {
			t.Fatalf("submit %s: %d %s", id, w.Code, w.Body)
		}
	}
	for _, step := range []struct {
		id    job.ID
		after time.Duration // on the clock, before the submit
		lists int32         // listings so far, after it
	}{
		{"u1", 0, 1},                       // the first submit lists
		{"u2", 1500 * time.Millisecond, 1}, // past a second, within 100 x 50ms
		{"u3", 3 * time.Second, 1},
		{"u4", 600 * time.Millisecond, 2}, // 5.15s after the listing ended
		{"u5", 1100 * time.Millisecond, 2},
	} {
		clock.advance(step.after)
		submit(step.id)
		if got := st.lists.Load(); got != step.lists {
			t.Fatalf("after submit %s: %d listings, want %d", step.id, got, step.lists)
		}
	}
}
