package runner

import (
	"context"
	"errors"
	"fmt"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/store"
)

// Transport is the seam a runner implements: how a transition becomes
// durable and how actions reach workers. The loop (Engine) is written once
// on top of it; runner/inmem, runner/zk and runner/kafka differ only in
// their Transport and in how they feed results to Engine.Apply.
type Transport interface {
	// Commit makes a transition durable and dispatches its actions. The
	// job's new state is written first (Create for a created job, else a
	// compare-and-swap Save of the step on the version it was made from),
	// and the actions are dispatched only after it, or atomically with it
	// where the transport can (one ZooKeeper multi-op). A transition that
	// did not change the job is never committed.
	//
	// Errors: store.ErrConflict when the stored job is no longer the one
	// the transition was made from, store.ErrExists when a created job's ID
	// is taken, store.ErrNotFound when the job is gone: nothing was written
	// then. ErrNotDispatched (wrapped) when the state was written but the
	// actions may not all have been dispatched: the results that made the
	// transition are durable, and the actions are dispatched again when
	// those results are delivered again (Engine.Apply) or the job is
	// recovered. Any other error may or may not have written the state.
	Commit(ctx context.Context, tr job.Transition) error

	// Dispatch hands actions to workers again: the outstanding actions of
	// a recovered job, whose earlier dispatch may have been lost. It must
	// be idempotent where the transport can make it so (one queue entry per
	// action key, job.Action.Key): an action already queued or running is
	// not queued again. Where it cannot, the action runs twice, which
	// at-least-once delivery allows.
	Dispatch(ctx context.Context, actions []job.Action) error
}

// ErrNotDispatched is wrapped by Commit's error when the transition's state
// was written but its actions may not have been dispatched.
var ErrNotDispatched = errors.New("runner: state saved, but its actions were not dispatched")

// Dispatcher hands actions to workers.
type Dispatcher interface {
	Dispatch(ctx context.Context, actions []job.Action) error
}

// DispatchFunc adapts a function to Dispatcher.
type DispatchFunc func(ctx context.Context, actions []job.Action) error

// Dispatch calls f.
func (f DispatchFunc) Dispatch(ctx context.Context, actions []job.Action) error {
	return f(ctx, actions)
}

// SaveThenDispatch returns the Transport of a runner whose store and
// queues are apart: Commit stores the transition in st (store.Commit) and
// then dispatches its actions through d. If the dispatch fails, Commit's
// error wraps ErrNotDispatched.
func SaveThenDispatch(st store.Store, d Dispatcher) Transport {
	return saveThenDispatch{st, d}
}

type saveThenDispatch struct {
	st store.Store
	d  Dispatcher
}

func (t saveThenDispatch) Commit(ctx context.Context, tr job.Transition) error {
	if err := store.Commit(ctx, t.st, tr); err != nil {
		return err
	}
	if len(tr.Actions) == 0 {
		return nil
	}
	if err := t.d.Dispatch(ctx, tr.Actions); err != nil {
		return fmt.Errorf("job %s v%d: %w: %w", tr.Job.ID(), tr.Job.Version(), ErrNotDispatched, err)
	}
	return nil
}

func (t saveThenDispatch) Dispatch(ctx context.Context, actions []job.Action) error {
	return t.d.Dispatch(ctx, actions)
}
