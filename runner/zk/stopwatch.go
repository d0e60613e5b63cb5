package zk

import (
	"context"
	"errors"
	"math"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
)

// unknownStops is the stop count of a handler that does not know the
// count its job had when it was claimed: its watcher checks it at once.
const unknownStops = math.MaxUint64

// jobWatch is the one watch on a job's record that the handlers of the job
// running in this process share: a transition that stops actions (a
// cancel, a deadline) raises the record's stop count, and the watcher then
// loads the job once and stops those of its handlers whose actions the job
// no longer waits for. Guarded by Runner.mu.
type jobWatch struct {
	acts map[string]context.CancelCauseFunc // action ID -> its handler's cancel
	// seen is the stop count the watcher last checked its handlers
	// against (valid once it has).
	seen  uint64
	valid bool
	// recheck asks the watcher to load the job even if the count did not
	// change: a handler joined knowing an older count than seen.
	recheck bool
	poke    chan struct{}
	stop    context.CancelFunc
}

// watchStops registers the handler of a (cancel) with its job's watcher,
// starting one if none runs. known is the stop count of the job's record
// that the claim of a was checked against (unknownStops if none was): if
// the watcher has gone past it, it checks a again.
func (r *Runner) watchStops(a job.Action, known uint64, cancel context.CancelCauseFunc) {
	r.mu.Lock()
	defer r.mu.Unlock()
	w := r.watches[a.JobID]
	if w == nil {
		ctx, stop := context.WithCancel(context.Background())
		w = &jobWatch{acts: map[string]context.CancelCauseFunc{}, poke: make(chan struct{}, 1), stop: stop}
		r.watches[a.JobID] = w
		r.watchers.Go(func() { r.watchJob(ctx, a.JobID, w) })
	}
	w.acts[a.ID] = cancel
	if w.valid && w.seen != known {
		w.recheck = true
		select {
		case w.poke <- struct{}{}:
		default:
		}
	}
}

// unwatchStops removes the handler of a from its job's watcher. A watcher
// with no handler left ends when its job's record next changes, or after
// watchLinger: the next action of the job, often run here right after
// (see reserve), finds it still watching.
func (r *Runner) unwatchStops(a job.Action) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if w := r.watches[a.JobID]; w != nil {
		delete(w.acts, a.ID)
	}
}

// watchLinger is how long a job's watcher outlives its last handler.
const watchLinger = 5 * time.Second

// stopWatchers ends every watcher (the runner stops).
func (r *Runner) stopWatchers() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, w := range r.watches {
		w.stop()
	}
}

// idle reports whether watcher w has no handler left, and if so removes
// it from the runner: the watcher then ends.
func (r *Runner) idle(id job.ID, w *jobWatch) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(w.acts) > 0 {
		return false
	}
	if r.watches[id] == w {
		delete(r.watches, id)
	}
	return true
}

// watchJob is the watcher of job id: it watches the job's record until ctx
// ends, and cancels with runner.ErrStopped the handlers of w whose actions
// the job no longer waits for (stopped by a cancel or a deadline, the job
// ended, or the job is gone).
func (r *Runner) watchJob(ctx context.Context, id job.ID, w *jobWatch) {
	defer func() {
		r.mu.Lock()
		if r.watches[id] == w {
			delete(r.watches, id)
		}
		r.mu.Unlock()
	}()
	failures := 0 // in a row: reading the job failed
	var last time.Time
	for ctx.Err() == nil {
		if r.idle(id, w) {
			return
		}
		pace(ctx, &last)
		data, _, ch, err := r.c.c.GetW(r.c.l.job(id))
		if errors.Is(err, zk.ErrNoNode) {
			r.stopHandlers(w, nil)
			return
		}
		if err != nil {
			failures++
			_ = r.c.backoff.Sleep(ctx, failures)
			continue
		}
		m, merr := decodeMeta(id, data)
		r.mu.Lock()
		need := merr != nil || m.Status != job.StatusRunning.String() || w.recheck ||
			(w.valid && m.Stops != w.seen) || (!w.valid && m.Stops > 0)
		w.recheck = false
		if !need {
			w.seen, w.valid = m.Stops, true
		}
		r.mu.Unlock()
		if need {
			j, err := r.st.Load(ctx, id)
			switch {
			case err == nil:
				out := map[string]bool{}
				for _, a := range j.Outstanding() {
					out[a.ID] = true
				}
				r.stopHandlers(w, out)
				r.mu.Lock()
				w.seen, w.valid = m.Stops, merr == nil
				r.mu.Unlock()
			case ctx.Err() == nil:
				r.log.Debug("loading a job to see whether its actions were stopped", "job", id, "err", err)
				failures++
				_ = r.c.backoff.Sleep(ctx, failures)
				continue
			}
		}
		failures = 0
		if !r.await(ctx, id, w, ch) {
			return
		}
	}
}

// await waits for job id's record to change (ch), or a poke; it returns
// false if ctx ends first or the watcher has been idle for watchLinger.
func (r *Runner) await(ctx context.Context, id job.ID, w *jobWatch, ch <-chan zk.Event) bool {
	t := time.NewTimer(watchLinger)
	defer t.Stop()
	for {
		select {
		case <-ch:
			return true
		case <-w.poke:
			return true
		case <-ctx.Done():
			return false
		case <-t.C:
			if r.idle(id, w) {
				return false
			}
			t.Reset(watchLinger)
		}
	}
}

// stopHandlers cancels the handlers of w whose action is not in
// outstanding (all of them when outstanding is nil).
func (r *Runner) stopHandlers(w *jobWatch, outstanding map[string]bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for id, cancel := range w.acts {
		if !outstanding[id] {
			cancel(runner.ErrStopped)
		}
	}
}

// minRewatch is the least time between two reads that re-arm one watch: a
// busy job's record, or a busy queue, changes on every transition, and
// reading it again at once would put a read before each next write of
// the session (ZooKeeper serves a session's requests in order). A change
// is then seen up to this much later.
const minRewatch = 10 * time.Millisecond

// pace waits until minRewatch has passed since *last (or ctx ends), then
// sets *last to now.
func pace(ctx context.Context, last *time.Time) {
	if d := minRewatch - time.Since(*last); d > 0 {
		sleep(ctx, d)
	}
	*last = time.Now()
}
