package live

import (
	"context"
	"errors"
	"time"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/store"
)

// watcher reads one job for all its streams and waiters: one store read
// per change, whatever their number. It runs while it has subscribers
// (refs, counted under the hub's lock).
type watcher struct {
	h    *Hub
	id   job.ID
	refs int           // under h.mu
	wake chan struct{} // cap 1: look again (a notice)
	stop chan struct{} // closed when the last subscriber left

	// cur is the newest snap (nil before the first read); changed is
	// closed and replaced when cur is. Under h.mu.
	cur     *snap
	changed chan struct{}

	// Reads started and done, when the last one started, and a channel
	// closed and replaced when one is done. Under h.mu.
	started, done uint64
	startedAt     time.Time
	readDone      chan struct{}
	noticed       bool // a notice waits for its read (spaced by 1/MaxRate)
}

// fresh returns the number of the first read a new subscriber must wait
// for: none when the last read started less than gap ago and no notice
// waits (a change since then will be polled), else the next one, which
// it asks for.
func (w *watcher) fresh(gap time.Duration) uint64 {
	w.h.mu.Lock()
	defer w.h.mu.Unlock()
	if w.started > 0 && time.Since(w.startedAt) < gap && !w.noticed && len(w.wake) == 0 {
		return 0
	}
	// Under the lock the watcher drains its notices at, so this notice
	// is either drained by a read counted after it or gets one of its
	// own: never an extra read.
	w.poke()
	return w.started + 1
}

// readsDone returns the reads done and a channel closed at the next.
func (w *watcher) readsDone() (uint64, <-chan struct{}) {
	w.h.mu.Lock()
	defer w.h.mu.Unlock()
	return w.done, w.readDone
}

// current returns the newest snap and a channel closed when a newer one
// is published.
func (w *watcher) current() (*snap, <-chan struct{}) {
	w.h.mu.Lock()
	defer w.h.mu.Unlock()
	return w.cur, w.changed
}

func (w *watcher) publish(s *snap) {
	w.h.mu.Lock()
	defer w.h.mu.Unlock()
	w.cur = s
	close(w.changed)
	w.changed = make(chan struct{})
}

// poke asks the watcher to read the job again; it never blocks, and
// notices that come while one waits are one.
func (w *watcher) poke() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// run reads the job at once, then on every notice and poll until stop:
// a notice reads the history directly (one read per step), a poll states
// the job first and reads the history only if it moved. Reads are spaced
// by at least 1/MaxRate, as no stream takes events faster.
func (w *watcher) run() {
	defer w.h.wg.Done()
	o := &w.h.opts
	every := o.Poll
	if o.Notified {
		every = o.SafetyPoll
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	gap := time.Duration(float64(time.Second) / o.MaxRate)
	var last time.Time
	w.read()
	last = time.Now()
	for {
		select {
		case <-w.stop:
			return
		case <-w.wake:
			w.h.mu.Lock()
			w.noticed = true
			w.h.mu.Unlock()
			if d := gap - time.Since(last); d > 0 {
				t := time.NewTimer(d)
				select {
				case <-w.stop:
					t.Stop()
					return
				case <-t.C:
				}
			}
			w.read()
			last = time.Now()
		case <-tick.C:
			if w.moved() {
				w.read()
				last = time.Now()
			}
		}
	}
}

// moved reports whether the stored job may differ from the newest snap.
func (w *watcher) moved() bool {
	cur, _ := w.current()
	in, err := store.Stat(w.h.ctx, w.h.opts.Store, w.id)
	switch {
	case err != nil && !errors.Is(err, store.ErrNotFound):
		w.h.opts.Logger.Debug("live: stat failed", "job", w.id, "err", err)
		return cur == nil || cur.err != nil
	case err != nil:
		return cur == nil || !errors.Is(cur.err, store.ErrNotFound)
	case in.Damaged != nil:
		return cur == nil || cur.err == nil
	}
	return cur == nil || cur.err != nil || in.Version != cur.version()
}

// read reads the job's history and publishes what it holds. A read that
// fails keeps the snap it had, except before the first good one and when
// the job is gone: streams then learn why.
func (w *watcher) read() {
	ctx, cancel := context.WithTimeout(w.h.ctx, readTimeout)
	defer cancel()
	w.h.mu.Lock()
	// Notices that came before this read are answered by it.
	select {
	case <-w.wake:
	default:
	}
	w.started++
	w.startedAt = time.Now()
	w.noticed = false
	cur := w.cur
	w.h.mu.Unlock()
	defer func() {
		w.h.mu.Lock()
		defer w.h.mu.Unlock()
		w.done++
		close(w.readDone)
		w.readDone = make(chan struct{})
	}()
	h, err := store.LoadHistory(ctx, w.h.opts.Store, w.id)
	var next *snap
	if err == nil {
		next, err = extend(cur, h)
	}
	if err != nil {
		gone := errors.Is(err, store.ErrNotFound)
		if !gone {
			w.h.opts.Logger.Warn("live: reading a job failed", "job", w.id, "err", err)
		}
		if cur != nil && cur.err == nil && !gone {
			return
		}
		next = &snap{err: err}
	}
	if cur != nil && cur.err == nil && next.err == nil && next.version() == cur.version() &&
		next.origin.Incarnation() == cur.origin.Incarnation() {
		return // nothing new: wake nobody
	}
	w.publish(next)
}

// readTimeout bounds one read of the store.
const readTimeout = 10 * time.Second
