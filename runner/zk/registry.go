package zk

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/batonwf/baton/placement"
	"github.com/batonwf/baton/runner"
)

// registry is this process's watched view of the workers, their live
// nodes, the cluster settings and the quarantines (see the package doc,
// Placement). It reads each node once and again only when its watch
// fires: a change costs the reads of the nodes that changed, never a
// re-read of the whole registry. Every time it keeps is on this
// process's clock (Options.Clock): when it saw a worker go down, when it
// read a quarantine.
//
// start reads everything before it returns, so the first view is whole;
// then a goroutine follows the watches until stop. A registry made with
// watch false (snapshot) reads once and follows nothing: what the
// clients' commands (status, drain) show.
type registry struct {
	c     *conn
	clock runner.Clock
	log   *slog.Logger
	watch bool

	mu       sync.Mutex
	workers  map[string]*regWorker
	settings placement.Settings
	// quar holds, per action name, the workers quarantined for it and
	// until when (this process's clock, as of when it read the node).
	quar    map[string]map[string]time.Time
	dirty   map[wkey]bool    // nodes to read (again)
	armed   map[wkey]bool    // nodes with a watch set and not fired yet
	garbled map[string]int64 // path -> the mzxid of its garbled data, logged and counted once

	unreadable atomic.Int64 // garbled nodes seen (each version once)
	// hooks are told of each garbled node (PlacementUnreadable); set
	// before the registry starts.
	hooks *runner.Hooks

	changes notifier        // changed()'s readers, and others' (subscribe)
	first   <-chan struct{} // changed()'s channel
	wake    chan struct{}   // a watch fired or an expiry passed: buffer 1
	expired atomic.Bool     // the expiry timer fired since the loop last looked
	stopc   chan struct{}
	done    chan struct{} // closed when the goroutine start began returns
	started bool          // start began it (g.mu)
	timer   runner.Timer  // the next expiry (a quarantine's or a grace's end)
}

// regWorker is one worker as the registry last read it.
type regWorker struct {
	w        placement.Worker // its maps and slices are replaced, never changed: views share them
	reg      registration
	regFound bool // its registration node exists (it may be garbled: w.State is StateNone then)
	regVer   int32
	live     liveNode
	liveVer  int32
}

// wkey is a node the registry reads: what it is, and whose.
type wkey struct {
	kind wkind
	a, b string // the worker's name; or the action name and the worker's
}

type wkind uint8

const (
	kWorkers     wkind = iota + 1 // the children of /workers
	kReg                          // a registration (a: name)
	kLive                         // a live node (a: name)
	kSettings                     // /placement
	kQuarantines                  // the children of /quarantine
	kQAction                      // the children of /quarantine/ACTION (a: action)
	kQNode                        // a quarantine (a: action, b: name)
)

func newRegistry(c *conn, clock runner.Clock, log *slog.Logger, watch bool) *registry {
	if clock == nil {
		clock = runner.RealClock()
	}
	if log == nil {
		log = c.log
	}
	g := &registry{c: c, clock: clock, log: log, watch: watch,
		workers: map[string]*regWorker{}, settings: DefaultSettings(), quar: map[string]map[string]time.Time{},
		dirty: map[wkey]bool{}, armed: map[wkey]bool{}, garbled: map[string]int64{},
		wake: make(chan struct{}, 1), stopc: make(chan struct{}), done: make(chan struct{})}
	g.first = g.changes.sub()
	for _, k := range []wkey{{kind: kWorkers}, {kind: kSettings}, {kind: kQuarantines}} {
		g.dirty[k] = true
	}
	return g
}

// snapshot reads the registry once, without watches.
func snapshot(ctx context.Context, c *conn, clock runner.Clock, log *slog.Logger) (*registry, error) {
	g := newRegistry(c, clock, log, false)
	if err := g.refresh(ctx); err != nil {
		return nil, err
	}
	return g, nil
}

// start reads the whole registry, then follows its watches in a
// goroutine until stop. It fails only when ctx ends first.
func (g *registry) start(ctx context.Context) error {
	for attempt := 1; ; attempt++ {
		err := g.refresh(ctx)
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			return err
		}
		g.log.Error("reading the workers' registry", "err", err)
		if err := g.c.backoff.Sleep(ctx, attempt); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	sessions := g.c.newSessions()
	g.mu.Lock()
	g.started = true
	g.mu.Unlock()
	go func() {
		defer close(g.done)
		defer cancel()
		go func() {
			select {
			case <-g.stopc:
				cancel()
			case <-ctx.Done():
			}
		}()
		g.loop(ctx, sessions)
	}()
	return nil
}

// stop ends the goroutine start began and waits for it. Safe to call
// twice, and without start.
func (g *registry) stop() {
	g.mu.Lock()
	select {
	case <-g.stopc:
	default:
		close(g.stopc)
	}
	if g.timer != nil {
		g.timer.Stop()
	}
	started := g.started
	g.mu.Unlock()
	if started {
		<-g.done
	}
}

// loop reads what changed whenever a watch fires, an expiry passes, or a
// new session starts (the old one's watches are gone), and polls the top
// nodes every backoff.Max in case a watch was lost.
func (g *registry) loop(ctx context.Context, sessions <-chan struct{}) {
	failures := 0
	for {
		poll := time.NewTimer(g.c.backoff.Max)
		select {
		case <-ctx.Done():
			poll.Stop()
			return
		case <-g.wake:
		case <-sessions:
			g.markAll()
		case <-poll.C:
			g.mu.Lock()
			for _, k := range []wkey{{kind: kWorkers}, {kind: kSettings}, {kind: kQuarantines}} {
				g.dirty[k] = true
			}
			g.mu.Unlock()
		}
		poll.Stop()
		if g.expired.Swap(false) {
			g.signal()
		}
		if err := g.refresh(ctx); err != nil {
			if ctx.Err() != nil {
				return
			}
			failures++
			g.log.Warn("reading the workers' registry", "err", err)
			_ = g.c.backoff.Sleep(ctx, failures)
			g.poke()
			continue
		}
		failures = 0
	}
}

// markAll marks every node read again.
func (g *registry) markAll() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.armed = map[wkey]bool{}
	for _, k := range []wkey{{kind: kWorkers}, {kind: kSettings}, {kind: kQuarantines}} {
		g.dirty[k] = true
	}
	for name := range g.workers {
		g.dirty[wkey{kind: kReg, a: name}] = true
		g.dirty[wkey{kind: kLive, a: name}] = true
	}
	for action, ws := range g.quar {
		g.dirty[wkey{kind: kQAction, a: action}] = true
		for name := range ws {
			g.dirty[wkey{kind: kQNode, a: action, b: name}] = true
		}
	}
}

// poke wakes the loop.
func (g *registry) poke() {
	select {
	case g.wake <- struct{}{}:
	default:
	}
}

// signal tells changed()'s readers the view changed.
func (g *registry) signal() { g.changes.notify() }

// changed receives (once per burst: its buffer holds one) whenever
// anything in the view changed, a quarantine's or a grace's end
// included. It is the work loop's: one reader; others subscribe.
func (g *registry) changed() <-chan struct{} { return g.first }

// subscribe returns a channel of its own that receives as changed()'s
// does.
func (g *registry) subscribe() <-chan struct{} { return g.changes.sub() }

// refresh reads every dirty node (and the nodes their reads find new)
// until none is dirty, then arms the expiry timer. It signals changed
// when anything read differs from before.
func (g *registry) refresh(ctx context.Context) error {
	changed := false
	for {
		g.mu.Lock()
		var k wkey
		found := false
		for d := range g.dirty {
			k, found = d, true
			break
		}
		g.mu.Unlock()
		if !found {
			break
		}
		ch, err := g.read(ctx, k)
		if err != nil {
			if changed {
				g.signal()
			}
			return err
		}
		changed = changed || ch
		g.mu.Lock()
		delete(g.dirty, k)
		g.mu.Unlock()
	}
	g.armExpiry()
	if changed {
		g.signal()
	}
	return nil
}

// read reads one node (setting its watch unless one is armed) and folds
// it into the registry; it reports whether the view changed.
func (g *registry) read(ctx context.Context, k wkey) (bool, error) {
	l := g.c.l
	if !g.tracked(k) {
		return false, nil // its worker or action is gone: no watch to set
	}
	switch k.kind {
	case kWorkers:
		names, found, err := g.children(ctx, k, l.workers())
		if err != nil || !found {
			return g.setWorkers(nil), err
		}
		return g.setWorkers(names), nil
	case kReg:
		data, st, found, err := g.get(ctx, k, l.worker(k.a))
		if err != nil {
			return false, err
		}
		return g.setReg(k.a, data, st, found), nil
	case kLive:
		data, st, found, err := g.get(ctx, k, l.live(k.a))
		if err != nil {
			return false, err
		}
		return g.setLive(k.a, l.live(k.a), data, st, found), nil
	case kSettings:
		data, st, found, err := g.get(ctx, k, l.placement())
		if err != nil {
			return false, err
		}
		return g.setSettings(l.placement(), data, st, found), nil
	case kQuarantines:
		actions, _, err := g.children(ctx, k, l.quarantines())
		if err != nil {
			return false, err
		}
		return g.setQuarantineActions(actions), nil
	case kQAction:
		names, _, err := g.children(ctx, k, l.quarantineAction(k.a))
		if err != nil {
			return false, err
		}
		return g.setQuarantined(k.a, names), nil
	case kQNode:
		p := l.quarantine(k.a, k.b)
		data, st, found, err := g.get(ctx, k, p)
		if err != nil {
			return false, err
		}
		return g.setQuarantine(k.a, k.b, p, data, st, found), nil
	}
	return false, nil
}

// tracked reports whether k's worker (registration, live node) or
// action (quarantines) is still in the registry.
func (g *registry) tracked(k wkey) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch k.kind {
	case kReg, kLive:
		_, ok := g.workers[k.a]
		return ok
	case kQAction, kQNode:
		_, ok := g.quar[k.a]
		return ok
	}
	return true
}

// get reads a node's data, with a watch on it (on its creation when it
// does not exist) unless one is armed.
func (g *registry) get(ctx context.Context, k wkey, p string) (data []byte, st *zk.Stat, found bool, err error) {
	var ch <-chan zk.Event
	watch := g.arming(k)
	err = g.c.do(ctx, "get "+p, func() error {
		for {
			var err error
			if !watch {
				data, st, err = g.c.c.Get(p)
				if errors.Is(err, zk.ErrNoNode) {
					found = false
					return nil
				}
				found = err == nil
				return err
			}
			data, st, ch, err = g.c.c.GetW(p)
			if err == nil {
				found = true
				return nil
			}
			if !errors.Is(err, zk.ErrNoNode) {
				return err
			}
			var ok bool
			ok, _, ch, err = g.c.c.ExistsW(p)
			if err != nil || !ok {
				found = false
				return err
			}
			// Created meanwhile: read it again (the exists watch's
			// channel is buffered; dropping it leaks nothing).
			ch = nil
		}
	})
	if err == nil && ch != nil {
		g.follow(k, ch)
	} else if watch && ch == nil {
		g.disarm(k)
	}
	return data, st, found, err
}

// children lists a node's children, with a watch on them (on the node's
// creation when it does not exist) unless one is armed.
func (g *registry) children(ctx context.Context, k wkey, p string) (names []string, found bool, err error) {
	var ch <-chan zk.Event
	watch := g.arming(k)
	err = g.c.do(ctx, "list "+p, func() error {
		for {
			var err error
			if !watch {
				names, _, err = g.c.c.Children(p)
				if errors.Is(err, zk.ErrNoNode) {
					found = false
					return nil
				}
				found = err == nil
				return err
			}
			names, _, ch, err = g.c.c.ChildrenW(p)
			if err == nil {
				found = true
				return nil
			}
			if !errors.Is(err, zk.ErrNoNode) {
				return err
			}
			var ok bool
			ok, _, ch, err = g.c.c.ExistsW(p)
			if err != nil || !ok {
				found = false
				return err
			}
			ch = nil // created meanwhile: list it again
		}
	})
	if err == nil && ch != nil {
		g.follow(k, ch)
	} else if watch && ch == nil {
		g.disarm(k)
	}
	return names, found, err
}

// arming reports whether a read of k is to set a watch (none is armed),
// and marks it armed.
func (g *registry) arming(k wkey) bool {
	if !g.watch {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.armed[k] {
		return false
	}
	g.armed[k] = true
	return true
}

func (g *registry) disarm(k wkey) {
	g.mu.Lock()
	delete(g.armed, k)
	g.mu.Unlock()
}

// follow waits for a watch on k to fire (a change, or the session's end
// with its watches), then marks k to read again and wakes the loop.
func (g *registry) follow(k wkey, ch <-chan zk.Event) {
	go func() {
		select {
		case <-ch:
		case <-g.stopc:
			return
		}
		g.mu.Lock()
		delete(g.armed, k)
		g.dirty[k] = true
		g.mu.Unlock()
		g.poke()
	}()
}

// setWorkers folds in the list of registered names: new ones are read,
// gone ones dropped.
func (g *registry) setWorkers(names []string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	changed := false
	present := make(map[string]bool, len(names))
	now := g.clock.Now()
	for _, n := range names {
		present[n] = true
		if _, ok := g.workers[n]; !ok {
			g.workers[n] = &regWorker{w: placement.Worker{Name: n, DownSince: now}}
			g.dirty[wkey{kind: kReg, a: n}] = true
			g.dirty[wkey{kind: kLive, a: n}] = true
			changed = true
		}
	}
	for n := range g.workers {
		if !present[n] {
			delete(g.workers, n)
			delete(g.garbled, g.c.l.worker(n))
			delete(g.garbled, g.c.l.live(n))
			changed = true
		}
	}
	return changed
}

// setReg folds in a registration as read.
func (g *registry) setReg(name string, data []byte, st *zk.Stat, found bool) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	rw := g.workers[name]
	if rw == nil {
		return false // deregistered meanwhile
	}
	old := rw.w
	if !found {
		rw.regFound, rw.reg = false, registration{}
		rw.w = placement.Worker{Name: name, Live: old.Live, DownSince: old.DownSince, Load: old.Load}
		return true
	}
	if rw.regFound && rw.regVer == st.Version {
		return false
	}
	rw.regFound, rw.regVer = true, st.Version
	reg, state, err := decodeRegistration(data)
	if err != nil {
		g.garbledLocked(g.c.l.worker(name), st, err, "a worker's registration does not parse: the worker is unreadable and takes no work until it registers again")
		rw.reg = registration{}
		rw.w = placement.Worker{Name: name, Live: old.Live, DownSince: old.DownSince, Load: old.Load}
		return true
	}
	delete(g.garbled, g.c.l.worker(name))
	rw.reg = reg
	w := reg.worker(name, state)
	w.Live, w.DownSince, w.Load = old.Live, old.DownSince, old.Load
	rw.w = w
	return true
}

// setLive folds in a live node as read: a worker whose live node
// vanished is down since now.
func (g *registry) setLive(name, p string, data []byte, st *zk.Stat, found bool) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	rw := g.workers[name]
	if rw == nil {
		return false
	}
	if !found {
		if !rw.w.Live && !rw.w.DownSince.IsZero() {
			return false
		}
		rw.live, rw.liveVer = liveNode{}, 0
		rw.w.Live, rw.w.DownSince, rw.w.Load = false, g.clock.Now(), placement.Load{}
		return true
	}
	if rw.w.Live && rw.liveVer == st.Version {
		return false
	}
	rw.liveVer = st.Version
	n, err := decodeLive(data)
	if err != nil {
		// Live all the same: only its load is unknown.
		g.garbledLocked(p, st, err, "a worker's live node does not parse: its load counts as none")
	}
	rw.live = n
	rw.w.Live, rw.w.DownSince, rw.w.Load = true, time.Time{}, n.Load.load()
	return true
}

// setSettings folds in the settings node; a garbled one leaves the
// settings as they were (the defaults if it never parsed).
func (g *registry) setSettings(p string, data []byte, st *zk.Stat, found bool) bool {
	s := DefaultSettings()
	if found {
		var err error
		if s, err = decodeSettings(data); err != nil {
			g.mu.Lock()
			g.garbledLocked(p, st, err, "the placement settings do not parse: the last good ones (or the defaults) stay in force")
			g.mu.Unlock()
			return false
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.garbled, p)
	if s == g.settings {
		return false
	}
	g.settings = s
	return true
}

// setQuarantineActions folds in the action names that have quarantine
// nodes.
func (g *registry) setQuarantineActions(actions []string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	present := make(map[string]bool, len(actions))
	for _, a := range actions {
		present[a] = true
		if _, ok := g.quar[a]; !ok {
			g.quar[a] = map[string]time.Time{}
			g.dirty[wkey{kind: kQAction, a: a}] = true
		}
	}
	changed := false
	for a, ws := range g.quar {
		if !present[a] {
			changed = changed || len(ws) > 0
			delete(g.quar, a)
		}
	}
	return changed
}

// setQuarantined folds in the workers quarantined for an action.
func (g *registry) setQuarantined(action string, names []string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	ws := g.quar[action]
	if ws == nil {
		ws = map[string]time.Time{}
		g.quar[action] = ws
	}
	present := make(map[string]bool, len(names))
	for _, n := range names {
		present[n] = true
		if _, ok := ws[n]; !ok {
			g.dirty[wkey{kind: kQNode, a: action, b: n}] = true
		}
	}
	changed := false
	for n := range ws {
		if !present[n] {
			delete(ws, n)
			changed = true
		}
	}
	return changed
}

// setQuarantine folds in one quarantine: until now plus the time it had
// left when written. A garbled one counts as none.
func (g *registry) setQuarantine(action, name, p string, data []byte, st *zk.Stat, found bool) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	ws := g.quar[action]
	if ws == nil {
		return false
	}
	if !found {
		_, had := ws[name]
		delete(ws, name)
		return had
	}
	q, err := decodeQuarantine(data)
	if err != nil {
		g.garbledLocked(p, st, err, "a quarantine node does not parse: it counts as none")
		_, had := ws[name]
		delete(ws, name)
		return had
	}
	ws[name] = g.clock.Now().Add(ms(q.UntilMsLeft))
	return true
}

// garbledLocked logs and counts a garbled node once per version of its
// data. g.mu is held.
func (g *registry) garbledLocked(p string, st *zk.Stat, err error, msg string) {
	if z, ok := g.garbled[p]; ok && z == st.Mzxid {
		return
	}
	g.garbled[p] = st.Mzxid
	g.unreadable.Add(1)
	g.hooks.Placed(runner.PlacementUnreadable, "")
	g.log.Error(msg, "node", p, "err", err)
}

// armExpiry sets the timer of the next end of a quarantine or of a down
// worker's grace, which changes the view without a node changing.
func (g *registry) armExpiry() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.watch {
		return
	}
	select {
	case <-g.stopc:
		return
	default:
	}
	now := g.clock.Now()
	var next time.Time
	later := func(t time.Time) {
		if t.After(now) && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	for _, rw := range g.workers {
		if !rw.w.Live && rw.w.State != placement.StateNone {
			later(rw.w.DownSince.Add(rw.w.Grace))
		}
	}
	for _, ws := range g.quar {
		for _, t := range ws {
			later(t)
		}
	}
	if g.timer != nil {
		g.timer.Stop()
		g.timer = nil
	}
	if next.IsZero() {
		return
	}
	g.timer = g.clock.AfterFunc(next.Sub(now), func() {
		g.expired.Store(true)
		g.poke()
	})
}

// view returns what this process knows of the registry at now, as
// placement.Decide takes it: every registered worker (self's entry with
// its published load: the caller replaces it with its exact one), the
// settings; no allocator (Rendezvous) and no groups. The Worker values
// share their maps with the registry, which never changes them.
func (g *registry) view(self string, now time.Time) placement.View {
	g.mu.Lock()
	defer g.mu.Unlock()
	names := make([]string, 0, len(g.workers))
	for n := range g.workers {
		names = append(names, n)
	}
	slices.Sort(names)
	ws := make([]placement.Worker, 0, len(names))
	for _, n := range names {
		w := g.workers[n].w
		w.Quarantined = nil
		for action, qs := range g.quar {
			if until, ok := qs[n]; ok {
				if w.Quarantined == nil {
					w.Quarantined = map[string]time.Time{}
				}
				w.Quarantined[action] = until
			}
		}
		ws = append(ws, w)
	}
	return placement.View{Self: self, Workers: ws, Settings: g.settings}
}

// live returns the names of the live workers, sorted.
func (g *registry) live() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []string
	for n, rw := range g.workers {
		if rw.w.Live {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// lookup returns what the registry read of worker name: its
// registration (and whether one was found), its live node, and their
// versions.
func (g *registry) lookup(name string) (rw regWorker, ok bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	p := g.workers[name]
	if p == nil {
		return regWorker{}, false
	}
	return *p, true
}
