package runner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/store"
)

// Transport is the seam a runner implements: how a transition becomes
// durable and how actions reach workers. The loop (Engine) is written once
// on top of it; runner/inmem, runner/zk and runner/kafka differ only in
// their Transport and in how they feed results to Engine.Apply.
//
// R is the per-call data a commit consumes: what the results it applies
// were holding, which the commit releases with the state it writes
// (runner/zk: the queue entries and claims of the actions whose results
// these are, deleted in the transition's multi-op). Engine.ApplyWith
// hands it to Commit as an argument, never through the context. A
// transport with nothing of the kind uses struct{}.
type Transport[R any] interface {
	// Commit makes a transition durable, dispatches its actions and arms
	// its timers. The job's new state is written first (Create for a
	// created job, else a compare-and-swap Save of the step on the version
	// it was made from), and the actions and timers go out only after it,
	// or atomically with it where the transport can (one ZooKeeper
	// multi-op). A transition that did not change the job is never
	// committed.
	//
	// Once the state is written, Commit tells the workers running the
	// actions in tr.Stops to stop (a deadline ran out, the job was
	// cancelled): it cancels their handlers' contexts, with cause
	// ErrStopped, where it can. Stopping is a courtesy: the reducer
	// ignores the results of stopped actions (job.IgnoredStopped), so a
	// transport that cannot reach a worker loses nothing by not trying.
	//
	// Errors: store.ErrConflict when the stored job is no longer the one
	// the transition was made from, store.ErrExists when a created job's ID
	// is taken, store.ErrNotFound when the job is gone: nothing was written
	// then. ErrNotDispatched (wrapped) when the state was written but the
	// actions may not all have been dispatched: the results that made the
	// transition are durable, and the actions are dispatched again when
	// those results are delivered again (Engine.Apply) or the job is
	// recovered. Any other error may or may not have written the state.
	//
	// consumed is what the results being applied consume (the zero R for
	// a created job, and for results that consume nothing): a commit
	// that writes the state releases it too, and one that writes nothing
	// leaves it as it was.
	Commit(ctx context.Context, tr job.Transition, consumed R) error

	// Dispatch hands actions to workers and arms timers again: the
	// outstanding actions and pending timers of a recovered job, whose
	// earlier dispatch may have been lost. It must be idempotent where the
	// transport can make it so (one queue entry per action key,
	// job.Action.Key; one timer per timer ID): an action already queued or
	// running is not queued again. Where it cannot, the action runs twice,
	// which at-least-once delivery allows; a timer that fires twice is
	// harmless (the second firing is ignored).
	//
	// An at-most-once action (job.Action.AtMostOnce) is never run twice:
	// one the transport does not hold (queued, or running under its
	// watch) may have run already, so the transport reports it failed with
	// kind job.KindLost (LostResult) instead of running it, and the leaf's
	// retry policy decides.
	Dispatch(ctx context.Context, actions []job.Action, timers []job.Timer) error
}

// JobDispatcher is implemented by a Transport whose stored jobs other
// processes move on concurrently (on ZooKeeper, any worker applies any
// job's results): DispatchJob is Dispatch of j's outstanding actions and
// timers, done only while the job is still stored at j's version, and
// ErrMoved, with nothing dispatched by it, once it is not. Without it, a
// recovery that loaded a job just before another worker applied one of
// its actions would queue that action again, and it would run twice
// (once after the job stopped waiting for it). The engine reloads the
// job and tries again on ErrMoved.
type JobDispatcher interface {
	DispatchJob(ctx context.Context, j job.Job, actions []job.Action, timers []job.Timer) error
}

// ErrMoved is returned by JobDispatcher.DispatchJob when the job is no
// longer stored at the version it was given.
var ErrMoved = errors.New("runner: the job moved on since it was loaded")

// LostResult returns the result a transport reports for an at-most-once
// action it cannot tell ran or not, seen at at: a failure of kind
// job.KindLost. It names no worker (job.Result.Worker is ""): the runner
// that reports it did not run the action, and the one that may have run
// it is not known in general (a recovery finds only that the action is
// outstanding and held by no one), so naming either would say the
// attempt ran where it may never have run; the kind says what happened.
func LostResult(a job.Action, at time.Time) job.Result {
	r := a.Fail("the runner cannot tell whether this at-most-once attempt ran, so it is not run again")
	r.Kind, r.At = job.KindLost, at
	return r
}

// ErrNotDispatched is wrapped by Commit's error when the transition's state
// was written but its actions may not have been dispatched.
var ErrNotDispatched = errors.New("runner: state saved, but its actions were not dispatched")

// ErrStopped is the cause (context.Cause) of a handler's context when the
// runner stopped the action because the reducer asked it to
// (job.Transition.Stops): a deadline above it ran out, or the job was
// cancelled. Its result, if it comes, changes nothing.
var ErrStopped = errors.New("runner: action stopped: a deadline ran out or the job was cancelled")

// Dispatcher hands actions to workers and arms timers, whose firings
// (job.Timer.Fire) it delivers when they are due.
type Dispatcher interface {
	Dispatch(ctx context.Context, actions []job.Action, timers []job.Timer) error
}

// Stopper is implemented by a Dispatcher that can stop actions in flight
// (job.Transition.Stops): SaveThenDispatch's Commit calls Stop after the
// state is saved. Stop is best effort and reports nothing: an action it
// cannot reach runs to its end, and its result is ignored.
type Stopper interface {
	Stop(ctx context.Context, actions []job.Action)
}

// DispatchFunc adapts a function to Dispatcher.
type DispatchFunc func(ctx context.Context, actions []job.Action, timers []job.Timer) error

// Dispatch calls f.
func (f DispatchFunc) Dispatch(ctx context.Context, actions []job.Action, timers []job.Timer) error {
	return f(ctx, actions, timers)
}

// SaveThenDispatch returns the Transport of a runner whose store and
// queues are apart: Commit stores the transition in st (store.Commit) and
// then dispatches its actions through d. If the dispatch fails, Commit's
// error wraps ErrNotDispatched. Its commits consume nothing.
func SaveThenDispatch(st store.Store, d Dispatcher) Transport[struct{}] {
	return saveThenDispatch{st, d}
}

type saveThenDispatch struct {
	st store.Store
	d  Dispatcher
}

func (t saveThenDispatch) Commit(ctx context.Context, tr job.Transition, _ struct{}) error {
	if err := store.Commit(ctx, t.st, tr); err != nil {
		return err
	}
	if s, ok := t.d.(Stopper); ok && len(tr.Stops) > 0 {
		s.Stop(ctx, tr.Stops)
	}
	if len(tr.Actions) == 0 && len(tr.Timers) == 0 {
		return nil
	}
	if err := t.d.Dispatch(ctx, tr.Actions, tr.Timers); err != nil {
		return fmt.Errorf("job %s v%d: %w: %w", tr.Job.ID(), tr.Job.Version(), ErrNotDispatched, err)
	}
	return nil
}

func (t saveThenDispatch) Dispatch(ctx context.Context, actions []job.Action, timers []job.Timer) error {
	return t.d.Dispatch(ctx, actions, timers)
}
