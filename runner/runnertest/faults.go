package runnertest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/store"
)

// The scenarios of this file put a runner through faults: killed with no
// drain, racing another runner on the same store, dying between the two
// halves of a transition, and losing a dispatch that a redelivered result
// must make good. A crash (Crash) is injected at the runner's own write
// seam by its factory, when it says it does (InjectsCrashes), else
// through the store the suite hands the runner (crashStore).

// finishTimeout bounds the wait for a job the scenario knows can finish
// at once; it is short so that a stranded job fails the test soon.
const finishTimeout = 10 * time.Second

// waitDone waits for job id on r for at most finishTimeout, and fails the
// test, showing the job as stored, if it has not finished by then.
func waitDone(t *testing.T, ctx context.Context, r Runner, st store.Store, id job.ID, why string) job.Job {
	t.Helper()
	wctx, cancel := context.WithTimeout(ctx, finishTimeout)
	defer cancel()
	j, err := r.Wait(wctx, id)
	if err != nil {
		desc := ""
		if stored, lerr := st.Load(ctx, id); lerr != nil {
			desc = lerr.Error()
		} else {
			desc = job.Describe(stored)
		}
		t.Fatalf("job %s did not finish (%s): %v; stored:\n%s", id, why, err, desc)
	}
	return j
}

// runsOf returns how often each action of final's job ran, by action ID,
// counting those that never ran (0). Only "noop" and "hold" actions are
// counted (see recorder.count). A run of an action the job does not have
// fails the test.
func runsOf(t *testing.T, rec *recorder, final job.Job) map[string]int {
	t.Helper()
	runs := map[string]int{}
	final.Walk(func(n job.NodeInfo) bool {
		if n.Kind == ast.KindAct && (n.Action == "noop" || n.Action == "hold") {
			for a := 1; a <= max(n.Attempt, 1); a++ {
				runs[job.ActionID(n.Path, a)] = 0
			}
		}
		return true
	})
	prefix := string(final.ID()) + "/"
	for key, n := range rec.counts() {
		id, ok := strings.CutPrefix(key, prefix)
		if !ok {
			continue
		}
		if _, known := runs[id]; !known {
			t.Errorf("job %s: action %s ran %d times, but the job has no such action", final.ID(), id, n)
			continue
		}
		runs[id] = n
	}
	return runs
}

// wantRuns checks that every action of final's job ran once, except those
// listed in want, which ran as often as want says.
func wantRuns(t *testing.T, rec *recorder, final job.Job, want map[string]int) {
	t.Helper()
	runs := runsOf(t, rec, final)
	for _, id := range slices.Sorted(maps.Keys(runs)) {
		w, ok := want[id]
		if !ok {
			w = 1
		}
		if runs[id] != w {
			t.Errorf("job %s: action %s ran %d times, want %d", final.ID(), id, runs[id], w)
		}
	}
}

// noDrainStop bounds how long Run may take to return with no drain.
const noDrainStop = 5 * time.Second

// killedMidAction: a runner stopped while a handler is blocked, with no
// drain (DrainTimeout negative), hands the action back at once: Run
// returns within noDrainStop, the action is not failed and nothing is
// saved for it. A second
// runner on the same store finishes the job. The interrupted action ran at
// most twice, every other action once, and the history holds each step
// once and replays to the final job.
func (s *suite) killedMidAction(t *testing.T) {
	rec := newRecorder(t)
	g := newGate()
	must(t, rec.reg.Register("gate", g.handler))
	st := s.newStore(t)
	ctx := ctxFor(t)
	const id = "killed"
	root := ast.Seq(ast.Act("noop", "a"),
		ast.Par(ast.Act("noop", "b"), ast.Act("gate", nil), ast.Act("noop", "c")),
		ast.Act("noop", "d"))

	r1 := s.launch(t, Config{Store: st, Registry: rec.reg, DrainTimeout: -1})
	must(t, r1.Submit(ctx, id, root))
	interrupted := waitFor(t, g.entered, "the gate action to start")
	// b and c end while the gate holds: kill only once their results are
	// saved, so that they must not run again.
	eventually(t, 10*time.Second, func() bool {
		j, err := st.Load(ctx, id)
		settled, _ := j.Progress()
		return err == nil && settled == 3
	}, "the results of a, b and c are saved while the gate holds")
	before, err := st.Load(ctx, id)
	must(t, err)
	began := time.Now()
	if err := r1.stop(t); err != nil {
		t.Fatalf("the killed runner's Run: %v", err)
	}
	// The gate never opens for r1: only a hand-back ends its handler.
	if took := time.Since(began); took > noDrainStop {
		t.Errorf("with no drain, Run took %s to return (more than %s): it waited for the action in flight", took, noDrainStop)
	}
	after, err := st.Load(ctx, id)
	must(t, err)
	if after.Version() != before.Version() || after.Done() || after.Running() != 1 {
		t.Fatalf("the interrupted action must be handed back, with nothing saved for it: the job went from v%d to\n%s",
			before.Version(), job.Describe(after))
	}
	if out := after.Outstanding(); len(out) != 1 || out[0].ID != interrupted.ID {
		t.Fatalf("after the kill, outstanding %v, want only the interrupted %s", out, interrupted.ID)
	}

	g.mu.Lock()
	g.open = true
	g.mu.Unlock()
	r2 := s.start(t, Config{Store: st, Registry: rec.reg, DrainTimeout: time.Second})
	j := waitDone(t, ctx, r2, st, id, "the second runner resumes the interrupted action")
	wantStatus(t, j, job.StatusSucceeded)
	if n := g.count(); n > 2 {
		t.Errorf("the interrupted action ran %d times, want at most 2 (interrupted, then resumed)", n)
	}
	wantRuns(t, rec, j, nil)
	checkHistory(t, ctx, st, j)
}

// twoRunners: two runners on one store at once, both resuming the store's
// unfinished jobs when they start (jobs a killed runner left behind, whose
// last action holds until both runners have started and the new jobs are
// in, so that both may run it), and 20 new jobs submitted alternately to
// each. Every job completes (the store says so), each step is in the
// history once, and every action ran at least once (the held ones again
// after the kill). Across runners an action may run more than once
// (at-least-once): the extra runs are counted and logged, not failed.
func (s *suite) twoRunners(t *testing.T) {
	rec := newRecorder(t)
	release := make(chan struct{})
	must(t, rec.reg.Register("hold", func(ctx context.Context, a job.Action) ([]byte, error) {
		rec.count(a)
		select {
		case <-release:
			return nil, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}))
	st := s.newStore(t)
	ctx := ctxFor(t)
	fan := func(n int, last string) ast.Node {
		kids := make([]ast.Node, n)
		for i := range kids {
			kids[i] = ast.Act("noop", i)
		}
		return ast.Seq(ast.Par(kids...), ast.Act(last, nil))
	}

	// Leave unfinished jobs behind: their last action holds until the
	// runner is killed with no drain.
	var ids []job.ID
	r0 := s.launch(t, Config{Store: st, Registry: rec.reg, DrainTimeout: -1})
	for i := range 4 {
		id := job.ID(fmt.Sprintf("left-%d", i))
		must(t, r0.Submit(ctx, id, fan(5, "hold")))
		ids = append(ids, id)
	}
	eventually(t, 10*time.Second, func() bool {
		for _, id := range ids {
			j, err := st.Load(ctx, id)
			if err != nil || j.Running() != 1 || rec.runs(string(id)+"/seq[1]#1") == 0 {
				return false
			}
		}
		return true
	}, "the left-behind jobs reach their holding action")
	if err := r0.stop(t); err != nil {
		t.Fatalf("the killed runner's Run: %v", err)
	}

	rs := []*running{
		s.start(t, Config{Store: st, Registry: rec.reg, DrainTimeout: time.Second}),
		s.start(t, Config{Store: st, Registry: rec.reg, DrainTimeout: time.Second}),
	}
	const n = 20
	for i := range n {
		id := job.ID(fmt.Sprintf("job-%02d", i))
		must(t, rs[i%2].Submit(ctx, id, fan(5, "noop")))
		ids = append(ids, id)
	}
	close(release)

	// Done when the store says so: Wait on a runner that did not finish a
	// job is waitAcrossRunners' business.
	finals := make([]job.Job, len(ids))
	eventually(t, 10*time.Second, func() bool {
		for i, id := range ids {
			if finals[i].Done() {
				continue
			}
			j, err := st.Load(ctx, id)
			if err != nil || !j.Done() {
				return false
			}
			finals[i] = j
		}
		return true
	}, "every job finishes")

	dups := 0
	for i, id := range ids {
		j := finals[i]
		wantStatus(t, j, job.StatusSucceeded)
		checkHistory(t, ctx, st, j)
		for aid, runs := range runsOf(t, rec, j) {
			want := 1
			if strings.HasPrefix(string(id), "left-") && aid == "seq[1]#1" {
				want = 2 // the holding action ran once before the kill
			}
			switch {
			case runs < want:
				t.Errorf("job %s: action %s ran %d times, want at least %d, yet the job succeeded", id, aid, runs, want)
			case runs > want:
				dups += runs - want
			}
		}
	}
	t.Logf("%d jobs on two runners: %d extra runs of actions across runners (at-least-once allows them)", len(ids), dups)
}

// waitAcrossRunners: Wait on a runner returns a job that another runner on
// the same store finished. The waiting runner does not resume jobs
// (NoResume) and has nothing to do with the job but wait for it.
func (s *suite) waitAcrossRunners(t *testing.T) {
	rec := newRecorder(t)
	g := newGate()
	must(t, rec.reg.Register("gate", g.handler))
	st := s.newStore(t)
	ctx := ctxFor(t)
	const id = "elsewhere"
	r1 := s.start(t, Config{Store: st, Registry: rec.reg, DrainTimeout: time.Second})
	unfinished := make(chan struct{})
	var once sync.Once
	watch := &watchStore{Store: st, loaded: func(j job.Job) {
		if j.ID() == id && !j.Done() {
			once.Do(func() { close(unfinished) })
		}
	}}
	r2 := s.start(t, Config{Store: watch, Registry: rec.reg, DrainTimeout: time.Second, NoResume: true})
	must(t, r1.Submit(ctx, id, ast.Seq(ast.Act("gate", nil))))
	waitFor(t, g.entered, "the gate action to start")
	waited := make(chan error, 1)
	var got job.Job
	go func() {
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		var err error
		got, err = r2.Wait(wctx, id)
		waited <- err
	}()
	// Finish the job only once r2's Wait has seen it unfinished, so that
	// it must notice the change.
	select {
	case <-unfinished:
	case <-time.After(5 * time.Second):
		t.Logf("the waiting runner did not load job %s through its store in 5s; finishing the job anyway", id)
	}
	close(g.release)
	j, err := r1.Wait(ctx, id)
	must(t, err)
	wantStatus(t, j, job.StatusSucceeded)
	if err := waitFor(t, waited, "Wait on the other runner"); err != nil {
		t.Fatalf("Wait on a runner for a job another runner finished: %v", err)
	}
	if got.Version() != j.Version() || !got.Done() {
		t.Errorf("Wait on the other runner returned %v, want %v", got, j)
	}
}

// watchStore passes every call to the store under it, and tells loaded
// about every job it loads.
type watchStore struct {
	store.Store
	loaded func(job.Job)
}

func (w *watchStore) Load(ctx context.Context, id job.ID) (job.Job, error) {
	j, err := w.Store.Load(ctx, id)
	if err == nil {
		w.loaded(j)
	}
	return j, err
}

func (w *watchStore) List(ctx context.Context, q store.Query) ([]store.Info, error) {
	return store.List(ctx, w.Store, q)
}

func (w *watchStore) History(ctx context.Context, id job.ID) (store.History, error) {
	return store.LoadHistory(ctx, w.Store, id)
}

func (w *watchStore) Delete(ctx context.Context, id job.ID) error {
	return store.Delete(ctx, w.Store, id)
}

// ErrCrashed is what a runner's requests fail with once the process it
// stands for has died at an injected crash (Crash).
var ErrCrashed = errors.New("runnertest: injected crash: the process died here")

// Crash is a crash the suite injects: the process dies at the commit of
// a chosen step, before that commit writes anything or once its write
// took effect and before the runner acts on it (dispatches, runs, or
// acknowledges anything). From then on every request of the dead runner
// fails with ErrCrashed, as a killed process makes none; the suite then
// starts a new runner on the store.
//
// A fault hook at the real write seam calls it (see InjectsCrashes: a
// runner's own, or its store's, as store/bolt's tests do); otherwise the
// suite calls it from a wrapper of the store's Save (crashStore). Its
// methods may be called from several goroutines at once.
type Crash struct {
	at         func(n int, j job.Job, step job.Step) bool // n counts commits of steps from 1
	afterWrite bool

	mu      sync.Mutex
	commits int
	dead    bool
	pending struct { // the commit that dies once written (afterWrite)
		id job.ID
		v  uint64
		ok bool
	}
	crashed chan struct{} // closed once the process died
	// j and step are those of the commit that crashed; wrote is the
	// error of its write, when afterWrite and that write failed.
	j     job.Job
	step  job.Step
	wrote error
}

func newCrash(afterWrite bool, at func(n int, j job.Job, step job.Step) bool) *Crash {
	return &Crash{at: at, afterWrite: afterWrite, crashed: make(chan struct{})}
}

// Alive returns ErrCrashed once the process has died, nil before: a
// runner's injector fails every request of the dead runner with it.
func (c *Crash) Alive() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dead {
		return ErrCrashed
	}
	return nil
}

// Commit is called just before a commit writes step, which makes j (a
// transition of a job that exists: the commit of a created job is no
// step, and only asks Alive). It returns ErrCrashed when the process has
// died, or dies here, before the write; nil lets the write go ahead.
func (c *Crash) Commit(j job.Job, step job.Step) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dead {
		return ErrCrashed
	}
	c.commits++
	if c.pending.ok || !c.at(c.commits, j, step) {
		return nil
	}
	if c.afterWrite {
		c.pending.id, c.pending.v, c.pending.ok = j.ID(), j.Version(), true
		return nil
	}
	c.die(j, step)
	return ErrCrashed
}

// Committed is called once the write of a commit that Commit let go
// ahead took effect, before the runner acts on it. It returns ErrCrashed
// when the process dies here (or has died): the write stays, and nothing
// after it happens.
func (c *Crash) Committed(j job.Job, step job.Step) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dead {
		return ErrCrashed
	}
	if c.pending.ok && c.pending.id == j.ID() && c.pending.v == j.Version() {
		c.die(j, step)
		return ErrCrashed
	}
	return nil
}

// writeFailed records that the write of the commit meant to crash once
// written failed: the scenario cannot go on.
func (c *Crash) writeFailed(j job.Job, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dead || !c.pending.ok || c.pending.id != j.ID() || c.pending.v != j.Version() {
		return
	}
	c.wrote = err
	c.die(j, job.Step{})
}

// die marks the process dead; c.mu is held.
func (c *Crash) die(j job.Job, step job.Step) {
	c.dead = true
	c.j, c.step = j, step
	close(c.crashed)
}

// crash returns the job and step of the commit that crashed, once it has.
func (c *Crash) crash(t *testing.T) (job.Job, job.Step) {
	t.Helper()
	waitFor(t, c.crashed, "the injected crash")
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.wrote != nil {
		t.Fatalf("the write before the crash failed: %v", c.wrote)
	}
	return c.j, c.step
}

// crashStore is the store a runner sees in the crash scenarios when its
// factory does not inject crashes itself: it passes every call to the
// store under it, and its Save is the commit Crash is asked about. That
// is the real seam only for a store whose Save is its commit, such as
// store.Memory; a store with a commit of its own (store/bolt's
// transaction) is crashed there by its tests' factory (InjectsCrashes). Once
// the process died every call fails with ErrCrashed: the dead runner can
// neither write nor read. Listing, history and deletion pass through as
// the store under it has them.
type crashStore struct {
	store.Store
	c *Crash
}

func (c *crashStore) Create(ctx context.Context, j job.Job) error {
	if err := c.c.Alive(); err != nil {
		return err
	}
	return c.Store.Create(ctx, j)
}

func (c *crashStore) Save(ctx context.Context, j job.Job, step job.Step) error {
	if err := c.c.Commit(j, step); err != nil {
		return err
	}
	if err := c.Store.Save(ctx, j, step); err != nil {
		c.c.writeFailed(j, err)
		return err
	}
	return c.c.Committed(j, step)
}

func (c *crashStore) Load(ctx context.Context, id job.ID) (job.Job, error) {
	if err := c.c.Alive(); err != nil {
		return job.Job{}, err
	}
	return c.Store.Load(ctx, id)
}

func (c *crashStore) List(ctx context.Context, q store.Query) ([]store.Info, error) {
	if err := c.c.Alive(); err != nil {
		return nil, err
	}
	return store.List(ctx, c.Store, q)
}

func (c *crashStore) History(ctx context.Context, id job.ID) (store.History, error) {
	if err := c.c.Alive(); err != nil {
		return store.History{}, err
	}
	return store.LoadHistory(ctx, c.Store, id)
}

func (c *crashStore) Delete(ctx context.Context, id job.ID) error {
	if err := c.c.Alive(); err != nil {
		return err
	}
	return store.Delete(ctx, c.Store, id)
}

// crashing returns cfg for a runner that dies of a crash at the commit
// for which at is true (n counts commits of steps from 1): the crash is
// given to the factory (Config.Crash) when it injects crashes itself,
// else injected through a wrapper of cfg.Store.
func (s *suite) crashing(cfg Config, afterWrite bool, at func(n int, j job.Job, step job.Step) bool) (Config, *Crash) {
	c := newCrash(afterWrite, at)
	if s.injectsCrashes {
		cfg.Crash = c
	} else {
		cfg.Store = &crashStore{Store: cfg.Store, c: c}
	}
	return cfg, c
}

// crashed stops a runner whose store died and logs what Run returned: a
// runner may stop on its own when its store fails, and must stop when
// told to.
func crashed(t *testing.T, r *running) {
	t.Helper()
	t.Logf("the crashed runner's Run returned: %v", r.stop(t))
}

// skipUnlessCrashed waits for the crash, and skips the rest of a
// scenario whose crash point was never reached because the runner commits
// without Store.Save (one atomic operation on a store of its own) and its
// factory does not inject crashes itself, so that nothing can put a crash
// between the write and the dispatch. A factory that says it injects
// crashes (InjectsCrashes) and whose runner finishes the job without
// crashing fails the test: its hook does nothing.
func (s *suite) skipUnlessCrashed(t *testing.T, c *Crash, r *running, id job.ID) {
	t.Helper()
	wctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	done := make(chan struct{})
	go func() {
		r.Wait(wctx, id)
		close(done)
	}()
	select {
	case <-c.crashed:
	case <-done:
		// Wait may also return because the store died: a runner whose Wait
		// loads from the store sees the crash before the crashing Save
		// has written and closed c.crashed.
		c.mu.Lock()
		dead := c.dead
		c.mu.Unlock()
		switch {
		case !dead && s.injectsCrashes:
			t.Fatalf("job %s ended and the runner never crashed, though its factory injects crashes (InjectsCrashes): its fault hook is not asked at the commit", id)
		case !dead:
			t.Skipf("job %s ended and the runner never called Store.Save: the crash point cannot be injected through the store (see InjectsCrashes)", id)
		}
		<-c.crashed
	}
}

// crashAfterSave: the process dies after a step is saved and before its
// actions are dispatched. The 2nd commit of a step is written, and the
// process dies then: that commit and everything after it fail. A new runner on the store
// dispatches the saved-but-undispatched action when it resumes the job,
// and the job completes: every action ran once (none was dispatched by
// the dead runner after its failed commit), and each step is in the
// history once.
func (s *suite) crashAfterSave(t *testing.T) {
	rec := newRecorder(t)
	st := s.newStore(t)
	ctx := ctxFor(t)
	const id = "crash-save"
	cfg, cs := s.crashing(Config{Store: st, Registry: rec.reg, DrainTimeout: -1}, true, func(n int, _ job.Job, _ job.Step) bool { return n == 2 })
	r1 := s.launch(t, cfg)
	must(t, r1.Submit(ctx, id, ast.Seq(ast.Act("noop", 1), ast.Act("noop", 2), ast.Act("noop", 3), ast.Act("noop", 4))))
	s.skipUnlessCrashed(t, cs, r1, id)
	at, _ := cs.crash(t)
	crashed(t, r1)

	stored, err := st.Load(ctx, id)
	must(t, err)
	if stored.Version() != at.Version() {
		t.Fatalf("the crashed save left the job at v%d, want v%d", stored.Version(), at.Version())
	}
	out := stored.Outstanding()
	if len(out) == 0 {
		t.Fatalf("the saved step has no actions to dispatch:\n%s", job.Describe(stored))
	}
	for _, a := range out {
		if n := rec.runs(a.Key()); n != 0 {
			t.Errorf("action %s ran %d times, though the commit that made it failed", a.ID, n)
		}
	}

	r2 := s.start(t, Config{Store: st, Registry: rec.reg, DrainTimeout: time.Second})
	j := waitDone(t, ctx, r2, st, id, "the new runner dispatches the saved, undispatched action")
	wantStatus(t, j, job.StatusSucceeded)
	wantRuns(t, rec, j, nil)
	checkHistory(t, ctx, st, j)
}

// crashBeforeResultSaved: the process dies after an action was dispatched
// and ran, before its result was saved. The commit whose step holds that
// action's result fails, without writing (and every call after it). A new runner runs the action again and the job
// completes: that action ran twice, every other once, and each step is in
// the history once.
func (s *suite) crashBeforeResultSaved(t *testing.T) {
	rec := newRecorder(t)
	st := s.newStore(t)
	ctx := ctxFor(t)
	const id, lost = "crash-result", "seq[1]#1"
	cfg, cs := s.crashing(Config{Store: st, Registry: rec.reg, DrainTimeout: -1}, false, func(_ int, _ job.Job, step job.Step) bool {
		return slices.ContainsFunc(step.Results, func(r job.Result) bool { return r.ActionID == lost })
	})
	r1 := s.launch(t, cfg)
	must(t, r1.Submit(ctx, id, ast.Seq(ast.Act("noop", 1), ast.Act("noop", 2), ast.Act("noop", 3))))
	s.skipUnlessCrashed(t, cs, r1, id)
	cs.crash(t)
	crashed(t, r1)

	stored, err := st.Load(ctx, id)
	must(t, err)
	if out := stored.Outstanding(); len(out) != 1 || out[0].ID != lost {
		t.Fatalf("after the crash, outstanding %v, want only %s, whose result was lost:\n%s", out, lost, job.Describe(stored))
	}
	if n := rec.runs(string(id) + "/" + lost); n != 1 {
		t.Fatalf("before the crash %s ran %d times, want 1", lost, n)
	}

	r2 := s.start(t, Config{Store: st, Registry: rec.reg, DrainTimeout: time.Second})
	j := waitDone(t, ctx, r2, st, id, "the new runner runs the action whose result was lost")
	wantStatus(t, j, job.StatusSucceeded)
	wantRuns(t, rec, j, map[string]int{lost: 2})
	checkHistory(t, ctx, st, j)
}

// redeliveryRedispatches: a step saved whose actions were never
// dispatched is rescued by its results delivered again (Deliver, as an
// external worker would after it heard no acknowledgement), with no
// recovery in between.
//
// The suite cannot make a runner's dispatch itself fail: dispatching is
// the runner's own business, behind no interface the suite holds. What it
// can do leaves the same state a failed dispatch leaves: the first
// delivery's result is saved and the process dies before dispatching
// (a crash after the write). A second runner, told not to resume
// (NoResume), gets the same result again: it must ignore it as a duplicate
// and dispatch the job's outstanding action, or the job stays stranded.
// Once that action runs, the result is delivered a third time, while it is
// in flight: the runner re-dispatches it again, which a runner with
// idempotent dispatch ignores (the extra runs are logged, not failed).
func (s *suite) redeliveryRedispatches(t *testing.T) {
	rec := newRecorder(t)
	entered := make(chan job.Action, 1)
	// "outside" is done by an external system: its handler only waits, and
	// its result comes in through Deliver.
	must(t, rec.reg.Register("outside", func(ctx context.Context, a job.Action) ([]byte, error) {
		select {
		case entered <- a:
		default:
		}
		<-ctx.Done()
		return nil, ctx.Err()
	}))
	g := newGate()
	must(t, rec.reg.Register("gate", g.handler))
	st := s.newStore(t)
	ctx := ctxFor(t)
	const id = "redeliver"
	cfg, cs := s.crashing(Config{Store: st, Registry: rec.reg, DrainTimeout: -1, NoResume: true}, true, func(n int, _ job.Job, _ job.Step) bool { return n == 1 })
	r1 := s.launch(t, cfg)
	must(t, r1.Submit(ctx, id, ast.Seq(ast.Act("outside", nil), ast.Act("gate", nil))))
	a := waitFor(t, entered, "the outside action to start")
	res := a.Succeed([]byte(`"done outside"`))
	if err := r1.Deliver(ctx, res); err != nil {
		t.Logf("first Deliver: %v", err)
	}
	s.skipUnlessCrashed(t, cs, r1, id)
	cs.crash(t)
	crashed(t, r1)
	stored, err := st.Load(ctx, id)
	must(t, err)
	if out := stored.Outstanding(); len(out) != 1 || out[0].ID != "seq[1]#1" || g.count() != 0 {
		t.Fatalf("after the crash: outstanding %v and the gate ran %d times; want seq[1]#1 saved, never run:\n%s",
			out, g.count(), job.Describe(stored))
	}

	obs := newObserver()
	r2 := s.start(t, Config{Store: st, Registry: rec.reg, DrainTimeout: time.Second, NoResume: true, Hooks: obs.hooks()})
	must(t, r2.Deliver(ctx, res))
	// Bounded: without the re-dispatch nothing ever runs the gate.
	select {
	case <-g.entered:
	case <-time.After(finishTimeout):
		t.Fatalf("the redelivered result did not re-dispatch the outstanding action: the job is stranded (ignored as duplicate %d times)",
			obs.ignored(id, res.ActionID, job.IgnoredDuplicate))
	}
	if n := obs.ignored(id, res.ActionID, job.IgnoredDuplicate); n != 1 {
		t.Errorf("the redelivered result was reported ignored as a duplicate %d times, want 1", n)
	}
	// Again while the action runs.
	must(t, r2.Deliver(ctx, res))
	eventually(t, 10*time.Second, func() bool { return obs.ignored(id, res.ActionID) >= 2 }, "the third delivery is ignored")
	close(g.release)
	j := waitDone(t, ctx, r2, st, id, "the re-dispatched action ends")
	wantStatus(t, j, job.StatusSucceeded)
	if n := g.count(); n != 1 {
		t.Logf("the re-dispatched action ran %d times: a redelivery while it ran dispatched it again (at-least-once allows it)", n)
	}
	j.Walk(func(n job.NodeInfo) bool {
		if n.Path == "seq[0]" && string(n.Output) != `"done outside"` {
			t.Errorf("the outside action's output is %s, want the delivered \"done outside\"", n.Output)
		}
		return true
	})
	checkHistory(t, ctx, st, j)
}
