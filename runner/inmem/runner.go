package inmem

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	"github.com/batonwf/baton/store"
)

// Options configures a Runner.
type Options struct {
	// Store keeps the jobs; nil means a new store.NewMemory(). Use
	// store/bolt for jobs that survive the process.
	Store store.Store
	// Registry holds the handlers; required.
	Registry *runner.Registry
	// Workers bounds how many actions run at once; default 16.
	Workers int
	// ActionTimeout bounds each action; 0 means no limit.
	ActionTimeout time.Duration
	// DrainTimeout is how long actions in flight may finish after Run's
	// context ends; default 10s. Negative means hand them back at once.
	DrainTimeout time.Duration
	// MaxBatch bounds the results applied in one Restart; default 4096.
	MaxBatch int
	// Logger receives the runner's logs; nil discards them.
	Logger *slog.Logger
	// Hooks observes actions and steps; may be nil.
	Hooks *runner.Hooks
	// Resume picks which unfinished jobs in the store Run resumes when it
	// starts; nil resumes them all. Jobs submitted to this runner run
	// whatever it says.
	Resume func(store.Info) bool
}

// Errors of the runner.
var (
	ErrClosed  = errors.New("inmem: runner closed")
	ErrRunning = errors.New("inmem: Run already called")
)

// Runner runs jobs in this process. Its methods are safe for concurrent
// use. Submit, Deliver, Wait and Status work before Run is called (actions
// wait in the queue until Run starts workers).
//
// There is no restarter goroutine. A worker that finishes an action applies
// its result itself, unless another goroutine is already applying results
// of that job, in which case it leaves the result with that one, which
// applies everything that piled up in one Restart and one save (combining).
// So a sequence costs no hand-off between goroutines (the worker also keeps
// the first action its own step dispatched, and runs it next), and a
// parallel fan-out is applied in batches as large as the backlog.
type Runner struct {
	o    Options
	log  *slog.Logger
	eng  *runner.Engine
	acts *fifo[job.Action]

	// recovering is held for writing while Run resumes jobs, and for
	// reading by Submit and Deliver, so that nothing is dispatched twice
	// by a recovery that runs at the same time.
	recovering sync.RWMutex

	// Until recovery is over, inflight records the actions dispatched
	// (by a Submit before Run), so that recovery does not dispatch them
	// again. After it, nothing needs them and nothing records them.
	trackMu   sync.Mutex
	recovered atomic.Bool
	inflight  map[actionKey]struct{}

	pendMu  sync.Mutex
	pending map[job.ID]*pending // results waiting to be applied

	mu      sync.Mutex
	waiters map[job.ID][]chan struct{}
	started bool
	closed  bool
	stop    context.CancelFunc // stops Run
	stopped chan struct{}      // closed when Run returns
}

type actionKey struct {
	job job.ID
	id  string
}

func keyOf(a job.Action) actionKey { return actionKey{a.JobID, a.ID} }

// pending holds the results of one job that wait to be applied, and
// whether some goroutine is applying them.
type pending struct {
	results []job.Result
	busy    bool
}

// New returns a runner. It does not start it: call Run.
func New(o Options) (*Runner, error) {
	if o.Registry == nil {
		return nil, errors.New("inmem: Options.Registry is required")
	}
	if o.Store == nil {
		o.Store = store.NewMemory()
	}
	if o.Workers <= 0 {
		o.Workers = 16
	}
	if o.DrainTimeout == 0 {
		o.DrainTimeout = 10 * time.Second
	}
	if o.MaxBatch <= 0 {
		o.MaxBatch = 4096
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	r := &Runner{
		o: o, log: log,
		acts:     newFifo[job.Action](),
		inflight: map[actionKey]struct{}{},
		pending:  map[job.ID]*pending{},
		waiters:  map[job.ID][]chan struct{}{},
		stopped:  make(chan struct{}),
	}
	hooks := *nonNil(o.Hooks)
	userDone := hooks.JobDone
	hooks.JobDone = func(j job.Job) {
		r.notifyDone(j.ID())
		if userDone != nil {
			userDone(j)
		}
	}
	eng, err := runner.NewEngine(runner.EngineOptions{
		Store:      o.Store,
		Dispatcher: runner.DispatchFunc(r.dispatch),
		Registry:   o.Registry,
		Logger:     log,
		Hooks:      &hooks,
	})
	if err != nil {
		return nil, err
	}
	r.eng = eng
	return r, nil
}

func nonNil(h *runner.Hooks) *runner.Hooks {
	if h == nil {
		return &runner.Hooks{}
	}
	return h
}

// Store returns the runner's store.
func (r *Runner) Store() store.Store { return r.o.Store }

// slotKey marks a context whose Apply runs on a worker: the worker keeps
// the first action dispatched, to run it next without a hand-off.
type slotKey struct{}

type slot struct {
	next job.Action
	full bool
}

func (r *Runner) dispatch(ctx context.Context, acts []job.Action) error {
	if len(acts) == 0 {
		return nil
	}
	if !r.recovered.Load() {
		r.trackMu.Lock()
		for _, a := range acts {
			r.inflight[keyOf(a)] = struct{}{}
		}
		r.trackMu.Unlock()
	}
	// A worker keeps the first action for itself when nothing else waits,
	// so a sequence runs without a hand-off; when others wait, it takes its
	// turn in the queue.
	if s, ok := ctx.Value(slotKey{}).(*slot); ok && !s.full && r.acts.empty() {
		s.next, s.full = acts[0], true
		acts = acts[1:]
	}
	r.acts.push(acts...)
	return nil
}

// Submit starts a job. It fails if the workflow is invalid, names an
// action with no handler, or the ID is taken.
func (r *Runner) Submit(ctx context.Context, id job.ID, root ast.Node) error {
	if r.isClosed() {
		return ErrClosed
	}
	r.recovering.RLock()
	defer r.recovering.RUnlock()
	_, err := r.eng.Submit(ctx, id, root)
	return err
}

// Deliver hands in results from outside, for actions completed by another
// system (or again, to test idempotence). A result for a job that is not in
// the store is an error. The results are applied before Deliver returns,
// unless another goroutine is applying results of the same job, which then
// applies them too.
func (r *Runner) Deliver(ctx context.Context, results ...job.Result) error {
	if r.isClosed() {
		return ErrClosed
	}
	checked := map[job.ID]bool{}
	for _, res := range results {
		if checked[res.JobID] {
			continue
		}
		if _, err := r.o.Store.Load(ctx, res.JobID); err != nil {
			return fmt.Errorf("inmem: deliver result for %s %s: %w", res.JobID, res.ActionID, err)
		}
		checked[res.JobID] = true
	}
	r.recovering.RLock()
	defer r.recovering.RUnlock()
	r.report(context.Background(), results...)
	return nil
}

// report hands in results: they join their jobs' pending results, and for
// each job whose results no goroutine is applying, this one does, until
// none are left.
func (r *Runner) report(ctx context.Context, rs ...job.Result) {
	var claimed [maxShare]job.ID
	mine := claimed[:0] // jobs whose results this goroutine applies
	r.pendMu.Lock()
	for _, res := range rs {
		p := r.pending[res.JobID]
		if p == nil {
			p = &pending{}
			r.pending[res.JobID] = p
		}
		p.results = append(p.results, res)
		if !p.busy {
			p.busy = true
			mine = append(mine, res.JobID)
		}
	}
	r.pendMu.Unlock()
	for _, id := range mine {
		r.applyPending(ctx, id)
	}
}

// applyPending applies the pending results of job id, which this goroutine
// has claimed, until none are left.
func (r *Runner) applyPending(ctx context.Context, id job.ID) {
	r.pendMu.Lock()
	p := r.pending[id]
	for {
		batch := p.results
		if len(batch) > r.o.MaxBatch {
			batch = batch[:r.o.MaxBatch:r.o.MaxBatch]
			p.results = p.results[r.o.MaxBatch:]
		} else {
			p.results = nil
		}
		if len(batch) == 0 {
			p.busy = false
			delete(r.pending, id)
			r.pendMu.Unlock()
			return
		}
		r.pendMu.Unlock()
		r.applyJob(ctx, id, batch)
		r.pendMu.Lock()
	}
}

// Status returns the newest stored state of a job.
func (r *Runner) Status(ctx context.Context, id job.ID) (job.Job, error) {
	return r.o.Store.Load(ctx, id)
}

// Wait blocks until job id has finished, or ctx ends, and returns the
// finished job. The job's own failure is not an error: check its Status.
func (r *Runner) Wait(ctx context.Context, id job.ID) (job.Job, error) {
	ch := make(chan struct{}, 1)
	r.mu.Lock()
	r.waiters[id] = append(r.waiters[id], ch)
	r.mu.Unlock()
	defer r.dropWaiter(id, ch)
	for {
		j, err := r.o.Store.Load(ctx, id)
		if err != nil {
			return job.Job{}, err
		}
		if j.Done() {
			return j, nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return j, fmt.Errorf("inmem: wait for job %s: %w", id, ctx.Err())
		}
	}
}

func (r *Runner) dropWaiter(id job.ID, ch chan struct{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ws := r.waiters[id]
	for i, w := range ws {
		if w == ch {
			ws = append(ws[:i], ws[i+1:]...)
			break
		}
	}
	if len(ws) == 0 {
		delete(r.waiters, id)
	} else {
		r.waiters[id] = ws
	}
}

func (r *Runner) notifyDone(id job.ID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, ch := range r.waiters[id] {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

func (r *Runner) isClosed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.closed
}

// Run resumes the unfinished jobs in the store, then runs actions and
// applies results until ctx ends or Close is called. It returns nil after a
// clean shutdown (see the package doc for what happens to actions in
// flight), at once if Close came first, and ErrRunning if called twice.
func (r *Runner) Run(ctx context.Context) error {
	r.mu.Lock()
	switch {
	case r.closed:
		r.mu.Unlock()
		return nil // closed before it ran: stop at once, as Close asks
	case r.started:
		r.mu.Unlock()
		return ErrRunning
	}
	r.started = true
	ctx, cancel := context.WithCancel(ctx)
	r.stop = cancel
	r.mu.Unlock()
	defer close(r.stopped)
	defer cancel()

	r.recovering.Lock()
	jobs, acts, err := r.eng.Recover(ctx, r.o.Resume, func(a job.Action) bool {
		r.trackMu.Lock()
		defer r.trackMu.Unlock()
		_, ok := r.inflight[keyOf(a)]
		return ok
	})
	r.trackMu.Lock()
	r.recovered.Store(true)
	r.inflight = nil
	r.trackMu.Unlock()
	r.recovering.Unlock()
	if err != nil {
		r.log.Error("resuming jobs", "err", err)
	}
	if jobs > 0 {
		r.log.Info("resumed jobs", "jobs", jobs, "actions", acts)
	}

	// Handlers run under handlerCtx, which outlives ctx by DrainTimeout.
	handlerCtx, cancelHandlers := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelHandlers()
	stopTaking := ctx.Done()

	var workers sync.WaitGroup
	for range r.o.Workers {
		workers.Add(1)
		go func() {
			defer workers.Done()
			r.work(handlerCtx, stopTaking)
		}()
	}

	<-ctx.Done()
	r.log.Debug("stopping", "drain", r.o.DrainTimeout)
	workersDone := make(chan struct{})
	go func() { workers.Wait(); close(workersDone) }()
	if r.o.DrainTimeout > 0 {
		t := time.NewTimer(r.o.DrainTimeout)
		select {
		case <-workersDone:
		case <-t.C:
			r.log.Warn("drain timeout: handing back actions still running")
		}
		t.Stop()
	}
	cancelHandlers()
	<-workersDone
	return nil
}

// work runs actions until stop is closed, and applies their results.
func (r *Runner) work(ctx context.Context, stop <-chan struct{}) {
	opts := runner.ExecOptions{Timeout: r.o.ActionTimeout, Logger: r.log, Hooks: r.o.Hooks}
	s := &slot{}
	applyCtx := context.WithValue(context.WithoutCancel(ctx), slotKey{}, s)
	var batch []job.Action
	var results []job.Result
	for {
		select {
		case <-stop:
			if s.full {
				// Not started: it stays outstanding in the store.
				r.forget(s.next)
			}
			return
		default:
		}
		batch = batch[:0]
		if s.full {
			batch, s.full = append(batch, s.next), false
		} else {
			var ok bool
			if batch, ok = r.acts.popShare(batch, r.o.Workers, maxShare, stop); !ok {
				return
			}
		}
		results = results[:0]
		for i, a := range batch {
			if i > 0 {
				select {
				case <-stop:
					// Not started: they stay outstanding in the store.
					for _, b := range batch[i:] {
						r.forget(b)
					}
					r.report(applyCtx, results...)
					return
				default:
				}
			}
			res, err := runner.Execute(ctx, r.o.Registry, a, opts)
			r.forget(a)
			if err != nil {
				r.log.Info("action handed back", "job", a.JobID, "action", a.ID, "err", err)
				continue
			}
			results = append(results, res)
		}
		r.report(applyCtx, results...)
	}
}

// maxShare bounds how many queued actions a worker takes at once. A worker
// takes more than one only when the queue holds a backlog (see popShare):
// their results are then applied together, one Restart and one save per
// job instead of one per action, while the backlog keeps every other
// worker busy.
const maxShare = 8

func (r *Runner) forget(a job.Action) {
	if r.recovered.Load() {
		return
	}
	r.trackMu.Lock()
	delete(r.inflight, keyOf(a))
	r.trackMu.Unlock()
}

// applyJob applies results to one job, retrying a failing store a few
// times. If the store keeps failing, the results are dropped with an error
// log: their actions stay outstanding in the store and run again when the
// job is resumed, so nothing is lost but time.
func (r *Runner) applyJob(ctx context.Context, id job.ID, rs []job.Result) {
	backoff := 10 * time.Millisecond
	for attempt := 1; ; attempt++ {
		_, err := r.eng.Apply(ctx, id, rs)
		if err == nil {
			return
		}
		if errors.Is(err, store.ErrNotFound) || attempt == 5 {
			r.log.Error("results not applied; their actions stay outstanding", "job", id, "results", len(rs), "err", err)
			return
		}
		r.log.Warn("applying results failed; retrying", "job", id, "attempt", attempt, "err", err)
		time.Sleep(backoff)
		backoff *= 2
	}
}

// Close stops Run, if it is running, and waits for it to return. Calls
// after Close fail with ErrClosed. Close is safe to call twice. It does not
// close the store.
func (r *Runner) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	started, stop := r.started, r.stop
	r.mu.Unlock()
	if started {
		stop()
		<-r.stopped
	}
	return nil
}
