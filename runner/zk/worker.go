package zk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	"github.com/batonwf/baton/store"
)

// work is the state of a runner's work loop that commits share: the
// slots actions run in, and whether a commit may claim the actions it
// creates for this worker (see transport.Commit).
type work struct {
	slots chan struct{} // one token per action claimed or running here
	freed chan struct{} // signalled when a slot frees

	mu   sync.Mutex
	open bool            // the loop runs: commits may claim for it
	ctx  context.Context // the handlers' context
	wg   sync.WaitGroup  // the actions started by commits
	// best is the best (lowest) rank of an entry waiting unclaimed, as
	// the loop last listed the queue: a commit claims only actions of at
	// least that priority, so that it never runs its own actions ahead of
	// more urgent ones that wait.
	best int
}

// free gives a slot back.
func (w *work) free() {
	<-w.slots
	select {
	case w.freed <- struct{}{}:
	default:
	}
}

// noRank is past every entry's rank: no entry waits.
const noRank = 1 << 30

// reserve picks among acts, the new actions of a transition, those this
// worker claims in the transition's own multi-op and runs without going
// through the queue: the ones it has a handler for, at least as urgent
// as any entry that waits unclaimed, as many as it has free slots, most
// urgent first. It takes a slot for each and returns which it took (nil
// for none); the caller gives them back with unreserve if the transition
// fails, or starts them with runOwn once it is written.
func (r *Runner) reserve(acts []job.Action) []bool {
	w := r.work
	if r.o.Registry == nil || len(acts) == 0 {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.open || len(w.slots) == cap(w.slots) {
		return nil
	}
	order := make([]int, len(acts))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		return rank(actionPriority(acts[a])) - rank(actionPriority(acts[b]))
	})
	var mine []bool
	for _, i := range order {
		a := acts[i]
		if rank(actionPriority(a)) > w.best {
			break
		}
		if _, ok := r.o.Registry.Lookup(a.Name); !ok {
			continue
		}
		select {
		case w.slots <- struct{}{}:
		default:
			return mine
		}
		if mine == nil {
			mine = make([]bool, len(acts))
		}
		mine[i] = true
		w.wg.Add(1)
	}
	return mine
}

// unreserve gives back the slots reserve took for a transition that was
// not written.
func (r *Runner) unreserve(mine []bool) {
	for _, m := range mine {
		if m {
			r.work.free()
			r.work.wg.Done()
		}
	}
}

// runOwn runs the actions a written transition claimed for this worker,
// in the slots reserve took: their entries and claims exist, made by the
// same multi-op as the job's new state, so the entry is at version 0 and
// the claim is this session's.
func (r *Runner) runOwn(acts []job.Action, mine []bool, queuedMs int64, stops uint64) {
	w := r.work
	w.mu.Lock()
	ctx := w.ctx
	w.mu.Unlock()
	cs := r.ownConsumed(acts, mine, queuedMs)
	for i, c := range cs {
		if c.entry == "" {
			continue
		}
		a := acts[i]
		r.stats.claimedInTransition.Add(1)
		go func() {
			defer w.wg.Done()
			defer w.free()
			r.perform(ctx, c, a, stops)
		}()
	}
}

// ownConsumed returns, at the index of each action mine marks, the entry
// and claim the transition made for it (the zero consumed elsewhere).
func (r *Runner) ownConsumed(acts []job.Action, mine []bool, queuedMs int64) []consumed {
	cs := make([]consumed, len(mine))
	for i, m := range mine {
		if m {
			name := entryName(acts[i], queuedMs)
			cs[i] = consumed{entry: r.c.l.entry(name), ver: 0, claim: r.c.l.claim(name)}
		}
	}
	return cs
}

// workLoop claims and runs actions until ctx ends, then drains.
func (r *Runner) workLoop(ctx context.Context) {
	if r.o.Registry == nil {
		<-ctx.Done() // no handlers: this runner submits, waits and fires timers
		return
	}
	handlerCtx, cancelHandlers := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelHandlers()
	w := r.work
	slots, freed := w.slots, w.freed
	w.mu.Lock()
	w.open, w.ctx, w.best = true, handlerCtx, noRank
	w.mu.Unlock()
	var wg sync.WaitGroup
	var skipMu sync.Mutex
	skip := map[string]bool{}     // entries this worker leaves alone (no handler, malformed)
	inFlight := map[string]bool{} // entries being claimed or run here
	// The last listing of the queue: its entries in the order they are
	// tried, which of them were claimed (here or by others) when it was
	// made, and whether it is stale (the queue or the claims changed
	// since, or the poll fell due). A slot that frees takes the next
	// entry of the listing; the queue is listed again only once it is
	// stale or used up.
	var (
		names    []string
		taken    map[string]bool
		next     int
		stale    = true
		lastList time.Time
		// listCost is what the last listing took (reading and ordering
		// it): a long queue is listed again at most every ten of those,
		// its listing meanwhile worked through.
		listCost time.Duration
		qch      <-chan zk.Event
		cch      <-chan zk.Event
		wait     time.Duration
	)
	for ctx.Err() == nil {
		if len(slots) == cap(slots) {
			select {
			case <-freed:
			case <-qch:
				qch, stale = nil, true
			case <-cch:
				cch, stale = nil, true
			case <-ctx.Done():
			}
			continue
		}
		// A stale listing is still used while it has entries to try and
		// the last listing is recent: entries taken since fail their claim
		// at no harm; a listing is at most minRewatch old when re-made.
		if stale && (next >= len(names) || time.Since(lastList) >= max(minRewatch, 10*listCost)) {
			pace(ctx, &lastList)
			var claims []string
			err := r.c.do(ctx, "list the queue", func() (err error) {
				names, _, qch, err = r.c.c.ChildrenW(r.c.l.queue())
				if err == nil {
					claims, _, cch, err = r.c.c.ChildrenW(r.c.l.claims())
				}
				return err
			})
			if err != nil {
				if ctx.Err() == nil {
					r.log.Error("listing the queue", "err", err)
					sleep(ctx, r.c.backoff.Max)
				}
				continue
			}
			stale, next = false, 0
			taken = make(map[string]bool, len(claims))
			for _, c := range claims {
				taken[c] = true
			}
			names = slices.DeleteFunc(names, func(n string) bool { return taken[n] })
			order(names, func(id job.ID) bool { _, ok := r.st.recall(id); return ok }, 16*cap(slots))
			present := make(map[string]bool, len(names))
			for _, n := range names {
				present[n] = true
			}
			skipMu.Lock()
			for name := range skip {
				if !present[name] {
					delete(skip, name)
				}
			}
			best := noRank
			for _, name := range names {
				if !taken[name] && !skip[name] {
					if rk, _, _, _, ok := entryKey(name); ok {
						best = min(best, rk)
					}
				}
			}
			skipMu.Unlock()
			w.mu.Lock()
			w.best = best
			w.mu.Unlock()
			listCost = time.Since(lastList)
		}
		// Claim as many entries as there are free slots, each in its own
		// goroutine: the claims' round trips overlap instead of queueing
		// behind one another.
		tried := 0
		skipMu.Lock()
		for ; next < len(names) && ctx.Err() == nil && len(slots) < cap(slots); next++ {
			name := names[next]
			if taken[name] || skip[name] || inFlight[name] {
				continue
			}
			slots <- struct{}{}
			inFlight[name] = true
			tried++
			wg.Go(func() {
				defer func() {
					skipMu.Lock()
					delete(inFlight, name)
					skipMu.Unlock()
					w.free()
				}()
				c, a, stops, ok := r.claim(ctx, name, func() {
					skipMu.Lock()
					skip[name] = true
					skipMu.Unlock()
				})
				if ok {
					r.perform(handlerCtx, c, a, stops)
				}
			})
		}
		skipMu.Unlock()
		if tried > 0 {
			wait = 0
		}
		// Wait for a slot to free (the listing may hold more to take), the
		// queue or the claims to change (a new entry, a worker gone), or
		// the poll that backs up the watches while nothing is taken.
		var t *time.Timer
		switch {
		case len(slots) == cap(slots):
			t = time.NewTimer(time.Hour) // a slot frees first
			t.Stop()
		case stale:
			// Slots free, the listing used up, the queue changed since:
			// list again as soon as the pace allows.
			t = time.NewTimer(max(0, minRewatch-time.Since(lastList)))
		default:
			wait = r.c.backoff.next(wait)
			t = time.NewTimer(wait)
		}
		select {
		case <-qch:
			qch, stale, wait = nil, true, 0
		case <-cch:
			cch, stale, wait = nil, true, 0
		case <-freed:
		case <-t.C:
			stale = true
		case <-ctx.Done():
		}
		t.Stop()
	}
	// No commit claims for this worker any more; wait for those that did.
	w.mu.Lock()
	w.open = false
	w.mu.Unlock()
	done := make(chan struct{})
	go func() { wg.Wait(); w.wg.Wait(); close(done) }()
	if r.o.DrainTimeout > 0 {
		t := time.NewTimer(r.o.DrainTimeout)
		select {
		case <-done:
		case <-t.C:
			r.log.Warn("drain timeout: handing back actions still running")
		}
		t.Stop()
	}
	cancelHandlers()
	<-done
}

// claim claims the queue entry name: it reads the entry, and if this
// worker has a handler for its action, creates its ephemeral claim and
// bumps the entry's version in one multi-op. The entry's version then
// names this claim: a worker whose session expired, and whose action
// another worker claimed since, finds it changed and abandons its result.
// claim returns false for an entry it did not claim or that needs no run
// (a stale entry, deleted; an at-most-once action claimed before,
// reported lost).
func (r *Runner) claim(ctx context.Context, name string, skip func()) (consumed, job.Action, uint64, bool) {
	_, _, id, actionID, ok := entryKey(name)
	if !ok {
		skip()
		r.log.Warn("queue entry with a malformed name (not written by baton?): left alone", "entry", r.c.l.entry(name))
		return consumed{}, job.Action{}, 0, false
	}
	if c, a, stops, done, ok := r.claimBlind(ctx, name, id, actionID); done {
		return c, a, stops, ok
	}
	data, st, err := r.c.get(ctx, r.c.l.entry(name))
	if errors.Is(err, zk.ErrNoAuth) {
		// Made by a client with other credentials (before Open checked
		// them): no worker here can read or delete it.
		skip()
		r.log.Warn("queue entry closed to this worker's credentials (a client with other ones made it): left alone", "entry", r.c.l.entry(name))
		return consumed{}, job.Action{}, 0, false
	}
	if err != nil {
		if !errors.Is(err, zk.ErrNoNode) && ctx.Err() == nil {
			r.log.Warn("reading a queue entry", "entry", name, "err", err)
		}
		return consumed{}, job.Action{}, 0, false
	}
	var ed entryData
	if err := json.Unmarshal(data, &ed); err != nil || ed.Job != id || ed.ID != actionID || ed.Action == "" {
		skip()
		r.log.Warn("queue entry with malformed data (not written by baton?): left alone", "entry", r.c.l.entry(name), "data", string(data))
		return consumed{}, job.Action{}, 0, false
	}
	if _, ok := r.o.Registry.Lookup(ed.Action); !ok {
		skip()
		r.log.Info("no handler here for this action: left in the queue for a worker that has one", "job", id, "action", actionID, "name", ed.Action)
		return consumed{}, job.Action{}, 0, false
	}
	claimedBefore := ed.Claimed
	ed.Claimed++
	ed.Worker = r.o.Name
	nd, _ := json.Marshal(ed)
	c := consumed{entry: r.c.l.entry(name), ver: st.Version + 1, claim: r.c.l.claim(name)}
	_, _, err = r.c.multi(ctx, "claim "+name, []any{
		r.c.createOp(c.claim, []byte(r.o.Name), zk.FlagEphemeral),
		&zk.SetDataRequest{Path: c.entry, Data: nd, Version: st.Version},
	})
	if err != nil && errors.Is(err, zk.ErrNodeExists) && r.ownClaim(ctx, c) {
		// The claim was made, but its reply was lost with the connection
		// and the retry found it: it is this worker's.
		err = nil
	}
	if err != nil {
		if ctx.Err() == nil && !errors.Is(err, zk.ErrNodeExists) && !errors.Is(err, zk.ErrBadVersion) && !errors.Is(err, zk.ErrNoNode) {
			r.log.Warn("claiming a queue entry", "entry", name, "err", err)
		} else {
			r.stats.claimsLost.Add(1)
		}
		return consumed{}, job.Action{}, 0, false
	}
	r.stats.claims.Add(1)
	// A first claim of an entry that carries its action, of a job whose
	// record says it is running and never stopped an action (a cancel, a
	// deadline), runs without loading the job: the entry was created with
	// the transition that made the action. Otherwise (claimed before: by
	// a worker that died, handed it back, or could not apply its result,
	// which may or may not be saved) the job is loaded to see whether it
	// still waits for the action.
	//
	// The record is this process's copy when it has one (it made or
	// applied the job's last transition it knows of): if that copy is
	// stale and a cancel or a deadline stopped the action since, the
	// job's stop watcher, which reads the record, stops the handler.
	var a job.Action
	var m meta
	err = nil
	if e, ok := r.st.recall(id); ok && e.m.Version > 0 && r.o.Jobs == nil {
		m = e.m
	} else {
		var mdata []byte
		mdata, _, err = r.c.get(ctx, r.c.l.job(id))
		if err == nil {
			m, err = decodeMeta(id, mdata)
		}
	}
	merr := err
	if err == nil && ed.Act != nil && claimedBefore == 0 && m.Stops == 0 && m.Status == job.StatusRunning.String() && ed.Act.JobID == id && ed.Act.ID == actionID {
		a = *ed.Act
	} else {
		var j job.Job
		if err == nil || errors.Is(err, zk.ErrNoNode) {
			j, err = r.jobs().Load(ctx, id)
		}
		if errors.Is(err, store.ErrNotFound) {
			r.log.Info("queue entry of a job that is gone: deleted", "job", id, "action", actionID)
			r.release(ctx, c)
			return consumed{}, job.Action{}, 0, false
		}
		if errors.Is(err, job.ErrCorrupt) {
			// Damaged: no worker can tell what it waits for. Left alone
			// (once per worker), until an operator deletes the job.
			skip()
			r.log.Error("queue entry of a job whose stored state is damaged: left alone (deleting the job removes it)", "job", id, "action", actionID, "err", err)
			r.handBack(c)
			return consumed{}, job.Action{}, 0, false
		}
		if err != nil {
			r.log.Error("loading the job of a claimed action: handing it back", "job", id, "action", actionID, "err", err)
			r.handBack(c)
			sleep(ctx, r.c.backoff.Initial)
			return consumed{}, job.Action{}, 0, false
		}
		var out bool
		if a, out = j.Pending(actionID); !out {
			// Applied already, stopped, or the job ended: nothing to run.
			r.release(ctx, c)
			return consumed{}, job.Action{}, 0, false
		}
	}
	if a.AtMostOnce && claimedBefore > 0 {
		r.log.Warn("at-most-once action claimed before by a worker that did not finish: reported lost, not run again", "job", id, "action", actionID)
		r.enqueue(context.WithoutCancel(ctx), c, runner.LostResult(a, time.Now()))
		return consumed{}, job.Action{}, 0, false
	}
	stops := uint64(unknownStops)
	if merr == nil {
		stops = m.Stops
	}
	return c, a, stops, true
}

// claimBlind claims the entry name of a job this process holds in its
// cache without reading the entry first: the cached job says what the
// action is, so the entry's data is known, and the claim sets it at
// version 0, which only an entry never claimed from the queue has. done
// is false when it cannot tell (no cached copy, an at-most-once action,
// a job whose record counts stops, an entry claimed before): claim then
// reads the entry.
//
// An entry that a transition created claimed for a worker that has since
// died is at version 0 too; claimed blind, its action runs again, which
// is what at-least-once asks, and why at-most-once actions never take
// this path.
func (r *Runner) claimBlind(ctx context.Context, name string, id job.ID, actionID string) (c consumed, a job.Action, stops uint64, done, ok bool) {
	if r.o.Jobs != nil {
		return
	}
	e, found := r.st.recall(id)
	if !found || e.m.Version == 0 || e.m.Stops != 0 || e.m.Status != job.StatusRunning.String() {
		return
	}
	a, out := e.j.Pending(actionID)
	if !out {
		return
	}
	if a.AtMostOnce {
		return
	}
	if _, has := r.o.Registry.Lookup(a.Name); !has {
		return
	}
	c = consumed{entry: r.c.l.entry(name), ver: 1, claim: r.c.l.claim(name)}
	_, _, err := r.c.multi(ctx, "claim "+name, []any{
		r.c.createOp(c.claim, []byte(r.o.Name), zk.FlagEphemeral),
		&zk.SetDataRequest{Path: c.entry, Data: entryOf(a, r.o.Name), Version: 0},
	})
	if err != nil && errors.Is(err, zk.ErrNodeExists) && r.ownClaim(ctx, c) {
		err = nil // made, its reply lost: see claim
	}
	switch {
	case err == nil:
		r.stats.claims.Add(1)
		return c, a, 0, true, true
	case errors.Is(err, zk.ErrBadVersion):
		return consumed{}, job.Action{}, 0, false, false // claimed before: read it
	case errors.Is(err, zk.ErrNodeExists), errors.Is(err, zk.ErrNoNode):
		r.stats.claimsLost.Add(1)
	case ctx.Err() == nil:
		r.log.Warn("claiming a queue entry", "entry", name, "err", err)
	}
	return consumed{}, job.Action{}, 0, true, false
}

// ownsClaim reports whether the first action mine marks has its claim, as
// the transition that created it made it, in this session: the transition
// was written (a multi-op is all or nothing).
func (r *Runner) ownsClaim(ctx context.Context, acts []job.Action, mine []bool, queuedMs int64) bool {
	for _, c := range r.ownConsumed(acts, mine, queuedMs) {
		if c.entry == "" {
			continue
		}
		_, st, err := r.c.get(ctx, c.claim)
		return err == nil && st.EphemeralOwner == r.c.c.SessionID()
	}
	return false
}

// ownClaim reports whether the claim c exists, belongs to this session,
// and the entry is at the version the claim gave it.
func (r *Runner) ownClaim(ctx context.Context, c consumed) bool {
	_, cst, err := r.c.get(ctx, c.claim)
	if err != nil || cst.EphemeralOwner != r.c.c.SessionID() {
		return false
	}
	_, est, err := r.c.get(ctx, c.entry)
	return err == nil && est.Version == c.ver
}

// perform runs a claimed action and applies its result.
// stops is the stop count of the job's record the claim was checked
// against (unknownStops if none was): see watchStops.
func (r *Runner) perform(ctx context.Context, c consumed, a job.Action, stops uint64) {
	key := keyName(a.JobID, a.ID)
	actx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	r.mu.Lock()
	r.running[key] = cancel
	r.mu.Unlock()
	r.watchStops(a, stops, cancel)
	res, err := runner.Execute(actx, r.o.Registry, a, runner.ExecOptions{Timeout: r.o.ActionTimeout, Logger: r.log, Hooks: r.o.Hooks})
	r.unwatchStops(a)
	stopped := errors.Is(context.Cause(actx), runner.ErrStopped)
	r.mu.Lock()
	delete(r.running, key)
	r.mu.Unlock()
	switch {
	case stopped:
		r.log.Debug("action stopped", "job", a.JobID, "action", a.ID)
		r.release(ctx, c)
	case err != nil:
		r.log.Info("action handed back", "job", a.JobID, "action", a.ID, "err", err)
		r.handBack(c)
	default:
		r.enqueue(context.WithoutCancel(ctx), c, bounded(a, res))
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
	c      consumed
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

// enqueue hands a result to its job's applier in this process, starting
// one if none runs: the results of one job that end while a transition of
// it is being written are applied together in the next, one multi-op
// for all (and no conflict among this process's workers).
func (r *Runner) enqueue(ctx context.Context, c consumed, res job.Result) {
	id := res.JobID
	r.pendMu.Lock()
	defer r.pendMu.Unlock()
	r.pend[id] = append(r.pend[id], pendingResult{c: c, res: res})
	if r.applying[id] {
		return
	}
	r.applying[id] = true
	r.appliers.Go(func() { r.applyJob(ctx, id) })
}

// applyJob applies the pending results of job id, a batch at a time,
// until none is left.
func (r *Runner) applyJob(ctx context.Context, id job.ID) {
	for {
		r.pendMu.Lock()
		all := r.pend[id]
		if len(all) == 0 {
			delete(r.pend, id)
			delete(r.applying, id)
			r.pendMu.Unlock()
			return
		}
		n, size := 0, 0
		for n < len(all) && n < maxBatch {
			size += len(all[n].res.Output) + len(all[n].res.Error)
			if n > 0 && size > maxBatchBytes {
				break
			}
			n++
		}
		batch := slices.Clone(all[:n])
		r.pend[id] = all[n:]
		r.pendMu.Unlock()
		r.apply(ctx, batch)
	}
}

// apply applies results of one job, deleting their entries and claims in
// the same multi-op.
func (r *Runner) apply(ctx context.Context, batch []pendingResult) {
	id := batch[0].res.JobID
	cs := make([]consumed, len(batch))
	rs := make([]job.Result, len(batch))
	for i, p := range batch {
		cs[i], rs[i] = p.c, p.res
	}
	tr, err := r.eng.Apply(withConsumed(ctx, cs), id, rs)
	var lost *claimLost
	switch {
	case err == nil && !tr.Changed():
		for _, c := range cs {
			r.release(ctx, c) // ignored (duplicates, the job ended): done with
		}
	case err == nil, errors.Is(err, runner.ErrNotDispatched):
	case errors.As(err, &lost) && lost.i < len(batch):
		p := batch[lost.i]
		r.log.Warn("result abandoned: this worker's claim was lost (its session expired); another worker runs the action", "job", id, "action", p.res.ActionID)
		if rest := slices.Delete(slices.Clone(batch), lost.i, lost.i+1); len(rest) > 0 {
			r.apply(ctx, rest)
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
		sleep(ctx, r.c.backoff.Initial)
		for i := range batch {
			batch[i].rounds++
		}
		r.pendMu.Lock()
		r.pend[id] = append(batch, r.pend[id]...)
		r.pendMu.Unlock()
	default:
		r.log.Error("applying results failed: handing the actions back, to run again", "job", id, "results", len(batch), "err", err)
		for _, c := range cs {
			r.handBack(c)
		}
	}
}

// timerLoop fires the timers that fall due: it applies each firing, then
// deletes the timer's node (a runner that dies between the two fires it
// again, which the reducer ignores). Every runner on a root does this;
// when two fire one timer, the second firing is ignored.
func (r *Runner) timerLoop(ctx context.Context) {
	var wait time.Duration
	lastRepair := time.Now()
	for ctx.Err() == nil {
		var names []string
		var ch <-chan zk.Event
		err := r.c.do(ctx, "list the timers", func() (err error) {
			names, _, ch, err = r.c.c.ChildrenW(r.c.l.timers())
			return err
		})
		if err != nil {
			if ctx.Err() == nil {
				r.log.Error("listing the timers", "err", err)
				sleep(ctx, r.c.backoff.Max)
			}
			continue
		}
		slices.Sort(names)
		var next time.Time
		for _, name := range names {
			due, id, tid, ok := timerKey(name)
			if !ok {
				continue
			}
			at := time.UnixMilli(due)
			if now := time.Now(); at.After(now) {
				next = at
				break
			}
			r.fire(ctx, name, job.Timer{JobID: id, ID: tid, Due: at})
		}
		if time.Since(lastRepair) > 30*time.Second {
			r.repairDispatching(ctx)
			lastRepair = time.Now()
		}
		wait = r.c.backoff.next(wait)
		d := wait
		if !next.IsZero() {
			d = min(d, time.Until(next))
		}
		sleep(ctx, max(d, time.Millisecond), ch)
	}
}

// fire applies the firing of the timer whose node is name.
func (r *Runner) fire(ctx context.Context, name string, tm job.Timer) {
	_, err := r.eng.Apply(ctx, tm.JobID, []job.Result{tm.Fire(time.Now())})
	switch {
	case err == nil, errors.Is(err, runner.ErrNotDispatched), errors.Is(err, store.ErrNotFound):
	default:
		if ctx.Err() == nil {
			r.log.Error("firing a timer failed; it fires again later", "job", tm.JobID, "timer", tm.ID, "err", err)
		}
		return
	}
	if err := r.c.delete(ctx, r.c.l.timers()+"/"+name, -1); err != nil && !errors.Is(err, zk.ErrNoNode) && ctx.Err() == nil {
		r.log.Warn("deleting a fired timer", "timer", name, "err", err)
	}
}

// repairDispatching finishes the transitions whose queue entries were
// being written in parts by a runner that stopped: their markers are older
// than half a minute.
func (r *Runner) repairDispatching(ctx context.Context) {
	names, err := r.c.children(ctx, r.c.l.dispatching())
	if err != nil {
		return
	}
	for _, name := range names {
		_, st, err := r.c.get(ctx, r.c.l.dispatching()+"/"+name)
		if err != nil || time.Since(time.UnixMilli(st.Mtime)) < 30*time.Second {
			continue
		}
		if _, err := r.eng.Recover(ctx, job.ID(name)); err != nil {
			r.log.Error("finishing a dispatch left in parts", "job", name, "err", err)
			continue
		}
		_ = r.c.delete(ctx, r.c.l.dispatching()+"/"+name, st.Version)
	}
}
