package runner_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
)

// A Stoppable behaves as context.WithCancelCause(parent) would, whichever
// comes first: a Stop or a look at the context, a Release, or parent's end.
func TestStoppableIsACancelCauseContext(t *testing.T) {
	type key struct{}
	stop := errors.New("told to stop")
	for _, c := range []struct {
		name      string
		lookFirst bool // a call that needs the real context before the event
		event     string
		wantErr   error
		wantCause error
	}{
		{"stop before a look", false, "stop", context.Canceled, stop},
		{"stop after a look", true, "stop", context.Canceled, stop},
		{"release before a look", false, "release", context.Canceled, context.Canceled},
		{"release after a look", true, "release", context.Canceled, context.Canceled},
		{"parent ends before a look", false, "parent", context.Canceled, stop},
		{"parent ends after a look", true, "parent", context.Canceled, stop},
	} {
		t.Run(c.name, func(t *testing.T) {
			parent, cancel := context.WithCancelCause(context.WithValue(context.Background(), key{}, "parent's"))
			defer cancel(nil)
			s := runner.NewStoppable(parent)
			var derived context.Context
			if c.lookFirst {
				if s.Err() != nil {
					t.Fatal("done before anything happened")
				}
				var done context.CancelFunc
				derived, done = context.WithCancel(s)
				defer done()
			}
			switch c.event {
			case "stop":
				s.Stop(stop)
				s.Stop(errors.New("a second stop")) // only the first counts
			case "release":
				s.Release()
				s.Stop(stop) // after Release: changes nothing
			case "parent":
				cancel(stop)
			}
			<-s.Done()
			if err := s.Err(); err != c.wantErr {
				t.Errorf("Err = %v, want %v", err, c.wantErr)
			}
			if got := context.Cause(s); got != c.wantCause {
				t.Errorf("Cause = %v, want %v", got, c.wantCause)
			}
			if derived != nil {
				<-derived.Done()
				if got := context.Cause(derived); got != c.wantCause {
					t.Errorf("Cause of a derived context = %v, want %v", got, c.wantCause)
				}
			}
			if v := s.Value(key{}); v != "parent's" {
				t.Errorf("Value = %v, want parent's", v)
			}
			wantStopped := error(nil)
			if c.event == "stop" {
				wantStopped = stop
			}
			if got := s.Stopped(); got != wantStopped {
				t.Errorf("Stopped = %v, want %v", got, wantStopped)
			}
		})
	}
}

// Stop races with a handler looking at its context; whichever wins, the
// handler sees the context done with Stop's cause.
func TestStoppableStopRacesALook(t *testing.T) {
	for range 200 {
		s := runner.NewStoppable(context.Background())
		var wg sync.WaitGroup
		wg.Go(func() { s.Stop(runner.ErrStopped) })
		wg.Go(func() {
			<-s.Done()
			if c := context.Cause(s); c != runner.ErrStopped {
				t.Errorf("Cause = %v", c)
			}
		})
		wg.Wait()
	}
}

// Execute hands a handler the Stoppable it was given, carrying the action,
// and a nested Execute under it wraps it rather than rebinding it.
func TestExecuteUnderStoppable(t *testing.T) {
	reg := runner.NewRegistry()
	inner := act("inner", `{}`)
	inner.ID = "root#2"
	var outerCtx context.Context
	must(t, reg.Register("inner", func(ctx context.Context, a job.Action) ([]byte, error) {
		if from, _ := runner.ActionFrom(ctx); from.ID != "root#2" {
			t.Errorf("inner handler sees %q", from.ID)
		}
		return nil, nil
	}))
	must(t, reg.Register("outer", func(ctx context.Context, a job.Action) ([]byte, error) {
		outerCtx = ctx
		if _, err := runner.Execute(ctx, reg, inner, runner.ExecOptions{}); err != nil {
			t.Error(err)
		}
		if from, _ := runner.ActionFrom(ctx); from.ID != "root#1" {
			t.Errorf("outer handler sees %q after the inner one", from.ID)
		}
		return nil, nil
	}))
	s := runner.NewStoppable(context.Background())
	if _, err := runner.Execute(s, reg, act("outer", `{}`), runner.ExecOptions{}); err != nil {
		t.Fatal(err)
	}
	if outerCtx != context.Context(s) {
		t.Errorf("the handler ran under %T, not the Stoppable given", outerCtx)
	}
	s.Release()
	if outerCtx.Err() == nil {
		t.Error("the handler's context is not done after Release")
	}
}

// What a runner pays per action for a context it can stop: no more than
// Execute's own context under a context it cannot (one allocation), as long
// as the handler does not look at its cancellation. context.WithCancelCause
// with the action around it costs three. Counted exactly: cannot flake.
func TestStoppableAllocations(t *testing.T) {
	reg := runner.NewRegistry()
	must(t, reg.Register("noop", func(context.Context, job.Action) ([]byte, error) { return nil, nil }))
	a := act("noop", `{}`)
	parent, cancel := context.WithCancel(context.Background())
	defer cancel()
	plain := testing.AllocsPerRun(100, func() {
		if _, err := runner.Execute(parent, reg, a, runner.ExecOptions{}); err != nil {
			t.Fatal(err)
		}
	})
	stoppable := testing.AllocsPerRun(100, func() {
		s := runner.NewStoppable(parent)
		if _, err := runner.Execute(s, reg, a, runner.ExecOptions{}); err != nil {
			t.Fatal(err)
		}
		s.Release()
	})
	if stoppable > plain {
		t.Errorf("an action under a Stoppable: %v allocations; under a plain context %v", stoppable, plain)
	}
}
