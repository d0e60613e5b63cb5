package zk

import (
	"context"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/placement"
	"github.com/batonwf/baton/runner"
)

// claimer is what a transition's commit asks of the work loop when it
// claims, in its own multi-op, new actions for this worker to run (see
// the package doc, Workers): no claim request, no listing of the queue,
// and no other worker racing for them. The work loop's slots implement
// it; the commit calls reserve before its multi-op, then exactly one of
// cancel (nothing written, or the job's record left unfinished) or start
// (written).
type claimer interface {
	// reserve takes a slot for each of acts, a transition's new actions
	// queued at queuedMs (Unix milliseconds), that this worker claims,
	// and returns them; nil for none.
	reserve(acts []job.Action, queuedMs int64) *reservation
	// cancel gives back the slots of a reservation (nil is none).
	cancel(*reservation)
	// start runs the reserved actions of a written transition in their
	// slots; stops is the stop count of the job's record it wrote (see
	// watchStops).
	start(rv *reservation, stops uint64)
}

// reservation is the new actions of a transition that its commit claims
// for this worker.
type reservation struct {
	acts []job.Action
	// own holds, at the index of each reserved action, the queue entry
	// and claim the transition creates for it (at version 0, the claim in
	// this session); the zero consumed elsewhere.
	own []consumed
}

// mine reports whether the i-th action is reserved.
func (rv *reservation) mine(i int) bool { return rv != nil && rv.own[i].entry != "" }

// claims returns the entries and claims of the reserved actions.
func (rv *reservation) claims() []consumed {
	if rv == nil {
		return nil
	}
	var cs []consumed
	for _, c := range rv.own {
		if c.entry != "" {
			cs = append(cs, c)
		}
	}
	return cs
}

// slots are the work loop's: one token per action claimed or running
// here, whether the loop claimed it from the queue or a transition
// claimed it (claimer).
type slots struct {
	tokens chan struct{} // one token per action claimed or running here
	freed  chan struct{} // signalled when a slot frees

	reg  *runner.Registry // nil: this runner runs no actions
	self string           // this worker's name
	l    layout
	log  *slog.Logger
	run  func(ctx context.Context, c consumed, a job.Action, stops uint64, handled func()) // runs a claimed action and applies its result (see Runner.perform)
	took *atomic.Int64                                                                     // counts the actions claimed in transitions
	// draining is the runner's: while set, a transition claims nothing
	// for this worker (it is draining: see drain.go).
	draining *atomic.Bool
	// hooks are the runner's, told of each action claimed in a
	// transition (PlacementClaimedInTransition).
	hooks *runner.Hooks
	// limits bounds, per action name, the actions of that name claimed
	// or running here (Options.Limits); read-only.
	limits map[string]int
	// decide is placement.Decide on this worker's view of the registry,
	// with its exact load (see Runner.decide); nil decides nothing (every
	// action may be claimed).
	decide func(e placement.Entry, load placement.Load, groups map[uint64]int, now time.Time) placement.Decision
	// pinHeld reports whether the pin whose key hashes to key is held
	// here, as far as this process knows without asking ZooKeeper.
	pinHeld func(key uint64) bool
	now     func() time.Time // the runner's clock, which placement's times are on
	// quarantined is the runner's: a transition claims no action whose
	// name this worker is quarantined for (see quarantine.go).
	quarantined func(name string) bool

	mu   sync.Mutex
	open bool            // the loop runs: commits may claim for it
	ctx  context.Context // the handlers' context
	wg   sync.WaitGroup  // the actions started by commits
	// running counts the actions claimed or running here, per action
	// name; groups per replica group (placement.Route.Key). Both change
	// with the tokens, under mu.
	running map[string]int
	groups  map[uint64]int
	// best is the best (lowest) rank of an entry waiting unclaimed, as
	// the loop last listed the queue: a commit claims only actions of at
	// least that priority, so that it never runs its own actions ahead of
	// more urgent ones that wait.
	best int
}

var _ claimer = (*slots)(nil)

// noRank is past every entry's rank: no entry waits.
const noRank = 1 << 30

// full reports whether every slot is taken.
func (s *slots) full() bool { return len(s.tokens) == cap(s.tokens) }

// take takes a slot for an action named name (of replica group group,
// 0 for none) if one is free and the name's limit allows.
func (s *slots) take(name string, group uint64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.takeLocked(name, group)
}

func (s *slots) takeLocked(name string, group uint64) bool {
	if lim, ok := s.limits[name]; ok && s.running[name] >= lim {
		return false
	}
	select {
	case s.tokens <- struct{}{}:
	default:
		return false
	}
	if s.running == nil {
		s.running, s.groups = map[string]int{}, map[uint64]int{}
	}
	s.running[name]++
	if group != 0 {
		s.groups[group]++
	}
	return true
}

// rename moves a slot taken for an action of unknown name ("": an entry
// named by an older baton) to name, if its limit allows; it gives the
// slot back and returns false otherwise.
func (s *slots) rename(name string) bool {
	s.mu.Lock()
	if lim, ok := s.limits[name]; !ok || s.running[name] < lim {
		s.running[""]--
		s.running[name]++
		s.mu.Unlock()
		return true
	}
	s.mu.Unlock()
	s.free("", 0)
	return false
}

// free gives back a slot taken for an action named name of group.
func (s *slots) free(name string, group uint64) {
	s.mu.Lock()
	s.running[name]--
	if s.running[name] <= 0 {
		delete(s.running, name)
	}
	if group != 0 {
		if s.groups[group]--; s.groups[group] <= 0 {
			delete(s.groups, group)
		}
	}
	<-s.tokens
	s.mu.Unlock()
	select {
	case s.freed <- struct{}{}:
	default:
	}
}

// load is this worker's exact load: the actions claimed or running here,
// in total and per name, and per replica group. The maps are new.
func (s *slots) load() (placement.Load, map[uint64]int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.loadLocked()
}

func (s *slots) loadLocked() (placement.Load, map[uint64]int) {
	l := placement.Load{Names: make(map[string]placement.NameLoad, len(s.running))}
	for n, k := range s.running {
		l.Running += k
		l.Names[n] = placement.NameLoad{Running: k}
	}
	return l, maps.Clone(s.groups)
}

// opened lets commits claim for the loop, whose handlers run with ctx.
func (s *slots) opened(ctx context.Context) {
	s.mu.Lock()
	s.open, s.ctx, s.best = true, ctx, noRank
	s.mu.Unlock()
}

// closed stops commits claiming for the loop; wait for those that did
// with s.wg.
func (s *slots) closed() {
	s.mu.Lock()
	s.open = false
	s.mu.Unlock()
}

// setBest records the best rank of the entries waiting unclaimed.
func (s *slots) setBest(best int) {
	s.mu.Lock()
	s.best = best
	s.mu.Unlock()
}

// reserve picks, among acts, those this worker claims in the
// transition's own multi-op: the ones it has a handler for, at least as
// urgent as any entry that waits unclaimed, that placement lets it claim
// (decide), as many as its free slots and limits allow, most urgent
// first. An action with a key or a pin, or a replica copy of a group
// this worker runs a copy of already, is claimed only when
// placement.Decide says Claim at once: a key another worker holds is
// left in the queue for it, a pin is never allocated here (the claim
// from the queue writes the allocation; a pin this worker holds already
// is claimed), and a second copy waits as Decide says. An action
// without one, and the first copy of a group here, is claimed whenever
// Decide does not pass (the strategy's order among workers with room
// decides only what waits in the queue): a job's next action then runs
// where its last one did, and a race's first copy where the race
// started, with no request of their own.
func (s *slots) reserve(acts []job.Action, queuedMs int64) *reservation {
	if s.reg == nil || len(acts) == 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.open || s.full() || s.draining != nil && s.draining.Load() {
		return nil
	}
	order := make([]int, len(acts))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		return rank(actionPriority(acts[a])) - rank(actionPriority(acts[b]))
	})
	now := s.now()
	var rv *reservation
	for _, i := range order {
		a := acts[i]
		if rank(actionPriority(a)) > s.best {
			break
		}
		if _, ok := s.reg.Lookup(a.Name); !ok || s.quarantined != nil && s.quarantined(a.Name) {
			continue
		}
		name := entryName(a, queuedMs)
		route := routeOf(a)
		if s.decide != nil {
			e := placement.Entry{ID: name, Action: a.Name, Route: route, Seen: now}
			if route.Kind == placement.RoutePin {
				if s.pinHeld == nil || !s.pinHeld(route.Key) {
					continue
				}
				e.Holder = s.self
			}
			load, groups := s.loadLocked()
			d := s.decide(e, load, groups, now)
			// A replica copy of a group this worker runs none of is
			// claimed as an action routed anywhere: one copy starts here
			// with no queue round trip, and the next copies, which
			// Decide then has this worker wait for, go to others.
			anywhere := route.Kind == placement.RouteNone || route.Kind == placement.RouteGroup && groups[route.Key] == 0
			if d.Verdict == placement.Pass || d.Persist || d.Verdict == placement.Wait && !anywhere {
				continue
			}
		}
		var group uint64
		if route.Kind == placement.RouteGroup {
			group = route.Key
		}
		if !s.takeLocked(a.Name, group) {
			if s.full() {
				return rv
			}
			continue // this name's limit
		}
		if rv == nil {
			rv = &reservation{acts: acts, own: make([]consumed, len(acts))}
		}
		rv.own[i] = consumed{entry: s.l.entry(name), ver: 0, claim: s.l.claim(name)}
		s.wg.Add(1)
	}
	return rv
}

func (s *slots) cancel(rv *reservation) {
	if rv == nil {
		return
	}
	for i, c := range rv.own {
		if c.entry != "" {
			s.free(rv.acts[i].Name, groupOf(rv.acts[i]))
			s.wg.Done()
		}
	}
}

// groupOf is action a's replica group as the slots count it: 0 for
// none.
func groupOf(a job.Action) uint64 {
	if r := routeOf(a); r.Kind == placement.RouteGroup {
		return r.Key
	}
	return 0
}

func (s *slots) start(rv *reservation, stops uint64) {
	if rv == nil {
		return
	}
	s.mu.Lock()
	ctx := s.ctx
	s.mu.Unlock()
	for i, c := range rv.own {
		if c.entry == "" {
			continue
		}
		a := rv.acts[i]
		s.took.Add(1)
		s.hooks.Placed(runner.PlacementClaimedInTransition, a.Name)
		runner.LogClaimed(ctx, s.log, a, slog.String("entry", c.entry), slog.Bool("in_transition", true))
		go func() {
			defer s.wg.Done()
			free := sync.OnceFunc(func() { s.free(a.Name, groupOf(a)) })
			defer free()
			s.run(ctx, c, a, stops, free)
		}()
	}
}
