package inmem

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
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
type Runner struct {
	o    Options
	log  *slog.Logger
	eng  *runner.Engine
	acts *fifo[job.Action]
	res  *fifo[job.Result]

	mu       sync.Mutex
	inflight map[string]bool // keys of actions queued or running
	waiters  map[job.ID][]chan struct{}
	started  bool
	closed   bool
	stop     context.CancelFunc // stops Run
	stopped  chan struct{}      // closed when Run returns
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
		res:      newFifo[job.Result](),
		inflight: map[string]bool{},
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

func (r *Runner) dispatch(_ context.Context, acts []job.Action) error {
	if len(acts) == 0 {
		return nil
	}
	r.mu.Lock()
	for _, a := range acts {
		r.inflight[a.Key()] = true
	}
	r.mu.Unlock()
	r.acts.push(acts...)
	return nil
}

// Submit starts a job. It fails if the workflow is invalid, names an
// action with no handler, or the ID is taken.
func (r *Runner) Submit(ctx context.Context, id job.ID, root ast.Node) error {
	if r.isClosed() {
		return ErrClosed
	}
	_, err := r.eng.Submit(ctx, id, root)
	return err
}

// Deliver hands in results from outside, for actions completed by another
// system (or again, to test idempotence). Results are applied
// asynchronously; a result for a job that is not in the store is an error.
func (r *Runner) Deliver(ctx context.Context, results ...job.Result) error {
	if r.isClosed() {
		return ErrClosed
	}
	for _, res := range results {
		if _, err := r.o.Store.Load(ctx, res.JobID); err != nil {
			return fmt.Errorf("inmem: deliver result for %s %s: %w", res.JobID, res.ActionID, err)
		}
	}
	r.res.push(results...)
	return nil
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

	jobs, acts, err := r.eng.Recover(ctx, r.o.Resume, func(a job.Action) bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.inflight[a.Key()]
	})
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
	restarterStop := make(chan struct{})
	restarterDone := make(chan struct{})
	go func() {
		defer close(restarterDone)
		r.restart(restarterStop)
	}()

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
	close(restarterStop)
	<-restarterDone
	return nil
}

// work runs actions until stop is closed.
func (r *Runner) work(ctx context.Context, stop <-chan struct{}) {
	opts := runner.ExecOptions{Timeout: r.o.ActionTimeout, Logger: r.log, Hooks: r.o.Hooks}
	for {
		select {
		case <-stop:
			return
		default:
		}
		batch, ok := r.acts.pop(1, stop)
		if !ok {
			return
		}
		a := batch[0]
		res, err := runner.Execute(ctx, r.o.Registry, a, opts)
		r.mu.Lock()
		delete(r.inflight, a.Key())
		r.mu.Unlock()
		if err != nil {
			r.log.Info("action handed back", "job", a.JobID, "action", a.ID, "err", err)
			continue
		}
		r.res.push(res)
	}
}

// restart applies results, a batch per job, until stop is closed and no
// result is left.
func (r *Runner) restart(stop <-chan struct{}) {
	for {
		batch, ok := r.res.pop(r.o.MaxBatch, stop)
		if !ok {
			// Stopped: apply what the drained workers left.
			for {
				batch = r.res.tryPop(r.o.MaxBatch)
				if len(batch) == 0 {
					return
				}
				r.apply(batch)
			}
		}
		r.apply(batch)
	}
}

// apply groups results by job, in order of first appearance, and applies
// each group in one step.
func (r *Runner) apply(batch []job.Result) {
	ctx := context.Background()
	if len(batch) == 1 {
		r.applyJob(ctx, batch[0].JobID, batch)
		return
	}
	var order []job.ID
	groups := map[job.ID][]job.Result{}
	for _, res := range batch {
		if _, ok := groups[res.JobID]; !ok {
			order = append(order, res.JobID)
		}
		groups[res.JobID] = append(groups[res.JobID], res)
	}
	for _, id := range order {
		r.applyJob(ctx, id, groups[id])
	}
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
