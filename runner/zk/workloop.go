package zk

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/batonwf/baton/job"
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
		skip: map[string]bool{}, inFlight: map[string]bool{}}
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
	// tried, which of them were claimed (here or by others) when it was
	// made, the next to try, and whether it is stale (the queue or the
	// claims changed since, or the poll fell due). A slot that frees takes
	// the next entry of the listing; the queue is listed again only once
	// it is stale or used up.
	names    []string
	taken    map[string]bool
	next     int
	stale    bool
	lastList time.Time
	// listCost is what the last listing took (reading and ordering it):
	// a long queue is listed again at most every ten of those, its
	// listing meanwhile worked through.
	listCost time.Duration
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
// listing is stale, and used up or old. A stale listing is still used
// while it has entries to try and it is recent: entries taken since fail
// their claim at no harm; a listing is at most minRewatch old when
// re-made.
func (l *loop) listingDue() bool {
	return l.stale && (l.next >= len(l.names) || time.Since(l.lastList) >= max(minRewatch, 10*l.listCost))
}

// listQueue lists the queue and the claims, with watches on both, and
// orders the unclaimed entries as this worker tries them (order); it
// tells the slots the best rank that waits (slots.setBest).
func (l *loop) listQueue(ctx context.Context) error {
	r := l.r
	pace(ctx, &l.lastList)
	var names, claims []string
	err := r.c.do(ctx, "list the queue", func() (err error) {
		names, _, l.qch, err = r.c.c.ChildrenW(r.c.l.queue())
		if err == nil {
			claims, _, l.cch, err = r.c.c.ChildrenW(r.c.l.claims())
		}
		return err
	})
	if err != nil {
		return err
	}
	l.stale, l.next = false, 0
	l.taken = make(map[string]bool, len(claims))
	for _, c := range claims {
		l.taken[c] = true
	}
	names = slices.DeleteFunc(names, func(n string) bool { return l.taken[n] })
	order(names, func(id job.ID) bool { _, ok := r.st.recall(id); return ok }, 16*cap(l.s.tokens))
	l.names = names
	present := make(map[string]bool, len(names))
	for _, n := range names {
		present[n] = true
	}
	best := noRank
	l.mu.Lock()
	for name := range l.skip {
		if !present[name] {
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
	l.listCost = time.Since(l.lastList)
	return nil
}

// claimListed claims as many entries of the listing as there are free
// slots, each in its own goroutine (the claims' round trips overlap
// instead of queueing behind one another), which runs the action once
// claimed. It returns how many it tried.
func (l *loop) claimListed(ctx context.Context) int {
	tried := 0
	if l.r.draining.Load() {
		return 0 // a draining worker claims nothing new (pins' actions aside: placement.Decide)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for ; l.next < len(l.names) && ctx.Err() == nil; l.next++ {
		name := l.names[l.next]
		if l.taken[name] || l.skip[name] || l.inFlight[name] {
			continue
		}
		if !l.s.tryTake() {
			break // full: a transition took the last slot meanwhile
		}
		l.inFlight[name] = true
		tried++
		l.wg.Go(func() {
			free := sync.OnceFunc(l.s.free)
			defer func() {
				l.mu.Lock()
				delete(l.inFlight, name)
				l.mu.Unlock()
				free()
			}()
			c, a, stops, ok := l.r.claim(ctx, name, func() {
				l.mu.Lock()
				l.skip[name] = true
				l.mu.Unlock()
			})
			if ok {
				l.r.perform(l.handlerCtx, c, a, stops, free)
			}
		})
	}
	return tried
}

// await waits for a slot to free (the listing may hold more to take), the
// queue or the claims to change (a new entry, a worker gone), or the
// poll that backs up the watches while nothing is taken.
func (l *loop) await(ctx context.Context) {
	var t *time.Timer
	switch {
	case l.s.full():
		t = time.NewTimer(time.Hour) // a slot frees first
		t.Stop()
	case l.stale:
		// Slots free, the listing used up, the queue changed since: list
		// again as soon as the pace allows.
		t = time.NewTimer(max(0, minRewatch-time.Since(l.lastList)))
	default:
		l.polls++
		t = time.NewTimer(l.r.c.backoff.Wait(l.polls))
	}
	defer t.Stop()
	select {
	case <-l.qch:
		l.qch, l.stale, l.polls = nil, true, 0
	case <-l.cch:
		l.cch, l.stale, l.polls = nil, true, 0
	case <-l.s.freed:
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
