package inmem

import (
	"context"
	"sync"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
)

// timers holds the timers the runner armed, by job and timer ID, so that
// arming one twice (a recovery, a redelivery) keeps one. Until Run starts
// them they only wait in the table; once Run has returned none fires.
type timers struct {
	clock   runner.Clock // arms them, for the time left until they are due
	mu      sync.Mutex
	byID    map[timerKey]*armed
	fire    func(job.Timer) // set by Run; nil until it runs
	stopped bool
}

type timerKey struct {
	job job.ID
	id  string
}

type armed struct {
	t job.Timer
	x runner.Timer // nil until started
}

func newTimers(clock runner.Clock) *timers {
	return &timers{clock: clock, byID: map[timerKey]*armed{}}
}

// arm records ts and, once the runner runs, starts them.
func (s *timers) arm(ts []job.Timer) {
	if len(ts) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range ts {
		k := timerKey{t.JobID, t.ID}
		if a, ok := s.byID[k]; ok {
			if a.t.Due.Equal(t.Due) {
				continue // armed already
			}
			if a.x != nil {
				a.x.Stop()
			}
		}
		a := &armed{t: t}
		s.byID[k] = a
		s.start(a)
	}
}

// start starts a, if the runner runs. s.mu is held.
func (s *timers) start(a *armed) {
	if s.fire == nil || s.stopped {
		return
	}
	fire := s.fire
	k := timerKey{a.t.JobID, a.t.ID}
	a.x = s.clock.AfterFunc(max(a.t.Due.Sub(s.clock.Now()), 0), func() {
		s.mu.Lock()
		if s.byID[k] != a || s.stopped {
			s.mu.Unlock()
			return
		}
		delete(s.byID, k)
		s.mu.Unlock()
		fire(a.t)
	})
}

// run starts every timer recorded, and those armed later, firing with fire.
func (s *timers) run(fire func(job.Timer)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fire = fire
	for _, a := range s.byID {
		s.start(a)
	}
}

// stop stops every timer for good.
func (s *timers) stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopped = true
	for _, a := range s.byID {
		if a.x != nil {
			a.x.Stop()
		}
	}
}

// fireTimer delivers a timer's firing, stamped with the runner's clock,
// as a result.
func (r *Runner) fireTimer(t job.Timer) {
	if r.usable() != nil {
		return // stopped: the timer is pending in the store, armed again on resume
	}
	r.results.Add(context.Background(), r.applyR, inHand{res: t.Fire(r.o.Clock.Now())})
}
