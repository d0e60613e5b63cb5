package kafka

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/placement"
	"github.com/batonwf/baton/runner"
	"github.com/batonwf/baton/store"
)

// DefaultClaimLease is Options.ClaimLease's default.
const DefaultClaimLease = 60 * time.Second

// Role is what a Runner does.
type Role uint8

// Roles. The zero Role is RoleAll.
const (
	RoleAll       Role = iota // restarter and worker
	RoleRestarter             // owns restarter partitions and makes transitions; runs no action
	RoleWorker                // runs actions; makes no transition
	RoleClient                // neither: submits, cancels, delivers and waits
)

var roleNames = [...]string{"all", "restarter", "worker", "client"}

func (r Role) String() string {
	if int(r) < len(roleNames) {
		return roleNames[r]
	}
	return fmt.Sprintf("Role(%d)", uint8(r))
}

func (r Role) restarts() bool { return r == RoleAll || r == RoleRestarter }
func (r Role) works() bool    { return r == RoleAll || r == RoleWorker }

// Options configures a Runner.
type Options struct {
	// WorkerOptions are what every runner shares. A worker subscribes to
	// the action topics of its Registry's names; with a Registry, Submit
	// refuses workflows naming actions it has no handler for. A nil
	// Logger uses the store's. Name (runner.WorkerOptions.Name) names the
	// runner in claims, logs and what its worker announces to the group.
	runner.WorkerOptions
	// Store is the Kafka store: its configuration names the topics and
	// groups, and the restarter claims its partitions through it; required.
	Store *Store
	// Role says whether the runner is a restarter, a worker, both (the
	// default) or neither.
	Role Role
	// Appliers bounds how many jobs of one partition's batch the restarter
	// applies at once; default 8.
	Appliers int
	// MaxBatch bounds the messages a restarter takes in one batch, and the
	// results of one job applied in one step; default 1024.
	MaxBatch int
	// noResume keeps a restarter from recovering the jobs of a partition
	// it takes over (their outstanding actions are then dispatched again
	// only when their results are delivered again). Set only by the
	// package's tests (export_test.go): the conformance suite's runners
	// that must not resume.
	noResume bool
	// Groups tunes the consumer groups.
	Groups GroupTiming
	// Capacity is the most actions the worker runs at once, and weighs
	// the runner's share of the partitions in both its consumer groups
	// (the group balancer gives each member the floor or the ceiling of
	// its capacity-weighted share of each topic); default Workers.
	// Negative is an error.
	Capacity int
	// Limits bounds, per action name, how many actions of that name the
	// worker runs at once, besides Capacity. A limit must be 1 to
	// Capacity, for a name the Registry has a handler for.
	Limits map[string]int
	// ClaimLease is how long the worker may make no progress (no
	// handler starts or ends) while an action waits for a slot before it
	// counts as wedged: it then leaves the workers' group (its partitions,
	// and the actions it runs, go to the others) and joins again once one
	// of its handlers has returned. Default DefaultClaimLease; negative:
	// never.
	ClaimLease time.Duration
	// Quarantine is the policy by which the worker stops taking an
	// action name that keeps failing here while others succeed at it
	// (see placement.Quarantine); the zero value is
	// placement.DefaultQuarantine.
	Quarantine placement.Quarantine
	// Draining makes the runner a member that gets no partitions in
	// either group (it owns no job and runs no action) while the groups
	// have a member that is not draining; members that drain announce it
	// in every join.
	Draining bool
}

// Errors of the runner. Each wraps the runner package's error of the same
// name, so that errors.Is matches either.
var (
	// ErrClosed is returned by calls made after Close, or after Run
	// returned.
	ErrClosed = fmt.Errorf("kafka: %w", runner.ErrClosed)
	// ErrRunning is returned by a second call of Run.
	ErrRunning = fmt.Errorf("kafka: %w", runner.ErrRunning)
)

// Runner runs baton on Kafka: as a restarter it owns partitions of the
// restarter topic and makes the transitions of their jobs; as a worker it
// runs the actions of its Registry's names; and it submits, cancels,
// delivers results and waits for jobs. Its methods are safe for concurrent
// use.
type Runner struct {
	o     Options
	st    *Store
	cfg   *Config
	log   *slog.Logger
	eng   *runner.Engine[struct{}]
	tp    transport
	rw    *producer // the restarter topic
	aw    *producer // the action topics
	sw    *producer // the stops topic
	stats counters

	lc        runner.Lifecycle
	closeOnce sync.Once // of the writers

	mu      sync.Mutex
	loops   map[int]*loop // the restarter partitions this runner owns
	control controlView   // the control topic as read so far (control.go)

	// draining is set once the control topic says the runner drains:
	// every join announces it from then on; drained once Run returns
	// for that reason.
	draining, drained atomic.Bool

	w *worker
}

type counters struct {
	malformed, unknownJobs, stale, malformedActions, lost, oversized, badMembers atomic.Int64
	badControl, quarantines, wedged                                              atomic.Int64
}

// Stats counts what a Runner skipped or turned into failures.
type Stats struct {
	Malformed        int64 // restarter messages that are not baton's, skipped
	UnknownJobs      int64 // results and cancels for jobs their partition does not hold, skipped
	Stale            int64 // results for an earlier incarnation of their job, ignored
	MalformedActions int64 // action messages a worker could not read, skipped
	Lost             int64 // at-most-once actions reported lost
	Oversized        int64 // actions and results too large for a message, failed
	Fenced           int64 // state records read that a newer claim fenced
	// BadMembers counts the group members whose user data did not parse
	// when this runner's member led a rebalance (each was given the share
	// of a member of capacity 1 that owned nothing).
	BadMembers int64
	// BadControl counts the control-topic records that did not parse,
	// skipped.
	BadControl int64
	// Quarantines counts the quarantines the worker started; Wedged the
	// times it left the workers' group for making no progress for a
	// ClaimLease.
	Quarantines, Wedged int64
}

// Stats returns the runner's counts so far.
func (r *Runner) Stats() Stats {
	return Stats{
		Malformed: r.stats.malformed.Load(), UnknownJobs: r.stats.unknownJobs.Load(), Stale: r.stats.stale.Load(),
		MalformedActions: r.stats.malformedActions.Load(), Lost: r.stats.lost.Load(), Oversized: r.stats.oversized.Load(),
		Fenced: r.st.stats.fenced.Load(), BadMembers: r.stats.badMembers.Load(),
		BadControl: r.stats.badControl.Load(), Quarantines: r.stats.quarantines.Load(), Wedged: r.stats.wedged.Load(),
	}
}

// New returns a runner. It does not start working until Run.
func New(o Options) (*Runner, error) {
	if o.Store == nil {
		return nil, errors.New("kafka: Options.Store is required")
	}
	if o.Role > RoleClient {
		return nil, fmt.Errorf("kafka: unknown role %d", o.Role)
	}
	if o.Logger == nil {
		o.Logger = o.Store.log
	}
	var err error
	if o.WorkerOptions, err = o.WithDefaults(); err != nil {
		return nil, fmt.Errorf("kafka: %w", err)
	}
	switch {
	case o.Capacity < 0:
		return nil, fmt.Errorf("kafka: Options.Capacity is %d; want 0 (the default: Workers, %d) or more", o.Capacity, o.Workers)
	case o.Capacity == 0:
		o.Capacity = o.Workers
	}
	if strings.Contains(o.Name, "/") {
		return nil, fmt.Errorf("kafka: Options.Name %q holds a '/': the control topic keys records by worker name", o.Name)
	}
	for _, name := range slices.Sorted(maps.Keys(o.Limits)) {
		n := o.Limits[name]
		switch {
		case o.Registry == nil || !slices.Contains(o.Registry.Names(), name):
			return nil, fmt.Errorf("kafka: Options.Limits names action %q, which the worker has no handler for", name)
		case n < 1 || n > o.Capacity:
			return nil, fmt.Errorf("kafka: Options.Limits[%q] is %d; want 1 to the capacity, %d", name, n, o.Capacity)
		}
	}
	if o.ClaimLease == 0 {
		o.ClaimLease = DefaultClaimLease
	}
	o.Quarantine = o.Quarantine.WithDefaults()
	if o.Appliers <= 0 {
		o.Appliers = 8
	}
	if o.MaxBatch <= 0 {
		o.MaxBatch = 1024
	}
	o.Groups.fill()
	st := o.Store
	r := &Runner{o: o, st: st, cfg: &st.cfg, loops: map[int]*loop{}}
	r.log = o.Logger.With("runner", o.Name)
	r.tp = transport{r}
	eng, err := runner.NewEngine(runner.EngineOptions[struct{}]{Store: st, Transport: r.tp, Logger: r.log, Hooks: o.Hooks, Now: o.Clock.Now})
	if err != nil {
		return nil, err
	}
	r.eng = eng
	r.rw = r.cfg.writer(r.cfg.restarterTopic(), jobBalancer{}, st.limit, st.adm.exists)
	r.aw = r.cfg.writer("", actionBalancer{}, st.limit, st.adm.exists)
	r.sw = r.cfg.writer(r.cfg.stopsTopic(), jobBalancer{}, st.limit, st.adm.exists)
	if o.Role.works() && o.Registry != nil {
		r.w = newWorker(r)
	}
	return r, nil
}

// balancer returns the assignor of the runner's member of group, which
// announces the runner from now on.
func (r *Runner) balancer(group string) *groupBalancer {
	me := memberData{Name: r.o.Name, Capacity: r.o.Capacity, Since: r.o.Clock.Now().UTC(), Draining: r.o.Draining}
	b := newGroupBalancer(group, me, r.log, &r.stats.badMembers)
	b.draining = &r.draining
	b.hooks = r.o.Hooks
	return b
}

// usable returns ErrClosed once Close was called or Run returned.
func (r *Runner) usable() error {
	if r.lc.Usable() != nil {
		return ErrClosed
	}
	return nil
}

// Run works (as a restarter, a worker or both, as Options.Role says) until
// ctx ends or Close is called, and returns nil then: the worker stops
// taking actions, lets those in flight finish (DrainTimeout), commits what
// ended, and leaves its group; then the restarter finishes its batch,
// commits, and leaves its group.
func (r *Runner) Run(ctx context.Context) error {
	ctx, done, err := r.lc.Start(ctx)
	switch {
	case errors.Is(err, runner.ErrRunning):
		return ErrRunning
	case err != nil:
		r.closeWriters() // Close did; done again in case it is under way
		return nil
	}
	defer done()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// work ends with ctx, or when the control topic says the runner
	// drains.
	work, drain := context.WithCancelCause(ctx)
	defer drain(nil)
	watchCtx, stopWatching := context.WithCancel(ctx)
	defer stopWatching()
	var wwg sync.WaitGroup
	if r.o.Role != RoleClient {
		wwg.Go(func() { r.watchControl(watchCtx, drain) })
	}

	restarterCtx, stopRestarter := context.WithCancel(context.WithoutCancel(ctx))
	defer stopRestarter()
	var rwg sync.WaitGroup
	if r.o.Role.restarts() {
		m := &member{cfg: r.cfg, group: r.cfg.restarterGroup(), topics: []string{r.cfg.restarterTopic()}, log: r.log,
			timing: r.o.Groups, serve: r.serveRestarter, balancer: r.balancer(r.cfg.restarterGroup())}
		rwg.Go(func() { m.run(restarterCtx) })
	}
	if r.w != nil {
		r.w.run(ctx, work) // returns once work ended and the actions in flight are over
	} else {
		<-work.Done()
	}
	stopRestarter()
	rwg.Wait()
	stopWatching()
	wwg.Wait()
	if errors.Is(context.Cause(work), errDrained) {
		r.deregister(ctx)
		r.drained.Store(true)
	}
	r.closeWriters()
	return nil
}

// Drained reports whether Run returned because the runner drained
// (Store.Drain): it finished what it ran, left its groups and deleted
// its records from the control topic.
func (r *Runner) Drained() bool { return r.drained.Load() }

// Close stops Run, if it runs, and waits for it to return; it closes the
// runner's writers and their connections whether or not Run ran (a Run
// called after Close returns at once). It does not close the store.
func (r *Runner) Close() error {
	r.lc.Close()
	r.closeWriters() // Run closed them if it ran
	return nil
}

// closeWriters closes the writers and their connections, once.
func (r *Runner) closeWriters() {
	r.closeOnce.Do(func() {
		for _, w := range []*producer{r.rw, r.aw, r.sw} {
			_ = closeWriter(w)
		}
	})
}

// Submit starts job id: it checks the workflow (and, with a Registry, that
// every action has a handler), hands it to the restarter that owns the
// job's partition through the restarter topic, and returns once the job
// is stored. An ID in use is an error wrapping store.ErrExists. Submit
// waits for a restarter: with none running it returns when ctx ends.
func (r *Runner) Submit(ctx context.Context, id job.ID, root ast.Node) error {
	if err := r.usable(); err != nil {
		return err
	}
	if err := id.Check(); err != nil {
		return err
	}
	if err := runner.CheckHandlers(r.o.Registry, id, root); err != nil {
		return err
	}
	inc := rand.Uint64() | 1
	started := r.o.Clock.Now()
	if _, err := job.New(id, root, job.WithIncarnation(inc), job.StartedAt(started)); err != nil {
		return err
	}
	m, err := submitMessage(id, inc, started, root)
	if err != nil {
		return err
	}
	if n := size(m); n > r.st.limit {
		return fmt.Errorf("job %s: the workflow is %d bytes as a message, over the limit of %d bytes (MaxMessageBytes, the topics' max.message.bytes)",
			id, n, r.st.limit)
	}
	in, _ := decodeInbound(m.Key, m.Value)
	if err := r.send(ctx, []input{{in: in, offset: -1}}, []kafka.Message{m}); err != nil && !errors.Is(err, store.ErrExists) {
		return fmt.Errorf("job %s: submit: %w", id, err)
	}
	var got job.Job
	err = r.waitFor(ctx, id, true, func(j job.Job) bool { got = j; return true })
	if err != nil {
		return fmt.Errorf("job %s: submit: %w", id, err)
	}
	if got.Incarnation() != inc {
		return fmt.Errorf("%w: %s", store.ErrExists, id)
	}
	return nil
}

// Deliver hands in results as if a worker had sent them. It returns once
// they are applied, or durable in the restarter topic.
func (r *Runner) Deliver(ctx context.Context, results ...job.Result) error {
	if err := r.usable(); err != nil {
		return err
	}
	ins := make([]input, 0, len(results))
	msgs := make([]kafka.Message, 0, len(results))
	for _, res := range results {
		if err := res.JobID.Check(); err != nil {
			return err
		}
		m := resultMessage(res, 0)
		if n := size(m); n > r.st.limit {
			return fmt.Errorf("job %s: result of %s is %d bytes as a message, over the limit of %d", res.JobID, res.ActionID, n, r.st.limit)
		}
		ins = append(ins, input{in: inbound{id: res.JobID, kind: typeResult, result: res}, offset: -1})
		msgs = append(msgs, m)
	}
	return r.send(ctx, ins, msgs)
}

// Cancel cancels job id with reason and returns once the cancel is saved.
// Cancelling a cancelled job is not an error; a finished job is one
// wrapping runner.ErrFinished, a missing one store.ErrNotFound. So is a
// job that finished otherwise while the cancel waited for its restarter
// (its last results were ahead of the cancel in the restarter topic).
func (r *Runner) Cancel(ctx context.Context, id job.ID, reason string) error {
	if err := r.usable(); err != nil {
		return err
	}
	if reason == "" {
		return fmt.Errorf("job %s: cancel needs a reason", id)
	}
	j, err := r.st.Load(ctx, id)
	if err != nil {
		return fmt.Errorf("job %s: %w", id, err)
	}
	if _, ok := j.Cancelled(); ok {
		return nil
	}
	if j.Done() {
		return fmt.Errorf("job %s: cancel: %w (%s)", id, runner.ErrFinished, j.Status())
	}
	// Stamped, so that the job's clock (and its retention) counts from
	// the cancel.
	at := r.o.Clock.Now()
	m := cancelMessage(id, reason, at)
	if n := size(m); n > r.st.limit {
		return fmt.Errorf("job %s: the cancel's reason is too long (%d bytes as a message, over %d)", id, n, r.st.limit)
	}
	res := job.CancelResult(id, reason)
	res.At = at.UTC()
	in := input{in: inbound{id: id, kind: typeCancel, result: res}, offset: -1}
	if err := r.send(ctx, []input{in}, []kafka.Message{m}); err != nil {
		return fmt.Errorf("job %s: cancel: %w", id, err)
	}
	var got job.Job
	if err := r.waitFor(ctx, id, false, func(j job.Job) bool {
		got = j
		_, ok := j.Cancelled()
		return ok || j.Done()
	}); err != nil {
		return err
	}
	if _, ok := got.Cancelled(); !ok {
		// The job's last results were applied before the cancel (they
		// came first in the restarter topic).
		return fmt.Errorf("job %s: cancel: %w (%s before the cancel was applied)", id, runner.ErrFinished, got.Status())
	}
	return nil
}

// Status returns the job as stored.
func (r *Runner) Status(ctx context.Context, id job.ID) (job.Job, error) {
	return r.st.Load(ctx, id)
}

// Wait blocks until job id has finished, whichever restarter finished it,
// and returns it.
func (r *Runner) Wait(ctx context.Context, id job.ID) (job.Job, error) {
	var got job.Job
	err := r.waitFor(ctx, id, false, func(j job.Job) bool { got = j; return j.Done() })
	return got, err
}

// waitFor loads job id until cond holds (see watch). A missing job is an
// error unless absentOK.
func (r *Runner) waitFor(ctx context.Context, id job.ID, absentOK bool, cond func(job.Job) bool) error {
	return r.watch(ctx, id, func(j job.Job, err error) (bool, error) {
		switch {
		case err == nil:
			return cond(j), nil
		case absentOK && errors.Is(err, store.ErrNotFound):
			return false, nil
		}
		return false, err
	})
}

// watch loads job id until check, given what Load returned, says it is
// done or returns an error, waking when the store sees a change of the
// job and polling (more slowly as time goes) for the changes made in
// other processes. An error of check that may pass (the cluster is out of
// reach, a partition changes hands) is tried again; a missing or damaged
// job, a closed store and ctx's end are returned.
func (r *Runner) watch(ctx context.Context, id job.ID, check func(job.Job, error) (bool, error)) error {
	for wait := time.Millisecond; ; wait = min(2*wait, 100*time.Millisecond) {
		ch, done := r.st.changes(id)
		ok, err := check(r.st.Load(ctx, id))
		switch {
		case ok:
			done()
			return nil
		case err == nil:
		case errors.Is(err, store.ErrNotFound), errors.Is(err, job.ErrCorrupt), errors.Is(err, store.ErrClosed), ctx.Err() != nil:
			done()
			return err
		default:
			// The cluster is out of reach, or a partition changes hands:
			// try again.
			r.log.Debug("waiting for a job: loading it failed; trying again", "job", id, "err", err)
			wait = max(wait, 50*time.Millisecond)
		}
		t := time.NewTimer(wait)
		select {
		case <-ch:
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			done()
			return fmt.Errorf("job %s: wait: %w", id, ctx.Err())
		}
		t.Stop()
		done()
	}
}

// send delivers inputs: those of jobs whose partition this runner owns to
// the partition's loop, waiting for them to be applied; the others, and
// those the loop gave back, to the restarter topic (msgs[i] is ins[i] as a
// message). It returns the first error of an input applied here.
func (r *Runner) send(ctx context.Context, ins []input, msgs []kafka.Message) error {
	var remote []kafka.Message
	var acks []chan error
	var errs []error
	for i, in := range ins {
		l := r.loopFor(in.in.id)
		if l == nil {
			remote = append(remote, msgs[i])
			continue
		}
		in.ack = make(chan error, 1)
		if !l.hand(in) {
			remote = append(remote, msgs[i])
			continue
		}
		acks = append(acks, in.ack)
		// Wait for each before the next: the results of one job apply in
		// the order given.
		select {
		case err := <-in.ack:
			acks = acks[:len(acks)-1]
			if errors.Is(err, errLoopGone) {
				remote = append(remote, msgs[i])
			} else if err != nil {
				errs = append(errs, err)
			}
		case <-ctx.Done():
			return fmt.Errorf("kafka: %w", ctx.Err())
		}
	}
	if len(remote) > 0 {
		if err := r.rw.WriteMessages(ctx, remote...); err != nil {
			errs = append(errs, fmt.Errorf("kafka: write to %s: %w", r.cfg.restarterTopic(), writeError(err)))
		}
	}
	return errors.Join(errs...)
}

// writeError returns the first error of a kafka.WriteErrors (errors.Is
// does not see into one), or err.
func writeError(err error) error {
	var we kafka.WriteErrors
	if errors.As(err, &we) {
		for _, e := range we {
			if e != nil {
				return e
			}
		}
	}
	return err
}
