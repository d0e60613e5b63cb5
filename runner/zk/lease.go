package zk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/placement"
	"github.com/batonwf/baton/runner"
	"github.com/batonwf/baton/store"
)

// Claim leases (see the package doc, Claim leases): a worker whose
// session stays alive while its loop is wedged keeps its claims for ever
// unless something takes them from it. A claim this worker holds longer
// than a third of the lease is renewed, by a versioned write on the claim
// node, every third of the lease (renewLeases); each claim is watched by
// one other live worker (watchClaims), which breaks it, by deleting it at
// the version it saw, once that version has not changed for a whole
// lease on its own clock (breakLease).

// DefaultClaimLease is Options.ClaimLease's default.
const DefaultClaimLease = 60 * time.Second

// minClaimLease is the shortest Options.ClaimLease New accepts: a lease
// is renewed every third of it, and a renewal is a ZooKeeper write.
const minClaimLease = 300 * time.Millisecond

// errLeaseLost is the cause with which a handler is cancelled when its
// claim is no longer its worker's: the lease was broken by the worker
// watching it, or the claim went with an expired session.
var errLeaseLost = errors.New("zk: this worker's claim on the action was broken (its lease was not renewed in time) or lost with its session")

// held is a claim this worker holds: from the claim until its action's
// result is applied, released or handed back.
type held struct {
	c consumed
	a job.Action
	// ver is the claim node's version as this worker last wrote it, and
	// renewed when (real clock) it made or last renewed the claim.
	ver     int32
	renewed time.Time
	// handler is the handler's context, nil once the handler returned.
	handler *runner.Stoppable
	// lost says a renewal found the claim gone or another's: the result,
	// whatever stopped the handler first, is abandoned.
	lost bool
}

// watched is a claim of another worker that this worker watches: the
// claim node's creation (its Czxid: a claim deleted and made again under
// the same name is another claim), its version, and since when (this
// worker's clock) it has seen that version.
type watched struct {
	czxid int64
	ver   int32
	since time.Time
}

// leases are a runner's held and watched claims. Guarded by mu.
type leases struct {
	mu sync.Mutex
	// held maps a claim path to the claim this worker holds under it:
	// the latest, when it claimed the same entry again (a new session)
	// before it was done with the old claim (see unhold).
	held    map[string]*held
	watched map[string]watched // claim name -> a claim it watches
}

// hold records the claim c on action a, made just now in this session,
// whose handler runs under actx. Call returned with what it returns once
// the handler has returned.
func (r *Runner) hold(c consumed, a job.Action, actx *runner.Stoppable) *held {
	h := &held{c: c, a: a, ver: 0, renewed: time.Now(), handler: actx}
	r.leases.mu.Lock()
	if r.leases.held == nil {
		r.leases.held = map[string]*held{}
	}
	r.leases.held[c.claim] = h
	r.leases.mu.Unlock()
	return h
}

// returned records that the handler of h returned: a claim lost from
// now on has no handler to cancel.
func (r *Runner) returned(h *held) {
	r.leases.mu.Lock()
	h.handler = nil
	r.leases.mu.Unlock()
}

// leaseLost reports whether a renewal found h's claim lost.
func (r *Runner) leaseLost(h *held) bool {
	r.leases.mu.Lock()
	defer r.leases.mu.Unlock()
	return h.lost
}

// unhold forgets the claim h (nil: none): its result was applied or
// abandoned, or it was released or handed back. A claim is named by its
// entry, so the claim path may be held since by another claim of the
// same entry (claimed again in a new session while h's result was still
// being applied): that one's lease is left as it is.
func (r *Runner) unhold(h *held) {
	if h == nil {
		return
	}
	r.leases.mu.Lock()
	defer r.leases.mu.Unlock()
	if r.leases.held[h.c.claim] == h {
		delete(r.leases.held, h.c.claim)
	}
}

// leaseLoops renews this worker's claims and watches the others' until
// ctx ends: two loops, so that a slow listing never delays a renewal.
func (r *Runner) leaseLoops(ctx context.Context) {
	if r.o.Registry == nil {
		return // it claims nothing, and is no live worker to watch others
	}
	third := r.o.ClaimLease / 3
	var wg sync.WaitGroup
	wg.Go(func() { every(ctx, third, r.renewLeases) })
	wg.Go(func() { every(ctx, third, r.watchClaims) })
	wg.Wait()
}

// every calls f every d until ctx ends.
func every(ctx context.Context, d time.Duration, f func(context.Context)) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			f(ctx)
		}
	}
}

// renewLeases renews the claims held longer than a third of the lease
// since they were made or last renewed: a short action's claim is never
// renewed.
func (r *Runner) renewLeases(ctx context.Context) {
	third := r.o.ClaimLease / 3
	now := time.Now()
	var due []*held
	r.leases.mu.Lock()
	for _, h := range r.leases.held {
		if now.Sub(h.renewed) >= third {
			due = append(due, h)
		}
	}
	r.leases.mu.Unlock()
	for _, h := range due {
		if ctx.Err() != nil {
			return
		}
		// A renewal that cannot get through (the connection is down) is
		// given up at the next one's time, not retried for ever.
		rctx, cancel := context.WithTimeout(ctx, third)
		r.renew(rctx, h)
		cancel()
	}
}

// renew renews the claim h by setting its data at the version this
// worker last wrote, in one multi-op with a check that its entry is at
// the version the claim gave it. A claim that is gone, or was renewed by
// no one but someone else's claim of the same entry, is lost: its
// handler, if it still runs, is cancelled with errLeaseLost.
func (r *Runner) renew(ctx context.Context, h *held) {
	r.leases.mu.Lock()
	ver := h.ver
	r.leases.mu.Unlock()
	_, _, err := r.c.multi(ctx, "renew "+h.c.claim, []any{
		&zk.CheckVersionRequest{Path: h.c.entry, Version: h.c.ver},
		&zk.SetDataRequest{Path: h.c.claim, Data: []byte(r.o.Name), Version: ver},
	})
	if err != nil && (errors.Is(err, zk.ErrBadVersion) || errors.Is(err, zk.ErrNoNode)) && r.renewedBefore(ctx, h.c, ver) {
		err = nil // applied, its reply lost with the connection: the retry found it
	}
	switch {
	case err == nil:
		r.stats.leaseRenewals.Add(1)
		r.o.Hooks.Placed(runner.PlacementLeaseRenewed, h.a.Name)
		r.leases.mu.Lock()
		h.ver, h.renewed = ver+1, time.Now()
		r.leases.mu.Unlock()
	case errors.Is(err, zk.ErrBadVersion), errors.Is(err, zk.ErrNoNode):
		r.leases.mu.Lock()
		actx := h.handler
		h.lost = true
		if r.leases.held[h.c.claim] == h {
			delete(r.leases.held, h.c.claim)
		}
		r.leases.mu.Unlock()
		if actx == nil {
			// The handler returned: its result is being applied, which
			// deleted the claim, or finds it lost and abandons it.
			return
		}
		r.log.Warn("claim lost while the action ran (its lease was broken by the worker watching it, or it went with an expired session): the handler is cancelled and its result abandoned",
			"job", h.a.JobID, "action", h.a.ID, "entry", h.c.entry)
		actx.Stop(errLeaseLost)
	case ctx.Err() == nil:
		r.log.Debug("renewing a claim's lease failed; trying again at the next renewal", "entry", h.c.entry, "err", err)
	}
}

// renewedBefore reports whether the claim c is this session's, at the
// version after ver, with its entry at the claimed version: a renewal
// from ver was applied.
func (r *Runner) renewedBefore(ctx context.Context, c consumed, ver int32) bool {
	_, cst, err := r.c.get(ctx, c.claim)
	if err != nil || cst.EphemeralOwner != r.c.c.SessionID() || cst.Version != ver+1 {
		return false
	}
	_, est, err := r.c.get(ctx, c.entry)
	return err == nil && est.Version == c.ver
}

// watchClaims lists the claims and keeps track of those this worker
// watches: a claim is watched by the first live worker other than its
// owner in the claim's rendezvous preference list over the live workers
// (all weighing the same); when that worker leaves, the next takes over.
// Only the claims for which this worker is first or second in that list
// are read (its owner could be the first), so a listing costs one read
// and about two reads per live worker for each claim. A claim whose
// version this worker has seen unchanged for a whole lease is broken.
func (r *Runner) watchClaims(ctx context.Context) {
	self := r.o.Name
	live := r.reg.live()
	ws := make([]placement.Worker, 0, len(live))
	for _, n := range live {
		ws = append(ws, placement.Worker{Name: n, Capacity: 1})
	}
	seen := map[string]bool{}
	defer func() {
		r.leases.mu.Lock()
		for name := range r.leases.watched {
			if !seen[name] {
				delete(r.leases.watched, name)
			}
		}
		r.leases.mu.Unlock()
	}()
	if len(ws) < 2 {
		return // no one else to watch, or no one to watch this worker
	}
	var names []string
	err := r.c.do(ctx, "list the claims", func() (err error) {
		names, _, err = r.c.c.Children(r.c.l.claims())
		return err
	})
	if err != nil {
		if ctx.Err() == nil {
			r.log.Debug("listing the claims to watch their leases", "err", err)
		}
		return
	}
	for _, name := range names {
		if ctx.Err() != nil {
			return
		}
		rk := placement.Rank(placement.KeyHash(name), ws)
		if rk[0].Name != self && rk[1].Name != self {
			continue
		}
		data, st, err := r.c.get(ctx, r.c.l.claim(name))
		if err != nil {
			continue // gone (released), or to be seen at the next listing
		}
		owner := string(data)
		watcher := rk[0].Name
		if watcher == owner {
			watcher = rk[1].Name
		}
		if watcher != self || owner == self {
			continue
		}
		seen[name] = true
		now := time.Now()
		r.leases.mu.Lock()
		w, ok := r.leases.watched[name]
		if !ok || w.czxid != st.Czxid || w.ver != st.Version {
			if r.leases.watched == nil {
				r.leases.watched = map[string]watched{}
			}
			r.leases.watched[name] = watched{czxid: st.Czxid, ver: st.Version, since: now}
			r.leases.mu.Unlock()
			continue
		}
		r.leases.mu.Unlock()
		if now.Sub(w.since) >= r.o.ClaimLease {
			r.breakLease(ctx, name, owner, st.Czxid, st.Version, now.Sub(w.since))
			r.leases.mu.Lock()
			delete(r.leases.watched, name)
			r.leases.mu.Unlock()
		}
	}
}

// breakLease breaks the claim on the queue entry name, held by owner
// (the claim node made at czxid) and unchanged at version ver for stale:
// it deletes the claim at that version, so the action is claimable
// again; for an at-most-once action, it applies the action's failure
// with kind lost in the same multi-op (with the entry's delete), since
// running it again could run it twice. A claim renewed meanwhile is left
// alone (the delete fails), and so is a claim made since under the same
// name (the stuck one gone, the entry claimed again, at version 0 like
// any new claim): the claim is read again after the entry, and the
// delete checks the entry's version, which every claim moves.
func (r *Runner) breakLease(ctx context.Context, name, owner string, czxid int64, ver int32, stale time.Duration) {
	claim, entry := r.c.l.claim(name), r.c.l.entry(name)
	_, _, id, actionID, ok := entryKey(name)
	data, est, err := r.c.get(ctx, entry)
	switch {
	case err != nil && !errors.Is(err, zk.ErrNoNode):
		return // at the next listing
	case !r.sameClaim(ctx, claim, czxid, ver):
		return // renewed, released, or another claim now
	case err != nil, !ok:
		r.deleteClaimAt(ctx, claim, owner, ver, stale, nil) // no entry (or not baton's): nothing else to do
		return
	}
	guard := &zk.CheckVersionRequest{Path: entry, Version: est.Version}
	var ed entryData
	if err := json.Unmarshal(data, &ed); err != nil || ed.Job != id || ed.ID != actionID {
		r.deleteClaimAt(ctx, claim, owner, ver, stale, guard)
		return
	}
	var a job.Action
	if ed.Act != nil && ed.Act.JobID == id && ed.Act.ID == actionID {
		a = *ed.Act
	} else {
		j, err := r.st.Load(ctx, id)
		if errors.Is(err, store.ErrNotFound) {
			r.deleteClaimAt(ctx, claim, owner, ver, stale, guard)
			return
		}
		if err != nil {
			r.log.Warn("reading the job of a claim whose lease expired: left to the next look", "job", id, "action", actionID, "err", err)
			return
		}
		var out bool
		if a, out = j.Pending(actionID); !out {
			r.deleteClaimAt(ctx, claim, owner, ver, stale, guard)
			return
		}
	}
	if !a.AtMostOnce {
		r.deleteClaimAt(ctx, claim, owner, ver, stale, guard)
		return
	}
	c := consumed{entry: entry, ver: est.Version, claim: claim, claimVer: ver, checkClaim: true}
	tr, err := r.eng.ApplyWith(ctx, id, []job.Result{runner.LostResult(a, r.o.Clock.Now())}, []consumed{c})
	switch {
	case err == nil && tr.Changed():
		r.stats.leasesBroken.Add(1)
		r.o.Hooks.Placed(runner.PlacementLeaseBroken, a.Name)
		r.log.Warn("claim lease expired: claim broken, and the at-most-once action reported lost (not run again)",
			"job", id, "action", actionID, "owner", owner, "unchanged_for", stale.Round(time.Millisecond), "lease", r.o.ClaimLease)
	case err == nil:
		r.deleteClaimAt(ctx, claim, owner, ver, stale, guard) // the job no longer waits for it
	case errors.Is(err, errClaimLost):
		// Renewed meanwhile, or released: the owner is not stuck.
	case ctx.Err() == nil:
		r.log.Warn("breaking the claim of an at-most-once action whose lease expired failed: left to the next look", "job", id, "action", actionID, "err", err)
	}
}

// sameClaim reports whether claim is still the node made at czxid, at
// version ver.
func (r *Runner) sameClaim(ctx context.Context, claim string, czxid int64, ver int32) bool {
	_, st, err := r.c.get(ctx, claim)
	return err == nil && st.Czxid == czxid && st.Version == ver
}

// deleteClaimAt deletes claim at version ver, with guard (the check of
// its entry's version; nil for none): the lease of owner's claim
// expired. A claim renewed or released meanwhile, or an entry claimed
// again, is left alone.
func (r *Runner) deleteClaimAt(ctx context.Context, claim, owner string, ver int32, stale time.Duration, guard *zk.CheckVersionRequest) {
	var err error
	if guard == nil {
		err = r.c.delete(ctx, claim, ver)
	} else {
		_, _, err = r.c.multi(ctx, "break "+claim, []any{guard, &zk.DeleteRequest{Path: claim, Version: ver}})
	}
	switch {
	case err == nil:
		r.stats.leasesBroken.Add(1)
		r.o.Hooks.Placed(runner.PlacementLeaseBroken, "")
		r.log.Warn("claim lease expired: claim broken, the action is claimable again",
			"claim", claim, "owner", owner, "unchanged_for", stale.Round(time.Millisecond), "lease", r.o.ClaimLease)
	case errors.Is(err, zk.ErrBadVersion), errors.Is(err, zk.ErrNoNode):
	case ctx.Err() == nil:
		r.log.Warn("breaking a claim whose lease expired failed: left to the next look", "claim", claim, "err", err)
	}
}

// checkLease returns an error for a ClaimLease New cannot use, and the
// lease to use (the default for 0).
func checkLease(d time.Duration) (time.Duration, error) {
	switch {
	case d == 0:
		return DefaultClaimLease, nil
	case d < minClaimLease:
		return 0, fmt.Errorf("zk: Options.ClaimLease is %v; want 0 (the default, %v) or at least %v", d, DefaultClaimLease, minClaimLease)
	}
	return d, nil
}
