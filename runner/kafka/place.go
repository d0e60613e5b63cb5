package kafka

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/placement"
	"github.com/batonwf/baton/runner"
)

// Why a worker leaves the workers' group and joins it again.
var (
	// errWedged: it made no progress for a ClaimLease while an action
	// waited for a slot.
	errWedged = errors.New("kafka: the worker made no progress for a claim lease")
	// errRejoin: a quarantine started or ended: it joins again with the
	// topics of the names it is not quarantined for.
	errRejoin = errors.New("kafka: the worker's quarantines changed")
)

// placeState is what a worker keeps for placement: its load and counters
// per action name (published in the control topic), its progress (for
// ClaimLease), and its quarantines. Guarded by worker.mu.
type placeState struct {
	names    map[string]*nameLoad
	tallies  map[string]placement.Tally
	dirty    bool      // the load changed since it was published
	progress time.Time // when a handler last started or ended (or the worker joined)
	waiting  int       // partitions whose next action waits for a slot
	since    time.Time // when waiting last went from 0 to 1
	leave    context.CancelCauseFunc
	abandon  chan struct{}
	// peers: for each action name, when this worker last saw another
	// worker's published success count grow; seen: those counts.
	peers map[string]time.Time
	seen  map[string]map[string]uint64 // worker -> name -> succeeded
}

func (p *placeState) init(now time.Time) {
	p.names, p.tallies = map[string]*nameLoad{}, map[string]placement.Tally{}
	p.peers, p.seen = map[string]time.Time{}, map[string]map[string]uint64{}
	p.progress = now
}

func (p *placeState) load(name string) *nameLoad {
	nl := p.names[name]
	if nl == nil {
		nl = &nameLoad{}
		p.names[name] = nl
	}
	return nl
}

// begin counts a handler of name that starts.
func (p *placeState) begin(name string, now time.Time) {
	p.load(name).Running++
	p.progress, p.dirty = now, true
}

// slot takes a slot for an action of name (its limit's, then one of the
// capacity), waiting while the worker is full; release gives it back.
// It fails when ctx ends first.
func (w *worker) slot(ctx context.Context, name string) (release func(), ok bool) {
	lim := w.limits[name]
	try := func() bool {
		if lim != nil {
			select {
			case lim <- struct{}{}:
			default:
				return false
			}
		}
		select {
		case w.sem <- struct{}{}:
			return true
		default:
			if lim != nil {
				<-lim
			}
			return false
		}
	}
	release = func() {
		<-w.sem
		if lim != nil {
			<-lim
		}
	}
	if try() {
		return release, true
	}
	w.mu.Lock()
	if w.place.waiting == 0 {
		w.place.since = time.Now()
	}
	w.place.waiting++
	w.mu.Unlock()
	defer func() {
		w.mu.Lock()
		w.place.waiting--
		w.mu.Unlock()
	}()
	if lim != nil {
		select {
		case lim <- struct{}{}:
		case <-ctx.Done():
			return nil, false
		}
	}
	select {
	case w.sem <- struct{}{}:
		return release, true
	case <-ctx.Done():
		if lim != nil {
			<-lim
		}
		return nil, false
	}
}

// outcome says how an attempt ended, for quarantine.
func outcome(res job.Result, err error, stopped bool) placement.Outcome {
	switch {
	case stopped:
		return placement.Stopped
	case err != nil:
		return placement.SessionLost // handed back: the worker left or stops
	case res.Error == "":
		return placement.Succeeded
	case res.Kind == job.KindTimeout:
		return placement.TimedOut
	case res.Kind == job.KindLost:
		return placement.Lost
	case res.Final:
		return placement.Permanent
	}
	return placement.Failed
}

// observe records how an attempt of a ended: the worker's counters, and
// its quarantine tally for a.Name. A quarantine that starts makes the
// worker join the group again without the name's topic, unless the
// group's description shows no other member takes it.
func (w *worker) observe(a job.Action, res job.Result, err error, stopped bool) {
	o := outcome(res, err, stopped)
	q := w.r.o.Quarantine
	now := time.Now()
	w.mu.Lock()
	nl := w.place.load(a.Name)
	nl.Running--
	switch {
	case o == placement.Succeeded:
		nl.Succeeded++
	case o.Counts():
		nl.Failed++
	}
	w.place.progress, w.place.dirty = now, true
	t := w.place.tallies[a.Name]
	peers := placement.Peers{LastSuccess: w.place.peers[a.Name], Handlers: 1}
	w.mu.Unlock()
	if o.Counts() && t.Failures+1 >= q.After && !peers.LastSuccess.IsZero() {
		// About to be sentenced: count the live members that take the
		// name's topic, and the others quarantined for it.
		peers.Handlers, peers.Quarantined = w.handlers(a.Name)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	t, s := q.Observe(w.place.tallies[a.Name], o, peers, now)
	w.place.tallies[a.Name] = t
	if !s.Start {
		return
	}
	w.r.stats.quarantines.Add(1)
	w.r.o.Hooks.Placed(runner.PlacementQuarantined, a.Name)
	w.place.load(a.Name).Quarantined = &s.Until
	w.log.Warn("quarantined: leaving the action's topic for a while", "action", a.Name, "until", s.Until, "reason", s.Reason)
	if w.place.leave != nil {
		w.place.leave(errRejoin)
	}
	time.AfterFunc(s.Until.Sub(now), func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.log.Info("quarantine over: taking the action again", "action", a.Name)
		w.place.load(a.Name).Quarantined = nil
		w.place.dirty = true
		if w.place.leave != nil {
			w.place.leave(errRejoin)
		}
	})
}

// handlers returns how many live members of the workers' group take the
// topic of action name (this one included; 1 if the group cannot be
// described), and how many of the others the control topic says are
// quarantined for it now.
func (w *worker) handlers(name string) (handlers, quarantined int) {
	ctx, cancel := context.WithTimeout(context.Background(), w.r.cfg.Timeout)
	defer cancel()
	ws, err := w.r.st.Workers(ctx)
	if err != nil {
		w.log.Warn("describing the workers' group before a quarantine", "err", err)
		return 1, 0
	}
	control := w.r.controlSnapshot()
	now := time.Now()
	for _, x := range ws {
		if !slices.Contains(x.Actions, name) && x.Name != w.r.o.Name {
			continue
		}
		handlers++
		if cs, ok := control[x.Name]; ok && x.Name != w.r.o.Name && cs.Quarantined[name].After(now) {
			quarantined++
		}
	}
	return max(handlers, 1), quarantined
}

// topics returns the action topics the worker takes now: those of its
// Registry's names, less those it is quarantined for.
func (w *worker) topics() []string {
	now := time.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for _, n := range w.r.o.Registry.Names() {
		if w.place.tallies[n].Active(now) {
			continue
		}
		out = append(out, w.r.cfg.actionTopic(n))
	}
	return out
}

// joined records the means to make the worker leave its group (leave,
// with the reason as cause) and give up waiting for its actions
// (abandon), as it joins.
func (w *worker) joined(leave context.CancelCauseFunc, abandon chan struct{}) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.place.leave, w.place.abandon = leave, abandon
	w.place.progress = time.Now()
}

// wedged makes the worker leave its group: its partitions stop waiting
// for the actions it runs (their messages are not committed: the
// partitions' next owners run them again), and the group gives them to
// the others. Its handlers are left to run: a hung one is the handler's
// to end, and a slow one's result still counts if it comes first.
func (w *worker) wedged() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.place.leave == nil {
		return
	}
	w.r.stats.wedged.Add(1)
	w.r.o.Hooks.Placed(runner.PlacementWedged, "")
	w.log.Warn("no progress for a claim lease while actions wait for a slot: leaving the workers' group until a handler returns",
		"lease", w.r.o.ClaimLease, "running", len(w.running))
	close(w.place.abandon)
	w.place.leave(errWedged)
	w.place.leave = nil
}

// rejoinWhenFree waits, after the worker was wedged, until one of its
// handlers has returned or none runs (or work ends).
func (w *worker) rejoinWhenFree(work context.Context) {
	w.mu.Lock()
	left := w.place.progress
	w.mu.Unlock()
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		w.mu.Lock()
		free := len(w.running) == 0 || w.place.progress.After(left)
		w.mu.Unlock()
		if free {
			w.log.Info("a handler returned: joining the workers' group again")
			return
		}
		select {
		case <-work.Done():
			return
		case <-t.C:
		}
	}
}

// tend publishes the worker's load to the control topic when it changed,
// at most once a second, and watches for the worker's wedging, until ctx
// ends; then it deletes the worker's load record if the worker drained.
func (w *worker) tend(ctx context.Context) {
	r := w.r
	tick := 250 * time.Millisecond
	if l := r.o.ClaimLease; l > 0 && l/4 < tick {
		tick = max(l/4, 10*time.Millisecond)
	}
	t := time.NewTicker(tick)
	defer t.Stop()
	var published time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			w.mu.Lock()
			lease := r.o.ClaimLease
			stuck := lease > 0 && w.place.waiting > 0 && w.place.leave != nil &&
				now.Sub(w.place.progress) >= lease && now.Sub(w.place.since) >= lease
			var msg *kafka.Message
			if w.place.dirty && now.Sub(published) >= time.Second {
				names := make(map[string]nameLoad, len(w.place.names))
				for n, nl := range w.place.names {
					names[n] = *nl
				}
				m := loadMessage(r.o.Name, r.o.Capacity, names, r.o.Clock.Now())
				msg, w.place.dirty, published = &m, false, now
			}
			w.mu.Unlock()
			if stuck {
				w.wedged()
			}
			if msg != nil {
				w.publish(ctx, *msg)
			}
		}
	}
}

// publish writes a load record (best effort: the next change writes
// another).
func (w *worker) publish(ctx context.Context, m kafka.Message) {
	cw, err := w.r.st.controlWriter(ctx)
	if err == nil {
		err = cw.WriteMessages(ctx, m)
	}
	if err != nil && ctx.Err() == nil {
		w.log.Debug("publishing the worker's load", "err", writeError(err))
		w.mu.Lock()
		w.place.dirty = true
		w.mu.Unlock()
	}
}

// peersChanged takes another worker's latest record from the control
// topic: a success count that grew is a peer's success.
func (w *worker) peersChanged(cs ControlState, now time.Time) {
	if cs.Name == "" {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	seen := w.place.seen[cs.Name]
	if seen == nil {
		seen = map[string]uint64{}
		w.place.seen[cs.Name] = seen
	}
	for n, nl := range cs.Load {
		if nl.Succeeded > seen[n] {
			w.place.peers[n] = now
		}
		seen[n] = nl.Succeeded
	}
}
