package runnertest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	"github.com/batonwf/baton/store"
)

// Runner is what the suite drives: one runner on one store. Its methods
// may be called from several goroutines at once.
type Runner interface {
	// Submit starts a job: it stores the job, then dispatches its first
	// actions. It must refuse a workflow naming an action that has no
	// handler, with an error that names the action, and store nothing.
	Submit(ctx context.Context, id job.ID, root ast.Node) error
	// Deliver hands in results as if a worker had sent them: the runner
	// applies them to their jobs as it does its own workers' results. A
	// result delivered before is ignored, and reported to
	// Config.Hooks.Ignored; when none of the results for a job applies and
	// some were delivered before, the job's outstanding actions are
	// dispatched again (runner.Engine.Apply does both). Deliver may return
	// before the results are applied.
	Deliver(ctx context.Context, results ...job.Result) error
	// Wait blocks until the job has finished, whichever runner on the
	// store finished it, and returns the job as stored. It returns an
	// error when ctx ends first.
	Wait(ctx context.Context, id job.ID) (job.Job, error)
	// Cancel cancels job id with a reason (job.Cancel) and returns once
	// the cancel is saved: the job's actions in flight are told to stop
	// (their handlers' contexts cancelled with cause runner.ErrStopped),
	// and it ends cancelled once the finally blocks it had entered
	// settle. Cancelling a cancelled job is not an error; a finished job
	// is one wrapping runner.ErrFinished, a missing one store.ErrNotFound.
	Cancel(ctx context.Context, id job.ID, reason string) error
	// Signal sends job id the signal name with ID sigID and a JSON
	// payload (nil for null), as job.Signal: a wait of that name takes
	// it, or the job keeps it. It may return before the signal is
	// applied. Sending it again is not an error and changes nothing. A
	// bad signal (job.Signal.Check) is an error wrapping
	// runner.ErrBadSignal, naming the job; a finished job is one wrapping
	// runner.ErrFinished, a missing one store.ErrNotFound.
	Signal(ctx context.Context, id job.ID, name, sigID string, payload json.RawMessage) error
	// CancelNode stops the running node called name in job id with a
	// reason (job.CancelNode); it may return before the cancel is
	// applied. A node that is not running is left as it is; a finished
	// job is an error wrapping runner.ErrFinished, a missing one
	// store.ErrNotFound.
	CancelNode(ctx context.Context, id job.ID, name, reason string) error
	// Run resumes the unfinished jobs of the store (unless
	// Config.NoResume), then runs actions and applies results until ctx
	// ends or Close is called, and returns nil. If the store fails (an
	// error other than a conflict) Run may stop at once and return the
	// error; the suite expects nil from every runner whose store did not
	// fail.
	Run(ctx context.Context) error
	// Close stops the runner and returns once Run has returned; it must
	// not close the store.
	Close() error
}

// Config is what the suite asks a factory for. The factory must honour
// every field.
type Config struct {
	// Store keeps the jobs. The suite owns it: several runners may share
	// it, at once or one after another. In the crash scenarios it is a
	// wrapper that fails on purpose, unless the factory injects crashes
	// itself (InjectsCrashes).
	Store    store.Store
	Registry *runner.Registry
	// DrainTimeout is how long actions in flight may finish once Run's
	// context ends; negative means none: the handlers' contexts are
	// cancelled at once and their actions handed back (runner.Execute's
	// ErrHandedBack), not failed. The suite sets it short or negative
	// where it stops a runner mid-action.
	DrainTimeout time.Duration
	// NoResume keeps Run from resuming the store's unfinished jobs when
	// it starts. The suite sets it to strand a job on purpose and see
	// that a redelivered result rescues it.
	NoResume bool
	// Hooks, when not nil, are the runner's hooks: the runner hands them
	// to its runner.Engine (EngineOptions.Hooks) and to runner.Execute.
	// The suite learns from Hooks.Ignored that a result it delivered has
	// been processed, where the runner applies results asynchronously.
	Hooks *runner.Hooks
	// Name, when not empty, is the worker's name: the factory gives it to
	// the runner as runner.WorkerOptions.Name. The suite checks that the
	// results its handlers made name it in the job's history
	// (job.Result.Worker), as the store journals them.
	Name string
	// Crash, set only in the crash scenarios of a suite run with
	// InjectsCrashes, is the crash the runner must die of: the factory
	// injects it at the runner's real write seam, calling Crash.Commit
	// before the write of every transition of an existing job and
	// Crash.Committed once it took effect, and failing every request of
	// the runner with Crash.Alive's error once it died. Close of a
	// crashed runner ends what a killed process's end ends (its session).
	Crash *Crash
}

// Factory builds a runner on cfg. The suite calls Run and Close itself.
type Factory func(t *testing.T, cfg Config) Runner

// Run runs the conformance suite. newStore returns a fresh store for one
// scenario; newRunner builds a runner on it.
//
// Optional store capabilities (store.Lister, store.Historian) are used
// through store.List and store.LoadHistory: with a store that lacks them,
// the assertions that need them are skipped (and logged), not the
// scenarios.
func Run(t *testing.T, newStore func(t *testing.T) store.Store, newRunner Factory, opts ...Option) {
	s := &suite{newStore: newStore, newRunner: newRunner}
	for _, o := range opts {
		o(s)
	}
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
	t.Run("KilledMidActionNoDrain", s.killedMidAction)
	t.Run("TwoRunnersOneStore", s.twoRunners)
	t.Run("WaitSeesJobFinishedByAnotherRunner", s.waitAcrossRunners)
	t.Run("CrashAfterSaveBeforeDispatch", s.crashAfterSave)
	t.Run("CrashBeforeResultSaved", s.crashBeforeResultSaved)
	t.Run("RedeliveryRedispatchesLostActions", s.redeliveryRedispatches)
	t.Run("RetryWithBackoff", s.retryBackoff)
	t.Run("TimerAfterRestart", s.timerAfterRestart)
	t.Run("Timeout", s.timeout)
	t.Run("Deadline", s.deadline)
	t.Run("Cancel", s.cancel)
	t.Run("AtMostOnceAfterCrash", s.atMostOnceAfterCrash)
	t.Run("DataPassing", s.dataPassing)
	t.Run("Race", s.race)
	t.Run("SignalReleasesWait", s.signalWait)
	t.Run("SignalBeforeWaitKept", s.signalEarly)
	t.Run("SignalDuplicateAppliedOnce", s.signalDuplicate)
	t.Run("SignalRefused", s.signalRefused)
	t.Run("SignalAcrossRestart", s.signalAcrossRestart)
	t.Run("CancelNode", s.cancelNode)
	t.Run("MapLimit", s.mapLimit)
	t.Run("MapNeed", s.mapNeed)
	t.Run("MapEmpty", s.mapEmpty)
	t.Run("MapNotArray", s.mapNotArray)
	t.Run("Loop", s.loop)
	t.Run("LoopLimit", s.loopLimit)
	t.Run("MapLoopAcrossRestart", s.mapLoopAcrossRestart)
	t.Run("CancelMapNode", s.cancelMapNode)
}

type suite struct {
	newStore       func(t *testing.T) store.Store
	newRunner      Factory
	injectsCrashes bool
}

// Option changes how Run drives the runners.
type Option func(*suite)

// InjectsCrashes tells Run that the factory injects the crash scenarios'
// crashes at its runner's own write seam (Config.Crash), so that they
// crash the commit production runs. Without it, the suite injects them
// through a wrapper of the store whose Save crashes: a runner that
// commits without Store.Save (one atomic write of its own) then skips
// those scenarios' checks.
func InjectsCrashes() Option {
	return func(s *suite) { s.injectsCrashes = true }
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

// runs returns how often the action with key ran (job.Action.Key); only
// the handlers that call count ("noop", and "hold" in TwoRunnersOneStore)
// are counted.
func (rec *recorder) runs(key string) int {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return rec.calls[key]
}

// counts returns a copy of the runs counted, by action key.
func (rec *recorder) counts() map[string]int {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return maps.Clone(rec.calls)
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

// stopTimeout bounds how long Run may take to return once its context
// ended and Close was called; scenarioTimeout bounds a whole scenario.
const (
	stopTimeout     = 15 * time.Second
	scenarioTimeout = 30 * time.Second
)

// running is a runner the suite runs, and how to stop it.
type running struct {
	Runner
	cancel context.CancelFunc
	done   chan error
	once   sync.Once
	err    error
}

// launch builds a runner on cfg and runs it until stop is called or the
// test ends. It does not judge what Run returns: see start.
func (s *suite) launch(t *testing.T, cfg Config) *running {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{Runner: s.newRunner(t, cfg), cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- r.Run(ctx) }()
	t.Cleanup(func() { r.stop(t) })
	return r
}

// stop ends Run's context, calls Close and returns what Run returned.
// Calls after the first return the same.
func (r *running) stop(t *testing.T) error {
	t.Helper()
	r.once.Do(func() {
		r.cancel()
		if err := r.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		select {
		case r.err = <-r.done:
		case <-time.After(stopTimeout):
			r.err = fmt.Errorf("Run did not return %s after its context ended and Close was called", stopTimeout)
			t.Error(r.err)
		}
	})
	return r.err
}

// start is launch for a runner whose store does not fail: Run must return
// nil when it is stopped.
func (s *suite) start(t *testing.T, cfg Config) *running {
	t.Helper()
	r := s.launch(t, cfg)
	t.Cleanup(func() {
		if err := r.stop(t); err != nil {
			t.Errorf("Run returned %v", err)
		}
	})
	return r
}

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), scenarioTimeout)
	t.Cleanup(cancel)
	return ctx
}

// eventually polls cond, more and more slowly, until it holds, and fails
// the test if it does not within timeout: a slow runner gets the time it
// needs and a fast one does not wait.
func eventually(t *testing.T, timeout time.Duration, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for pause := 100 * time.Microsecond; ; pause = min(2*pause, 20*time.Millisecond) {
		if cond() {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not so after %s", what, timeout)
		}
		time.Sleep(pause)
	}
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
	r := s.start(t, Config{Store: st, Registry: rec.reg, DrainTimeout: time.Second})
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
	st := s.newStore(t)
	r := s.start(t, Config{Store: st, Registry: rec.reg, DrainTimeout: time.Second, Name: "suite-worker"})
	ctx := ctxFor(t)
	must(t, r.Submit(ctx, "j1", ast.Seq(logs("a", "b", "c")...)))
	j, err := r.Wait(ctx, "j1")
	must(t, err)
	wantStatus(t, j, job.StatusSucceeded)
	// Every result names the worker that ran its action, in the history
	// read back from the store.
	if h := checkHistory(t, ctx, st, j); h != nil {
		n := 0
		for _, step := range h.Steps {
			for _, res := range step.Results {
				n++
				if res.Worker != "suite-worker" {
					t.Errorf("step v%d: the result of %s names worker %q, want suite-worker (the runner's WorkerOptions.Name)", step.Version, res.ActionID, res.Worker)
				}
			}
		}
		if n != 3 {
			t.Errorf("the history holds %d results, want 3", n)
		}
	}
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
	r := s.start(t, Config{Store: st, Registry: rec.reg, DrainTimeout: time.Second})
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
	if infos, err := store.List(ctx, st, store.Query{}); errors.Is(err, errors.ErrUnsupported) {
		t.Logf("the store cannot list jobs; listing not checked: %v", err)
	} else {
		must(t, err)
		if len(infos) != n {
			t.Fatalf("store lists %d jobs, want %d", len(infos), n)
		}
		for _, in := range infos {
			if in.Status != job.StatusSucceeded {
				t.Errorf("store says job %s is %s", in.ID, in.Status)
			}
		}
	}
	for i := range n {
		j, err := st.Load(ctx, job.ID(fmt.Sprintf("job-%03d", i)))
		must(t, err)
		checkHistory(t, ctx, st, j)
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
	r := s.start(t, Config{Store: st, Registry: rec.reg, DrainTimeout: time.Second})
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
	r := s.start(t, Config{Store: st, Registry: rec.reg, DrainTimeout: time.Second})
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
	return &gate{entered: make(chan job.Action, 64), release: make(chan struct{})}
}

func (g *gate) handler(ctx context.Context, a job.Action) ([]byte, error) {
	g.mu.Lock()
	g.calls++
	open := g.open
	g.mu.Unlock()
	select {
	case g.entered <- a:
	default: // nobody watches this many entries
	}
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

// duplicateResult: a result delivered again, while the job runs and after
// it finished, is ignored: the action that made it does not run again, no
// step is added, the first output stays. The late duplicate is known to be processed when the
// runner reports it ignored (Config.Hooks), so no fixed sleep is needed.
func (s *suite) duplicateResult(t *testing.T) {
	rec := newRecorder(t)
	g := newGate()
	must(t, rec.reg.Register("gate", g.handler))
	obs := newObserver()
	st := s.newStore(t)
	r := s.start(t, Config{Store: st, Registry: rec.reg, DrainTimeout: time.Second, Hooks: obs.hooks()})
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
	eventually(t, 10*time.Second, func() bool { return obs.ignored("dup", a.ActionID) >= 3 },
		"the runner reports the three duplicates of a's result ignored (Hooks.Ignored)")
	wantLogged(t, rec, "a", "c")
	if n := g.count(); n != 1 {
		t.Logf("the gate action ran %d times: duplicates re-dispatched it while it ran (at-least-once allows it)", n)
	}
	j2, err := st.Load(ctx, "dup")
	must(t, err)
	if j2.Version() != j.Version() {
		t.Errorf("late duplicate changed the job from v%d to v%d", j.Version(), j2.Version())
	}
	// The duplicates must not have replaced a's stored output.
	j2.Walk(func(n job.NodeInfo) bool {
		if n.Path == "seq[0]" && string(n.Output) != `"logged a"` {
			t.Errorf("a's output is %s after duplicates, want \"logged a\"", n.Output)
		}
		return true
	})
	if h := checkHistory(t, ctx, st, j2); h != nil && len(h.Steps) != 3 {
		t.Errorf("history has %d steps, want 3 (a, gate, c): duplicates must not change the job", len(h.Steps))
	}
}

func (s *suite) stoppedMidJob(t *testing.T) {
	rec := newRecorder(t)
	g := newGate()
	must(t, rec.reg.Register("gate", g.handler))
	st := s.newStore(t)
	ctx := ctxFor(t)

	r1 := s.launch(t, Config{Store: st, Registry: rec.reg, DrainTimeout: 50 * time.Millisecond})
	must(t, r1.Submit(ctx, "resume", ast.Seq(ast.Act("log", "a"), ast.Act("gate", nil), ast.Act("log", "c"))))
	waitFor(t, g.entered, "the gate action to start")
	if err := r1.stop(t); err != nil {
		t.Fatalf("first runner's Run: %v", err)
	}

	j, err := st.Load(ctx, "resume")
	must(t, err)
	if j.Done() || j.Running() != 1 {
		t.Fatalf("after the stop the job should be running with the gate outstanding:\n%s", job.Describe(j))
	}

	g.mu.Lock()
	g.open = true
	g.mu.Unlock()
	r2 := s.start(t, Config{Store: st, Registry: rec.reg, DrainTimeout: time.Second})
	j = waitDone(t, ctx, r2, st, "resume", "the second runner resumes the interrupted action")
	wantStatus(t, j, job.StatusSucceeded)
	wantLogged(t, rec, "a", "c")
	checkHistory(t, ctx, st, j)
	if n := g.count(); n != 2 {
		t.Errorf("the interrupted action ran %d times, want 2 (once interrupted, once resumed)", n)
	}
}
