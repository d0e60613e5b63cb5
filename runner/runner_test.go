package runner_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	"github.com/batonwf/baton/store"
)

func act(name string, payload string) job.Action {
	return job.Action{JobID: "j", ID: "root#1", Name: name, Payload: []byte(payload), Attempt: 1}
}

func TestRegisterRefusesBadNamesAndDuplicates(t *testing.T) {
	reg := runner.NewRegistry()
	noop := func(context.Context, job.Action) ([]byte, error) { return nil, nil }
	if err := reg.Register("ok.name", noop); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		h    runner.Handler
		want string
	}{
		{"ok.name", noop, "already has a handler"},
		{"bad name", noop, "has ' '"},
		{"", noop, "empty"},
		{"nil.handler", nil, "nil handler"},
	} {
		err := reg.Register(c.name, c.h)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Register(%q): err = %v, want one containing %q", c.name, err, c.want)
		}
	}
	if got := reg.Names(); len(got) != 1 || got[0] != "ok.name" {
		t.Errorf("Names() = %q", got)
	}
}

func TestHandleTyped(t *testing.T) {
	type in struct{ N int }
	type out struct{ Double int }
	reg := runner.NewRegistry()
	if err := runner.Handle(reg, "double", func(ctx context.Context, v in) (out, error) {
		return out{v.N * 2}, nil
	}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	r, err := runner.Execute(ctx, reg, act("double", `{"N":21}`), runner.ExecOptions{})
	if err != nil || r.Failed() || string(r.Output) != `{"Double":42}` {
		t.Fatalf("Execute = %+v, %v; want output {\"Double\":42}", r, err)
	}
	// An absent payload is the zero value.
	r, _ = runner.Execute(ctx, reg, act("double", ``), runner.ExecOptions{})
	if r.Failed() || string(r.Output) != `{"Double":0}` {
		t.Errorf("no payload: %+v", r)
	}
	// A payload of the wrong shape fails the action, naming it and the type.
	r, _ = runner.Execute(ctx, reg, act("double", `"twenty"`), runner.ExecOptions{})
	if !r.Failed() || !strings.Contains(r.Error, `"double"`) || !strings.Contains(r.Error, "runner_test.in") {
		t.Errorf("bad payload: %+v, want a failure naming the action and the type", r)
	}
}

func TestExecuteFailures(t *testing.T) {
	reg := runner.NewRegistry()
	_ = reg.Register("panics", func(context.Context, job.Action) ([]byte, error) { panic("boom") })
	_ = reg.Register("errs", func(context.Context, job.Action) ([]byte, error) { return nil, errors.New("") })
	_ = reg.Register("slow", func(ctx context.Context, a job.Action) ([]byte, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	})
	ctx := context.Background()
	for _, c := range []struct {
		name string
		opts runner.ExecOptions
		want string
	}{
		{"missing", runner.ExecOptions{}, `no handler registered for action "missing"`},
		{"panics", runner.ExecOptions{}, `handler for action "panics" panicked: boom`},
		{"errs", runner.ExecOptions{}, "action failed"},
		{"slow", runner.ExecOptions{Timeout: 20 * time.Millisecond}, `action "slow" timed out after 20ms`},
	} {
		r, err := runner.Execute(ctx, reg, act(c.name, ""), c.opts)
		if err != nil {
			t.Errorf("%s: err %v", c.name, err)
			continue
		}
		if !r.Failed() || !strings.Contains(r.Error, c.want) {
			t.Errorf("%s: result %+v, want a failure containing %q", c.name, r, c.want)
		}
	}
}

func TestExecuteHandsBackOnShutdown(t *testing.T) {
	reg := runner.NewRegistry()
	started := make(chan struct{})
	_ = reg.Register("slow", func(ctx context.Context, a job.Action) ([]byte, error) {
		close(started)
		<-ctx.Done()
		return nil, ctx.Err()
	})
	var back int
	hooks := &runner.Hooks{ActionHandedBack: func(job.Action) { back++ }}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	r, err := runner.Execute(ctx, reg, act("slow", ""), runner.ExecOptions{Hooks: hooks})
	if !errors.Is(err, runner.ErrHandedBack) || r.ActionID != "" {
		t.Fatalf("Execute = %+v, %v; want no result and ErrHandedBack", r, err)
	}
	if back != 1 {
		t.Errorf("ActionHandedBack called %d times, want 1", back)
	}
}

// collect is a Dispatcher that records what it is given.
type collect struct {
	mu   sync.Mutex
	acts []job.Action
	err  error
}

func (c *collect) Dispatch(_ context.Context, acts []job.Action) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.acts = append(c.acts, acts...)
	return c.err
}

func TestEngineSubmitApplyRecover(t *testing.T) {
	ctx := context.Background()
	st := store.NewMemory()
	d := &collect{}
	reg := runner.NewRegistry()
	_ = reg.Register("log", func(context.Context, job.Action) ([]byte, error) { return nil, nil })
	var counts runner.Counters
	eng, err := runner.NewEngine(runner.EngineOptions{Store: st, Dispatcher: d, Registry: reg, Hooks: counts.Hooks(nil)})
	if err != nil {
		t.Fatal(err)
	}
	_, err = eng.Submit(ctx, "typo", ast.Act("lgo", nil))
	if !errors.Is(err, runner.ErrUnknownActions) || !strings.Contains(err.Error(), `"lgo"`) {
		t.Fatalf("Submit with an unknown action: %v", err)
	}
	if _, err := eng.Submit(ctx, "j", ast.Seq(ast.Act("log", "a"), ast.Act("log", "b"))); err != nil {
		t.Fatal(err)
	}
	if len(d.acts) != 1 || d.acts[0].ID != "seq[0]#1" {
		t.Fatalf("dispatched %v", d.acts)
	}
	// The same result twice: the second changes nothing and saves nothing.
	j, err := eng.Apply(ctx, "j", []job.Result{d.acts[0].Succeed(nil)})
	if err != nil || j.Version() != 2 {
		t.Fatalf("Apply: v%d, %v", j.Version(), err)
	}
	j, err = eng.Apply(ctx, "j", []job.Result{d.acts[0].Succeed(nil)})
	if err != nil || j.Version() != 2 {
		t.Fatalf("duplicate Apply: v%d, %v", j.Version(), err)
	}
	// Recover re-dispatches exactly the outstanding action.
	d.acts = nil
	jobs, n, err := eng.Recover(ctx, nil, nil)
	if err != nil || jobs != 1 || n != 1 || d.acts[0].ID != "seq[1]#1" {
		t.Fatalf("Recover: %d jobs, %d actions, %v, dispatched %v", jobs, n, err, d.acts)
	}
	j, err = eng.Apply(ctx, "j", []job.Result{d.acts[0].Succeed(nil)})
	if err != nil || j.Status() != job.StatusSucceeded {
		t.Fatalf("final Apply: %v, %v", j.Status(), err)
	}
	c := counts.Snapshot()
	if c.Steps != 3 || c.Ignored != 1 || c.JobsSucceeded != 1 || c.Dispatched != 2 {
		t.Errorf("counters %+v", c)
	}
	// A job that is done has nothing to recover.
	if jobs, _, _ := eng.Recover(ctx, nil, nil); jobs != 0 {
		t.Errorf("recovered %d finished jobs", jobs)
	}
}

// conflicting wraps a store and makes the first Save fail with a conflict
// after letting another writer in, as a second runner would.
type conflicting struct {
	store.Store
	once   sync.Once
	before func()
}

func (c *conflicting) Save(ctx context.Context, j job.Job) error {
	c.once.Do(c.before)
	return c.Store.Save(ctx, j)
}

func TestEngineRetriesOnConflict(t *testing.T) {
	ctx := context.Background()
	mem := store.NewMemory()
	j, acts, err := job.New("j", ast.Par(ast.Act("log", "a"), ast.Act("log", "b")))
	if err != nil {
		t.Fatal(err)
	}
	if err := mem.Create(ctx, j); err != nil {
		t.Fatal(err)
	}
	// Another runner applies a's result between our Load and our Save.
	st := &conflicting{Store: mem, before: func() {
		other, _, _ := job.Restart(j, []job.Result{acts[0].Succeed(nil)})
		if err := mem.Save(ctx, other); err != nil {
			t.Error(err)
		}
	}}
	eng, _ := runner.NewEngine(runner.EngineOptions{Store: st, Dispatcher: &collect{}})
	got, err := eng.Apply(ctx, "j", []job.Result{acts[0].Succeed(nil), acts[1].Succeed(nil)})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status() != job.StatusSucceeded || got.Version() != 3 {
		t.Fatalf("after the conflict: %s", got)
	}
	if ig := got.Ignored(); len(ig) != 1 || ig[0].Reason != job.IgnoredDuplicate {
		t.Errorf("ignored %v, want a's result as a duplicate", ig)
	}
}

func TestMissing(t *testing.T) {
	reg := runner.NewRegistry()
	_ = reg.Register("log", func(context.Context, job.Action) ([]byte, error) { return nil, nil })
	w := ast.Par(ast.Act("log", nil), ast.Try(ast.Act("b", nil), ast.Rescue(ast.Act("a", nil)), ast.Finally(ast.Act("b", nil))))
	if got := reg.Missing(w); strings.Join(got, ",") != "a,b" {
		t.Errorf("Missing = %q, want a, b", got)
	}
}
