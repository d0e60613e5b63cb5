package runnertest_test

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/batonwf/baton/runner/runnertest"
)

// TestClock: armed functions are called by the Advance that moves the
// clock past their due time, in due order, and not before; a stopped one
// never; one armed for now or earlier at once.
func TestClock(t *testing.T) {
	t0 := time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC)
	c := runnertest.NewClock(t0)
	var mu sync.Mutex
	var calls []string
	call := func(s string) func() {
		return func() { mu.Lock(); calls = append(calls, s); mu.Unlock() }
	}
	c.AfterFunc(2*time.Hour, call("b"))
	c.AfterFunc(time.Hour, call("a"))
	stopped := c.AfterFunc(90*time.Minute, call("stopped"))
	if !stopped.Stop() || stopped.Stop() {
		t.Error("Stop of an armed function: want true, then false")
	}
	c.Advance(time.Hour - time.Nanosecond)
	if len(calls) != 0 || c.Armed() != 2 {
		t.Fatalf("before anything is due: called %v, %d armed", calls, c.Armed())
	}
	c.Advance(2 * time.Hour)
	if !slices.Equal(calls, []string{"a", "b"}) || c.Armed() != 0 || c.Fired() != 2 {
		t.Fatalf("called %v (%d armed, %d fired), want a then b", calls, c.Armed(), c.Fired())
	}
	if got, want := c.Now(), t0.Add(3*time.Hour-time.Nanosecond); !got.Equal(want) {
		t.Errorf("Now %v, want %v", got, want)
	}
	done := make(chan struct{})
	c.AfterFunc(0, func() { close(done) })
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("a function armed for now was not called")
	}
}
