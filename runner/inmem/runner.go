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

// Options configures a Runner: what every runner shares
// (runner.WorkerOptions, whose Registry is required here), and what is
// this runner's own.
type Options struct {
	runner.WorkerOptions
	// Store keeps the jobs; nil means a new store.NewMemory(). Use
	// store/bolt for jobs that survive the process.
	Store store.Store
	// MaxBatch bounds the results applied in one Restart; default 4096.
	MaxBatch int
	// NoResume keeps Run from resuming the unfinished jobs of the store
	// when it starts (it needs a store.Lister to find them). Resume picks
	// jobs one by one.
	NoResume bool
}

// Errors of the runner. They wrap runner.ErrClosed and runner.ErrRunning,
// so errors.Is matches either.
var (
	// ErrClosed is returned by calls after Close, or after Run returned.
	ErrClosed = fmt.Errorf("inmem: %w", runner.ErrClosed)
	// ErrRunning is returned by a second call of Run.
	ErrRunning = fmt.Errorf("inmem: %w", runner.ErrRunning)
)

// Runner runs jobs in this process. Its methods are safe for concurrent
// use. Submit, Deliver, Resume, Wait and Status work before Run is called
// (actions wait in the queue until Run starts workers).
type Runner struct {
	o     Options
	log   *slog.Logger
	eng   *runner.Engine[struct{}] // for Submit, Deliver and Resume; workers have their own
	hooks *runner.Hooks            // o.Hooks, and waking waiters when a job finishes
	q     *queue
	tm    *timers

	// dispatchMu orders dispatches made from a job as loaded against the
	// commits that change it. Submit and every Apply (load, Restart,
	// commit, queue) hold it for reading; a recovery (load, queue the
	// outstanding actions) holds it for writing, so it never loads a job
	// between another goroutine's commit and its queueing (it would queue
	// the new actions too), nor queues actions whose results were applied
	// after it loaded the job. The applies of one job never overlap (see
	// results), which keeps a redelivery's re-dispatch current too.
	dispatchMu sync.RWMutex

	// results holds the results waiting for their jobs: the goroutine
	// that hands in a result for a job nobody applies applies the job's
	// results, a batch at a time, until none is left.
	results *runner.Applier[inHand]
	applyR  runner.ApplyFunc[inHand] // applies with eng

	life runner.Lifecycle // Run and Close

	// instant is set when the store's writes never wait for I/O
	// (store.IsInstant): a worker then applies results holding its token
	// (see work).
	instant bool

	mu      sync.Mutex
	waiters map[job.ID]waiterSet
	broken  map[job.ID]error // jobs whose results could not be applied
	fatal   error            // why the runner stopped on its own
}

// New returns a runner. It does not start it: call Run.
func New(o Options) (*Runner, error) {
	if o.Registry == nil {
		return nil, errors.New("inmem: Options.Registry is required")
	}
	var err error
	if o.WorkerOptions, err = o.WithDefaults(); err != nil {
		return nil, fmt.Errorf("inmem: %w", err)
	}
	if o.Store == nil {
		o.Store = store.NewMemory()
	}
	if o.MaxBatch <= 0 {
		o.MaxBatch = 4096
	}
	log := o.Logger
	r := &Runner{
		o: o, log: log,
		tm: newTimers(o.Clock),
		results: runner.NewApplier(runner.ApplierOptions[inHand]{
			Job:      func(h inHand) job.ID { return h.res.JobID },
			MaxBatch: o.MaxBatch,
		}),
		waiters: map[job.ID]waiterSet{},
		broken:  map[job.ID]error{},
		instant: store.IsInstant(o.Store),
	}
	r.life.OnClose(r.notifyAll) // a Wait for a job left unfinished returns
	r.q = newQueue(r.notify)    // a Wait that relied on this runner looks at the store again
	hooks := runner.Hooks{}
	if o.Hooks != nil {
		hooks = *o.Hooks
	}
	userDone, userStep := hooks.JobDone, hooks.Step
	hooks.JobDone = func(j job.Job) {
		r.notify(j.ID())
		if userDone != nil {
			userDone(j)
		}
	}
	hooks.Step = func(j job.Job, dispatched int) {
		if _, ok := j.Cancelled(); ok && !j.Done() {
			r.notify(j.ID()) // a Cancel waits for this
		}
		if userStep != nil {
			userStep(j, dispatched)
		}
	}
	r.hooks = &hooks
	eng, err := r.engine(nil)
	if err != nil {
		return nil, err
	}
	r.eng = eng
	r.applyR = r.applyWith(eng)
	return r, nil
}

// resultBufs holds the arrays apply hands batches of results to the
// engine in (the engine keeps none of them); maxPooledResults bounds the
// arrays kept, so that one huge batch does not stay in memory.
var resultBufs = sync.Pool{New: func() any { return new([]job.Result) }}

const maxPooledResults = 1024

// inHand is a result this runner applies, with the incarnation of the
// job whose action it ran (0 when not known: a result handed in by
// Deliver, a cancel). The live set is keyed by incarnation too, so that a
// job deleted and made again under the same ID never finds its actions
// taken for those of the job before it, whose results may still be on
// their way to being applied.
type inHand struct {
	res job.Result
	inc uint64
}

// applyWith returns the function that applies a batch of results with
// eng (see apply).
func (r *Runner) applyWith(eng *runner.Engine[struct{}]) runner.ApplyFunc[inHand] {
	return func(ctx context.Context, id job.ID, batch []inHand) []inHand {
		r.apply(ctx, eng, id, batch)
		return nil
	}
}

// engine returns an engine whose commits queue the new actions, keeping
// one in keep when it is not nil (see queue.push).
func (r *Runner) engine(keep *slot) (*runner.Engine[struct{}], error) {
	return runner.NewEngine(runner.EngineOptions[struct{}]{
		Store:     r.o.Store,
		Transport: transport{r, keep},
		Registry:  r.o.Registry,
		Logger:    r.log,
		Hooks:     r.hooks,
		Now:       r.o.Clock.Now,
	})
}

// transport is the runner's runner.Transport: save, then queue. Queueing
// cannot fail, so a saved transition is always dispatched.
type transport struct {
	r    *Runner
	keep *slot // a worker's slot, or nil
}

func (t transport) Commit(ctx context.Context, tr job.Transition, _ struct{}) error {
	if err := store.Commit(ctx, t.r.o.Store, tr); err != nil {
		return err
	}
	t.r.q.push(tr.Actions, t.keep, false)
	t.r.tm.arm(tr.Timers)
	t.r.q.stop(tr.Stops, runner.ErrStopped)
	return nil
}

func (t transport) Dispatch(_ context.Context, acts []job.Action, ts []job.Timer) error {
	if lost := t.r.q.push(acts, nil, true); len(lost) > 0 {
		// Applied in the background: the caller may be applying the job
		// (then its next batch takes them) or hold the dispatch lock (a
		// recovery, which an apply waits for).
		rs := make([]inHand, len(lost))
		for i, a := range lost {
			rs[i] = inHand{runner.LostResult(a, t.r.o.Clock.Now()), a.Incarnation}
		}
		if t.r.usable() == nil {
			t.r.results.Go(context.Background(), t.r.applyR, rs...)
		}
	}
	t.r.tm.arm(ts)
	return nil
}

// Store returns the runner's store.
func (r *Runner) Store() store.Store { return r.o.Store }

// Submit starts a job. It fails if the workflow is invalid, names an
// action with no handler, or the ID is taken, and with ErrClosed after
// Close or once Run has returned.
func (r *Runner) Submit(ctx context.Context, id job.ID, root ast.Node) error {
	_, err := r.SubmitJob(ctx, id, root)
	return err
}

// SubmitJob is Submit, returning the job as it was created (version 1,
// its first actions dispatched) when it returns nil: what a caller
// answering the submit would otherwise make again with job.New. A job
// is an immutable value: the runner's later steps leave it as it is.
func (r *Runner) SubmitJob(ctx context.Context, id job.ID, root ast.Node) (job.Job, error) {
	if err := r.usable(); err != nil {
		return job.Job{}, err
	}
	r.dispatchMu.RLock()
	defer r.dispatchMu.RUnlock()
	tr, err := r.eng.Submit(ctx, id, root)
	if err != nil {
		return job.Job{}, err
	}
	return tr.Job, nil
}

// Resume dispatches the outstanding actions of the jobs named, as Run does
// for every unfinished job when it starts: jobs a crash or a stop left
// behind. Actions this runner already has in hand are not dispatched
// twice. A job naming actions this runner has no handler for is left
// untouched (the error wraps runner.ErrUnknownActions). The error joins
// those of every job that could not be resumed; the others are resumed.
func (r *Runner) Resume(ctx context.Context, ids ...job.ID) error {
	if err := r.usable(); err != nil {
		return err
	}
	r.dispatchMu.Lock()
	defer r.dispatchMu.Unlock()
	_, err := r.eng.Recover(ctx, ids...)
	return err
}

// Deliver hands in results from outside, for actions completed by another
// system (or again, to test idempotence). A result for a job that is not in
// the store is an error. The results are applied before Deliver returns,
// unless another goroutine is applying results of the same job, which then
// applies them too.
func (r *Runner) Deliver(ctx context.Context, results ...job.Result) error {
	if err := r.usable(); err != nil {
		return err
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
	hs := make([]inHand, len(results))
	for i, res := range results {
		hs[i] = inHand{res: res}
	}
	r.results.Add(context.WithoutCancel(ctx), r.applyR, hs...)
	return nil
}

// Cancel cancels job id with reason (job.Cancel): nothing new starts in it
// except the finally blocks of tries already entered, the handlers of its
// actions in flight have their contexts cancelled (cause
// runner.ErrStopped), and the job ends cancelled, with the reason, once
// those finally blocks settle: Wait for that. Cancel returns once the
// cancel is saved. Cancelling a cancelled job again is not an error; a
// job that has finished is one, wrapping runner.ErrFinished, and so is a
// job that finishes on its own before the cancel is applied.
func (r *Runner) Cancel(ctx context.Context, id job.ID, reason string) error {
	if err := r.usable(); err != nil {
		return err
	}
	if reason == "" {
		return fmt.Errorf("inmem: cancel job %s: a reason is required", id)
	}
	j, err := r.o.Store.Load(ctx, id)
	if err != nil {
		return fmt.Errorf("inmem: cancel job %s: %w", id, err)
	}
	if _, ok := j.Cancelled(); ok {
		return nil
	}
	if j.Done() {
		return fmt.Errorf("inmem: cancel job %s: %w (%s)", id, runner.ErrFinished, j.Status())
	}
	// Like any result, through the job's pending results: the applies of
	// one job never overlap. Another goroutine may be applying them, so
	// the cancel is seen saved by looking at the store: when this runner
	// saves a step of the job cancelled (or finished), which wakes ch, and
	// now and then, in case another runner on the store does.
	ch := make(chan struct{}, 1)
	r.mu.Lock()
	r.addWaiter(id, ch)
	r.mu.Unlock()
	defer r.dropWaiter(id, ch)
	res := job.CancelResult(id, reason)
	res.At = r.o.Clock.Now().UTC() // when the cancel was made: the history and the API tell it
	r.results.Add(context.WithoutCancel(ctx), r.applyR, inHand{res: res})
	every := time.Millisecond
	poll := time.NewTimer(every)
	defer poll.Stop()
	for {
		j, err := r.o.Store.Load(ctx, id)
		if err != nil {
			return fmt.Errorf("inmem: cancel job %s: %w", id, err)
		}
		if _, ok := j.Cancelled(); ok {
			return nil
		}
		if j.Done() {
			return fmt.Errorf("inmem: cancel job %s: %w first (%s)", id, runner.ErrFinished, j.Status())
		}
		broken, cerr := r.jobState(id)
		closed := cerr != nil
		switch {
		case broken != nil:
			return fmt.Errorf("inmem: cancel job %s: %w", id, broken)
		case closed:
			return fmt.Errorf("inmem: cancel job %s: %w", id, cerr)
		}
		poll.Reset(every)
		select {
		case <-ch:
		case <-poll.C:
			every = min(2*every, 50*time.Millisecond)
		case <-ctx.Done():
			return fmt.Errorf("inmem: cancel job %s: %w", id, ctx.Err())
		}
	}
}

// usable returns ErrClosed after Close or once Run has returned (with the
// reason the runner stopped if it stopped on its own).
func (r *Runner) usable() error {
	if r.life.Usable() == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.closedErr()
}

// closedErr is ErrClosed, with the reason the runner stopped if it
// stopped on its own. r.mu is held.
func (r *Runner) closedErr() error {
	if r.fatal != nil {
		return fmt.Errorf("%w: %w", ErrClosed, r.fatal)
	}
	return ErrClosed
}

// jobState returns why the results of job id could not be applied (nil if
// they could), and, when the runner is closed or has stopped on its own,
// the error that says so (nil while it works). A waiter registered before
// it looks is woken when that changes (notify, notifyAll).
func (r *Runner) jobState(id job.ID) (broken, closed error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fatal != nil || r.life.Usable() != nil {
		closed = r.closedErr()
	}
	return r.broken[id], closed
}

// apply applies one batch of results to job id. Whatever happens, the
// batch's actions leave the live set: applied, their keys will never be
// dispatched again; not applied, they stay outstanding in the store, for a
// recovery to dispatch.
//
// An error that concerns the job alone (it is gone, its stored state is
// damaged) is that job's: its waiters hear of it, the other jobs go on. Any
// other error is the store's (a full disk, an I/O error, a closed store):
// the runner stops, and Run returns the error. Nothing is retried: a store
// that failed once is not trusted with the next write.
func (r *Runner) apply(ctx context.Context, eng *runner.Engine[struct{}], id job.ID, batch []inHand) {
	buf := resultBufs.Get().(*[]job.Result)
	rs := (*buf)[:0]
	for _, h := range batch {
		rs = append(rs, h.res)
	}
	r.dispatchMu.RLock()
	tr, err := eng.Apply(ctx, id, rs)
	r.dispatchMu.RUnlock()
	// job.Restart copies what it keeps of the results: the array is free
	// again.
	clear(rs)
	if cap(rs) <= maxPooledResults {
		*buf = rs[:0]
		resultBufs.Put(buf)
	}
	// Results handed in from outside (Deliver) name no incarnation: theirs
	// is the job's, if this runner holds its actions at all.
	r.q.forgetResults(batch, tr.Job.Incarnation())
	switch {
	case err == nil:
	case errors.Is(err, store.ErrConflict):
		// Another runner keeps winning the job's commits: it applies these
		// results or runs the actions again; nothing is lost.
		r.log.Warn("results not applied after repeated conflicts; their actions stay outstanding", "job", id, "results", len(batch), "err", err)
	case jobScoped(err):
		r.log.Error("results not applied; their actions stay outstanding in the store", "job", id, "results", len(batch), "err", err)
		r.mu.Lock()
		r.broken[id] = err
		r.mu.Unlock()
		r.notify(id)
	default:
		what := fmt.Sprintf("%d results", len(batch))
		if len(batch) == 1 {
			what = "a result"
		}
		r.fail(fmt.Errorf("%s not applied: %w", what, err))
	}
}

// jobScoped reports whether err concerns one job and not the store.
func jobScoped(err error) bool {
	return errors.Is(err, store.ErrNotFound) || errors.Is(err, job.ErrCorrupt) || errors.Is(err, job.ErrWrongJob)
}

// fail stops the runner because of err, unless it is stopping already.
func (r *Runner) fail(err error) {
	r.mu.Lock()
	first := r.fatal == nil && r.life.Usable() == nil
	if first {
		r.fatal = err
	}
	r.mu.Unlock()
	if !first {
		r.log.Debug("while stopping", "err", err)
		return
	}
	r.log.Error("stopping: the store failed", "err", err)
	r.life.Stop()
	r.notifyAll()
}

// Status returns the newest stored state of a job.
func (r *Runner) Status(ctx context.Context, id job.ID) (job.Job, error) {
	return r.o.Store.Load(ctx, id)
}

// Wait blocks until job id has finished and returns the finished job, also
// when another runner on the same store finishes it. While this runner has
// actions of the job in hand, it is woken by this runner's own commits and
// reads nothing; otherwise it looks at the job in the store at growing
// intervals, from 50 ms to a second (one read of that job, whatever else
// the store holds), and sees another runner's finish that much later. The
// job's own failure is not an error: check its Status. Wait returns an
// error when ctx ends, when the job's results could not be applied (its
// stored state is damaged or gone), and, wrapping ErrClosed, when the
// runner has stopped (Close, or Run returned) with the job unfinished.
func (r *Runner) Wait(ctx context.Context, id job.ID) (job.Job, error) {
	ch := make(chan struct{}, 1)
	r.mu.Lock()
	r.addWaiter(id, ch)
	r.mu.Unlock()
	defer r.dropWaiter(id, ch)
	every := minWaitPoll
	var poll *time.Timer // made when Wait first looks at the store on its own
	defer func() {
		if poll != nil {
			poll.Stop()
		}
	}()
	for {
		j, err := r.o.Store.Load(ctx, id)
		if err != nil {
			return job.Job{}, err
		}
		if j.Done() {
			return j, nil
		}
		broken, cerr := r.jobState(id)
		closed := cerr != nil
		switch {
		case broken != nil:
			return j, fmt.Errorf("inmem: wait for job %s: %w", id, broken)
		case closed:
			return j, fmt.Errorf("inmem: wait for job %s, unfinished at v%d: %w", id, j.Version(), cerr)
		}
		// This runner wakes ch when it finishes the job, and when it lets
		// go of the job's last action in hand. While it holds some, the job
		// changes here: Wait reads nothing. Otherwise another runner on the
		// same store may finish the job, and does not wake ch, so the store
		// is looked at now and then, less often the longer the wait: one
		// read of this job alone (store.Stat: its status, without loading
		// it), never a listing, so that a poll costs the same however many
		// jobs the store holds.
	wait:
		for {
			if r.q.holds(id) {
				select {
				case <-ch:
					break wait
				case <-ctx.Done():
					return j, fmt.Errorf("inmem: wait for job %s: %w", id, ctx.Err())
				}
			}
			if poll == nil {
				poll = time.NewTimer(every)
			} else {
				poll.Reset(every)
			}
			select {
			case <-ch:
				break wait
			case <-poll.C:
				every = min(2*every, maxWaitPoll)
				if !r.stillRunning(ctx, id) {
					break wait
				}
			case <-ctx.Done():
				poll.Stop()
				return j, fmt.Errorf("inmem: wait for job %s: %w", id, ctx.Err())
			}
		}
	}
}

// stillRunning reports whether the store says job id is running; false
// when it cannot tell (then the caller loads the job).
func (r *Runner) stillRunning(ctx context.Context, id job.ID) bool {
	if broken, closed := r.jobState(id); broken != nil || closed != nil {
		return false
	}
	in, err := store.Stat(ctx, r.o.Store, id)
	return err == nil && !in.Status.Settled()
}

// Wait looks at the store for a job that another runner may finish every
// minWaitPoll at first, then less often, up to every maxWaitPoll.
const (
	minWaitPoll = 50 * time.Millisecond
	maxWaitPoll = time.Second
)

// waiterSet holds the channels of the waiters of one job: the first in
// the set itself, so that a job with one waiter (the rule) costs no slice.
type waiterSet struct {
	first chan struct{}
	rest  []chan struct{}
}

// len returns how many waiters the set holds.
func (ws waiterSet) len() int {
	if ws.first == nil {
		return 0
	}
	return 1 + len(ws.rest)
}

// wake wakes every waiter of the set.
func (ws waiterSet) wake() {
	if ws.first != nil {
		wake(ws.first)
	}
	for _, ch := range ws.rest {
		wake(ch)
	}
}

// addWaiter adds ch to the waiters of job id. r.mu is held.
func (r *Runner) addWaiter(id job.ID, ch chan struct{}) {
	ws := r.waiters[id]
	if ws.first == nil {
		ws.first = ch
	} else {
		ws.rest = append(ws.rest, ch)
	}
	r.waiters[id] = ws
}

func (r *Runner) dropWaiter(id job.ID, ch chan struct{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ws := r.waiters[id]
	if ws.first == ch {
		ws.first = nil
		if len(ws.rest) > 0 {
			ws.first, ws.rest = ws.rest[0], ws.rest[1:]
		}
	} else {
		for i, w := range ws.rest {
			if w == ch {
				ws.rest = append(ws.rest[:i], ws.rest[i+1:]...)
				break
			}
		}
	}
	if ws.first == nil {
		delete(r.waiters, id)
	} else {
		r.waiters[id] = ws
	}
}

// notify wakes the waiters of job id.
func (r *Runner) notify(id job.ID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.waiters[id].wake()
}

// notifyAll wakes every waiter: the runner has stopped.
func (r *Runner) notifyAll() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, ws := range r.waiters {
		ws.wake()
	}
}

func wake(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// Run resumes the unfinished jobs in the store (unless Options.NoResume),
// then runs actions and applies results until ctx ends, Close is called or
// the store fails. A store that keeps settled jobs only for a while (a
// store.Sweeper with a retention, such as store/bolt with
// Options.Retention) is swept once when Run starts, before any action
// runs, then whenever the store's last sweep says. Run returns nil after
// a clean shutdown (see the package doc for what happens to actions in
// flight), the store's error if the store failed, nil at once if Close
// came first, and ErrRunning if called twice. After Run returns, the
// runner is closed.
func (r *Runner) Run(ctx context.Context) error {
	ctx, done, err := r.life.Start(ctx)
	switch {
	case errors.Is(err, runner.ErrRunning):
		return ErrRunning
	case err != nil:
		return nil // closed before it ran: stop at once, as Close asks
	}
	defer done() // closes the runner, and wakes every waiter (notifyAll)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	if !r.o.NoResume {
		r.resumeAll(ctx)
	}
	r.tm.run(r.fireTimer)
	defer r.tm.stop()
	if next, ok := r.sweepOnce(ctx); ok {
		var sweeper sync.WaitGroup
		sweeper.Go(func() { r.sweep(ctx, next) })
		defer func() { cancel(); sweeper.Wait() }()
	}

	// Handlers run under handlerCtx, which outlives ctx by DrainTimeout.
	handlerCtx, cancelHandlers := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelHandlers()
	stopTaking := ctx.Done()

	// Workers tokens bound the actions that run at once. There are more
	// worker goroutines than tokens: a worker gives its token back before
	// it applies results (see work) on a store that waits for I/O, so a
	// worker waiting for a store's commit (an fsync) holds up no action,
	// and the results of several workers share the store's next commit
	// (store/bolt commits the writes waiting at the same moment together).
	tokens := make(chan struct{}, r.o.Workers)
	var workers sync.WaitGroup
	for range r.o.Workers * goroutinesPerWorker {
		keep := &slot{}
		eng, err := r.engine(keep)
		if err != nil {
			return err
		}
		apply := r.applyWith(eng)
		workers.Go(func() { r.work(handlerCtx, stopTaking, tokens, apply, keep) })
	}

	<-ctx.Done()
	r.log.Debug("stopping", "drain", r.o.DrainTimeout)
	workersDone := make(chan struct{})
	go func() { workers.Wait(); close(workersDone) }()
	runner.Drain(r.o.DrainTimeout, workersDone, cancelHandlers, r.log)
	r.mu.Lock()
	fatal := r.fatal
	r.mu.Unlock()
	return fatal
}

// resumeAll resumes every unfinished job in the store, a page at a time
// (runner.RecoverAll). A job that cannot be resumed is logged and left as
// it is.
func (r *Runner) resumeAll(ctx context.Context) {
	jobs, n, err := runner.RecoverAll(ctx, r.o.Store, 0, func(ctx context.Context, ids ...job.ID) (int, error) {
		r.dispatchMu.Lock()
		defer r.dispatchMu.Unlock()
		return r.eng.Recover(ctx, ids...)
	}, r.log)
	if err != nil && !errors.Is(err, errors.ErrUnsupported) && ctx.Err() == nil {
		r.log.Error("listing unfinished jobs to resume", "err", err)
	}
	if jobs > 0 {
		r.log.Info("resumed jobs", "jobs", jobs, "actions", n)
	}
}

// sweepOnce sweeps the store once, and says when to sweep again; ok is
// false if the store keeps every job (it is no store.Sweeper, or has no
// retention), or ctx ended.
func (r *Runner) sweepOnce(ctx context.Context) (next time.Duration, ok bool) {
	res, err := store.Sweep(ctx, r.o.Store)
	switch {
	case errors.Is(err, errors.ErrUnsupported), err != nil && ctx.Err() != nil:
		return 0, false
	case err != nil:
		r.log.Warn("sweeping settled jobs past their retention", "err", err)
		return time.Minute, true
	case res.Deleted > 0:
		r.log.Debug("deleted settled jobs past their retention", "jobs", res.Deleted)
	}
	return res.Next, true
}

// sweep sweeps the store after next, then whenever the previous sweep
// says (at once while it stopped at its bound, a minute after one that
// failed), until ctx ends.
func (r *Runner) sweep(ctx context.Context, next time.Duration) {
	t := time.NewTimer(next)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		next, ok := r.sweepOnce(ctx)
		if !ok {
			return
		}
		t.Reset(next)
	}
}

// goroutinesPerWorker is how many worker goroutines share each of the
// Workers tokens (see Run).
const goroutinesPerWorker = 4

// work runs actions until stop is closed, each holding one of tokens, and
// applies their results with apply, whose commits keep an action in keep
// for this worker to run next.
//
// A worker holds a token while it runs an action, and keeps it to take
// the next queued action itself, so that a run of actions costs no
// hand-off between goroutines. It gives the token back before it waits
// for an action to be queued (so that a worker with an action kept from
// its commit can run it), and before it applies results unless the store
// is instant (store.IsInstant): a commit that may wait for an fsync holds
// up no action, and one that only takes the CPU costs no hand-off. It
// takes a queued action only while it holds a token, and runs it at once:
// the actions start in the order they were queued.
func (r *Runner) work(ctx context.Context, stop <-chan struct{}, tokens chan struct{}, apply runner.ApplyFunc[inHand], keep *slot) {
	opts := r.o.ExecOptions()
	applyCtx := context.WithoutCancel(ctx)
	holding := false
	defer func() {
		if holding {
			<-tokens
		}
	}()
	for {
		select {
		case <-stop:
			if keep.full {
				// Not started: it stays outstanding in the store.
				r.q.forget(keyOf(keep.next))
				keep.full = false
			}
			return
		default:
		}
		var a job.Action
		if keep.full {
			a, keep.full = keep.next, false
		}
		if !holding {
			select {
			case <-stop:
				if a.ID != "" {
					// Not started: it stays outstanding in the store.
					r.q.forget(keyOf(a))
				}
				return
			case tokens <- struct{}{}:
				holding = true
			}
		}
		if a.ID == "" {
			var more, ok bool
			if a, more, ok = r.q.tryPop(); !ok {
				<-tokens
				holding = false
				if !r.q.wait(stop) {
					return
				}
				continue
			}
			if more && len(tokens) < cap(tokens) {
				// A token is free for the actions left: wake a worker to
				// take it. With every token taken, their holders take
				// those actions as they finish theirs.
				r.q.notify()
			}
		}
		actx, ok := r.q.begin(ctx, a)
		if !ok {
			// Told to stop before it began: its result would be ignored.
			r.q.forget(keyOf(a))
			continue
		}
		res, err := runner.Execute(actx, r.o.Registry, a, opts)
		stopped := errors.Is(actx.Stopped(), runner.ErrStopped)
		r.q.end(keyOf(a))
		if err != nil {
			if stopped {
				r.log.Debug("action stopped", "job", a.JobID, "action", a.ID)
			} else {
				r.log.Info("action handed back", "job", a.JobID, "action", a.ID, "err", err)
			}
			r.q.forget(keyOf(a))
			continue
		}
		if r.results.Queue(inHand{res, a.Incarnation}) {
			if !r.instant {
				<-tokens
				holding = false
				r.q.notify() // a worker may take the token for a queued action
			}
			r.results.Drain(applyCtx, apply, a.JobID)
		}
	}
}

// Close stops Run, if it is running, and waits for it to return. Calls
// after Close fail with ErrClosed. Close is safe to call twice. It does not
// close the store.
func (r *Runner) Close() error {
	r.life.Close()
	return nil
}
