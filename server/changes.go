package server

import (
	"sync"

	"github.com/batonwf/baton/job"
)

// Changes is a Notifier fed by a runner in this process: give its Step to
// runner.Hooks.Step (or call Changed after any change of a job), and give
// it to Options.Notifier, so that long polls wake at a step instead of at
// their next look at the store. Any number of waiters on one job share one
// channel. It is safe for concurrent use; the zero Changes is ready.
type Changes struct {
	mu      sync.Mutex
	watched map[job.ID]*watch
}

type watch struct {
	ch chan struct{}
	n  int // waiters
}

var _ Notifier = (*Changes)(nil)

// Changed wakes the waiters on job id.
func (c *Changes) Changed(id job.ID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if w := c.watched[id]; w != nil {
		close(w.ch)
		delete(c.watched, id)
	}
}

// Step is a runner.Hooks.Step: it calls Changed for j.
func (c *Changes) Step(j job.Job, _ int) { c.Changed(j.ID()) }

// Watch implements Notifier.
func (c *Changes) Watch(id job.ID) (<-chan struct{}, func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.watched == nil {
		c.watched = map[job.ID]*watch{}
	}
	w := c.watched[id]
	if w == nil {
		w = &watch{ch: make(chan struct{})}
		c.watched[id] = w
	}
	w.n++
	var once sync.Once
	return w.ch, func() {
		once.Do(func() {
			c.mu.Lock()
			defer c.mu.Unlock()
			if w.n--; w.n == 0 && c.watched[id] == w {
				delete(c.watched, id)
			}
		})
	}
}
