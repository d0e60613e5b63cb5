package zk

import (
	"context"

	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	"github.com/batonwf/baton/store"
)

// Options configures a Runner.
type Options struct {
	// WorkerOptions are what every runner shares. A runner with no
	// Registry runs no actions: it submits, cancels, waits and fires
	// timers (baton submit). Actions whose name has no handler here are
	// left in the queue for a worker that has one. A nil Logger uses the
	// store's. Name (runner.WorkerOptions.Name) is the worker's name in the
	// workers node: two live workers cannot share one, nor may it hold '/'.
	runner.WorkerOptions
	// Store is the ZooKeeper store: its connection and root hold the
	// runner's queue, claims, timers and worker announcements; required.
	Store *Store
	// ClaimLease is how long a claim may go without its worker renewing
	// it before the live worker watching it breaks it (see the package
	// doc, Claim leases); 0 means DefaultClaimLease, and less than 300 ms
	// is an error. A claim is renewed every third of it once it is that
	// old, so actions shorter than a third of it cost no renewal.
	ClaimLease time.Duration
	// NoResume keeps Run from re-dispatching the unfinished jobs of the
	// store when it starts. (Queue entries survive a restart in
	// ZooKeeper: resuming only repairs what an operator or a crash in the
	// middle of a large transition left out.)
	NoResume bool

	// Placement (see the package doc, Placement). A worker registers
	// under Name, a durable name, with WorkerOptions.Workers as its
	// capacity.

	// Limits bounds, per action name, how many actions of that name the
	// worker runs at once. Each name must have a handler in the Registry
	// and a limit from 1 to the capacity.
	Limits map[string]int
	// Grace is how long the worker's pins wait for it once it is down
	// (its process gone, its session expired) before they move; 0 means
	// DefaultGrace. Negative is an error.
	Grace time.Duration
}

// Errors of the runner. They wrap runner.ErrClosed and runner.ErrRunning,
// so errors.Is matches either.
var (
	ErrClosed  = fmt.Errorf("zk: %w", runner.ErrClosed)
	ErrRunning = fmt.Errorf("zk: %w", runner.ErrRunning)
)

// Runner runs baton's workers on ZooKeeper: it claims actions from the
// queue, runs them, and applies their results; it fires the timers that
// fall due; and it submits, cancels and waits for jobs. Any number of
// runners, in any number of processes, may share a root.
type Runner struct {
	o   Options
	st  *Store
	c   *conn
	eng *runner.Engine[[]consumed]
	log *slog.Logger

	life runner.Lifecycle // Run and Close

	mu       sync.Mutex
	running  map[string]context.CancelCauseFunc // key (keyName) -> its handler's cancel
	watches  map[job.ID]*jobWatch               // the stop watchers of jobs with handlers running here
	watchers sync.WaitGroup

	slots *slots    // the work loop's, which transitions claim in (claimer)
	reg   *registry // the watched registry, for a worker (a Registry): made by New, started by Run before the work loop, stopped with it

	load     loadTracker // what this worker runs, published in its live node
	host     string      // os.Hostname, in the live node
	started  time.Time   // when Run started, in the live node
	liveMu   sync.Mutex  // the live node's writes
	lastLive []byte      // what the live node holds, as this process last wrote it
	draining atomic.Bool // the registration says draining: claim nothing new (drain.go)
	drainMu  sync.Mutex
	drained  DrainReport // what the drain did, once the worker deregistered (drainedOK)

	drainedOK bool
	pins      *pinCache // the pins' allocations this process read
	stats     struct {
		claims, claimsLost, claimedInTransition  atomic.Int64
		spills, pinMoves, pinsAllocated          atomic.Int64
		leaseRenewals, leasesBroken, quarantines atomic.Int64
	}
	leases leases      // the claims this worker holds and watches (lease.go)
	quar   quarantines // this worker's quarantines (quarantine.go)

	results *runner.Applier[pendingResult] // the results waiting for their jobs (enqueue)
}

// New returns a runner. It does not start working until Run.
func New(o Options) (*Runner, error) {
	if o.Store == nil {
		return nil, errors.New("zk: Options.Store is required")
	}
	if o.Logger == nil {
		o.Logger = o.Store.c.log
	}
	var err error
	if o.WorkerOptions, err = o.WithDefaults(); err != nil {
		return nil, fmt.Errorf("zk: %w", err)
	}
	if err := zkNameOK(o.Name); err != nil {
		return nil, fmt.Errorf("zk: worker name: %w", err)
	}
	if err := o.checkPlacement(); err != nil {
		return nil, err
	}
	if o.ClaimLease, err = checkLease(o.ClaimLease); err != nil {
		return nil, err
	}
	r := &Runner{o: o, st: o.Store, c: o.Store.c, running: map[string]context.CancelCauseFunc{},
		watches: map[job.ID]*jobWatch{}, results: newResults()}
	r.log = o.Logger.With("worker", o.Name)
	r.pins = &pinCache{changed: make(chan struct{}, 1)}
	r.quar.wake = make(chan struct{}, 1)
	if o.Registry != nil {
		r.reg = newRegistry(r.c, o.Clock, r.log, true)
		r.reg.hooks = o.Hooks
	}
	r.slots = &slots{tokens: make(chan struct{}, o.Workers), freed: make(chan struct{}, 1),
		reg: o.Registry, self: o.Name, l: r.c.l, log: r.log, run: r.perform, took: &r.stats.claimedInTransition, hooks: o.Hooks, draining: &r.draining,
		limits: o.Limits, decide: r.decide, pinHeld: func(key uint64) bool { return r.pins.held(key, o.Name) }, now: o.Clock.Now,
		quarantined: r.quarantinedFor}
	eng, err := runner.NewEngine(runner.EngineOptions[[]consumed]{Store: o.Store, Transport: transport{r, r.slots}, Registry: o.Registry, Logger: r.log, Hooks: o.Hooks, Now: o.Clock.Now})
	if err != nil {
		return nil, err
	}
	r.eng = eng
	return r, nil
}

func (r *Runner) usable() error {
	if r.life.Usable() != nil {
		return ErrClosed
	}
	return nil
}

// Stats are a runner's counters since it was made.
type Stats struct {
	// Claims counts the actions claimed from the queue, each with a
	// multi-op of its own; ClaimsLost the claim multi-ops another worker
	// won.
	Claims, ClaimsLost int64
	// ClaimedInTransition counts the actions that the transition creating
	// them claimed for this worker: they took no request of their own.
	ClaimedInTransition int64
	// Spills counts the claims of a soft key's action by a worker that
	// is not the key's holder (it was busy past the key's wait);
	// PinsAllocated the claims that allocated a pin to this worker, of
	// which PinMoves moved it from another worker.
	Spills, PinsAllocated, PinMoves int64
	// LeaseRenewals counts the renewals of this worker's claims (each a
	// write); LeasesBroken the claims of other workers it broke because
	// their leases expired (see Options.ClaimLease).
	LeaseRenewals, LeasesBroken int64
	// Quarantines counts the quarantines this worker put itself in.
	Quarantines int64
	// Unreadable counts the registry's nodes (registrations, live nodes,
	// the settings, quarantines) this worker found garbled, each version
	// of each once; each was logged once too.
	Unreadable int64
	// Multis counts the multi-ops the server applied for this runner's
	// connection, which it shares with its Store (transitions, claims,
	// renewals, quarantines: every multi-op of either), and MultiOps the
	// operations inside them (creates, sets, deletes, version checks).
	// Multi-ops that failed whole are not counted.
	Multis, MultiOps int64
}

// Stats returns the runner's counters.
func (r *Runner) Stats() Stats {
	s := Stats{Claims: r.stats.claims.Load(), ClaimsLost: r.stats.claimsLost.Load(), ClaimedInTransition: r.stats.claimedInTransition.Load(),
		Spills: r.stats.spills.Load(), PinsAllocated: r.stats.pinsAllocated.Load(), PinMoves: r.stats.pinMoves.Load(),
		LeaseRenewals: r.stats.leaseRenewals.Load(), LeasesBroken: r.stats.leasesBroken.Load(), Quarantines: r.stats.quarantines.Load(),
		Multis: r.c.multis.Load(), MultiOps: r.c.multiOps.Load()}
	if r.reg != nil {
		s.Unreadable = r.reg.unreadable.Load()
	}
	return s
}

// Submit starts job id: it stores the job and queues its first actions in
// one multi-op. With a Registry, a workflow naming actions it has no
// handler for is refused.
func (r *Runner) Submit(ctx context.Context, id job.ID, root ast.Node) error {
	if err := r.usable(); err != nil {
		return err
	}
	_, err := r.eng.Submit(ctx, id, root)
	return err
}

// Deliver applies results as if a worker had reported them.
func (r *Runner) Deliver(ctx context.Context, results ...job.Result) error {
	if err := r.usable(); err != nil {
		return err
	}
	var ids []job.ID
	by := map[job.ID][]job.Result{}
	for _, res := range results {
		if _, ok := by[res.JobID]; !ok {
			ids = append(ids, res.JobID)
		}
		by[res.JobID] = append(by[res.JobID], res)
	}
	var errs []error
	for _, id := range ids {
		if _, err := r.eng.Apply(ctx, id, by[id]); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Cancel cancels job id with reason and returns once the cancel is saved.
// Its actions in flight are told to stop: in this process at once, in
// others when their workers see the job change.
func (r *Runner) Cancel(ctx context.Context, id job.ID, reason string) error {
	if err := r.usable(); err != nil {
		return err
	}
	_, err := r.eng.Cancel(ctx, id, reason)
	return err
}

// Resume dispatches again the outstanding actions of the jobs named that
// have no queue entry, and re-creates their missing timers.
func (r *Runner) Resume(ctx context.Context, ids ...job.ID) error {
	if err := r.usable(); err != nil {
		return err
	}
	_, err := r.eng.Recover(ctx, ids...)
	return err
}

// Status returns the job as stored.
func (r *Runner) Status(ctx context.Context, id job.ID) (job.Job, error) {
	return r.st.Load(ctx, id)
}

// Wait blocks until job id has finished, whichever worker finished it,
// and returns it. It watches the job's record, and loads the job only
// once the record says it ended.
func (r *Runner) Wait(ctx context.Context, id job.ID) (job.Job, error) {
	polls := 0 // since the watch last fired
	var last time.Time
	for {
		var ch <-chan zk.Event
		var m meta
		pace(ctx, &last)
		err := r.c.do(ctx, "watch job "+string(id), func() (err error) {
			var data []byte
			data, _, ch, err = r.c.c.GetW(r.c.l.job(id))
			if err == nil {
				m, err = decodeMeta(id, data)
			}
			return err
		})
		switch {
		case errors.Is(err, zk.ErrNoNode):
			return job.Job{}, fmt.Errorf("job %s: %w", id, store.ErrNotFound)
		case err != nil && !errors.Is(err, job.ErrCorrupt):
			return job.Job{}, fmt.Errorf("job %s: wait: %w", id, err)
		case err != nil || m.Status != job.StatusRunning.String():
			// Ended, or a record Load has the last word on.
			j, err := r.st.Load(ctx, id)
			if err != nil {
				return job.Job{}, err
			}
			if j.Done() {
				return j, nil
			}
		}
		// The watch is the signal; a slow poll backs it up (a watch can be
		// lost with the connection).
		polls++
		t := time.NewTimer(r.c.backoff.Wait(polls))
		select {
		case <-ch:
			polls = 0
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return job.Job{}, fmt.Errorf("job %s: wait: %w", id, ctx.Err())
		}
		t.Stop()
	}
}

// stopLocal cancels the handlers of this process that run the actions a
// transition told to stop.
func (r *Runner) stopLocal(acts []job.Action) {
	if len(acts) == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, a := range acts {
		if cancel, ok := r.running[keyName(a.JobID, a.ID)]; ok {
			cancel(runner.ErrStopped)
		}
	}
}

// release deletes a claim and its entry, at the version claimed: the
// action is done with (its result applied, or ignored), or not to be run.
// An entry already gone (its job was deleted) leaves the claim alone to
// delete.
func (r *Runner) release(ctx context.Context, c consumed) {
	ctx = context.WithoutCancel(ctx)
	_, failed, err := r.c.multi(ctx, "release "+c.entry, c.ops())
	if failed == 0 && errors.Is(err, zk.ErrNoNode) {
		err = r.c.delete(ctx, c.claim, -1)
	}
	if err != nil && !errors.Is(err, zk.ErrNoNode) && !errors.Is(err, zk.ErrBadVersion) {
		r.log.Warn("could not delete a queue entry", "entry", c.entry, "err", err)
	}
}

// dropStopped deletes the unclaimed queue entries of the actions a
// transition stopped (see conn.dropStopped); a failure is logged: a
// worker that claims such an entry later drops it.
func (r *Runner) dropStopped(ctx context.Context, stops []job.Action) {
	if len(stops) == 0 {
		return
	}
	if err := r.c.dropStopped(context.WithoutCancel(ctx), stops); err != nil {
		r.log.Warn("could not delete the queue entries of stopped actions", "job", stops[0].JobID, "err", err)
	}
}

// handBack deletes only the claim: the entry stays for another worker.
// It does so only while the entry is at the version this claim gave it: a
// worker whose session expired meanwhile, and whose action another
// worker claimed since, must not delete that worker's claim.
func (r *Runner) handBack(c consumed) {
	_, _, err := r.c.multi(context.Background(), "hand back "+c.claim, []any{
		&zk.CheckVersionRequest{Path: c.entry, Version: c.ver},
		&zk.DeleteRequest{Path: c.claim, Version: -1},
	})
	if err != nil && !errors.Is(err, zk.ErrNoNode) && !errors.Is(err, zk.ErrBadVersion) {
		r.log.Warn("could not hand back a claim", "claim", c.claim, "err", err)
	}
}

// Run registers the worker (a runner with a Registry; see the package
// doc, Placement), resumes the store's unfinished jobs (unless
// NoResume), then claims and runs actions and fires timers until ctx
// ends or Close is called. It returns nil then, once the actions in
// flight have finished or been handed back (DrainTimeout), and deletes
// its live node (its registration stays: a restart under the same name
// is the same worker). It returns nil too once the worker was drained
// and deregistered (Drained). A live process under the same name is a
// NameTakenError, returned at once.
func (r *Runner) Run(ctx context.Context) error {
	ctx, done, err := r.life.Start(ctx)
	switch {
	case errors.Is(err, runner.ErrRunning):
		return ErrRunning
	case err != nil:
		return nil // closed before it ran: stop at once, as Close asks
	}
	defer done()
	ctx, stop := context.WithCancel(ctx)
	defer stop()

	var wg sync.WaitGroup
	if r.o.Registry != nil {
		r.host, _ = os.Hostname()
		r.started = time.Now().UTC().Truncate(time.Second)
		if err := r.register(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		defer r.unregisterLive()
	}
	if !r.o.NoResume {
		r.resumeAll(ctx)
	}
	if r.o.Registry != nil {
		if err := r.reg.start(ctx); err != nil {
			return nil // ctx ended while it read the registry
		}
		defer r.reg.stop()
		wg.Go(func() { r.sessionLoop(ctx) })
		wg.Go(func() { r.publishLoop(ctx) })
		wg.Go(func() { r.drainLoop(ctx, stop) })
		wg.Go(func() { r.trackPeers(ctx) })
		defer r.endQuarantines()
	}
	wg.Go(func() { r.timerLoop(ctx) })
	wg.Go(func() { r.signalLoop(ctx) })
	wg.Go(func() { r.retentionLoop(ctx) })
	// Claims are renewed (and others' watched) until the results of the
	// actions the drain waits for are applied.
	leaseCtx, stopLeases := context.WithCancel(context.WithoutCancel(ctx))
	wg.Go(func() { r.leaseLoops(leaseCtx) })
	r.workLoop(ctx)
	r.results.Wait() // the results of the actions that ended are applied
	stopLeases()
	r.stopWatchers()
	r.watchers.Wait()
	wg.Wait()
	return nil
}

// Close stops Run, if it runs, and waits for it to return. It does not
// close the store.
func (r *Runner) Close() error {
	r.life.Close()
	return nil
}

// sessionLoop registers the worker again when the connection starts a
// new session (the old one expired, and its live node with it).
func (r *Runner) sessionLoop(ctx context.Context) {
	ch := r.c.newSessions()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ch:
			r.log.Warn("new ZooKeeper session: registering the worker again; the claims of the old one went with it, and their actions are claimed again from the queue (results of them not yet applied are dropped)")
			if err := r.register(ctx); err != nil && ctx.Err() == nil {
				r.log.Error("registering the worker again", "err", err)
			}
		}
	}
}

// resumeAll dispatches again what the store's unfinished jobs are
// missing, a page at a time (runner.RecoverAll).
func (r *Runner) resumeAll(ctx context.Context) {
	if _, _, err := runner.RecoverAll(ctx, r.st, 0, r.eng.Recover, r.log); err != nil && ctx.Err() == nil {
		r.log.Error("listing unfinished jobs to resume", "err", err)
	}
}

// sleep waits d or until ctx ends or wake receives.
func sleep(ctx context.Context, d time.Duration, wake ...<-chan zk.Event) {
	t := time.NewTimer(d)
	defer t.Stop()
	var w0, w1 <-chan zk.Event
	if len(wake) > 0 {
		w0 = wake[0]
	}
	if len(wake) > 1 {
		w1 = wake[1]
	}
	select {
	case <-t.C:
	case <-ctx.Done():
	case <-w0:
	case <-w1:
	}
}
