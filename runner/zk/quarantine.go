package zk

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/batonwf/baton/placement"
	"github.com/batonwf/baton/runner"
)

// Quarantine (see the package doc, Quarantine): every attempt's outcome
// on this worker goes to placement.Quarantine.Observe (observe), with what
// this worker knows of its peers for the action's name: how many live
// workers handle it, how many of the others are quarantined for it, and
// when it last saw another worker's published success count for it grow
// (trackPeers). A sentence is written as ONE multi-op: the ephemeral
// /quarantine/ACTION/SELF created and /quarantine/ACTION's count set at
// the version it was read at, so of two workers racing for the last slot
// one multi-op fails, and that worker observes again with the fresh
// count. The quarantine ends on this worker's clock (Options.Clock): its
// node is deleted and the work loop woken at once.

// quarantines is a worker's quarantine record. Guarded by mu.
type quarantines struct {
	mu     sync.Mutex
	tally  map[string]placement.Tally // per action name, once it had a counted failure
	active map[string]runner.Timer    // the names quarantined now, and the timers that end them
	// peers holds, per peer and action name, the published success count
	// last seen, and lastGrew when (on Options.Clock) a peer's count for
	// a name was last seen to grow.
	peers    map[string]map[string]uint64
	lastGrew map[string]time.Time
	wake     chan struct{} // a quarantine ended: the work loop claims again (buffer 1)
}

// quarantinedFor reports whether this worker is quarantined for the
// action name now.
func (r *Runner) quarantinedFor(name string) bool {
	r.quar.mu.Lock()
	defer r.quar.mu.Unlock()
	_, ok := r.quar.active[name]
	return ok
}

// trackPeers follows the registry until ctx ends, noting when a peer's
// published success count for a name grows.
func (r *Runner) trackPeers(ctx context.Context) {
	ch := r.reg.subscribe()
	for {
		view := r.reg.view(r.o.Name, r.o.Clock.Now())
		r.notePeers(view)
		r.noteLifted(ctx, view)
		select {
		case <-ctx.Done():
			return
		case <-ch:
		}
	}
}

// notePeers folds in the published success counts of view's live
// workers other than this one.
func (r *Runner) notePeers(view placement.View) {
	now := r.o.Clock.Now()
	r.quar.mu.Lock()
	defer r.quar.mu.Unlock()
	if r.quar.peers == nil {
		r.quar.peers, r.quar.lastGrew = map[string]map[string]uint64{}, map[string]time.Time{}
	}
	for _, w := range view.Workers {
		if w.Name == view.Self || !w.Live {
			continue
		}
		seen := r.quar.peers[w.Name]
		if seen == nil {
			// First seen: its counts are where growth is measured from.
			seen = map[string]uint64{}
			r.quar.peers[w.Name] = seen
			for name, n := range w.Load.Names {
				seen[name] = n.Succeeded
			}
			continue
		}
		for name, n := range w.Load.Names {
			if old, ok := seen[name]; (ok && n.Succeeded > old) || (!ok && n.Succeeded > 0) {
				r.quar.lastGrew[name] = now
			}
			seen[name] = n.Succeeded
		}
	}
}

// noteLifted ends here the quarantines whose nodes someone else deleted
// (baton undrain lifts them): those view does not show, whose node is
// gone. (Just after a quarantine starts, the registry may not show it
// yet; its node exists then.)
func (r *Runner) noteLifted(ctx context.Context, view placement.View) {
	var shown map[string]time.Time
	for _, w := range view.Workers {
		if w.Name == view.Self {
			shown = w.Quarantined
		}
	}
	r.quar.mu.Lock()
	var gone []string
	for name := range r.quar.active {
		if _, ok := shown[name]; !ok {
			gone = append(gone, name)
		}
	}
	r.quar.mu.Unlock()
	for _, name := range gone {
		if ok, err := r.c.exists(ctx, r.c.l.quarantine(name, r.o.Name)); err != nil || ok {
			continue
		}
		r.quar.mu.Lock()
		t, ok := r.quar.active[name]
		if ok {
			t.Stop()
			delete(r.quar.active, name)
		}
		r.quar.mu.Unlock()
		if ok {
			r.log.Info("quarantine lifted (its node was deleted: baton undrain): taking actions of this name again", "name", name)
			select {
			case r.quar.wake <- struct{}{}:
			default:
			}
		}
	}
}

// peersOf returns what this worker knows of the others for the action
// name, from view and the growth it noted.
func (r *Runner) peersOf(view placement.View, name string, now time.Time) placement.Peers {
	var p placement.Peers
	for _, w := range view.Workers {
		if !w.Live || w.State != placement.StateAvailable && w.Name != view.Self {
			continue
		}
		if _, ok := slices.BinarySearch(w.Actions, name); !ok && w.Name != view.Self {
			continue
		}
		p.Handlers++
		if until, ok := w.Quarantined[name]; ok && w.Name != view.Self && now.Before(until) {
			p.Quarantined++
		}
	}
	if !slices.ContainsFunc(view.Workers, func(w placement.Worker) bool { return w.Name == view.Self && w.Live }) {
		p.Handlers++ // this worker, before the registry saw its live node
	}
	r.quar.mu.Lock()
	p.LastSuccess = r.quar.lastGrew[name]
	r.quar.mu.Unlock()
	return p
}

// observe applies the outcome of one attempt of the action name on this
// worker to its tally, and quarantines the worker when the policy says
// so. Outcomes that do not count, and successes of a name that never
// failed here, cost nothing.
func (r *Runner) observe(ctx context.Context, name string, o placement.Outcome) {
	if !o.Counts() && o != placement.Succeeded {
		return
	}
	r.quar.mu.Lock()
	t, had := r.quar.tally[name]
	r.quar.mu.Unlock()
	if o == placement.Succeeded && !had {
		return
	}
	now := r.o.Clock.Now()
	view := r.reg.view(r.o.Name, now)
	r.notePeers(view)
	q := view.Settings.Quarantine.WithDefaults()
	peers := r.peersOf(view, name, now)
	nt, s := q.Observe(t, o, peers, now)
	if s.Start {
		nt, s = r.startQuarantine(ctx, name, q, t, o, peers, now)
	}
	r.quar.mu.Lock()
	if r.quar.tally == nil {
		r.quar.tally = map[string]placement.Tally{}
	}
	r.quar.tally[name] = nt
	r.quar.mu.Unlock()
	if !s.Start && o.Counts() && nt.Failures >= q.After {
		r.log.Info("not quarantined", "name", name, "reason", s.Reason)
	}
}

// startQuarantine writes the sentence Observe gave for the action name
// (from tally t, outcome o and peers at now): one multi-op creating this
// worker's ephemeral quarantine node and setting the name's count at the
// version read with the quarantines it counts (readQuarantines,
// writeQuarantine). When that version moved (another worker quarantined
// itself meanwhile), it reads again and observes again with the fresh
// count; the policy may refuse then (the share is taken). It returns the
// tally to keep and the sentence that stands.
func (r *Runner) startQuarantine(ctx context.Context, name string, q placement.Quarantine, t placement.Tally, o placement.Outcome, peers placement.Peers, now time.Time) (placement.Tally, placement.Sentence) {
	for attempt := 0; ; attempt++ {
		rd, err := r.readQuarantines(ctx, name)
		if err != nil {
			return r.quarantineFailed(name, t, err)
		}
		peers.Quarantined = rd.others
		nt, s := q.Observe(t, o, peers, now)
		if !s.Start {
			r.log.Info("not quarantined: the share of workers that may be quarantined for this action is taken", "name", name, "reason", s.Reason)
			return nt, s
		}
		failed, err := r.writeQuarantine(ctx, name, rd, s.Until.Sub(now), nt.Strikes)
		switch {
		case err == nil:
		case failed == 0 && errors.Is(err, zk.ErrBadVersion) && attempt < 8:
			r.log.Debug("quarantine: another worker quarantined itself for this action meanwhile; counting again", "name", name)
			continue
		case failed == 1 && errors.Is(err, zk.ErrNodeExists) && attempt < 8:
			// Left by an earlier quarantine whose end did not delete it,
			// or made by this multi-op before its reply was lost.
			node := r.c.l.quarantine(name, r.o.Name)
			if _, nst, gerr := r.c.get(ctx, node); gerr == nil && nst.EphemeralOwner == r.c.c.SessionID() {
				_ = r.c.delete(ctx, node, -1)
				continue
			}
			return r.quarantineFailed(name, t, err)
		default:
			return r.quarantineFailed(name, t, err)
		}
		r.stats.quarantines.Add(1)
		r.o.Hooks.Placed(runner.PlacementQuarantined, name)
		r.log.Warn("quarantined: this worker takes no action of this name until the back-off ends", "name", name, "for", s.Until.Sub(now), "until", s.Until, "strikes", nt.Strikes, "reason", s.Reason)
		r.quar.mu.Lock()
		if r.quar.active == nil {
			r.quar.active = map[string]runner.Timer{}
		}
		if old := r.quar.active[name]; old != nil {
			old.Stop()
		}
		r.quar.active[name] = r.o.Clock.AfterFunc(s.Until.Sub(now), func() { r.endQuarantine(name) })
		r.quar.mu.Unlock()
		return nt, s
	}
}

// quarRead is what a quarantine is decided on: how many other workers
// are quarantined for a name, and the version of the name's node that
// the quarantine's multi-op checks.
type quarRead struct {
	others int
	ver    int32
}

// readQuarantines reads the quarantines for the action name: the
// children of /quarantine/ACTION (made if missing) and its version.
func (r *Runner) readQuarantines(ctx context.Context, name string) (quarRead, error) {
	parent := r.c.l.quarantineAction(name)
	if err := r.c.ensure(ctx, r.c.l.quarantines()); err != nil {
		return quarRead{}, err
	}
	if _, err := r.c.create(ctx, parent, []byte("0"), 0); err != nil && !errors.Is(err, zk.ErrNodeExists) {
		return quarRead{}, err
	}
	var kids []string
	var st *zk.Stat
	err := r.c.do(ctx, "read "+parent, func() (err error) {
		if _, st, err = r.c.c.Get(parent); err != nil {
			return err
		}
		kids, _, err = r.c.c.Children(parent)
		return err
	})
	if err != nil {
		return quarRead{}, err
	}
	rd := quarRead{ver: st.Version}
	for _, k := range kids {
		if k != r.o.Name {
			rd.others++
		}
	}
	return rd, nil
}

// writeQuarantine quarantines this worker for the action name for d, its
// strikes-th quarantine in a row: one multi-op that sets the name's count
// at the version rd read and creates this worker's ephemeral node. It
// returns the error of the op that failed and its index (0: the count
// moved; 1: the node exists).
func (r *Runner) writeQuarantine(ctx context.Context, name string, rd quarRead, d time.Duration, strikes int) (failed int, err error) {
	data, _ := json.Marshal(quarantineData{UntilMsLeft: d.Milliseconds(), Strikes: strikes})
	node := r.c.l.quarantine(name, r.o.Name)
	_, failed, err = r.c.multi(ctx, "quarantine "+node, []any{
		&zk.SetDataRequest{Path: r.c.l.quarantineAction(name), Data: []byte(strconv.Itoa(rd.others + 1)), Version: rd.ver},
		r.c.createOp(node, data, zk.FlagEphemeral),
	})
	return failed, err
}

// quarantineFailed logs that a quarantine could not be written and
// returns the tally as it was: the next counted failure tries again.
func (r *Runner) quarantineFailed(name string, t placement.Tally, err error) (placement.Tally, placement.Sentence) {
	if !errors.Is(err, context.Canceled) {
		r.log.Warn("quarantine: writing it failed; not quarantined", "name", name, "err", err)
	}
	return t, placement.Sentence{Reason: "writing the quarantine failed"}
}

// endQuarantine ends this worker's quarantine for the action name: it
// deletes its node and wakes the work loop at once.
func (r *Runner) endQuarantine(name string) {
	r.quar.mu.Lock()
	_, ok := r.quar.active[name]
	delete(r.quar.active, name)
	r.quar.mu.Unlock()
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := r.c.delete(ctx, r.c.l.quarantine(name, r.o.Name), -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
		r.log.Warn("quarantine ended; deleting its node failed (it goes with the session)", "name", name, "err", err)
	}
	r.log.Info("quarantine ended: taking actions of this name again", "name", name)
	select {
	case r.quar.wake <- struct{}{}:
	default:
	}
}

// endQuarantines ends every quarantine of this worker (Run returns).
func (r *Runner) endQuarantines() {
	r.quar.mu.Lock()
	var names []string
	for name, t := range r.quar.active {
		t.Stop()
		names = append(names, name)
	}
	r.quar.mu.Unlock()
	for _, name := range names {
		r.endQuarantine(name)
	}
}
