package runner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/store"
)

// EngineOptions configures an Engine whose commits consume per-call data
// of type R (see Transport).
type EngineOptions[R any] struct {
	Store     store.Store  // loads jobs; required
	Transport Transport[R] // commits transitions and dispatches; required
	// Registry, if set, makes Submit refuse, and Recover leave alone,
	// workflows naming actions that have no handler in it.
	Registry *Registry
	Logger   *slog.Logger // nil discards
	Hooks    *Hooks       // may be nil
	// ConflictRetries bounds how often Apply reloads and retries after
	// store.ErrConflict; default 16.
	ConflictRetries int
	// Now is the clock: a job's start time. Nil means time.Now.
	Now func() time.Time
}

// Engine is the runner loop written once:
//
//	load -> job.Restart -> Transport.Commit (state, then or with actions)
//
// It is safe for concurrent use: concurrent Applies to one job are
// serialised by the store's compare-and-swap (the loser reloads and
// retries, and finds its results already applied).
//
// R is what the results of one ApplyWith consume, handed to every
// Transport.Commit it makes (see Transport); runners with nothing of the
// kind use struct{}.
type Engine[R any] struct {
	o   EngineOptions[R]
	log *slog.Logger
}

// ErrUnknownActions is wrapped, with the names, by the error Submit returns
// for a workflow naming actions with no handler, and by Recover's for a
// stored job that does.
var ErrUnknownActions = errors.New("runner: workflow uses actions with no handler")

// NewEngine returns an engine. Store and Transport are required.
func NewEngine[R any](o EngineOptions[R]) (*Engine[R], error) {
	if o.Store == nil || o.Transport == nil {
		return nil, errors.New("runner: NewEngine needs a Store and a Transport")
	}
	if o.ConflictRetries <= 0 {
		o.ConflictRetries = 16
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Engine[R]{o: o, log: log}, nil
}

// CheckHandlers returns an error wrapping ErrUnknownActions, naming the
// job and the actions, if the workflow at root uses actions that reg has
// no handler for; nil if it has them all, or if reg is nil. It is the
// check Submit, Create and Recover make with EngineOptions.Registry; a
// runner that checks a workflow where it is submitted, apart from the
// engine that creates the job (runner/kafka), calls it there.
func CheckHandlers(reg *Registry, id job.ID, root ast.Node) error {
	if reg == nil {
		return nil
	}
	if missing := reg.Missing(root); len(missing) > 0 {
		return fmt.Errorf("job %s: %w: %q (registered: %q)", id, ErrUnknownActions, missing, reg.Names())
	}
	return nil
}

// missing returns CheckHandlers' error for the engine's registry.
func (e *Engine[R]) missing(id job.ID, root ast.Node) error {
	return CheckHandlers(e.o.Registry, id, root)
}

// Submit starts a new job: job.New with a random incarnation and the
// engine's clock as its start, then Create. An invalid workflow, a
// workflow naming actions without a handler (when the engine has a
// Registry), or an ID already in use (store.ErrExists) is an error and
// nothing is stored.
func (e *Engine[R]) Submit(ctx context.Context, id job.ID, root ast.Node) (job.Transition, error) {
	start := e.o.Hooks.commitStart()
	if err := e.missing(id, root); err != nil {
		return job.Transition{}, err
	}
	tr, err := job.New(id, root, job.WithIncarnation(incarnation()), job.StartedAt(e.o.Now()))
	if err != nil {
		return job.Transition{}, err
	}
	return e.create(ctx, tr, start)
}

// Create commits tr, the transition job.New made for a new job: it
// checks the workflow against the Registry (as Submit does), commits
// (Transport.Commit with R's zero value: a new job consumes nothing),
// which creates the job and dispatches its first actions, and tells the
// hooks and the log. Submit makes tr itself; a runner whose jobs are
// made elsewhere calls Create (runner/kafka makes each from its submit
// message, with the message's incarnation and start, so that a message
// read twice makes the same job).
//
// Errors name the job: a transition that does not create a job, a
// workflow naming actions without a handler, or store.ErrExists when its
// ID is taken, and nothing was stored; one wrapping ErrNotDispatched
// when the job was created but its first actions may not have been
// dispatched (recovery dispatches them), with tr returned; any other
// Commit error.
func (e *Engine[R]) Create(ctx context.Context, tr job.Transition) (job.Transition, error) {
	start := e.o.Hooks.commitStart()
	id := tr.Job.ID()
	if !tr.Created() {
		return job.Transition{}, fmt.Errorf("job %s: Create of a transition that makes version %d, not a new job", id, tr.Job.Version())
	}
	if err := e.missing(id, tr.Job.Workflow()); err != nil {
		return job.Transition{}, err
	}
	return e.create(ctx, tr, start)
}

// create is Create once the checks passed, which began at start.
func (e *Engine[R]) create(ctx context.Context, tr job.Transition, start time.Time) (job.Transition, error) {
	id := tr.Job.ID()
	var none R // a new job consumes nothing
	if err := e.o.Transport.Commit(ctx, tr, none); err != nil && !errors.Is(err, ErrNotDispatched) {
		if namesJob(err, id) {
			return job.Transition{}, err
		}
		return job.Transition{}, fmt.Errorf("job %s: %w", id, err)
	} else if err != nil {
		e.committed(ctx, tr, start, false)
		return tr, fmt.Errorf("job %s: created, but %w (recovery dispatches them)", id, err)
	}
	e.committed(ctx, tr, start, true)
	return tr, nil
}

// incarnation draws a job's incarnation: random, never 0.
func incarnation() uint64 {
	for {
		if n := rand.Uint64(); n != 0 {
			return n
		}
	}
}

// committed tells the hooks and the log about a committed transition,
// whose Submit, Create or Apply began at start, and whose actions were dispatched
// unless the commit said ErrNotDispatched.
func (e *Engine[R]) committed(ctx context.Context, tr job.Transition, start time.Time, dispatched bool) {
	if !start.IsZero() {
		e.o.Hooks.committed(tr, time.Since(start))
	}
	if dispatched {
		e.o.Hooks.dispatched(tr.Actions)
	}
	e.o.Hooks.step(tr.Job, len(tr.Actions))
	logTimers(ctx, e.log, tr.Timers)
	if tr.Job.Done() {
		logFinished(ctx, e.log, tr.Job)
		e.o.Hooks.jobDone(tr.Job)
	}
}

// Apply applies a batch of results to job id that consume nothing:
// ApplyWith with R's zero value.
func (e *Engine[R]) Apply(ctx context.Context, id job.ID, results []job.Result) (job.Transition, error) {
	var none R
	return e.ApplyWith(ctx, id, results, none)
}

// ApplyWith applies a batch of results to job id: load, job.Restart,
// Commit, which gets consumed (what these results consume, written or
// released by the commit that applies them: see Transport.Commit).
// It returns the transition committed, or, when no result applied, one
// that changed nothing. When Apply returns nil, or an error wrapping
// ErrNotDispatched, the results are durable and the transport may
// acknowledge them.
//
// On store.ErrConflict it reloads and retries (at most
// EngineOptions.ConflictRetries times, and never after ctx ends), so a
// result that another runner applied meanwhile is ignored as a duplicate.
//
// Redelivery re-dispatches: when no result applied and some were ignored
// as duplicates or stale (results delivered again, after a crash or a
// failed dispatch), Apply dispatches the job's outstanding actions again
// through Transport.Dispatch, so actions whose dispatch was lost after the
// state was saved are never stranded.
//
// Errors name the job. A result for another job is an error wrapping
// job.ErrWrongJob; a missing job wraps store.ErrNotFound.
//
// Apply keeps no reference to results once it returns (the job keeps
// their Output bytes, see job.Restart): the caller may reuse the slice.
//
// With a store that implements Cache, the first attempt starts from the
// job the store holds in memory, with no read: when that copy is stale,
// the commit's compare-and-swap fails, and Apply loads the job and tries
// again; when the results change nothing on it, Apply loads the job and
// looks again before it concludes anything.
func (e *Engine[R]) ApplyWith(ctx context.Context, id job.ID, results []job.Result, consumed R) (job.Transition, error) {
	if len(results) == 0 {
		return job.Transition{}, fmt.Errorf("job %s: Apply with no results (Recover dispatches a job's outstanding actions)", id)
	}
	start := e.o.Hooks.commitStart()
	cache, _ := e.o.Store.(Cache)
	for attempt := 0; ; attempt++ {
		if cache != nil {
			if j, ok := cache.Cached(id); ok {
				cache = nil // once
				if tr, err := job.Restart(j, results); err == nil && tr.Changed() {
					err = e.o.Transport.Commit(ctx, tr, consumed)
					switch {
					case err == nil:
						e.reportIgnored(ctx, id, tr.Ignored)
						e.journalIgnored(ctx, id, tr.Job.Version(), tr.Ignored)
						e.committed(ctx, tr, start, true)
						return tr, nil
					case errors.Is(err, ErrNotDispatched):
						e.reportIgnored(ctx, id, tr.Ignored)
						e.journalIgnored(ctx, id, tr.Job.Version(), tr.Ignored)
						e.committed(ctx, tr, start, false)
						return tr, fmt.Errorf("job %s: %w", id, err)
					case !errors.Is(err, store.ErrConflict):
						return job.Transition{}, commitErr(id, tr.Job.Version(), err)
					}
					e.log.LogAttrs(ctx, slog.LevelDebug, "commit conflict; reloading", slog.String("job", string(id)), slog.Int("attempt", 0), slog.Bool("cached", true))
				}
				// Stale, or nothing to commit: load, and decide on that.
			}
		}
		j, err := e.o.Store.Load(ctx, id)
		if err != nil {
			return job.Transition{}, fmt.Errorf("job %s: load: %w", id, err)
		}
		tr, err := job.Restart(j, results)
		if err != nil {
			return job.Transition{}, err
		}
		e.reportIgnored(ctx, id, tr.Ignored)
		if !tr.Changed() {
			e.journalIgnored(ctx, id, j.Version(), tr.Ignored)
			if redelivered(tr.Ignored) && !j.Done() {
				if _, _, err := e.dispatchAgain(ctx, j); err != nil {
					return tr, fmt.Errorf("job %s: re-dispatch after redelivered results: %w", id, err)
				}
			}
			return tr, nil
		}
		err = e.o.Transport.Commit(ctx, tr, consumed)
		switch {
		case err == nil:
			e.journalIgnored(ctx, id, tr.Job.Version(), tr.Ignored)
			e.committed(ctx, tr, start, true)
			return tr, nil
		case errors.Is(err, ErrNotDispatched):
			e.journalIgnored(ctx, id, tr.Job.Version(), tr.Ignored)
			e.committed(ctx, tr, start, false)
			return tr, fmt.Errorf("job %s: %w", id, err)
		case errors.Is(err, store.ErrConflict) && attempt < e.o.ConflictRetries && ctx.Err() == nil:
			e.log.LogAttrs(ctx, slog.LevelDebug, "commit conflict; reloading", slog.String("job", string(id)), slog.Int("attempt", attempt+1))
			// Appliers in other processes that keep colliding on one job
			// take turns: from the second conflict on, each waits a
			// random while, longer each time (up to 64 ms).
			if attempt > 0 {
				d := time.Duration(rand.Int64N(int64(time.Millisecond) << min(attempt, 6)))
				t := time.NewTimer(d)
				select {
				case <-t.C:
				case <-ctx.Done():
				}
				t.Stop()
			}
			continue
		}
		return job.Transition{}, commitErr(id, tr.Job.Version(), err)
	}
}

// Cache is implemented by a store that keeps in memory the jobs it last
// loaded or saved. Cached returns that copy without reading anything; it
// may be stale (another process saved the job since), and a transition
// made from a stale copy must fail to save with store.ErrConflict, as any
// compare-and-swap store's does. Engine.Apply starts from it.
type Cache interface {
	Cached(id job.ID) (job.Job, bool)
}

// ErrFinished is wrapped by the error Cancel returns for a job that has
// finished already: there is nothing left to cancel.
var ErrFinished = errors.New("runner: the job has finished")

// Cancel cancels job id with reason (job.Cancel) through Apply: nothing
// new starts in it except the finally blocks of tries already entered,
// its actions in flight are told to stop, and it ends cancelled, with
// the reason, once those finally blocks settle. Cancelling a cancelled
// job again changes nothing and is not an error, also once it has ended.
// A job that has finished otherwise is an error wrapping ErrFinished; a
// reason is required.
//
// A runner that serialises the results of a job (runner/inmem) hands in
// job.CancelResult like any result instead.
func (e *Engine[R]) Cancel(ctx context.Context, id job.ID, reason string) (job.Transition, error) {
	if reason == "" {
		return job.Transition{}, fmt.Errorf("job %s: cancel needs a reason", id)
	}
	j, err := e.o.Store.Load(ctx, id)
	if err != nil {
		return job.Transition{}, fmt.Errorf("job %s: load: %w", id, err)
	}
	if _, cancelled := j.Cancelled(); cancelled {
		return job.Transition{Job: j}, nil
	}
	if j.Done() {
		return job.Transition{Job: j}, fmt.Errorf("job %s: cancel: %w (%s)", id, ErrFinished, j.Status())
	}
	res := job.CancelResult(id, reason)
	res.At = e.o.Now().UTC() // when the cancel was made: the history and the API tell it
	return e.Apply(ctx, id, []job.Result{res})
}

// redelivered reports whether some ignored results were delivered
// before. A signal sent again is not one: its sender repeats it by
// design, and it says nothing about a dispatch lost.
func redelivered(ig []job.Ignored) bool {
	for _, x := range ig {
		if _, signal := x.Result.AsSignal(); signal {
			continue
		}
		if x.Reason == job.IgnoredDuplicate || x.Reason == job.IgnoredStale {
			return true
		}
	}
	return false
}

func (e *Engine[R]) reportIgnored(ctx context.Context, id job.ID, ig []job.Ignored) {
	for _, x := range ig {
		lvl := slog.LevelDebug
		if x.Reason == job.IgnoredUnknown {
			lvl = slog.LevelWarn
		}
		e.log.LogAttrs(ctx, lvl, "result ignored", slog.String("job", string(id)), slog.String("action", x.Result.ActionID),
			slog.String("reason", x.Reason.String()), slog.String("detail", x.Detail))
		e.o.Hooks.ignored(id, x)
	}
}

// journalIgnored journals the results a transition ignored at version v
// (the version it made, or the job's when it applied nothing) in a store
// that keeps them (store.IgnoreJournal), after the transition's commit,
// so that the history shows them. A failure is logged, not returned: the
// results were ignored either way; the history only misses them.
func (e *Engine[R]) journalIgnored(ctx context.Context, id job.ID, v uint64, ig []job.Ignored) {
	if len(ig) == 0 {
		return
	}
	err := store.JournalIgnored(ctx, e.o.Store, id, store.IgnoredOf(v, ig))
	if err != nil && !errors.Is(err, errors.ErrUnsupported) {
		lvl := slog.LevelWarn
		if errors.Is(err, store.ErrNotFound) {
			lvl = slog.LevelDebug // deleted meanwhile
		}
		e.log.LogAttrs(ctx, lvl, "ignored results not journaled", slog.String("job", string(id)), slog.Int("results", len(ig)), slog.Any("error", err))
	}
}

// Recover dispatches again the outstanding actions, and arms again the
// pending timers, of the jobs named: what a runner does for the jobs it
// takes over after a crash or a restart. A finished job has none. (The
// transport does not run again an at-most-once action it does not hold:
// see Transport.Dispatch.) A job naming actions with no handler in the engine's
// Registry is left untouched, with an error wrapping ErrUnknownActions:
// resuming it here would fail those actions for good.
//
// It returns how many actions it dispatched, and the errors of the jobs it
// could not recover, joined, each naming its job; the other jobs are
// recovered all the same.
func (e *Engine[R]) Recover(ctx context.Context, ids ...job.ID) (int, error) {
	var errs []error
	n := 0
	for _, id := range ids {
		if err := ctx.Err(); err != nil {
			errs = append(errs, fmt.Errorf("recover: %w", err))
			break
		}
		j, err := e.o.Store.Load(ctx, id)
		if err != nil {
			errs = append(errs, fmt.Errorf("recover job %s: %w", id, err))
			continue
		}
		k, err := e.RecoverJob(ctx, j)
		n += k
		if err != nil {
			errs = append(errs, err)
		}
	}
	return n, errors.Join(errs...)
}

// RecoverJob is Recover of one job already loaded: it dispatches again
// j's outstanding actions and arms again its timers, and returns how many
// actions it dispatched.
func (e *Engine[R]) RecoverJob(ctx context.Context, j job.Job) (int, error) {
	id := j.ID()
	if j.Done() {
		return 0, nil
	}
	if err := e.missing(id, j.Workflow()); err != nil {
		return 0, fmt.Errorf("recover %w; left as it is", err)
	}
	j, acts, err := e.dispatchAgain(ctx, j)
	if err != nil {
		return 0, fmt.Errorf("recover job %s: dispatch: %w", id, err)
	}
	if acts == nil {
		return 0, nil // it ended meanwhile
	}
	e.log.LogAttrs(ctx, slog.LevelInfo, "job resumed", slog.String("job", string(id)),
		slog.Uint64("version", j.Version()), slog.Int("actions", len(acts)))
	return len(acts), nil
}

// dispatchAgain dispatches again j's outstanding actions and its timers.
// Through a JobDispatcher it does so only while j is still stored at its
// version: when the job moved on, it loads it again and dispatches what
// that version has outstanding (at most ConflictRetries times more). It
// returns the job it dispatched from and the actions dispatched (nil if
// the job ended meanwhile).
func (e *Engine[R]) dispatchAgain(ctx context.Context, j job.Job) (job.Job, []job.Action, error) {
	jd, guarded := e.o.Transport.(JobDispatcher)
	for attempt := 0; ; attempt++ {
		acts := j.Outstanding()
		var err error
		if guarded {
			err = jd.DispatchJob(ctx, j, acts, j.Timers())
		} else {
			err = e.o.Transport.Dispatch(ctx, acts, j.Timers())
		}
		if !errors.Is(err, ErrMoved) {
			if err != nil {
				return j, nil, err
			}
			e.o.Hooks.dispatched(acts)
			if acts == nil {
				acts = []job.Action{}
			}
			return j, acts, nil
		}
		if attempt >= e.o.ConflictRetries || ctx.Err() != nil {
			return j, nil, err
		}
		if j, err = e.o.Store.Load(ctx, j.ID()); err != nil {
			return j, nil, err
		}
		if j.Done() {
			return j, nil, nil
		}
	}
}

// namesJob reports whether err says which job it is about already, as a
// store's errors do ("store/bolt: PATH: job ID: ..."), so that a caller
// does not name it again.
func namesJob(err error, id job.ID) bool {
	return strings.Contains(err.Error(), "job "+string(id)+":")
}

// commitErr is the error of a commit of version v of job id.
func commitErr(id job.ID, v uint64, err error) error {
	if namesJob(err, id) {
		return fmt.Errorf("commit v%d: %w", v, err)
	}
	return fmt.Errorf("job %s: commit v%d: %w", id, v, err)
}
