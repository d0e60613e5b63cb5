package live

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/batonwf/baton/job"
)

// WaitStep is the long poll of the history route: it returns the steps of
// job id after version from (oldest first) as soon as there is one, or
// none once wait has passed, ctx has ended or the hub shuts down. It
// shares the job's watcher with the job's streams: waiters and streams of
// one job together cost one store read per change. A job that does not
// exist is an error wrapping store.ErrNotFound; a version from the future
// waits. The steps belong to the hub: do not modify them.
func (h *Hub) WaitStep(ctx context.Context, id job.ID, from uint64, wait time.Duration) ([]Step, error) {
	w, err := h.attach(id)
	if err != nil {
		return nil, err
	}
	defer h.detach(w)
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		sn, ch := w.current()
		if sn != nil {
			if sn.err != nil {
				return nil, fmt.Errorf("live: job %s: %w", id, sn.err)
			}
			if steps := sn.stepsAfter(from); len(steps) > 0 {
				return steps, nil
			}
		}
		select {
		case <-ch:
		case <-timer.C:
			return nil, nil
		case <-ctx.Done():
			return nil, nil
		case <-h.closing:
			return nil, nil
		}
	}
}

// Watch returns a channel closed the next time the hub reads that job
// id changed (or is gone, or cannot be read), and a func that ends the
// watch (safe to call twice). A watch that starts the job's watcher is
// woken by its first read. It is a hint, shared with the job's streams
// through its watcher: the change notifier a long poll of the server can
// take, checking the store after each wake-up.
func (h *Hub) Watch(id job.ID) (changed <-chan struct{}, stop func()) {
	w, err := h.attach(id)
	if err != nil {
		closed := make(chan struct{})
		close(closed)
		return closed, func() {}
	}
	_, changed = w.current()
	var once sync.Once
	return changed, func() { once.Do(func() { h.detach(w) }) }
}
