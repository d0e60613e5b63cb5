package zk

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/placement"
)

// Placement on the claim side (see the package doc, Placement): a worker
// decides each entry it listed with placement.Decide on its registry's
// view, its own exact load and the time it first saw the entry; it reads
// a pin's allocation once and caches it, watched; it claims what Decide
// gives it and sleeps until the earliest time a Wait names.

// view is this worker's view of the registry at now, with its own exact
// load, capacity and limits in place of what it published, and the
// replica groups it runs.
func (r *Runner) view(load placement.Load, groups map[uint64]int, now time.Time) placement.View {
	v := r.reg.view(r.o.Name, now)
	v.Groups = groups
	if i := slices.IndexFunc(v.Workers, func(w placement.Worker) bool { return w.Name == r.o.Name }); i >= 0 {
		w := v.Workers[i]
		w.Load, w.Capacity, w.Limits = load, r.o.Workers, r.o.Limits
		v.Workers = slices.Clone(v.Workers)
		v.Workers[i] = w
	}
	return v
}

// ranked gives view the keys' preference lists of ranks, or of a new
// Ranks when the view's workers are not those ranks was made from (a
// worker registered or went, or a capacity changed: any other change of
// the registry leaves the lists as they are), and asks for no reasons.
// The work loop decides every entry it listed each round and shows no
// reason, so each key is ranked once per change of the workers instead
// of once per entry and round. It returns the Ranks to keep.
func ranked(view placement.View, ranks *placement.Ranks) (placement.View, *placement.Ranks) {
	if !ranks.Fits(view.Workers) {
		ranks = placement.NewRanks(view.Workers)
	}
	view.Ranks, view.NoReasons = ranks, true
	return view, ranks
}

// decideIn is placement.Decide on view, with a soft key's wait of 0 read
// as the cluster's default (Settings.Wait).
func decideIn(view placement.View, e placement.Entry, now time.Time) placement.Decision {
	if e.Route.Kind == placement.RouteSoft && e.Route.Wait == 0 {
		e.Route.Wait = view.Settings.Wait
	}
	return placement.Decide(view, e, now)
}

// decide is decideIn on this worker's view with the load given: what a
// transition's reserve asks (slots.decide).
func (r *Runner) decide(e placement.Entry, load placement.Load, groups map[uint64]int, now time.Time) placement.Decision {
	return decideIn(r.view(load, groups, now), e, now)
}

// setLoad replaces Self's load in view (made by Runner.view).
func setLoad(view *placement.View, load placement.Load, groups map[uint64]int) {
	if i := slices.IndexFunc(view.Workers, func(w placement.Worker) bool { return w.Name == view.Self }); i >= 0 {
		view.Workers[i].Load = load
	}
	view.Groups = groups
}

// pinState is a pin's allocation as this process last read it.
type pinState struct {
	found  bool   // the node exists (garbled data reads as no holder)
	holder string // the worker it names; "" for none
	ver    int32  // the node's version, for a compare-and-swap
}

// pinCache holds the allocations this process read, each until its
// watch fires (it changed or went: read again when next needed), and
// those its own claims wrote.
type pinCache struct {
	mu      sync.Mutex
	m       map[uint64]pinState
	changed chan struct{}   // a cached allocation changed: decide again (buffer 1)
	buckets map[string]bool // the allocations' buckets known to exist
}

func (p *pinCache) get(key uint64) (pinState, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	st, ok := p.m[key]
	return st, ok
}

func (p *pinCache) set(key uint64, st pinState) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m == nil {
		p.m = map[uint64]pinState{}
	}
	p.m[key] = st
}

func (p *pinCache) forget(key uint64) {
	p.mu.Lock()
	delete(p.m, key)
	p.mu.Unlock()
	select {
	case p.changed <- struct{}{}:
	default:
	}
}

// held reports whether this process knows the pin key to be held by
// self (slots.pinHeld).
func (p *pinCache) held(key uint64, self string) bool {
	st, ok := p.get(key)
	return ok && st.found && st.holder == self
}

// pin returns the allocation of the pin whose key hashes to key: cached,
// or read with a watch that drops it from the cache when it changes.
func (r *Runner) pin(ctx context.Context, key uint64) (pinState, error) {
	if st, ok := r.pins.get(key); ok {
		return st, nil
	}
	p := r.c.l.alloc(pinID(key))
	for {
		var data []byte
		var stat *zk.Stat
		var ch <-chan zk.Event
		err := r.c.do(ctx, "read pin "+p, func() (err error) {
			data, stat, ch, err = r.c.c.GetW(p)
			return err
		})
		var st pinState
		switch {
		case errors.Is(err, zk.ErrNoNode):
			var ok bool
			err = r.c.do(ctx, "watch pin "+p, func() (err error) {
				ok, _, ch, err = r.c.c.ExistsW(p)
				return err
			})
			if err != nil {
				return pinState{}, err
			}
			if ok {
				continue // created meanwhile: read it
			}
		case err != nil:
			return pinState{}, err
		default:
			st = pinState{found: true, ver: stat.Version}
			if a, err := decodeAlloc(data); err == nil {
				st.holder = a.Worker
			} else {
				r.log.Warn("garbled pin allocation: counts as none, the next claim overwrites it", "node", p)
			}
		}
		r.pins.set(key, st)
		go func() {
			<-ch
			r.pins.forget(key)
		}()
		return st, nil
	}
}

// pinOps are the operations a claim adds to its multi-op to allocate the
// pin whose key hashes to key to this worker (Decision.Persist): create
// the allocation, or rewrite it at the version read (a move), and the
// index entries. Two workers racing: one multi-op fails whole.
func (r *Runner) pinOps(ctx context.Context, key uint64, prev pinState, a allocData) ([]any, error) {
	id := pinID(key)
	data, _ := json.Marshal(a)
	var ops []any
	if prev.found {
		ops = append(ops, &zk.SetDataRequest{Path: r.c.l.alloc(id), Data: data, Version: prev.ver})
		if prev.holder != "" && prev.holder != r.o.Name {
			ok, err := r.c.exists(ctx, r.c.l.pin(prev.holder, id))
			if err != nil {
				return nil, err
			}
			if ok {
				ops = append(ops, &zk.DeleteRequest{Path: r.c.l.pin(prev.holder, id), Version: -1})
			}
		}
	} else {
		if err := r.ensureBucket(ctx, id[:2]); err != nil {
			return nil, err
		}
		ops = append(ops, r.c.createOp(r.c.l.alloc(id), data, 0))
	}
	ok, err := r.c.exists(ctx, r.c.l.pin(r.o.Name, id))
	if err != nil {
		return nil, err
	}
	if !ok {
		ops = append(ops, r.c.createOp(r.c.l.pin(r.o.Name, id), nil, 0))
	}
	return ops, nil
}

// ensureBucket makes sure the allocations' parent and bucket b ("XX")
// exist, once per process; it writes only what is missing.
func (r *Runner) ensureBucket(ctx context.Context, b string) error {
	r.pins.mu.Lock()
	done := r.pins.buckets[b]
	r.pins.mu.Unlock()
	if done {
		return nil
	}
	// Read first: a create that finds the node still costs the server a
	// transaction.
	for _, p := range []string{r.c.l.allocs(), r.c.l.allocs() + "/" + b} {
		ok, err := r.c.exists(ctx, p)
		if err != nil {
			return err
		}
		if !ok {
			if err := r.c.ensure(ctx, p); err != nil {
				return err
			}
		}
	}
	r.pins.mu.Lock()
	if r.pins.buckets == nil {
		r.pins.buckets = map[string]bool{}
	}
	r.pins.buckets[b] = true
	r.pins.mu.Unlock()
	return nil
}

// releaseOps are the operations a job's final transition adds to delete
// its pins and their index entries (job.Pins): at most two per pin, and
// none for a pin never allocated.
func (r *Runner) releaseOps(ctx context.Context, j job.Job) []any {
	var ops []any
	for _, k := range job.Pins(j) {
		key := placement.KeyHash(k)
		st, err := r.pin(ctx, key)
		if err != nil || !st.found {
			continue
		}
		ops = append(ops, &zk.DeleteRequest{Path: r.c.l.alloc(pinID(key)), Version: st.ver})
		if st.holder != "" {
			if ok, err := r.c.exists(ctx, r.c.l.pin(st.holder, pinID(key))); err == nil && ok {
				ops = append(ops, &zk.DeleteRequest{Path: r.c.l.pin(st.holder, pinID(key)), Version: -1})
			}
		}
	}
	return ops
}

// order arranges queue entry names in the order this worker decides
// them: by rank (priority) first; within a rank, round-robin over jobs,
// the oldest entry of each job in turn, jobs in the order of their
// oldest entry; so a job with many queued actions does not starve one
// submitted after it. Malformed names come last.
func order(names []string) {
	type key struct {
		name string
		e    entryInfo
		ok   bool
		turn int // the entry's place among its job's entries
		job  int // its job's place among the rank's jobs
	}
	ks := make([]key, len(names))
	for i, n := range names {
		ks[i].name = n
		ks[i].e, ks[i].ok = parseEntry(n)
	}
	slices.SortFunc(ks, func(a, b key) int {
		if a.ok != b.ok {
			if a.ok {
				return -1
			}
			return 1
		}
		return cmp.Or(cmp.Compare(a.e.rank, b.e.rank), cmp.Compare(a.e.queuedMs, b.e.queuedMs), strings.Compare(a.name, b.name))
	})
	for i := 0; i < len(ks); {
		j := i
		for j < len(ks) && ks[j].ok == ks[i].ok && ks[j].e.rank == ks[i].e.rank {
			j++
		}
		turns, jobs := map[job.ID]int{}, map[job.ID]int{}
		for k := i; k < j; k++ {
			id := ks[k].e.id
			if _, ok := jobs[id]; !ok {
				jobs[id] = len(jobs)
			}
			ks[k].turn, ks[k].job = turns[id], jobs[id]
			turns[id]++
		}
		slices.SortStableFunc(ks[i:j], func(a, b key) int {
			return cmp.Or(cmp.Compare(a.turn, b.turn), cmp.Compare(a.job, b.job))
		})
		i = j
	}
	for i, k := range ks {
		names[i] = k.name
	}
}
