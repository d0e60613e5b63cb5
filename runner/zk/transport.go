package zk

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	"github.com/batonwf/baton/store"
)

// errClaimLost is returned when a worker's result cannot be applied
// because its claim is no longer its own: its session expired (its claim
// node went away with it) and, perhaps, another worker claimed the
// action. Its result changes nothing.
var errClaimLost = errors.New("zk: the claim on this action was lost (session expired?); the result is abandoned")

// consumed is what applying a worker's result deletes in the same
// multi-op: the action's queue entry, at the version the worker claimed it
// at, and the worker's claim. The results of one Engine.ApplyWith hand
// theirs to transport.Commit as its argument (runner.Transport's R). A
// signal's consumes its signal node (entry) and no claim (claim empty).
type consumed struct {
	entry string
	ver   int32
	claim string
	// claimVer is the version the claim is deleted at when checkClaim is
	// set: a worker breaking another's expired lease (lease.go) must fail
	// if the owner renewed it meanwhile. Otherwise any version.
	claimVer   int32
	checkClaim bool
}

func (c consumed) ops() []any {
	cv := int32(-1)
	if c.checkClaim {
		cv = c.claimVer
	}
	if c.claim == "" {
		return []any{&zk.DeleteRequest{Path: c.entry, Version: c.ver}}
	}
	return []any{
		&zk.DeleteRequest{Path: c.entry, Version: c.ver},
		&zk.DeleteRequest{Path: c.claim, Version: cv},
	}
}

// consumedAt returns the index in cons of the one whose ops hold the op
// at index op of all their ops, in order.
func consumedAt(cons []consumed, op int) int {
	for i, c := range cons {
		n := len(c.ops())
		if op < n {
			return i
		}
		op -= n
	}
	return len(cons)
}

// claimLost is the error of a commit that failed because the claim of
// the i-th consumed action was lost.
type claimLost struct {
	i   int
	err error
}

func (e *claimLost) Error() string { return fmt.Sprintf("%v: %v", errClaimLost, e.err) }
func (e *claimLost) Unwrap() error { return errClaimLost }

// entryData is a queue entry's data: what an operator reads, and what a
// worker needs to decide whether it has a handler before it claims.
type entryData struct {
	Job     job.ID `json:"job"`
	ID      string `json:"id"`
	Action  string `json:"action"`
	Claimed int    `json:"claimed,omitempty"` // claims so far
	Worker  string `json:"worker,omitempty"`  // the last claimant
	// Act is the action itself when it is small (maxEmbedded): a worker
	// then claims it without loading the job.
	Act *job.Action `json:"act,omitempty"`
}

// maxEmbedded bounds the encoded action an entry carries.
const maxEmbedded = 16 << 10

// entryOf is the data of action a's queue entry; worker names the worker
// that claims it as the entry is created, or is empty.
func entryOf(a job.Action, worker string) []byte {
	ed := entryData{Job: a.JobID, ID: a.ID, Action: a.Name, Act: &a}
	if worker != "" {
		ed.Claimed, ed.Worker = 1, worker
	}
	b, _ := json.Marshal(ed)
	if len(b) > maxEmbedded {
		ed.Act = nil
		b, _ = json.Marshal(ed)
	}
	return b
}

// transport is the runner's runner.Transport: a transition is one
// multi-op that checks and sets the job's record, appends its step,
// deletes what the results consumed, and creates the new queue entries
// and timers, claiming for this worker those its work loop takes
// (claimer).
type transport struct {
	r      *Runner
	claims claimer
}

var _ runner.Transport[[]consumed] = transport{}

// Commit writes tr in one multi-op (see the package doc) with the deletes
// of cons: the queue entries and claims of the actions whose results tr
// applies. A claim lost meanwhile fails it with a *claimLost naming which.
func (t transport) Commit(ctx context.Context, tr job.Transition, cons []consumed) error {
	r := t.r
	defer r.stopLocal(tr.Stops)
	id := tr.Job.ID()
	var (
		ops  []any
		base int // ops before the queue's
		sv   *save
		cr   func(context.Context, meta) error
		m    meta
		err  error
		// bigCreate: the job is created unfinished (createOps)
		bigCreate bool
	)
	switch {
	case tr.Created():
		if err := store.CheckCreate(tr.Job); err != nil {
			return err
		}
		if err := r.st.usable(id); err != nil {
			return err
		}
		enc, err := job.Encode(tr.Job)
		if err != nil {
			return err
		}
		bigCreate = len(enc) > maxMulti/2 // see createOps
		ops, m, cr, err = r.st.createOps(ctx, tr.Job, enc)
		if err != nil {
			return err
		}
	case tr.Changed():
		if err := store.CheckSave(tr.Job, tr.Step); err != nil {
			return err
		}
		if err := r.st.usable(id); err != nil {
			return err
		}
		if sv, err = r.st.prepareSave(ctx, tr.Job, tr.Step); err != nil {
			return err
		}
		ops = slices.Clone(sv.ops)
	default:
		return nil
	}
	consStart := len(ops)
	for _, c := range cons {
		ops = append(ops, c.ops()...)
	}
	base = len(ops)
	// The new actions this worker has free slots for are claimed by this
	// very multi-op and run here (claimer).
	now := time.Now().UnixMilli()
	mine := t.claims.reserve(tr.Actions, now)
	queue := r.queueOps(tr.Actions, tr.Timers, mine, now)
	size := 0
	for _, op := range ops {
		size += opSize(op)
	}
	// A job too large to create in one request is created unfinished,
	// and its snapshot written after (createOps): its entries wait until
	// it is finished, so that no worker claims an action of a job it
	// cannot read yet.
	unfinished := sv == nil && bigCreate
	if mine != nil && (unfinished || size+queueSize(queue) > maxMulti) {
		t.claims.cancel(mine)
		mine = nil
		queue = r.queueOps(tr.Actions, tr.Timers, nil, now)
	}
	first := queue
	var rest []any
	if unfinished || size+queueSize(queue) > maxMulti {
		// Too many new actions for one request: the state, a marker, and
		// as many entries as fit; the rest after. A runner that finds the
		// marker left behind dispatches the job again.
		first = nil
		size += opSize(r.c.createOp(r.c.l.dispatchingJob(id), nil, 0))
		for i, op := range queue {
			if unfinished || size+opSize(op) > maxMulti {
				rest = queue[i:]
				break
			}
			first = append(first, op)
			size += opSize(op)
		}
		ops = append(ops, r.c.createOp(r.c.l.dispatchingJob(id), nil, 0))
		base++
	}
	ops = append(ops, first...)
	// The job's final transition releases its pins (job.Pins): their
	// allocations and index entries go in this multi-op, at most two
	// deletes per pin; none is written per action.
	pinStart := len(ops)
	if tr.Job.Done() && len(rest) == 0 {
		ops = append(ops, r.releaseOps(ctx, tr.Job)...)
	}
	what := fmt.Sprintf("commit job %s v%d", id, tr.Job.Version())
	if err := r.c.fault(faultCommit, &tr); err != nil {
		t.claims.cancel(mine)
		return fmt.Errorf("%s: %w", what, err)
	}
	_, failed, retried, err := r.c.multiRetried(ctx, what, ops)
	if err != nil && failed >= pinStart && pinStart < len(ops) {
		// A pin's allocation changed since it was read (moved, or
		// released by a drain): the transition goes without the release,
		// which is done after, at any version.
		r.log.Debug("a pin's allocation changed under a final transition: released after it", "job", id, "err", err)
		pins := ops[pinStart:]
		ops = ops[:pinStart]
		if _, failed, retried, err = r.c.multiRetried(ctx, what, ops); err == nil {
			for _, op := range pins {
				d := op.(*zk.DeleteRequest)
				if err := r.c.delete(ctx, d.Path, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
					r.log.Warn("could not release a pin", "job", id, "node", d.Path, "err", err)
				}
			}
		}
	}
	if err != nil && r.ownsClaim(ctx, mine) {
		// The multi-op was applied and its reply lost with the connection
		// (the retry then failed on what the first attempt wrote): the
		// claim it made exists, in this session. It is this commit's.
		r.log.Info("a commit's reply was lost, and it was applied", "job", id, "version", tr.Job.Version())
		err = nil
	}
	if err != nil && retried && sv != nil && (failed == 0 || failed == 1) {
		// A reply was lost, and the retry failed on the job's record
		// (moved, or the step there): by this commit's first attempt,
		// or by another transition. The claims it would have made here
		// are not this session's (or it made none): the step tells.
		r.lostOutcome(ctx, sv, tr.Job.Version())
	}
	if err != nil {
		t.claims.cancel(mine)
		switch {
		case sv != nil && failed >= 0 && failed < len(sv.ops):
			sv.abandon(ctx)
			return sv.mapErr(failed, err)
		case sv == nil && failed == 0 && errors.Is(err, zk.ErrNodeExists):
			return fmt.Errorf("job %s: %w", id, store.ErrExists)
		case failed >= consStart && failed < base:
			if sv != nil {
				sv.abandon(ctx)
			}
			return fmt.Errorf("job %s: %w", id, &claimLost{i: consumedAt(cons, failed-consStart), err: err})
		}
		if sv != nil {
			sv.abandon(ctx)
		}
		return fmt.Errorf("job %s: %s: %w", id, what, err)
	}
	if err := r.c.fault(faultCommitted, &tr); err != nil {
		t.claims.cancel(mine)
		return fmt.Errorf("%s applied, then: %w", what, err)
	}
	if sv != nil {
		sv.done(ctx, sv.old)
	} else if err := cr(ctx, m); err != nil {
		// The job's record is unfinished: leave the actions to whichever
		// worker finds them once it is.
		for _, c := range mine.claims() {
			r.handBack(c)
		}
		t.claims.cancel(mine)
		return err
	}
	stops := m.Stops
	if sv != nil {
		stops = sv.m.Stops
	}
	t.claims.start(mine, stops)
	r.dropStopped(ctx, tr.Stops)
	if len(rest) > 0 {
		if err := r.createAll(ctx, rest, nil); err != nil {
			return fmt.Errorf("job %s v%d: %w: %w", id, tr.Job.Version(), runner.ErrNotDispatched, err)
		}
		if err := r.c.delete(ctx, r.c.l.dispatchingJob(id), -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
			r.log.Warn("could not delete a dispatching marker", "job", id, "err", err)
		}
	}
	return nil
}

// lostOutcome logs what became of a commit (sv, writing version v)
// whose reply was lost and whose retry failed on the job's record, when
// no claim it made for this worker shows it was applied (ownsClaim): its
// session expired since, which took the claims, or it made none. The
// step node it wrote, if stored as it wrote it, shows it was applied: its
// results are in the job (the job, read again, ignores them as
// duplicates) and its new actions wait in the queue, unclaimed, for any
// worker. Otherwise another transition moved the job, and the results
// are applied to the job as read again (a conflict, logged at DEBUG).
func (r *Runner) lostOutcome(ctx context.Context, sv *save, v uint64) {
	id := sv.j.ID()
	step, ok := sv.ops[1].(*zk.CreateRequest)
	if !ok {
		return
	}
	data, _, err := r.c.get(ctx, step.Path)
	switch {
	case err == nil && bytes.Equal(data, step.Data):
		r.log.Info("a commit's reply was lost, and it was applied (its step is stored); this worker holds no claim it made (they went with an expired session, or it made none), so its new actions wait in the queue for any worker", "job", id, "version", v)
	case err == nil, errors.Is(err, zk.ErrNoNode):
		// Not applied: another transition wrote the job.
	default:
		r.log.Info("the commit's outcome is unknown: its reply was lost, its retry found the job's record moved, and its step could not be read; the job is read again, and results it holds already are not applied twice", "job", id, "version", v, "err", err)
	}
}

// queueOps returns the creates of the queue entries of acts, queued at
// now (Unix milliseconds), and of the timer nodes of ts. The entries of
// the actions mine reserves are created claimed by this worker, each with
// its ephemeral claim. At-most-once actions come first, so that a
// transition split in parts (Commit) queues them in its first.
func (r *Runner) queueOps(acts []job.Action, ts []job.Timer, mine *reservation, now int64) []any {
	var ops []any
	for _, once := range []bool{true, false} {
		for i, a := range acts {
			if a.AtMostOnce != once {
				continue
			}
			name := entryName(a, now)
			if mine.mine(i) {
				ops = append(ops,
					r.c.createOp(r.c.l.entry(name), entryOf(a, r.o.Name), 0),
					r.c.createOp(r.c.l.claim(name), []byte(r.o.Name), zk.FlagEphemeral))
				continue
			}
			ops = append(ops, r.c.createOp(r.c.l.entry(name), entryOf(a, ""), 0))
		}
	}
	for _, tm := range ts {
		ops = append(ops, r.c.createOp(r.c.l.timer(tm), nil, 0))
	}
	return ops
}

func queueSize(ops []any) int {
	n := 0
	for _, op := range ops {
		n += opSize(op)
	}
	return n
}

// createAll creates nodes in multi-ops of at most maxMulti bytes; nodes
// that exist already (a dispatch again) are left as they are. With a
// guard (a version check of a job's record), every multi-op checks it
// too, and once it fails createAll stops with runner.ErrMoved.
func (r *Runner) createAll(ctx context.Context, ops []any, guard *zk.CheckVersionRequest) error {
	for len(ops) > 0 {
		n, size := 0, 0
		for n < len(ops) && (n == 0 || size+opSize(ops[n]) <= maxMulti) {
			size += opSize(ops[n])
			n++
		}
		if _, failed, err := r.c.multi(ctx, "queue", guarded(guard, ops[:n]...)); err != nil {
			if guard != nil && failed == 0 {
				return runner.ErrMoved
			}
			// Some exist (or the multi is refused): one at a time.
			for _, op := range ops[:n] {
				c := op.(*zk.CreateRequest)
				var err error
				if guard == nil {
					_, err = r.c.create(ctx, c.Path, c.Data, c.Flags)
				} else if _, failed, err = r.c.multi(ctx, "queue", guarded(guard, c)); failed == 0 {
					return runner.ErrMoved
				}
				if err != nil && !errors.Is(err, zk.ErrNodeExists) {
					return err
				}
			}
		}
		ops = ops[n:]
	}
	return nil
}

// guarded returns ops, after guard when there is one.
func guarded(guard *zk.CheckVersionRequest, ops ...any) []any {
	if guard == nil {
		return ops
	}
	return append([]any{guard}, ops...)
}

// Dispatch queues again the actions that have no queue entry, and
// creates the timer nodes that are missing: what recovery asks for. An
// at-most-once action with no entry is reported lost (the runner cannot
// tell it did not run).
func (t transport) Dispatch(ctx context.Context, acts []job.Action, ts []job.Timer) error {
	return t.r.dispatch(ctx, acts, ts, nil)
}

// DispatchJob is Dispatch of j's outstanding actions and timers while j's
// record is still at j's version (runner.JobDispatcher): the record is
// read before the queue is listed, and every multi-op that queues checks
// the record's znode version, so an action another worker applied meanwhile
// (its entry deleted by the same multi-op that moved the record) is never
// queued again. Once the record moved, it returns runner.ErrMoved.
func (t transport) DispatchJob(ctx context.Context, j job.Job, acts []job.Action, ts []job.Timer) error {
	r, id := t.r, j.ID()
	data, stat, err := r.c.get(ctx, r.c.l.job(id))
	if errors.Is(err, zk.ErrNoNode) {
		return fmt.Errorf("job %s: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return err
	}
	m, err := decodeMeta(id, data)
	if err != nil {
		return err
	}
	if inc, err := m.incarnation(); err != nil || inc != j.Incarnation() || m.Version != j.Version() {
		return runner.ErrMoved
	}
	return r.dispatch(ctx, acts, ts, &zk.CheckVersionRequest{Path: r.c.l.job(id), Version: stat.Version})
}

// dispatch is Dispatch, its queueing guarded by guard when not nil (see
// createAll).
func (r *Runner) dispatch(ctx context.Context, acts []job.Action, ts []job.Timer, guard *zk.CheckVersionRequest) error {
	have, err := r.queued(ctx)
	if err != nil {
		return err
	}
	var todo []job.Action
	var lost []job.Result
	for _, a := range acts {
		switch {
		case have[keyName(a.JobID, a.ID)]:
		case a.AtMostOnce:
			lost = append(lost, runner.LostResult(a, r.o.Clock.Now()))
		default:
			todo = append(todo, a)
		}
	}
	if err := r.createAll(ctx, r.queueOps(todo, ts, nil, time.Now().UnixMilli()), guard); err != nil {
		if errors.Is(err, runner.ErrMoved) {
			return err
		}
		return fmt.Errorf("dispatch: %w", err)
	}
	if len(lost) > 0 {
		// Applied here, not left to Run: a runner that only submits and
		// resumes (baton resume --zk) must not drop them.
		if err := r.Deliver(ctx, lost...); err != nil {
			return fmt.Errorf("dispatch: report at-most-once actions lost: %w", err)
		}
	}
	return nil
}

// queued returns the keys (keyName) of the actions with a queue entry.
func (r *Runner) queued(ctx context.Context) (map[string]bool, error) {
	names, err := r.c.children(ctx, r.c.l.queue())
	if err != nil {
		return nil, fmt.Errorf("list the queue: %w", err)
	}
	have := make(map[string]bool, len(names))
	for _, n := range names {
		if _, _, id, aid, ok := entryKey(n); ok {
			have[keyName(id, aid)] = true
		}
	}
	return have, nil
}
