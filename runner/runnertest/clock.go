package runnertest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	"github.com/batonwf/baton/store"
)

// Clock is a runner.Clock that moves only when the test moves it: give it
// to a runner (runner.WorkerOptions.Clock), and the runner's results,
// job starts and timers go by it. A retry's back-off or a deadline then
// falls due when the test calls Advance past it, and never before, with
// no sleep. Its methods are safe for concurrent use.
type Clock struct {
	mu      sync.Mutex
	now     time.Time
	waiting []*clockTimer // armed and not yet called nor stopped
	fired   int
}

var _ runner.Clock = (*Clock)(nil)

// NewClock returns a clock that reads start until it is moved.
func NewClock(start time.Time) *Clock { return &Clock{now: start} }

// clockTimer is a function armed on a Clock.
type clockTimer struct {
	c   *Clock
	due time.Time
	f   func()
}

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// AfterFunc arms f to be called once the clock has moved d on (by
// Advance); with d <= 0 it calls f at once in a goroutine of its own, as
// time.AfterFunc does.
func (c *Clock) AfterFunc(d time.Duration, f func()) runner.Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &clockTimer{c: c, due: c.now.Add(d), f: f}
	if d <= 0 {
		c.fired++
		go f()
		return t
	}
	c.waiting = append(c.waiting, t)
	return t
}

// Stop keeps the function from being called, and reports whether it did.
func (t *clockTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	i := slices.Index(t.c.waiting, t)
	if i < 0 {
		return false
	}
	t.c.waiting = slices.Delete(t.c.waiting, i, i+1)
	return true
}

// Advance moves the clock d on and calls the functions that fall due by
// then, in the order of their due times, one after another in the
// caller's goroutine, before it returns. (A function armed by one of
// them for a time already past is called at once in a goroutine of its
// own, as AfterFunc says.)
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	var due []*clockTimer
	c.waiting = slices.DeleteFunc(c.waiting, func(t *clockTimer) bool {
		if t.due.After(c.now) {
			return false
		}
		due = append(due, t)
		return true
	})
	c.fired += len(due)
	c.mu.Unlock()
	slices.SortStableFunc(due, func(a, b *clockTimer) int { return a.due.Compare(b.due) })
	for _, t := range due {
		t.f()
	}
}

// Armed returns how many functions wait for the clock to move.
func (c *Clock) Armed() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.waiting)
}

// Fired returns how many armed functions the clock has called so far.
func (c *Clock) Fired() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.fired
}

// Stamps lists the results and firings of job id's history in the order
// they applied, each as "ACTION-ID at t0+OFFSET" (how far its stamp, At,
// is from t0): what a test on a Clock started at t0 compares. A store
// that keeps no history is an error wrapping errors.ErrUnsupported.
func Stamps(ctx context.Context, st store.Store, id job.ID, t0 time.Time) ([]string, error) {
	h, err := store.LoadHistory(ctx, st, id)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, s := range h.Steps {
		for _, r := range s.Results {
			out = append(out, fmt.Sprintf("%s at t0+%v", r.ActionID, r.At.Sub(t0)))
		}
	}
	return out, nil
}
