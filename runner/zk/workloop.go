package zk

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/batonwf/baton/placement"
	"github.com/batonwf/baton/runner"
)

// workLoop claims and runs actions until ctx ends, then drains: it lists
// the queue (listQueue), claims what its free slots can take from the
// listing (claimListed), waits for a slot, a change or the poll (await),
// and, once ctx ended, waits for the actions in flight (drain).
func (r *Runner) workLoop(ctx context.Context) {
	if r.o.Registry == nil {
		<-ctx.Done() // no handlers: this runner submits, waits and fires timers
		return
	}
	handlerCtx, cancelHandlers := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelHandlers()
	l := &loop{r: r, s: r.slots, handlerCtx: handlerCtx, stale: true,
		skip: map[string]bool{}, inFlight: map[string]bool{}, taken: map[string]bool{}}
	l.s.opened(handlerCtx)
	failures := 0 // listings in a row that failed
	for ctx.Err() == nil {
		if l.s.full() {
			l.awaitSlot(ctx)
			continue
		}
		if l.listingDue() {
			if err := l.listQueue(ctx); err != nil {
				if ctx.Err() == nil {
					r.log.Error("listing the queue", "err", err)
					failures++
					_ = r.c.backoff.Sleep(ctx, failures)
				}
				continue
			}
			failures = 0
		}
		if l.claimListed(ctx) > 0 {
			l.polls = 0
		}
		l.await(ctx)
	}
	// No commit claims for this worker any more; wait for those that did.
	l.s.closed()
	l.drain(cancelHandlers)
}

// loop is the state of a runner's work loop between its rounds.
type loop struct {
	r          *Runner
	s          *slots
	handlerCtx context.Context // the handlers' context: it outlives the loop's by the drain
	wg         sync.WaitGroup  // the claims and actions the loop started

	mu       sync.Mutex
	skip     map[string]bool // entries this worker leaves alone (no handler, malformed)
	inFlight map[string]bool // entries being claimed or run here

	// The last listing of the queue: its entries in the order they are
	// decided (order), which of them were claimed (here or by others)
	// when it was made or have failed a claim since, and whether it is
	// stale (the queue or the claims changed since, or the poll fell
	// due). Every round decides the listing's entries again (the
	// registry, the load or the time changed); the queue is listed again
	// once the listing is stale and at least max(minRewatch, ten listing
	// costs) old.
	names    []string
	taken    map[string]bool
	stale    bool
	lastList time.Time
	// seen holds when this worker first saw each entry of the listing,
	// on its monotonic clock: placement's waits run from it.
	seen map[string]time.Time
	// wakeAt is the earliest time a decision of the last round named (a
	// Wait's claim time, a Pass's time to decide again); zero for none.
	wakeAt time.Time
	// listCost is what the last listing took: its request that got
	// through, and ordering it. The attempts that failed before it while
	// ZooKeeper was out of reach, and their back-off, are not its cost:
	// counted, an outage would space the next listings out by ten times
	// its length, and an entry queued after it that no transition
	// claimed would wait that long.
	listCost time.Duration
	// ranks holds the keys' preference lists while the registry's
	// workers stay the same (ranked).
	ranks    *placement.Ranks
	qch, cch <-chan zk.Event // the watches on the queue and the claims
	polls    int             // the polls that backed up the watches since one fired or an entry was taken
}

// awaitSlot waits, every slot taken, for one to free, the queue or the
// claims to change, or ctx to end.
func (l *loop) awaitSlot(ctx context.Context) {
	select {
	case <-l.s.freed:
	case <-l.qch:
		l.qch, l.stale = nil, true
	case <-l.cch:
		l.cch, l.stale = nil, true
	case <-ctx.Done():
	}
}

// listingDue reports whether the queue is to be listed again: the
// listing is stale and old enough.
func (l *loop) listingDue() bool {
	return l.stale && time.Since(l.lastList) >= l.relistAfter()
}

func (l *loop) relistAfter() time.Duration { return max(minRewatch, 10*l.listCost) }

// listQueue lists the queue and the claims, with watches on both, and
// orders the unclaimed entries as this worker decides them (order); it
// tells the slots the best rank that waits (slots.setBest).
func (l *loop) listQueue(ctx context.Context) error {
	r := l.r
	pace(ctx, &l.lastList)
	var names, claims []string
	var began time.Time // the last attempt's start
	err := r.c.do(ctx, "list the queue", func() (err error) {
		began = time.Now()
		names, _, l.qch, err = r.c.c.ChildrenW(r.c.l.queue())
		if err == nil {
			claims, _, l.cch, err = r.c.c.ChildrenW(r.c.l.claims())
		}
		return err
	})
	if err != nil {
		return err
	}
	now := r.o.Clock.Now()
	l.stale = false
	taken := make(map[string]bool, len(claims))
	for _, c := range claims {
		taken[c] = true
	}
	names = slices.DeleteFunc(names, func(n string) bool { return taken[n] })
	order(names)
	l.names = names
	seen := make(map[string]time.Time, len(names))
	for _, n := range names {
		if t, ok := l.seen[n]; ok {
			seen[n] = t
		} else {
			seen[n] = now
		}
	}
	l.seen = seen
	best := noRank
	l.mu.Lock()
	l.taken = taken // claims in flight mark theirs under l.mu
	for name := range l.skip {
		if _, ok := seen[name]; !ok {
			delete(l.skip, name)
		}
	}
	for _, name := range names {
		if !l.skip[name] {
			if rk, _, _, _, ok := entryKey(name); ok {
				best = min(best, rk)
			}
		}
	}
	l.mu.Unlock()
	l.s.setBest(best)
	l.listCost = time.Since(began)
	return nil
}

// claimListed decides the entries of the listing (placement.Decide, on
// the registry's view with this worker's exact load), in order, and
// claims those it may claim now, as many as its slots and limits allow,
// each in its own goroutine (the claims' round trips overlap instead of
// queueing behind one another), which runs the action once claimed. It
// notes the earliest time a decision named (wakeAt), and returns how
// many it tried.
func (l *loop) claimListed(ctx context.Context) int {
	r := l.r
	// The pins' allocations not cached yet are read first, outside the
	// lock (claims that end take it).
	var pins []uint64
	l.mu.Lock()
	for _, name := range l.names {
		if e, ok := parseEntry(name); ok && e.route.Kind == placement.RoutePin && !l.taken[name] && !l.skip[name] {
			if _, cached := r.pins.get(e.route.Key); !cached {
				pins = append(pins, e.route.Key)
			}
		}
	}
	l.mu.Unlock()
	for _, key := range pins {
		if l.s.full() || ctx.Err() != nil {
			break
		}
		if _, err := r.pin(ctx, key); err != nil && ctx.Err() == nil {
			r.log.Warn("reading a pin's allocation", "key", pinID(key), "err", err)
		}
	}
	now := r.o.Clock.Now()
	load, groups := l.s.load()
	view, ranks := ranked(r.view(load, groups, now), l.ranks)
	l.ranks = ranks
	l.wakeAt = time.Time{}
	tried := 0
	draining := l.r.draining.Load() // claims nothing new but its pins' actions (placement.Decide)
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, name := range l.names {
		if ctx.Err() != nil || l.s.full() {
			break
		}
		if l.taken[name] || l.skip[name] || l.inFlight[name] {
			continue
		}
		e, ok := parseEntry(name)
		if ok && draining && e.route.Kind != placement.RoutePin {
			continue
		}
		if !ok {
			l.skip[name] = true
			r.log.Warn("queue entry with a malformed name (not written by baton?): left alone", "entry", r.c.l.entry(name))
			continue
		}
		if e.action != "" {
			if _, ok := r.o.Registry.Lookup(e.action); !ok {
				l.skip[name] = true
				r.log.Info("no handler here for this action: left in the queue for a worker that has one", "job", e.id, "action", e.actionID, "name", e.action)
				continue
			}
		}
		var d placement.Decision
		ent := placement.Entry{ID: name, Action: e.action, Route: e.route, Seen: l.seen[name]}
		var prev pinState
		if e.action == "" {
			// Named by an older baton: no route, and its action's name
			// is in its data, which the claim reads (claimHooks.admit).
			d.Verdict = placement.Claim
		} else {
			if e.route.Kind == placement.RoutePin {
				prev, _ = r.pins.get(e.route.Key)
				ent.Holder = prev.holder
			}
			d = decideIn(view, ent, now)
		}
		if d.Err != nil {
			r.log.Warn("placement allocator", "entry", name, "err", d.Err)
		}
		if d.Verdict != placement.Claim {
			if !d.At.IsZero() && (l.wakeAt.IsZero() || d.At.Before(l.wakeAt)) {
				l.wakeAt = d.At
			}
			continue
		}
		var group uint64
		if e.route.Kind == placement.RouteGroup {
			group = e.route.Key
		}
		if !l.s.take(e.action, group) {
			continue // a transition took the slot meanwhile, or the name's limit
		}
		load, groups = l.s.load()
		setLoad(&view, load, groups)
		l.inFlight[name] = true
		tried++
		h := &claimHooks{action: e.action, skip: func() {
			l.mu.Lock()
			l.skip[name] = true
			l.mu.Unlock()
		}}
		if e.action == "" {
			h.admit = l.s.rename
		}
		if d.Persist && e.route.Kind == placement.RoutePin {
			h.pin = &pinClaim{key: e.route.Key, prev: prev, redecide: func(names []string) bool {
				load, groups := l.s.load()
				// Leave out the slot this claim took.
				load.Running--
				nl := load.Names[e.action]
				nl.Running--
				load.Names[e.action] = nl
				ent.Names = names
				now := r.o.Clock.Now()
				return decideIn(r.view(load, groups, now), ent, now).Verdict == placement.Claim
			}}
		}
		spill := d.Spill
		l.wg.Go(func() {
			free := sync.OnceFunc(func() { l.s.free(h.action, group) })
			defer func() {
				l.mu.Lock()
				delete(l.inFlight, name)
				// Claimed and run here (its entry goes once the result is
				// applied), or not claimable: left until the next listing.
				l.taken[name] = true
				l.mu.Unlock()
				if !h.refused {
					free()
				}
			}()
			c, a, stops, ok := l.r.claim(ctx, name, h)
			if ok {
				if spill {
					r.stats.spills.Add(1)
					r.o.Hooks.Placed(runner.PlacementSpilled, a.Name)
				}
				l.r.perform(l.handlerCtx, c, a, stops, free)
			}
		})
	}
	return tried
}

// await waits for a slot to free, the queue or the claims to change (a
// new entry, a worker gone), the registry or a pin's allocation to
// change, the earliest time a decision named, or the poll that backs up
// the watches while nothing is taken.
func (l *loop) await(ctx context.Context) {
	var t *time.Timer
	switch {
	case l.s.full():
		t = time.NewTimer(time.Hour) // a slot frees first
		t.Stop()
	case l.stale:
		// Slots free, the queue changed since: list again as soon as the
		// pace allows.
		t = time.NewTimer(max(0, l.relistAfter()-time.Since(l.lastList)))
	default:
		l.polls++
		t = time.NewTimer(l.r.c.backoff.Wait(l.polls))
	}
	defer t.Stop()
	var wake <-chan time.Time
	if !l.wakeAt.IsZero() && !l.s.full() {
		w := time.NewTimer(max(0, l.wakeAt.Sub(l.r.o.Clock.Now())))
		defer w.Stop()
		wake = w.C
	}
	select {
	case <-l.qch:
		l.qch, l.stale, l.polls = nil, true, 0
	case <-l.cch:
		l.cch, l.stale, l.polls = nil, true, 0
	case <-l.s.freed:
	case <-l.r.reg.changed():
	case <-l.r.pins.changed:
	case <-wake:
	case <-t.C:
		l.stale = true
	case <-l.r.quar.wake:
		// A quarantine ended: the entries it made this worker leave are
		// claimable again.
		l.mu.Lock()
		clear(l.skip)
		l.mu.Unlock()
		l.stale, l.polls = true, 0
	case <-ctx.Done():
	}
}

// drain waits for the claims and actions in flight, those the loop
// started and those transitions claimed, for at most the DrainTimeout,
// then cancels the handlers (their actions are handed back) and waits
// for them to return.
func (l *loop) drain(cancelHandlers context.CancelFunc) {
	done := make(chan struct{})
	go func() { l.wg.Wait(); l.s.wg.Wait(); close(done) }()
	runner.Drain(l.r.o.DrainTimeout, done, cancelHandlers, l.r.log)
}
