package runner_test

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
)

// The context Execute gives a handler carries the action, and is the
// worker's context in every other respect: its values, its cancellation
// and its cause, also through contexts the handler derives from it.
func TestActionContext(t *testing.T) {
	type key struct{}
	stop := errors.New("told to stop")
	parent, cancel := context.WithCancelCause(context.WithValue(context.Background(), key{}, "worker's"))
	defer cancel(nil)
	a := act("ctx", `{}`)
	a.Timeout = time.Hour // Execute adds a deadline between the two
	if _, ok := runner.ActionFrom(parent); ok {
		t.Fatal("ActionFrom found an action outside a handler")
	}
	reg := runner.NewRegistry()
	err := reg.Register("ctx", func(ctx context.Context, got job.Action) ([]byte, error) {
		derived, done := context.WithCancel(ctx)
		defer done()
		for _, c := range []context.Context{ctx, derived} {
			if from, ok := runner.ActionFrom(c); !ok || !reflect.DeepEqual(from, got) {
				t.Errorf("ActionFrom = %+v, %v; want %+v", from, ok, got)
			}
			if v := c.Value(key{}); v != "worker's" {
				t.Errorf("Value(key) = %v, want the worker context's value", v)
			}
			if _, ok := c.Deadline(); !ok {
				t.Error("no deadline under an action timeout")
			}
		}
		cancel(stop)
		<-derived.Done()
		if c := context.Cause(ctx); c != stop {
			t.Errorf("Cause(handler's ctx) = %v, want %v", c, stop)
		}
		if c := context.Cause(derived); c != stop {
			t.Errorf("Cause(derived) = %v, want %v", c, stop)
		}
		return nil, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	r, err := runner.Execute(parent, reg, a, runner.ExecOptions{})
	if err != nil || r.Error != "" {
		t.Fatalf("Execute = %+v, %v", r, err)
	}
}

// A nested Execute (a handler performing another action) shows the inner
// action to the inner handler, and the outer one to the outer handler.
func TestActionContextNested(t *testing.T) {
	reg := runner.NewRegistry()
	inner := act("inner", `{}`)
	inner.ID = "root#2"
	must(t, reg.Register("inner", func(ctx context.Context, a job.Action) ([]byte, error) {
		if from, _ := runner.ActionFrom(ctx); from.ID != "root#2" {
			t.Errorf("inner handler sees %q", from.ID)
		}
		return nil, nil
	}))
	must(t, reg.Register("outer", func(ctx context.Context, a job.Action) ([]byte, error) {
		if _, err := runner.Execute(ctx, reg, inner, runner.ExecOptions{}); err != nil {
			t.Error(err)
		}
		if from, _ := runner.ActionFrom(ctx); from.ID != "root#1" {
			t.Errorf("outer handler sees %q after the inner one", from.ID)
		}
		return nil, nil
	}))
	if _, err := runner.Execute(context.Background(), reg, act("outer", `{}`), runner.ExecOptions{}); err != nil {
		t.Fatal(err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// Execute's own cost per action, beside its handler's: the action's
// context, one allocation. (Allocations are counted exactly, so this
// cannot flake.)
func TestExecuteAllocations(t *testing.T) {
	reg := runner.NewRegistry()
	must(t, reg.Register("noop", func(context.Context, job.Action) ([]byte, error) { return nil, nil }))
	a := act("noop", `{}`)
	ctx := context.Background()
	n := testing.AllocsPerRun(100, func() {
		if _, err := runner.Execute(ctx, reg, a, runner.ExecOptions{}); err != nil {
			t.Fatal(err)
		}
	})
	if n > 1 {
		t.Errorf("Execute of a handler that allocates nothing: %v allocations, want at most 1", n)
	}
}
