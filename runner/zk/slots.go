package zk

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/batonwf/baton/job"
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

	reg *runner.Registry // nil: this runner runs no actions
	l   layout
	log *slog.Logger
	run func(ctx context.Context, c consumed, a job.Action, stops uint64, handled func()) // runs a claimed action and applies its result (see Runner.perform)
	// draining is the runner's: while set, a transition claims nothing
	// for this worker (it is draining: see drain.go).
	draining *atomic.Bool
	// quarantined is the runner's: a transition claims no action whose
	// name this worker is quarantined for (see quarantine.go).
	quarantined func(name string) bool
	took        *atomic.Int64 // counts the actions claimed in transitions

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

var _ claimer = (*slots)(nil)

// noRank is past every entry's rank: no entry waits.
const noRank = 1 << 30

// full reports whether every slot is taken.
func (s *slots) full() bool { return len(s.tokens) == cap(s.tokens) }

// tryTake takes a slot if one is free.
func (s *slots) tryTake() bool {
	select {
	case s.tokens <- struct{}{}:
		return true
	default:
		return false
	}
}

// free gives a slot back.
func (s *slots) free() {
	<-s.tokens
	select {
	case s.freed <- struct{}{}:
	default:
	}
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
// urgent as any entry that waits unclaimed, as many as it has free
// slots, most urgent first.
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
	var rv *reservation
	for _, i := range order {
		a := acts[i]
		if rank(actionPriority(a)) > s.best {
			break
		}
		if _, ok := s.reg.Lookup(a.Name); !ok || s.quarantined != nil && s.quarantined(a.Name) {
			continue
		}
		if !s.tryTake() {
			return rv
		}
		if rv == nil {
			rv = &reservation{acts: acts, own: make([]consumed, len(acts))}
		}
		name := entryName(a, queuedMs)
		rv.own[i] = consumed{entry: s.l.entry(name), ver: 0, claim: s.l.claim(name)}
		s.wg.Add(1)
	}
	return rv
}

func (s *slots) cancel(rv *reservation) {
	for range rv.claims() {
		s.free()
		s.wg.Done()
	}
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
		runner.LogClaimed(ctx, s.log, a, slog.String("entry", c.entry), slog.Bool("in_transition", true))
		go func() {
			defer s.wg.Done()
			free := sync.OnceFunc(s.free)
			defer free()
			s.run(ctx, c, a, stops, free)
		}()
	}
}
