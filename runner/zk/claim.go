package zk

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"

	"github.com/go-zookeeper/zk"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	"github.com/batonwf/baton/store"
)

// claim claims the queue entry name: it reads the entry, and if this
// worker has a handler for its action, creates its ephemeral claim and
// bumps the entry's version in one multi-op. The entry's version then
// names this claim: a worker whose session expired, and whose action
// another worker claimed since, finds it changed and abandons its result.
// claim returns false for an entry it did not claim or that needs no run
// (a stale entry, deleted; an at-most-once action claimed before,
// reported lost).
//
// h says what the work loop knows and asks: the slot's action name (""
// for an entry named by an older baton: admit takes the name's slot once
// read), and, for a pin that placement allocates to this worker (Persist),
// the allocation read: the claim then reads the entry's data for every
// name under the pin, asks placement again with them, and writes the
// allocation and this worker's index entry in its own multi-op (pinOps).
func (r *Runner) claim(ctx context.Context, name string, h *claimHooks) (consumed, job.Action, uint64, bool) {
	skip := h.skip
	_, _, id, actionID, ok := entryKey(name)
	if !ok {
		skip()
		r.log.Warn("queue entry with a malformed name (not written by baton?): left alone", "entry", r.c.l.entry(name))
		return consumed{}, job.Action{}, 0, false
	}
	if c, a, stops, done, ok := r.claimBlind(ctx, name, id, actionID, h); h.pin == nil && done {
		if ok {
			runner.LogClaimed(ctx, r.log, a, slog.String("entry", c.entry))
		}
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
	if h.action != "" && ed.Action != h.action {
		skip()
		r.log.Warn("queue entry whose name and data name different actions (not written by baton?): left alone", "entry", r.c.l.entry(name), "data", string(data))
		return consumed{}, job.Action{}, 0, false
	}
	if r.quarantinedFor(ed.Action) {
		skip() // until the quarantine ends (the work loop is woken then)
		return consumed{}, job.Action{}, 0, false
	}
	if !h.admitted(ed.Action) {
		return consumed{}, job.Action{}, 0, false
	}
	var extra []any
	var pinKey uint64
	if h.pin != nil {
		// Allocating (or moving) a pin to this worker: every name under
		// the pin must be one it can run, as the entry's data says.
		var names []string
		al := allocData{Worker: r.o.Name, Job: string(id), Since: r.o.Clock.Now().UTC()}
		if ed.Act != nil && ed.Act.Placement != nil {
			names, al.Key = ed.Act.Placement.Names, ed.Act.Placement.Key
		}
		if !h.pin.redecide(names) {
			return consumed{}, job.Action{}, 0, false
		}
		pinKey = h.pin.key
		if extra, err = r.pinOps(ctx, pinKey, h.pin.prev, al); err != nil {
			if ctx.Err() == nil {
				r.log.Warn("preparing a pin's allocation", "entry", name, "err", err)
			}
			return consumed{}, job.Action{}, 0, false
		}
	}
	claimedBefore := ed.Claimed
	ed.Claimed++
	ed.Worker = r.o.Name
	nd, _ := json.Marshal(ed)
	c := consumed{entry: r.c.l.entry(name), ver: st.Version + 1, claim: r.c.l.claim(name)}
	_, _, err = r.c.multi(ctx, "claim "+name, append([]any{
		r.c.createOp(c.claim, []byte(r.o.Name), zk.FlagEphemeral),
		&zk.SetDataRequest{Path: c.entry, Data: nd, Version: st.Version},
	}, extra...))
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
			r.o.Hooks.Placed(runner.PlacementClaimLost, ed.Action)
		}
		if h.pin != nil {
			r.pins.forget(pinKey) // another worker allocated it, or it moved: read again
		}
		return consumed{}, job.Action{}, 0, false
	}
	r.stats.claims.Add(1)
	r.o.Hooks.Placed(runner.PlacementClaimed, ed.Action)
	if h.pin != nil {
		ver := int32(0)
		if h.pin.prev.found {
			ver = h.pin.prev.ver + 1
		}
		r.pins.set(pinKey, pinState{found: true, holder: r.o.Name, ver: ver})
		r.stats.pinsAllocated.Add(1)
		r.o.Hooks.Placed(runner.PlacementPinAllocated, ed.Action)
		if p := h.pin.prev.holder; p != "" && p != r.o.Name {
			r.stats.pinMoves.Add(1)
			r.o.Hooks.Placed(runner.PlacementPinMoved, ed.Action)
			r.log.Info("pin moved here", "entry", name, "from", p)
		}
	}
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
	if e, ok := r.st.recall(id); ok && e.m.Version > 0 {
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
			j, err = r.st.Load(ctx, id)
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
			_ = r.c.backoff.Sleep(ctx, 1)
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
		r.enqueue(context.WithoutCancel(ctx), c, nil, runner.LostResult(a, r.o.Clock.Now()))
		return consumed{}, job.Action{}, 0, false
	}
	stops := uint64(unknownStops)
	if merr == nil {
		stops = m.Stops
	}
	runner.LogClaimed(ctx, r.log, a, slog.String("entry", c.entry))
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
func (r *Runner) claimBlind(ctx context.Context, name string, id job.ID, actionID string, h *claimHooks) (c consumed, a job.Action, stops uint64, done, ok bool) {
	e, found := r.st.recall(id)
	if h.pin != nil || !found || e.m.Version == 0 || e.m.Stops != 0 || e.m.Status != job.StatusRunning.String() {
		return
	}
	a, out := e.j.Pending(actionID)
	if !out {
		return
	}
	if a.AtMostOnce {
		return
	}
	if _, has := r.o.Registry.Lookup(a.Name); !has || h.action != "" && a.Name != h.action || r.quarantinedFor(a.Name) {
		return // claim reads the entry, and says why
	}
	if !h.admitted(a.Name) {
		return consumed{}, job.Action{}, 0, true, false
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
		r.o.Hooks.Placed(runner.PlacementClaimed, a.Name)
		return c, a, 0, true, true
	case errors.Is(err, zk.ErrBadVersion):
		return consumed{}, job.Action{}, 0, false, false // claimed before: read it
	case errors.Is(err, zk.ErrNodeExists), errors.Is(err, zk.ErrNoNode):
		r.stats.claimsLost.Add(1)
		r.o.Hooks.Placed(runner.PlacementClaimLost, a.Name)
	case ctx.Err() == nil:
		r.log.Warn("claiming a queue entry", "entry", name, "err", err)
	}
	return consumed{}, job.Action{}, 0, true, false
}

// claimHooks is what the work loop tells a claim, and learns from it.
type claimHooks struct {
	// action is the action name the claim's slot was taken for: the
	// name's, or "" for an entry named by an older baton, until admit
	// took the slot for the name its data gives.
	action string
	skip   func()                 // leave the entry alone from now on
	admit  func(name string) bool // takes the slot for name, or gives it back (slots.rename)
	// refused: admit gave the slot back (the name's limit): the work
	// loop must not free it again.
	refused bool
	pin     *pinClaim // a pin to allocate to this worker; nil for none
}

// admitted takes the slot of an entry named by an older baton for its
// action name, once read; it reports false when the name's limit refuses
// it. An entry whose name said the action has its slot already.
func (h *claimHooks) admitted(name string) bool {
	if h.admit == nil {
		return true
	}
	admit := h.admit
	h.admit = nil
	if admit(name) {
		h.action = name
		return true
	}
	h.refused = true
	return false
}

// pinClaim is a pin that placement allocates to this worker (Persist)
// with the claim of one of its entries.
type pinClaim struct {
	key  uint64   // its key's hash
	prev pinState // its allocation as read when decided
	// redecide asks placement again, given every action name under the
	// pin (from the entry's data; nil when it does not carry them).
	redecide func(names []string) bool
}

// ownsClaim reports whether the first action mine reserves has its claim,
// as the transition that created it made it, in this session: the
// transition was written (a multi-op is all or nothing). The claim must
// be this session's and its entry still at version 0, as the transition
// created it: a claim this session made from the queue (the entry
// claimed again after the transition's claim went with an expired
// session) moved the entry's version, and its own run is under way.
func (r *Runner) ownsClaim(ctx context.Context, mine *reservation) bool {
	for _, c := range mine.claims() {
		return r.ownClaim(ctx, c)
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
