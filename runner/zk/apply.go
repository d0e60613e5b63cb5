package zk

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/go-zookeeper/zk"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	"github.com/batonwf/baton/store"
)

// perform runs a claimed action and applies its result.
// stops is the stop count of the job's record the claim was checked
// against (unknownStops if none was): see watchStops. handled is called
// once the handler has returned, before its result goes to be applied:
// the caller frees the action's slot there, so that the transition the
// result makes finds it free and claims what it dispatches for this
// worker (a slot freed after the hand-off raced with that commit).
func (r *Runner) perform(ctx context.Context, c consumed, a job.Action, stops uint64, handled func()) {
	key := keyName(a.JobID, a.ID)
	actx := runner.NewStoppable(ctx)
	defer actx.Release()
	r.mu.Lock()
	r.running[key] = actx.Stop
	r.mu.Unlock()
	r.watchStops(a, stops, actx.Stop)
	h := r.hold(c, a, actx)
	r.load.started(a.Name)
	res, err := runner.Execute(actx, r.o.Registry, a, runner.ExecOptions{Timeout: r.o.ActionTimeout, Logger: r.log, Hooks: r.o.Hooks, Now: r.o.Clock.Now, Worker: r.o.Name})
	r.returned(h)
	r.unwatchStops(a)
	cause := actx.Stopped()
	o := outcome(res, err, cause != nil)
	r.load.ended(a.Name, o)
	r.observe(context.WithoutCancel(ctx), a.Name, o)
	r.mu.Lock()
	delete(r.running, key)
	r.mu.Unlock()
	handled()
	switch {
	case errors.Is(cause, errLeaseLost) || r.leaseLost(h):
		// The claim is another worker's business now (renew said so),
		// whether or not a stop of the job reached the handler first.
		r.log.Warn("result abandoned: this worker's claim was broken while the action ran (its lease was not renewed in time, or its session expired)",
			"job", a.JobID, "action", a.ID, "action_now", r.afterLostClaim(ctx, c))
		r.unhold(h)
	case errors.Is(cause, runner.ErrStopped):
		r.log.Debug("action stopped", "job", a.JobID, "action", a.ID)
		r.release(ctx, c)
		r.unhold(h)
	case err != nil:
		r.log.Info("action handed back", "job", a.JobID, "action", a.ID, "err", err)
		r.handBack(c)
		r.unhold(h)
	default:
		r.enqueue(context.WithoutCancel(ctx), c, h, bounded(a, res)) // unheld once applied (apply)
	}
}

// MaxResultBytes bounds a result's output and error message together: a
// larger result is reported as the action's failure, saying so, since no
// ZooKeeper request could carry it.
const MaxResultBytes = 512 << 10

// bounded returns res, or, when it is too large to store, a failure of a
// that says why.
func bounded(a job.Action, res job.Result) job.Result {
	if n := len(res.Output) + len(res.Error); n > MaxResultBytes {
		f := a.Fail(fmt.Sprintf("result of %d bytes is over runner/zk's limit of %d (MaxResultBytes): keep large data outside ZooKeeper and return a reference", n, MaxResultBytes))
		f.At, f.Final = res.At, true
		return f
	}
	return res
}

// pendingResult is a result waiting to be applied with the entry and the
// claim it consumes.
type pendingResult struct {
	c consumed
	// h is the claim's lease (nil for a claim never held: a result the
	// claim itself reports), forgotten once the result is done with.
	h      *held
	res    job.Result
	rounds int // applications that ran out of conflict retries
}

// maxApplyRounds bounds how often a batch of results that ran out of
// conflict retries is applied again before its actions are handed back.
const maxApplyRounds = 8

// Bounds of one batch of results applied together.
const (
	maxBatch      = 256
	maxBatchBytes = MaxResultBytes
)

// enqueue hands a result, of the claim c held as h, to its job's applier in this process (the
// runner's Applier), starting one if none runs: the results of one job
// that end while a transition of it is being written are applied
// together in the next, one multi-op for all (and no conflict among this
// process's workers).
func (r *Runner) enqueue(ctx context.Context, c consumed, h *held, res job.Result) {
	r.results.Go(ctx, r.apply, pendingResult{c: c, h: h, res: res})
}

// newResults returns the runner's Applier: batches of at most maxBatch
// results and maxBatchBytes of their outputs and errors.
func newResults() *runner.Applier[pendingResult] {
	return runner.NewApplier(runner.ApplierOptions[pendingResult]{
		Job:      func(p pendingResult) job.ID { return p.res.JobID },
		MaxBatch: maxBatch,
		Size:     func(p pendingResult) int { return len(p.res.Output) + len(p.res.Error) },
		MaxBytes: maxBatchBytes,
	})
}

// apply applies results of job id, deleting their entries and claims in
// the same multi-op (a runner.ApplyFunc). It returns the results to apply
// again, in the job's next batch.
func (r *Runner) apply(ctx context.Context, id job.ID, batch []pendingResult) (again []pendingResult) {
	defer func() {
		// Done with the claims of the batch, but those to apply again.
		// Each is forgotten by its own held: its entry may be claimed
		// again since, under the same claim path (unhold).
		for _, p := range batch {
			if len(again) == 0 || !slices.ContainsFunc(again, func(q pendingResult) bool { return q.h == p.h }) {
				r.unhold(p.h)
			}
		}
	}()
	cs := make([]consumed, len(batch))
	rs := make([]job.Result, len(batch))
	for i, p := range batch {
		cs[i], rs[i] = p.c, p.res
	}
	tr, err := r.eng.ApplyWith(ctx, id, rs, cs)
	var lost *claimLost
	switch {
	case err == nil && !tr.Changed():
		for _, c := range cs {
			r.release(ctx, c) // ignored (duplicates, the job ended): done with
		}
	case err == nil, errors.Is(err, runner.ErrNotDispatched):
	case errors.As(err, &lost) && lost.i < len(batch):
		// The multi-op applied nothing (the job's record was as the
		// commit found it, and one of the deletes of what p consumed
		// failed): p's result is not in the job. Say what became of its
		// action since.
		p := batch[lost.i]
		r.log.Warn("result abandoned: this worker's claim on the action was lost before its result was applied (its session expired, or its lease was broken); the commit applied nothing",
			"job", id, "action", p.res.ActionID, "action_now", r.afterLostClaim(ctx, p.c))
		if rest := slices.Delete(slices.Clone(batch), lost.i, lost.i+1); len(rest) > 0 {
			return r.apply(ctx, id, rest)
		}
	case errors.Is(err, store.ErrNotFound):
		for _, c := range cs {
			r.release(ctx, c)
		}
	case errors.Is(err, store.ErrConflict) && ctx.Err() == nil && batch[0].rounds < maxApplyRounds:
		// Other workers kept winning the job's record. The results are
		// good and their claims still this worker's: apply them again
		// (with what ended meanwhile) instead of running them again.
		r.log.Debug("applying results: conflicts past the retries; trying again", "job", id, "results", len(batch))
		_ = r.c.backoff.Sleep(ctx, batch[0].rounds+1) // longer each round
		for i := range batch {
			batch[i].rounds++
		}
		return batch
	default:
		r.log.Error("applying results failed: handing the actions back, to run again unless the commit was applied after all (its entries are gone then)", "job", id, "results", len(batch), "err", err)
		for _, c := range cs {
			r.handBack(c)
		}
	}
	return nil
}

// afterLostClaim says what became of the action whose claim c a commit
// found lost: its entry gone (the job no longer waits for this run), or
// claimed again, by this worker (in a new session) or another, or
// waiting in the queue.
func (r *Runner) afterLostClaim(ctx context.Context, c consumed) string {
	_, _, err := r.c.get(ctx, c.entry)
	switch {
	case errors.Is(err, zk.ErrNoNode):
		return "its queue entry is gone: the job no longer waits for it (a result of another run of it applied, it was reported lost, or the job stopped it or ended)"
	case err != nil:
		return fmt.Sprintf("unknown (reading its queue entry: %v)", err)
	}
	data, st, err := r.c.get(ctx, c.claim)
	switch {
	case errors.Is(err, zk.ErrNoNode):
		return "unclaimed: it waits in the queue for any worker, this one included"
	case err != nil:
		return fmt.Sprintf("unknown (reading its claim: %v)", err)
	case st.EphemeralOwner == r.c.c.SessionID():
		return "claimed again by this worker (in its current session), which runs it again"
	}
	return fmt.Sprintf("claimed again by worker %q, which runs it", data)
}
