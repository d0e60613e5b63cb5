package runner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/store"
)

// Dispatcher hands actions to workers. It is the seam a transport
// implements. Dispatch is called only after the job that produced the
// actions was saved; it must not return before the actions are durable in
// the transport (or, for an in-process transport, queued), so that an
// acknowledged result is never lost with its successors.
type Dispatcher interface {
	Dispatch(ctx context.Context, actions []job.Action) error
}

// DispatchFunc adapts a function to Dispatcher.
type DispatchFunc func(ctx context.Context, actions []job.Action) error

// Dispatch calls f.
func (f DispatchFunc) Dispatch(ctx context.Context, actions []job.Action) error {
	return f(ctx, actions)
}

// EngineOptions configures an Engine.
type EngineOptions struct {
	Store      store.Store // required
	Dispatcher Dispatcher  // required
	Registry   *Registry   // if set, Submit refuses workflows naming unknown actions
	Logger     *slog.Logger
	Hooks      *Hooks
	// ConflictRetries bounds how often Apply reloads and retries after
	// store.ErrConflict; default 16.
	ConflictRetries int
}

// Engine is the runner loop written once: it loads a job, applies results
// with job.Restart, saves the new state with optimistic concurrency, and
// only then dispatches the new actions. It is safe for concurrent use:
// concurrent Applies to the same job are serialised by the store's
// compare-and-swap (the loser reloads and retries).
type Engine struct {
	o   EngineOptions
	log *slog.Logger
}

// ErrUnknownActions is returned (wrapped, with the names) by Submit when the
// workflow names actions that have no handler.
var ErrUnknownActions = errors.New("runner: workflow uses actions with no handler")

// NewEngine returns an engine. Store and Dispatcher are required.
func NewEngine(o EngineOptions) (*Engine, error) {
	if o.Store == nil || o.Dispatcher == nil {
		return nil, errors.New("runner: NewEngine needs a Store and a Dispatcher")
	}
	if o.ConflictRetries <= 0 {
		o.ConflictRetries = 16
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Engine{o: o, log: log}, nil
}

// Submit starts a new job: job.New, store.Create, then dispatch of the
// first actions. An invalid workflow, a workflow naming actions without a
// handler (when the engine has a Registry), or an ID already in use is an
// error and nothing is stored.
func (e *Engine) Submit(ctx context.Context, id job.ID, root ast.Node) (job.Job, error) {
	if e.o.Registry != nil {
		if missing := e.o.Registry.Missing(root); len(missing) > 0 {
			return job.Job{}, fmt.Errorf("job %s: %w: %q (registered: %q)", id, ErrUnknownActions, missing, e.o.Registry.Names())
		}
	}
	j, acts, err := job.New(id, root)
	if err != nil {
		return job.Job{}, err
	}
	if err := e.o.Store.Create(ctx, j); err != nil {
		return job.Job{}, fmt.Errorf("job %s: %w", id, err)
	}
	e.o.Hooks.step(j, len(acts))
	if j.Done() {
		e.o.Hooks.jobDone(j)
	}
	if err := e.o.Dispatcher.Dispatch(ctx, acts); err != nil {
		return j, fmt.Errorf("job %s: stored, but dispatch failed (recovery will dispatch again): %w", id, err)
	}
	return j, nil
}

// Apply applies a batch of results to job id: load, Restart, save, then
// dispatch. It returns the job as saved (or as loaded, when no result
// applied). When Apply returns nil the results are durable in the store
// and the transport may acknowledge them. On store.ErrConflict it reloads
// and retries, so a result that another runner applied meanwhile is simply
// ignored as a duplicate.
//
// If dispatch fails after the save, Apply returns the error: the job is
// saved, its new actions are outstanding, and Recover dispatches them.
func (e *Engine) Apply(ctx context.Context, id job.ID, results []job.Result) (job.Job, error) {
	if len(results) == 0 {
		return job.Job{}, fmt.Errorf("job %s: Apply with no results (use Recover to re-dispatch)", id)
	}
	for attempt := 0; ; attempt++ {
		j, err := e.o.Store.Load(ctx, id)
		if err != nil {
			return job.Job{}, fmt.Errorf("job %s: load: %w", id, err)
		}
		next, acts, err := job.Restart(j, results)
		if err != nil {
			return j, err
		}
		for _, ig := range next.Ignored() {
			lvl := slog.LevelDebug
			if ig.Reason == job.IgnoredUnknown {
				lvl = slog.LevelWarn
			}
			e.log.Log(ctx, lvl, "result ignored", "job", id, "action", ig.Result.ActionID, "reason", ig.Reason.String(), "detail", ig.Detail)
			e.o.Hooks.ignored(id, ig)
		}
		if next.Version() == j.Version() {
			return next, nil // nothing applied; nothing to save
		}
		err = e.o.Store.Save(ctx, next)
		if errors.Is(err, store.ErrConflict) && attempt < e.o.ConflictRetries {
			e.log.Debug("save conflict; reloading", "job", id, "attempt", attempt+1)
			continue
		}
		if err != nil {
			return j, fmt.Errorf("job %s: save v%d: %w", id, next.Version(), err)
		}
		e.o.Hooks.step(next, len(acts))
		if next.Done() {
			e.o.Hooks.jobDone(next)
			e.log.Info("job finished", "job", id, "status", next.Status().String(), "version", next.Version())
		}
		if err := e.o.Dispatcher.Dispatch(ctx, acts); err != nil {
			return next, fmt.Errorf("job %s: v%d saved, but dispatch failed (recovery will dispatch again): %w", id, next.Version(), err)
		}
		return next, nil
	}
}

// Recover dispatches again the outstanding actions of every unfinished job
// in the store (job.Restart(stored, nil)). A runner calls it when it
// starts, to resume after a crash; actions may then run twice, which
// at-least-once delivery allows. skip, if not nil, filters out actions the
// caller knows to be in flight already; pick, if not nil, chooses the jobs
// to resume. It returns how many jobs it resumed and how many actions it
// dispatched.
func (e *Engine) Recover(ctx context.Context, pick func(store.Info) bool, skip func(job.Action) bool) (jobs, actions int, err error) {
	infos, err := e.o.Store.List(ctx)
	if err != nil {
		return 0, 0, fmt.Errorf("recover: list jobs: %w", err)
	}
	var errs []error
	for _, in := range infos {
		if in.Status.Settled() || (pick != nil && !pick(in)) {
			continue
		}
		j, err := e.o.Store.Load(ctx, in.ID)
		if err != nil {
			errs = append(errs, fmt.Errorf("recover job %s: %w", in.ID, err))
			continue
		}
		_, acts, err := job.Restart(j, nil)
		if err != nil {
			errs = append(errs, fmt.Errorf("recover job %s: %w", in.ID, err))
			continue
		}
		if skip != nil {
			kept := acts[:0]
			for _, a := range acts {
				if !skip(a) {
					kept = append(kept, a)
				}
			}
			acts = kept
		}
		if err := e.o.Dispatcher.Dispatch(ctx, acts); err != nil {
			errs = append(errs, fmt.Errorf("recover job %s: dispatch: %w", in.ID, err))
			continue
		}
		jobs++
		actions += len(acts)
		e.log.Info("job resumed", "job", in.ID, "version", j.Version(), "actions", len(acts))
	}
	return jobs, actions, errors.Join(errs...)
}
