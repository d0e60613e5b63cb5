package runner_test

import (
	"context"
	"errors"
	"fmt"
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

func (c *collect) Dispatch(_ context.Context, acts []job.Action, _ []job.Timer) error {
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
	eng, err := runner.NewEngine(runner.EngineOptions[struct{}]{Store: st, Transport: runner.SaveThenDispatch(st, d), Registry: reg, Hooks: counts.Hooks(nil)})
	if err != nil {
		t.Fatal(err)
	}
	_, err = eng.Submit(ctx, "typo", ast.Act("lgo", nil))
	if !errors.Is(err, runner.ErrUnknownActions) || !strings.Contains(err.Error(), `"lgo"`) {
		t.Fatalf("Submit with an unknown action: %v", err)
	}
	tr, err := eng.Submit(ctx, "j", ast.Seq(ast.Act("log", "a"), ast.Act("log", "b")))
	if err != nil {
		t.Fatal(err)
	}
	if len(d.acts) != 1 || d.acts[0].ID != "seq[0]#1" || tr.Job.Incarnation() == 0 || d.acts[0].Incarnation != tr.Job.Incarnation() {
		t.Fatalf("dispatched %v for incarnation %x", d.acts, tr.Job.Incarnation())
	}
	// The same result twice: the second changes nothing, saves nothing,
	// and re-dispatches the outstanding action (a redelivery).
	tr, err = eng.Apply(ctx, "j", []job.Result{d.acts[0].Succeed(nil)})
	if err != nil || tr.Job.Version() != 2 || len(d.acts) != 2 {
		t.Fatalf("Apply: v%d, %v, dispatched %v", tr.Job.Version(), err, d.acts)
	}
	tr, err = eng.Apply(ctx, "j", []job.Result{d.acts[0].Succeed(nil)})
	if err != nil || tr.Changed() || tr.Job.Version() != 2 {
		t.Fatalf("duplicate Apply: %+v, %v", tr.Step, err)
	}
	if len(d.acts) != 3 || d.acts[2].ID != "seq[1]#1" {
		t.Fatalf("a redelivered result re-dispatches the outstanding actions; dispatched %v", d.acts)
	}
	// Recover re-dispatches exactly the outstanding action.
	d.acts = nil
	n, err := eng.Recover(ctx, "j")
	if err != nil || n != 1 || d.acts[0].ID != "seq[1]#1" {
		t.Fatalf("Recover: %d actions, %v, dispatched %v", n, err, d.acts)
	}
	tr, err = eng.Apply(ctx, "j", []job.Result{d.acts[0].Succeed(nil)})
	if err != nil || tr.Job.Status() != job.StatusSucceeded {
		t.Fatalf("final Apply: %v, %v", tr.Job.Status(), err)
	}
	c := counts.Snapshot()
	if c.Steps != 3 || c.Ignored != 1 || c.JobsSucceeded != 1 || c.Dispatched != 2 {
		t.Errorf("counters %+v", c)
	}
	// A job that is done has nothing to recover; a late duplicate
	// re-dispatches nothing.
	d.acts = nil
	if n, err := eng.Recover(ctx, "j"); n != 0 || err != nil {
		t.Errorf("recovered %d actions of a finished job: %v", n, err)
	}
	if _, err := eng.Apply(ctx, "j", []job.Result{tr.Step.Results[0]}); err != nil || len(d.acts) != 0 {
		t.Errorf("late duplicate: %v, dispatched %v", err, d.acts)
	}
	// A result for another job is a routing bug.
	if _, err := eng.Apply(ctx, "j", []job.Result{{JobID: "k", ActionID: "seq[1]#1"}}); !errors.Is(err, job.ErrWrongJob) {
		t.Errorf("Apply of another job's result: %v, want job.ErrWrongJob", err)
	}
	if _, err := eng.Apply(ctx, "nope", []job.Result{{JobID: "nope", ActionID: "root#1"}}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Apply to a missing job: %v, want store.ErrNotFound", err)
	}
}

// TestEngineRecoverIsolatesJobs: Recover resumes what it can; a missing
// job and a job whose actions have no handler are reported, each by name,
// and the job without a handler is left untouched.
func TestEngineRecoverIsolatesJobs(t *testing.T) {
	ctx := context.Background()
	st := store.NewMemory()
	d := &collect{}
	for _, w := range []struct {
		id   job.ID
		root ast.Node
	}{{"ok-1", ast.Act("log", "a")}, {"alien", ast.Act("charge", nil)}, {"ok-2", ast.Par(ast.Act("log", "b"), ast.Act("log", "c"))}} {
		tr, err := job.New(w.id, w.root)
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Create(ctx, tr.Job); err != nil {
			t.Fatal(err)
		}
	}
	reg := runner.NewRegistry()
	_ = reg.Register("log", func(context.Context, job.Action) ([]byte, error) { return nil, nil })
	eng, _ := runner.NewEngine(runner.EngineOptions[struct{}]{Store: st, Transport: runner.SaveThenDispatch(st, d), Registry: reg})
	n, err := eng.Recover(ctx, "ok-1", "alien", "ghost", "ok-2")
	if n != 3 || len(d.acts) != 3 {
		t.Errorf("recovered %d actions (%v), want the 3 of ok-1 and ok-2", n, d.acts)
	}
	if !errors.Is(err, runner.ErrUnknownActions) || !errors.Is(err, store.ErrNotFound) ||
		!strings.Contains(err.Error(), "job alien") || !strings.Contains(err.Error(), `"charge"`) || !strings.Contains(err.Error(), "ghost") {
		t.Errorf("Recover error %v: want alien's unknown action and ghost's absence, by name", err)
	}
	for _, a := range d.acts {
		if a.JobID == "alien" {
			t.Errorf("dispatched %v of a job with no handler", a)
		}
	}
}

// failingDispatch fails its first n dispatches.
type failingDispatch struct {
	collect
	fails int
}

func (f *failingDispatch) Dispatch(ctx context.Context, acts []job.Action, ts []job.Timer) error {
	f.mu.Lock()
	if f.fails > 0 {
		f.fails--
		f.mu.Unlock()
		return errors.New("queue unreachable")
	}
	f.mu.Unlock()
	return f.collect.Dispatch(ctx, acts, ts)
}

// TestEngineDispatchFailureThenRedelivery: a dispatch that fails after the
// save strands nothing: the results are durable (ErrNotDispatched), and
// their redelivery dispatches the job's outstanding actions.
func TestEngineDispatchFailureThenRedelivery(t *testing.T) {
	ctx := context.Background()
	st := store.NewMemory()
	d := &failingDispatch{}
	eng, _ := runner.NewEngine(runner.EngineOptions[struct{}]{Store: st, Transport: runner.SaveThenDispatch(st, d)})
	tr, err := eng.Submit(ctx, "j", ast.Seq(ast.Act("log", "a"), ast.Par(ast.Act("log", "b"), ast.Act("log", "c"))))
	if err != nil {
		t.Fatal(err)
	}
	d.acts, d.fails = nil, 1
	res := tr.Actions[0].Succeed(nil)
	_, err = eng.Apply(ctx, "j", []job.Result{res})
	if !errors.Is(err, runner.ErrNotDispatched) {
		t.Fatalf("Apply with a failing dispatch: %v, want runner.ErrNotDispatched", err)
	}
	if j, _ := st.Load(ctx, "j"); j.Version() != 2 {
		t.Fatalf("the state was not saved: v%d", j.Version())
	}
	if len(d.acts) != 0 {
		t.Fatalf("dispatched %v", d.acts)
	}
	// The transport did not acknowledge the result: it comes again.
	tr, err = eng.Apply(ctx, "j", []job.Result{res})
	if err != nil || tr.Changed() {
		t.Fatalf("redelivery: %v, %+v", err, tr.Step)
	}
	var ids []string
	for _, a := range d.acts {
		ids = append(ids, a.ID)
	}
	if strings.Join(ids, " ") != "seq[1].par[0]#1 seq[1].par[1]#1" {
		t.Fatalf("after the redelivery, dispatched %v; want the par's two actions", ids)
	}
}

// conflicting wraps a store and makes the first Save fail with a conflict
// after letting another writer in, as a second runner would.
type conflicting struct {
	store.Store
	once   sync.Once
	before func()
}

func (c *conflicting) Save(ctx context.Context, j job.Job, st job.Step) error {
	c.once.Do(c.before)
	return c.Store.Save(ctx, j, st)
}

func TestEngineRetriesOnConflict(t *testing.T) {
	ctx := context.Background()
	mem := store.NewMemory()
	tr, err := job.New("j", ast.Par(ast.Act("log", "a"), ast.Act("log", "b")))
	if err != nil {
		t.Fatal(err)
	}
	j, acts := tr.Job, tr.Actions
	if err := mem.Create(ctx, j); err != nil {
		t.Fatal(err)
	}
	// Another runner applies a's result between our Load and our Save.
	st := &conflicting{Store: mem, before: func() {
		other, _ := job.Restart(j, []job.Result{acts[0].Succeed(nil)})
		if err := mem.Save(ctx, other.Job, other.Step); err != nil {
			t.Error(err)
		}
	}}
	eng, _ := runner.NewEngine(runner.EngineOptions[struct{}]{Store: st, Transport: runner.SaveThenDispatch(st, &collect{})})
	got, err := eng.Apply(ctx, "j", []job.Result{acts[0].Succeed(nil), acts[1].Succeed(nil)})
	if err != nil {
		t.Fatal(err)
	}
	if got.Job.Status() != job.StatusSucceeded || got.Job.Version() != 3 {
		t.Fatalf("after the conflict: %s", got.Job)
	}
	if ig := got.Ignored; len(ig) != 1 || ig[0].Reason != job.IgnoredDuplicate {
		t.Errorf("ignored %v, want a's result as a duplicate", ig)
	}
}

// alwaysConflicting fails every Save with a conflict.
type alwaysConflicting struct {
	store.Store
	saves int
}

func (c *alwaysConflicting) Save(ctx context.Context, j job.Job, st job.Step) error {
	c.saves++
	return fmt.Errorf("%w: always", store.ErrConflict)
}

// TestEngineConflictRetriesBounded: retries stop at ConflictRetries, and at
// once when the context ends.
func TestEngineConflictRetriesBounded(t *testing.T) {
	mem := store.NewMemory()
	tr, _ := job.New("j", ast.Act("log", "a"))
	_ = mem.Create(context.Background(), tr.Job)
	st := &alwaysConflicting{Store: mem}
	eng, _ := runner.NewEngine(runner.EngineOptions[struct{}]{Store: st, Transport: runner.SaveThenDispatch(st, &collect{}), ConflictRetries: 3})
	_, err := eng.Apply(context.Background(), "j", []job.Result{tr.Actions[0].Succeed(nil)})
	if !errors.Is(err, store.ErrConflict) || st.saves != 4 {
		t.Errorf("Apply: %v after %d saves, want ErrConflict after 4", err, st.saves)
	}
	st.saves = 0
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	mem2 := &alwaysConflicting{Store: store.NewMemory()}
	_ = mem2.Create(context.Background(), tr.Job)
	eng, _ = runner.NewEngine(runner.EngineOptions[struct{}]{Store: &loadAnyway{mem2}, Transport: runner.SaveThenDispatch(mem2, &collect{}), ConflictRetries: 3})
	_, err = eng.Apply(ctx, "j", []job.Result{tr.Actions[0].Succeed(nil)})
	if !errors.Is(err, store.ErrConflict) || mem2.saves != 1 {
		t.Errorf("Apply with an ended context: %v after %d saves, want ErrConflict after 1", err, mem2.saves)
	}
}

// loadAnyway loads whatever the context says, so that only the retry
// loop sees the ended context.
type loadAnyway struct{ store.Store }

func (l *loadAnyway) Load(_ context.Context, id job.ID) (job.Job, error) {
	return l.Store.Load(context.Background(), id)
}

func TestMissing(t *testing.T) {
	reg := runner.NewRegistry()
	_ = reg.Register("log", func(context.Context, job.Action) ([]byte, error) { return nil, nil })
	w := ast.Par(ast.Act("log", nil), ast.Try(ast.Act("b", nil), ast.Rescue(ast.Act("a", nil)), ast.Finally(ast.Act("b", nil))))
	if got := reg.Missing(w); strings.Join(got, ",") != "a,b" {
		t.Errorf("Missing = %q, want a, b", got)
	}
}

// staleCache is a store whose cache holds a job as it was some versions
// ago (runner.Cache): what another process's commits leave behind.
type staleCache struct {
	store.Store
	old    job.Job
	cached int
}

func (s *staleCache) Cached(id job.ID) (job.Job, bool) {
	s.cached++
	return s.old, s.old.ID() == id
}

// TestEngineStaleCache: Apply starts from a store's cached copy, and when
// that copy is stale it reaches the same outcome as from a fresh load: a
// result for an action the copy does not know yet is applied, not ignored;
// a result the copy would apply is applied once, on the stored job.
func TestEngineStaleCache(t *testing.T) {
	ctx := context.Background()
	wf := ast.Seq(ast.Act("log", "a"), ast.Act("log", "b"), ast.Act("log", "c"))
	for _, tc := range []struct {
		name string
		// steps applied to the stored job after the cached copy was taken
		ahead int
	}{{"current", 0}, {"one behind", 1}, {"two behind", 2}} {
		t.Run(tc.name, func(t *testing.T) {
			mem := store.NewMemory()
			tr, _ := job.New("j", wf)
			if err := mem.Create(ctx, tr.Job); err != nil {
				t.Fatal(err)
			}
			st := &staleCache{Store: mem, old: tr.Job}
			var ignored []job.Ignored
			hooks := &runner.Hooks{Ignored: func(_ job.ID, ig job.Ignored) { ignored = append(ignored, ig) }}
			d := &collect{}
			eng, _ := runner.NewEngine(runner.EngineOptions[struct{}]{Store: st, Transport: runner.SaveThenDispatch(mem, d), Hooks: hooks})
			// Move the stored job on without the cache seeing it.
			next := tr.Actions[0]
			for range tc.ahead {
				j, _ := mem.Load(ctx, "j")
				tr2, err := job.Restart(j, []job.Result{next.Succeed(nil)})
				if err != nil {
					t.Fatal(err)
				}
				if err := mem.Save(ctx, tr2.Job, tr2.Step); err != nil {
					t.Fatal(err)
				}
				next = tr2.Actions[0]
			}
			got, err := eng.Apply(ctx, "j", []job.Result{next.Succeed([]byte(`"x"`))})
			if err != nil {
				t.Fatal(err)
			}
			if st.cached != 1 {
				t.Errorf("Cached called %d times, want 1", st.cached)
			}
			if len(ignored) != 0 {
				t.Errorf("results reported ignored: %+v", ignored)
			}
			j, _ := mem.Load(ctx, "j")
			if j.Version() != uint64(tc.ahead)+2 || got.Job.Version() != j.Version() {
				t.Errorf("stored v%d, Apply returned v%d; want v%d", j.Version(), got.Job.Version(), tc.ahead+2)
			}
			settled, _ := j.Progress()
			if settled != tc.ahead+1 {
				t.Errorf("%d actions settled, want %d\n%s", settled, tc.ahead+1, job.Describe(j))
			}
			// The same result again: ignored as the stored job says (a
			// duplicate, or the job is done), never as the stale copy
			// would (an action it does not know).
			st.old = tr.Job
			if _, err := eng.Apply(ctx, "j", []job.Result{next.Succeed([]byte(`"x"`))}); err != nil {
				t.Fatal(err)
			}
			if len(ignored) != 1 || ignored[0].Reason == job.IgnoredUnknown {
				t.Errorf("the result again: ignored %+v, want it ignored once, not as unknown", ignored)
			}
		})
	}
}
