package runner

import (
	"context"
	"sync"
	"time"

	"github.com/batonwf/baton/job"
)

// Stoppable is the context a runner performs one action under when it may
// have to stop the action before its handler returns (the job was
// cancelled, a sibling failed, a deadline passed): parent's values and
// deadline, done when parent is done or when Stop is called, with Stop's
// cause as its context.Cause.
//
// It is context.WithCancelCause(parent) made lazily: a handler that never
// looks at its context's cancellation (Done, Err, a derived context, a
// value other than the action) costs one allocation and no registration
// with parent, where WithCancelCause and the action around it cost three
// and an entry in parent's set of children, taken and dropped under
// parent's lock by every action of every worker. The first call that
// needs the cancellation makes the real context (applying a Stop that came
// before), and every later call is answered by it.
//
// Execute given a Stoppable that carries no action yet gives it the action
// and hands it to the handler as is (ActionFrom finds the action in it).
// The runner calls Release once the handler has returned: the context is
// done from then on, as WithCancelCause's is after its cancel.
type Stoppable struct {
	parent context.Context
	a      job.Action
	bound  bool // a is set: Execute's, before the handler runs

	mu       sync.Mutex
	real     context.Context // WithCancelCause(parent), once needed
	cancel   context.CancelCauseFunc
	cause    error // what Stop was given first
	released bool
}

// NewStoppable returns a Stoppable under parent.
func NewStoppable(parent context.Context) *Stoppable {
	return &Stoppable{parent: parent}
}

// NewStoppables returns n Stoppables under parent, made in one allocation:
// a runner that performs many actions takes one for each from the block,
// as it would call NewStoppable. Each is used for one action, as one
// made by NewStoppable; a handler that keeps its context keeps the block
// alive, no more.
func NewStoppables(parent context.Context, n int) []Stoppable {
	block := make([]Stoppable, n)
	for i := range block {
		block[i].parent = parent
	}
	return block
}

// Stop tells the action to stop: the context is done, with cause as its
// context.Cause (context.Canceled if cause is nil). Only the first Stop or
// Release counts. Stop is safe to call from any goroutine.
func (s *Stoppable) Stop(cause error) {
	if cause == nil {
		cause = context.Canceled
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cause != nil || s.released {
		return
	}
	s.cause = cause
	if s.real != nil {
		s.cancel(cause)
	}
}

// Stopped returns the cause Stop was given, or nil if it was not called
// (before Release). Unlike context.Cause it never makes the real context.
func (s *Stoppable) Stopped() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cause
}

// Release ends the context for good once the handler has returned, as a
// CancelFunc does; a Stop after it changes nothing.
func (s *Stoppable) Release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.released {
		return
	}
	s.released = true
	if s.real != nil {
		s.cancel(nil)
	}
}

// ctx returns the real context, made the first time it is needed, with a
// Stop or a Release that came before applied to it.
func (s *Stoppable) ctx() context.Context {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.real == nil {
		s.real, s.cancel = context.WithCancelCause(s.parent)
		switch {
		case s.cause != nil:
			s.cancel(s.cause)
		case s.released:
			s.cancel(nil)
		}
	}
	return s.real
}

// Deadline is parent's: Stop sets none.
func (s *Stoppable) Deadline() (time.Time, bool) { return s.parent.Deadline() }

// Done returns a channel closed when parent is done, Stop is called or
// the context is released.
func (s *Stoppable) Done() <-chan struct{} { return s.ctx().Done() }

// Err returns nil until Done is closed, then why (context.Canceled or
// parent's error).
func (s *Stoppable) Err() error { return s.ctx().Err() }

// Value returns the action for ActionFrom's key once Execute has bound
// one, and the real context's value for any other key (parent's values,
// and what context.Cause looks for).
func (s *Stoppable) Value(key any) any {
	if _, ok := key.(actionKey); ok && s.bound {
		return &s.a
	}
	return s.ctx().Value(key)
}

// bind gives s the action a to show its handler, if s has none yet: a
// nested Execute under a handler's Stoppable wraps it instead.
func (s *Stoppable) bind(a job.Action) bool {
	if s.bound {
		return false
	}
	s.a, s.bound = a, true
	return true
}
