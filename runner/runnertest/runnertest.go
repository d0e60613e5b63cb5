package runnertest

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

// Runner is what the suite drives.
type Runner interface {
	// Submit starts a job; it must refuse a workflow naming an action that
	// has no handler, with an error that names the action.
	Submit(ctx context.Context, id job.ID, root ast.Node) error
	// Deliver hands in results as if a worker had sent them.
	Deliver(ctx context.Context, results ...job.Result) error
	// Wait blocks until the job finished and returns it.
	Wait(ctx context.Context, id job.ID) (job.Job, error)
	// Run works until ctx ends, then returns.
	Run(ctx context.Context) error
	// Close stops the runner; it must not close the store.
	Close() error
}

// Config is what the suite asks a factory for.
type Config struct {
	Store    store.Store
	Registry *runner.Registry
	// DrainTimeout is how long actions in flight may finish once Run's
	// context ends; the suite sets it short where it stops a runner
	// mid-action.
	DrainTimeout time.Duration
}

// Factory builds a runner on cfg. The suite calls Run and Close itself.
type Factory func(t *testing.T, cfg Config) Runner

// Run runs the conformance suite. newStore returns a fresh store for one
// scenario; newRunner builds a runner on it.
func Run(t *testing.T, newStore func(t *testing.T) store.Store, newRunner Factory) {
	s := &suite{newStore: newStore, newRunner: newRunner}
	t.Run("Success", s.success)
	t.Run("Failure", s.failure)
	t.Run("Rescue", s.rescue)
	t.Run("Finally", s.finally)
	t.Run("FanOut1000", s.fanOut)
	t.Run("ConcurrentJobs100", s.concurrentJobs)
	t.Run("HandlerPanics", s.handlerPanics)
	t.Run("UnknownAction", s.unknownAction)
	t.Run("DuplicateResult", s.duplicateResult)
	t.Run("StoppedMidJobResumes", s.stoppedMidJob)
}

type suite struct {
	newStore  func(t *testing.T) store.Store
	newRunner Factory
}

// recorder is a registry whose handlers count and log their calls.
type recorder struct {
	mu    sync.Mutex
	calls map[string]int // by action key
	order []string       // payload strings of "log" calls in call order
	reg   *runner.Registry
	// fail lists payloads that the "log" handler fails on.
	fail map[string]bool
}

func newRecorder(t *testing.T) *recorder {
	rec := &recorder{calls: map[string]int{}, reg: runner.NewRegistry(), fail: map[string]bool{}}
	must(t, runner.Handle(rec.reg, "log", func(ctx context.Context, msg string) (string, error) {
		rec.mu.Lock()
		rec.order = append(rec.order, msg)
		bad := rec.fail[msg]
		rec.mu.Unlock()
		if bad {
			return "", fmt.Errorf("refused %q", msg)
		}
		return "logged " + msg, nil
	}))
	must(t, rec.reg.Register("noop", func(ctx context.Context, a job.Action) ([]byte, error) {
		rec.count(a)
		return nil, nil
	}))
	return rec
}

func (rec *recorder) count(a job.Action) {
	rec.mu.Lock()
	rec.calls[a.Key()]++
	rec.mu.Unlock()
}

func (rec *recorder) logged() []string {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]string(nil), rec.order...)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// start builds a runner on st with reg and runs it until the test ends.
func (s *suite) start(t *testing.T, st store.Store, reg *runner.Registry, drain time.Duration) Runner {
	t.Helper()
	r := s.newRunner(t, Config{Store: st, Registry: reg, DrainTimeout: drain})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := r.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run returned %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Errorf("Run did not return 30s after its context ended")
		}
	})
	return r
}

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func logs(msgs ...string) []ast.Node {
	var ns []ast.Node
	for _, m := range msgs {
		ns = append(ns, ast.Act("log", m))
	}
	return ns
}

func (s *suite) runJob(t *testing.T, rec *recorder, root ast.Node) job.Job {
	t.Helper()
	st := s.newStore(t)
	r := s.start(t, st, rec.reg, time.Second)
	ctx := ctxFor(t)
	must(t, r.Submit(ctx, "j1", root))
	j, err := r.Wait(ctx, "j1")
	must(t, err)
	return j
}

func wantLogged(t *testing.T, rec *recorder, want ...string) {
	t.Helper()
	if got := rec.logged(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("handlers ran %q, want %q", got, want)
	}
}

func wantStatus(t *testing.T, j job.Job, want job.Status) {
	t.Helper()
	if j.Status() != want {
		t.Fatalf("job status %s, want %s\n%s", j.Status(), want, job.Describe(j))
	}
}

func (s *suite) success(t *testing.T) {
	rec := newRecorder(t)
	j := s.runJob(t, rec, ast.Seq(logs("a", "b", "c")...))
	wantStatus(t, j, job.StatusSucceeded)
	wantLogged(t, rec, "a", "b", "c")
	var outs []string
	j.Walk(func(n job.NodeInfo) bool {
		if n.Kind == ast.KindAct {
			outs = append(outs, string(n.Output))
		}
		return true
	})
	if want := `"logged a","logged b","logged c"`; strings.Join(outs, ",") != want {
		t.Errorf("outputs %s, want %s", strings.Join(outs, ","), want)
	}
}

func (s *suite) failure(t *testing.T) {
	rec := newRecorder(t)
	rec.fail["b"] = true
	j := s.runJob(t, rec, ast.Seq(logs("a", "b", "c")...))
	wantStatus(t, j, job.StatusFailed)
	wantLogged(t, rec, "a", "b")
	f, _ := j.Failure()
	if f.Path != "seq[1]" || f.Message != `refused "b"` {
		t.Errorf("failure %+v, want seq[1] with refused \"b\"", f)
	}
}

func (s *suite) rescue(t *testing.T) {
	rec := newRecorder(t)
	rec.fail["charge"] = true
	j := s.runJob(t, rec, ast.Try(ast.Act("log", "charge"), ast.Rescue(ast.Act("log", "refund"))))
	wantStatus(t, j, job.StatusSucceeded)
	wantLogged(t, rec, "charge", "refund")
}

func (s *suite) finally(t *testing.T) {
	rec := newRecorder(t)
	rec.fail["charge"] = true
	j := s.runJob(t, rec, ast.Seq(
		ast.Try(ast.Act("log", "charge"), ast.Finally(ast.Act("log", "release"))),
		ast.Act("log", "never")))
	wantStatus(t, j, job.StatusFailed)
	wantLogged(t, rec, "charge", "release")
}

func (s *suite) fanOut(t *testing.T) {
	rec := newRecorder(t)
	kids := make([]ast.Node, 1000)
	for i := range kids {
		kids[i] = ast.Act("noop", i)
	}
	j := s.runJob(t, rec, ast.Par(kids...))
	wantStatus(t, j, job.StatusSucceeded)
	if settled, total := j.Progress(); settled != 1000 || total != 1000 {
		t.Errorf("progress %d/%d, want 1000/1000", settled, total)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.calls) != 1000 {
		t.Errorf("%d distinct actions ran, want 1000", len(rec.calls))
	}
	for k, n := range rec.calls {
		if n != 1 {
			t.Errorf("action %s ran %d times without any crash, want once", k, n)
		}
	}
}

func (s *suite) concurrentJobs(t *testing.T) {
	rec := newRecorder(t)
	st := s.newStore(t)
	r := s.start(t, st, rec.reg, time.Second)
	ctx := ctxFor(t)
	const n = 100
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := job.ID(fmt.Sprintf("job-%03d", i))
			root := ast.Seq(ast.Par(ast.Act("noop", 1), ast.Act("noop", 2), ast.Act("noop", 3)), ast.Act("noop", 4))
			if err := r.Submit(ctx, id, root); err != nil {
				errs <- err
				return
			}
			j, err := r.Wait(ctx, id)
			if err != nil {
				errs <- err
				return
			}
			if j.Status() != job.StatusSucceeded {
				errs <- fmt.Errorf("job %s: %s", id, j.Status())
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	infos, err := store.List(ctx, st, store.Query{})
	must(t, err)
	if len(infos) != n {
		t.Fatalf("store lists %d jobs, want %d", len(infos), n)
	}
	for _, in := range infos {
		if in.Status != job.StatusSucceeded {
			t.Errorf("store says job %s is %s", in.ID, in.Status)
		}
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.calls) != 4*n {
		t.Errorf("%d actions ran, want %d", len(rec.calls), 4*n)
	}
}

func (s *suite) handlerPanics(t *testing.T) {
	rec := newRecorder(t)
	must(t, rec.reg.Register("explode", func(ctx context.Context, a job.Action) ([]byte, error) {
		panic("kaboom")
	}))
	st := s.newStore(t)
	r := s.start(t, st, rec.reg, time.Second)
	ctx := ctxFor(t)
	must(t, r.Submit(ctx, "bad", ast.Try(ast.Act("explode", nil), ast.Finally(ast.Act("log", "cleanup")))))
	j, err := r.Wait(ctx, "bad")
	must(t, err)
	wantStatus(t, j, job.StatusFailed)
	f, _ := j.Failure()
	if !strings.Contains(f.Message, "panicked") || !strings.Contains(f.Message, "kaboom") {
		t.Errorf("failure message %q, want it to say the handler panicked with kaboom", f.Message)
	}
	// The runner survived: another job runs.
	must(t, r.Submit(ctx, "good", ast.Act("log", "after")))
	j, err = r.Wait(ctx, "good")
	must(t, err)
	wantStatus(t, j, job.StatusSucceeded)
	wantLogged(t, rec, "cleanup", "after")
}

func (s *suite) unknownAction(t *testing.T) {
	rec := newRecorder(t)
	st := s.newStore(t)
	r := s.start(t, st, rec.reg, time.Second)
	ctx := ctxFor(t)
	err := r.Submit(ctx, "typo", ast.Seq(ast.Act("log", "a"), ast.Act("emial.send", nil)))
	if err == nil || !strings.Contains(err.Error(), "emial.send") {
		t.Fatalf("Submit of a workflow with an unknown action: err = %v, want one naming emial.send", err)
	}
	if _, err := st.Load(ctx, "typo"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("refused job was stored: Load err = %v", err)
	}
	if got := rec.logged(); len(got) != 0 {
		t.Errorf("refused job ran actions %q", got)
	}
}

// gate is a handler that blocks each call until released or its context
// ends.
type gate struct {
	entered chan job.Action
	release chan struct{}
	mu      sync.Mutex
	calls   int
	// open makes calls after the first return at once.
	open bool
}

func newGate() *gate {
	return &gate{entered: make(chan job.Action, 16), release: make(chan struct{})}
}

func (g *gate) handler(ctx context.Context, a job.Action) ([]byte, error) {
	g.mu.Lock()
	g.calls++
	open := g.open
	g.mu.Unlock()
	g.entered <- a
	if open {
		return []byte(`"opened"`), nil
	}
	select {
	case <-g.release:
		return []byte(`"released"`), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (g *gate) count() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.calls
}

func waitFor[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(30 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
		var zero T
		return zero
	}
}

func (s *suite) duplicateResult(t *testing.T) {
	rec := newRecorder(t)
	g := newGate()
	must(t, rec.reg.Register("gate", g.handler))
	st := s.newStore(t)
	r := s.start(t, st, rec.reg, time.Second)
	ctx := ctxFor(t)
	must(t, r.Submit(ctx, "dup", ast.Seq(ast.Act("log", "a"), ast.Act("gate", nil), ast.Act("log", "c"))))
	waitFor(t, g.entered, "the gate action to start")
	// a's result is stored; deliver it again, twice, while the gate holds.
	a := job.Result{JobID: "dup", ActionID: "seq[0]#1", Output: []byte(`"again"`)}
	must(t, r.Deliver(ctx, a, a))
	close(g.release)
	j, err := r.Wait(ctx, "dup")
	must(t, err)
	wantStatus(t, j, job.StatusSucceeded)
	// Late duplicate after the job finished.
	must(t, r.Deliver(ctx, a))
	wantLogged(t, rec, "a", "c")
	h, err := store.LoadHistory(ctx, st, "dup")
	must(t, err)
	if len(h.Steps) != 3 {
		t.Errorf("history has %d steps, want 3 (a, gate, c): duplicates must not change the job", len(h.Steps))
	}
	// The duplicate must not have replaced a's stored output.
	j.Walk(func(n job.NodeInfo) bool {
		if n.Path == "seq[0]" && string(n.Output) != `"logged a"` {
			t.Errorf("a's output is %s after duplicates, want \"logged a\"", n.Output)
		}
		return true
	})
	// Eventually the late duplicate is processed; the job stays as it was.
	time.Sleep(50 * time.Millisecond)
	j2, err := st.Load(ctx, "dup")
	must(t, err)
	if j2.Version() != j.Version() {
		t.Errorf("late duplicate changed the job from v%d to v%d", j.Version(), j2.Version())
	}
}

func (s *suite) stoppedMidJob(t *testing.T) {
	rec := newRecorder(t)
	g := newGate()
	must(t, rec.reg.Register("gate", g.handler))
	st := s.newStore(t)
	ctx := ctxFor(t)

	r1 := s.newRunner(t, Config{Store: st, Registry: rec.reg, DrainTimeout: 50 * time.Millisecond})
	ctx1, stop1 := context.WithCancel(ctx)
	done1 := make(chan error, 1)
	go func() { done1 <- r1.Run(ctx1) }()
	must(t, r1.Submit(ctx, "resume", ast.Seq(ast.Act("log", "a"), ast.Act("gate", nil), ast.Act("log", "c"))))
	waitFor(t, g.entered, "the gate action to start")
	stop1()
	if err := waitFor(t, done1, "the first runner to stop"); err != nil {
		t.Fatalf("first runner's Run: %v", err)
	}
	must(t, r1.Close())

	j, err := st.Load(ctx, "resume")
	must(t, err)
	if j.Done() || j.Running() != 1 {
		t.Fatalf("after the stop the job should be running with the gate outstanding:\n%s", job.Describe(j))
	}

	g.mu.Lock()
	g.open = true
	g.mu.Unlock()
	r2 := s.start(t, st, rec.reg, time.Second)
	j, err = r2.Wait(ctx, "resume")
	must(t, err)
	wantStatus(t, j, job.StatusSucceeded)
	wantLogged(t, rec, "a", "c")
	if n := g.count(); n != 2 {
		t.Errorf("the interrupted action ran %d times, want 2 (once interrupted, once resumed)", n)
	}
}
