package zk

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	"github.com/batonwf/baton/store"
)

// timerLoop fires the timers that fall due: it applies each firing, then
// deletes the timer's node (a runner that dies between the two fires it
// again, which the reducer ignores). Every runner on a root does this;
// when two fire one timer, the second firing is ignored.
//
// Due is read on the runner's clock (Options.Clock): the loop sleeps
// until the next timer is due by that clock, and at most the connection's
// back-off (Backoff.Max) between two looks, so a clock moved past a due
// time by hand makes the timer fire at the next look.
func (r *Runner) timerLoop(ctx context.Context) {
	polls, failures := 0, 0
	lastRepair := time.Now()
	for ctx.Err() == nil {
		var names []string
		var ch <-chan zk.Event
		err := r.c.do(ctx, "list the timers", func() (err error) {
			names, _, ch, err = r.c.c.ChildrenW(r.c.l.timers())
			return err
		})
		if err != nil {
			if ctx.Err() == nil {
				r.log.Error("listing the timers", "err", err)
				failures++
				_ = r.c.backoff.Sleep(ctx, failures)
			}
			continue
		}
		failures = 0
		slices.Sort(names)
		var next time.Time
		for _, name := range names {
			due, id, tid, ok := timerKey(name)
			if !ok {
				continue
			}
			at := time.UnixMilli(due)
			if at.After(r.o.Clock.Now()) {
				next = at
				break
			}
			r.fire(ctx, name, job.Timer{JobID: id, ID: tid, Due: at})
		}
		if time.Since(lastRepair) > 30*time.Second {
			r.repairDispatching(ctx)
			lastRepair = time.Now()
		}
		polls++ // the poll that backs up the watch slows down to the back-off's cap
		d := r.c.backoff.Wait(polls)
		if !next.IsZero() {
			d = min(d, next.Sub(r.o.Clock.Now()))
		}
		sleep(ctx, max(d, time.Millisecond), ch)
	}
}

// fire applies the firing of the timer whose node is name.
func (r *Runner) fire(ctx context.Context, name string, tm job.Timer) {
	_, err := r.eng.Apply(ctx, tm.JobID, []job.Result{tm.Fire(r.o.Clock.Now())})
	switch {
	case err == nil, errors.Is(err, runner.ErrNotDispatched), errors.Is(err, store.ErrNotFound):
	default:
		if ctx.Err() == nil {
			r.log.Error("firing a timer failed; it fires again later", "job", tm.JobID, "timer", tm.ID, "err", err)
		}
		return
	}
	if err := r.c.delete(ctx, r.c.l.timers()+"/"+name, -1); err != nil && !errors.Is(err, zk.ErrNoNode) && ctx.Err() == nil {
		r.log.Warn("deleting a fired timer", "timer", name, "err", err)
	}
}

// repairDispatching finishes the transitions whose queue entries were
// being written in parts by a runner that stopped: their markers are older
// than half a minute.
func (r *Runner) repairDispatching(ctx context.Context) {
	names, err := r.c.children(ctx, r.c.l.dispatching())
	if err != nil {
		return
	}
	for _, name := range names {
		_, st, err := r.c.get(ctx, r.c.l.dispatching()+"/"+name)
		if err != nil || time.Since(time.UnixMilli(st.Mtime)) < 30*time.Second {
			continue
		}
		if _, err := r.eng.Recover(ctx, job.ID(name)); err != nil {
			r.log.Error("finishing a dispatch left in parts", "job", name, "err", err)
			continue
		}
		_ = r.c.delete(ctx, r.c.l.dispatching()+"/"+name, st.Version)
	}
}
