package kafka

import (
	"testing"

	"github.com/batonwf/baton/job"
)

// TestChanges: a change of a job wakes the waiters of that job only, and
// the store forgets a job's channel once its last waiter leaves.
func TestChanges(t *testing.T) {
	s := &Store{waiters: map[job.ID]*waiters{}}
	a1, doneA1 := s.changes("a")
	a2, doneA2 := s.changes("a")
	b, doneB := s.changes("b")
	s.notify("a", "c")
	for _, ch := range []<-chan struct{}{a1, a2} {
		select {
		case <-ch:
		default:
			t.Error("a waiter of a was not woken by a change of a")
		}
	}
	select {
	case <-b:
		t.Error("a waiter of b was woken by a change of a")
	default:
	}
	a3, doneA3 := s.changes("a")
	select {
	case <-a3:
		t.Error("a waiter of a that came after the change was woken by it")
	default:
	}
	doneA1()
	doneA2()
	doneA3()
	doneB()
	if len(s.waiters) != 0 {
		t.Errorf("%d jobs' channels kept with no waiter", len(s.waiters))
	}
}
