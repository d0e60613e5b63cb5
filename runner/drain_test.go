package runner_test

import (
	"context"
	"testing"
	"time"

	"github.com/batonwf/baton/runner"
)

// inFlight is an action in flight: it ends when it finishes on its own
// (finish) or when its context is cancelled (the hand-back).
func inFlight() (done chan struct{}, finish, handBack func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done = make(chan struct{})
	fin := make(chan struct{})
	go func() {
		defer close(done)
		select {
		case <-fin:
		case <-ctx.Done():
		}
	}()
	return done, func() { close(fin) }, cancel
}

// TestDrainFinishes: actions that finish within the timeout are not
// handed back, and Drain returns once they have (the timeout is far off).
func TestDrainFinishes(t *testing.T) {
	done, finish, cancel := inFlight()
	handedBack := make(chan struct{})
	go finish()
	ok := runner.Drain(time.Hour, done, func() { close(handedBack); cancel() }, nil)
	if !ok {
		t.Error("Drain = false for actions that finished within the timeout")
	}
	<-handedBack // called all the same, after they finished: releases the context
}

// TestDrainTimeout: actions still running when the timeout runs out are
// handed back, and Drain returns once they have stopped.
func TestDrainTimeout(t *testing.T) {
	done, _, cancel := inFlight()
	if runner.Drain(time.Millisecond, done, cancel, nil) {
		t.Error("Drain = true for actions that never finished on their own")
	}
	select {
	case <-done:
	default:
		t.Error("Drain returned before the actions handed back stopped")
	}
}

// TestDrainNegative: a negative timeout (and zero) hands back at once,
// never waiting for the actions to finish on their own.
func TestDrainNegative(t *testing.T) {
	for _, d := range []time.Duration{-1, 0} {
		done, _, cancel := inFlight()
		handed := false
		if runner.Drain(d, done, func() { handed = true; cancel() }, nil) || !handed {
			t.Errorf("Drain(%v) did not hand back at once", d)
		}
	}
}
