package runnertest

import (
	"context"
	"encoding/json"
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

// The scenarios of this file run the language's features on a runner:
// retries waiting on the runner's timers, an attempt's timeout, a deadline
// that stops a subtree, a job cancelled mid-flight, at-most-once actions
// whose runner died, and outputs passed on as inputs. What the reducer
// decides is proved in package job; these check that the runner does what
// the reducer asks (arms timers and fires them when due, gives handlers
// their deadlines, cancels the contexts of stopped actions, reports an
// at-most-once action it cannot vouch for as lost) and hands the data
// through.

// watcher is a handler that blocks until its context ends and records why
// it ended (context.Cause), by action ID.
type watcher struct {
	entered chan job.Action
	mu      sync.Mutex
	started map[string]bool
	causes  map[string]error
}

func newWatcher() *watcher {
	return &watcher{entered: make(chan job.Action, 64), started: map[string]bool{}, causes: map[string]error{}}
}

func (w *watcher) handler(ctx context.Context, a job.Action) ([]byte, error) {
	w.mu.Lock()
	w.started[a.ID] = true
	w.mu.Unlock()
	select {
	case w.entered <- a:
	default:
	}
	<-ctx.Done()
	w.mu.Lock()
	w.causes[a.ID] = context.Cause(ctx)
	w.mu.Unlock()
	return nil, ctx.Err()
}

// wantStopped checks that the handlers of the actions ids ended because the
// runner stopped them (runner.ErrStopped); it waits for them a while, as
// a handler may return after the job has been saved.
func (w *watcher) wantStopped(t *testing.T, ids ...string) {
	t.Helper()
	w.wantStoppedIfStarted(t, true, ids...)
}

// wantStoppedIfStarted is wantStopped for the handlers that started, when
// some may not have (all false): an action whose stop comes before any
// worker took it is never run, and its handler's absence is logged, not
// failed. With all set, every handler must have started.
func (w *watcher) wantStoppedIfStarted(t *testing.T, all bool, ids ...string) {
	t.Helper()
	eventually(t, 10*time.Second, func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		for _, id := range ids {
			if _, ok := w.causes[id]; !ok && (all || w.started[id]) {
				return false
			}
		}
		return true
	}, fmt.Sprintf("the handlers of %v return", ids))
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, id := range ids {
		if !w.started[id] {
			t.Logf("the handler of %s never started: its stop came before a worker took it", id)
			continue
		}
		if !errors.Is(w.causes[id], runner.ErrStopped) {
			t.Errorf("handler of %s ended with cause %v, want runner.ErrStopped", id, w.causes[id])
		}
	}
}

// resultIDs returns the IDs of the results in job id's history, in the
// order they applied, or nil if the store keeps no history.
func resultIDs(t *testing.T, ctx context.Context, st store.Store, id job.ID) []string {
	t.Helper()
	h, err := store.LoadHistory(ctx, st, id)
	if errors.Is(err, errors.ErrUnsupported) {
		t.Logf("the store keeps no history: not checking job %s's", id)
		return nil
	}
	must(t, err)
	var ids []string
	for _, s := range h.Steps {
		for _, r := range s.Results {
			ids = append(ids, r.ActionID)
		}
	}
	return ids
}

// nodeAt returns the node of j at path.
func nodeAt(t *testing.T, j job.Job, path string) job.NodeInfo {
	t.Helper()
	var found *job.NodeInfo
	j.Walk(func(n job.NodeInfo) bool {
		if n.Path == path {
			found = &n
			return false
		}
		return true
	})
	if found == nil {
		t.Fatalf("job %s has no node at %q", j.ID(), path)
	}
	return *found
}

// wantFailure checks that j failed, with the failure of the action at
// path, of kind kind.
func wantFailure(t *testing.T, j job.Job, path, kind string) {
	t.Helper()
	wantStatus(t, j, job.StatusFailed)
	f, ok := j.Failure()
	if !ok || f.Path != path || f.Kind != kind {
		t.Fatalf("job failure %+v (ok %v), want one at %q of kind %q\n%s", f, ok, path, kind, job.Describe(j))
	}
}

// retryBackoff: an action that fails twice and then succeeds, with a
// retry policy, runs three times; each attempt waits its back-off on a
// runner timer (20 ms, then 40 ms: a timer never fires before it is due,
// and it is due that long after the failed attempt ended), and the history
// holds each attempt and each timer's firing between them.
func (s *suite) retryBackoff(t *testing.T) {
	rec := newRecorder(t)
	var mu sync.Mutex
	var began, ended []time.Time
	must(t, rec.reg.Register("flaky", func(ctx context.Context, a job.Action) ([]byte, error) {
		mu.Lock()
		defer mu.Unlock()
		began = append(began, time.Now())
		defer func() { ended = append(ended, time.Now()) }()
		if len(began) < 3 {
			return nil, runner.WithKind(errors.New("503 from the payment provider"), "unavailable")
		}
		return []byte(`"paid"`), nil
	}))
	st := s.newStore(t)
	r := s.start(t, Config{Store: st, Registry: rec.reg, DrainTimeout: time.Second})
	ctx := ctxFor(t)
	root := ast.Act("flaky", nil).Named("pay").WithRetry(ast.Retry{Attempts: 5, Initial: 20 * time.Millisecond, Multiplier: 2, Max: time.Second})
	must(t, r.Submit(ctx, "retry", root))
	j := waitDone(t, ctx, r, st, "retry", "the third attempt succeeds")
	wantStatus(t, j, job.StatusSucceeded)
	if n := nodeAt(t, j, "").Attempt; n != 3 {
		t.Errorf("attempts %d, want 3", n)
	}
	if out, ok := j.Output("pay"); !ok || string(out) != `"paid"` {
		t.Errorf("output of pay %s (%v), want \"paid\"", out, ok)
	}
	mu.Lock()
	for i, want := range []time.Duration{20 * time.Millisecond, 40 * time.Millisecond} {
		if i+1 >= len(began) {
			break
		}
		if waited := began[i+1].Sub(ended[i]); waited < want {
			t.Errorf("attempt %d began %s after attempt %d ended, before its back-off of %s", i+2, waited, i+1, want)
		}
	}
	if len(began) != 3 {
		t.Errorf("the handler ran %d times, want 3", len(began))
	}
	mu.Unlock()
	if ids := resultIDs(t, ctx, st, "retry"); ids != nil {
		want := []string{"root#1", "root@retry#2", "root#2", "root@retry#3", "root#3"}
		if strings.Join(ids, " ") != strings.Join(want, " ") {
			t.Errorf("history %v, want %v", ids, want)
		}
	}
	if ts := j.Timers(); len(ts) != 0 {
		t.Errorf("finished job still has timers %v", ts)
	}
	checkHistory(t, ctx, st, j)
}

// timeout: an attempt that overruns its leaf's timeout has its context's
// deadline exceeded and fails with kind timeout; with a retry policy the
// next attempt runs (and here succeeds); without one the job fails with
// that kind.
func (s *suite) timeout(t *testing.T) {
	rec := newRecorder(t)
	var mu sync.Mutex
	calls := map[string]int{}
	must(t, rec.reg.Register("slow", func(ctx context.Context, a job.Action) ([]byte, error) {
		mu.Lock()
		calls[a.ID]++
		mu.Unlock()
		if _, ok := ctx.Deadline(); !ok {
			return nil, errors.New("no deadline on the handler's context")
		}
		if a.Attempt == 1 || string(a.Payload) == `"always"` {
			<-ctx.Done()
			return nil, ctx.Err()
		}
		return []byte(`"fast enough"`), nil
	}))
	st := s.newStore(t)
	r := s.start(t, Config{Store: st, Registry: rec.reg, DrainTimeout: time.Second})
	ctx := ctxFor(t)
	root := ast.Seq(
		ast.Act("slow", "once").WithTimeout(30*time.Millisecond).WithRetry(ast.Retry{Attempts: 3, Initial: time.Millisecond}),
		ast.Act("slow", "always").WithTimeout(30*time.Millisecond),
	)
	must(t, r.Submit(ctx, "timeout", root))
	j := waitDone(t, ctx, r, st, "timeout", "both leaves time out")
	wantFailure(t, j, "seq[1]", job.KindTimeout)
	if n := nodeAt(t, j, "seq[0]"); n.Status != job.StatusSucceeded || n.Attempt != 2 {
		t.Errorf("seq[0] %s after %d attempts, want succeeded after 2\n%s", n.Status, n.Attempt, job.Describe(j))
	}
	mu.Lock()
	if calls["seq[0]#1"] != 1 || calls["seq[0]#2"] != 1 || calls["seq[1]#1"] != 1 {
		t.Errorf("calls %v, want seq[0]#1, seq[0]#2 and seq[1]#1 once each", calls)
	}
	mu.Unlock()
	checkHistory(t, ctx, st, j)
}

// deadline: a subtree whose deadline runs out while its actions are in
// flight fails with kind deadline: the handlers' contexts are cancelled
// (cause runner.ErrStopped), nothing after it starts, the finally of the
// try around it runs, and a result delivered late for a stopped action
// changes nothing. A deadline that does not run out changes nothing.
func (s *suite) deadline(t *testing.T) {
	rec := newRecorder(t)
	w := newWatcher()
	must(t, rec.reg.Register("watch", w.handler))
	obs := newObserver()
	st := s.newStore(t)
	r := s.start(t, Config{Store: st, Registry: rec.reg, DrainTimeout: time.Second, Hooks: obs.hooks()})
	ctx := ctxFor(t)
	root := ast.Seq(
		ast.Try(ast.Par(ast.Act("watch", "a"), ast.Act("watch", "b")).WithDeadline(50*time.Millisecond),
			ast.Finally(ast.Act("log", "cleanup"))),
		ast.Act("log", "never"),
	)
	must(t, r.Submit(ctx, "deadline", root))
	j := waitDone(t, ctx, r, st, "deadline", "the deadline stops the par")
	wantStatus(t, j, job.StatusFailed)
	f, _ := j.Failure()
	if f.Kind != job.KindDeadline || f.Path != "seq[0].body" {
		t.Errorf("failure %+v, want the deadline of seq[0].body", f)
	}
	wantLogged(t, rec, "cleanup")
	// The deadline may run out before a worker took an action of the par
	// (a runner slow to start): that action is then never run.
	w.wantStoppedIfStarted(t, false, "seq[0].body.par[0]#1", "seq[0].body.par[1]#1")

	late := job.Result{JobID: "deadline", ActionID: "seq[0].body.par[0]#1", Output: []byte(`"late"`)}
	must(t, r.Deliver(ctx, late))
	eventually(t, 10*time.Second, func() bool {
		return obs.ignored("deadline", late.ActionID, job.IgnoredStopped, job.IgnoredJobDone) == 1
	}, "the late result of a stopped action is ignored")
	after, err := st.Load(ctx, "deadline")
	must(t, err)
	if after.Version() != j.Version() {
		t.Errorf("a late result of a stopped action changed the job: v%d, then v%d", j.Version(), after.Version())
	}
	checkHistory(t, ctx, st, j)

	// The same subtree, with time to spare.
	kept := ast.Seq(ast.Par(logs("x", "y")...).WithDeadline(time.Minute), ast.Act("log", "z"))
	must(t, r.Submit(ctx, "in-time", kept))
	j = waitDone(t, ctx, r, st, "in-time", "a deadline that does not run out")
	wantStatus(t, j, job.StatusSucceeded)
	if ts := j.Timers(); len(ts) != 0 {
		t.Errorf("finished job still has timers %v", ts)
	}
}

// cancel: a job cancelled while its actions run stops them (their
// contexts are cancelled, cause runner.ErrStopped), runs the finally of
// the try it had entered, and ends cancelled with the reason. Cancelling
// it again is not an error; cancelling a finished job wraps
// runner.ErrFinished; cancelling a job that does not exist wraps
// store.ErrNotFound.
func (s *suite) cancel(t *testing.T) {
	rec := newRecorder(t)
	w := newWatcher()
	must(t, rec.reg.Register("watch", w.handler))
	st := s.newStore(t)
	r := s.start(t, Config{Store: st, Registry: rec.reg, DrainTimeout: time.Second})
	ctx := ctxFor(t)
	root := ast.Seq(
		ast.Par(ast.Act("watch", "a"),
			ast.Try(ast.Act("watch", "b"), ast.Rescue(ast.Act("log", "rescue")), ast.Finally(ast.Act("log", "cleanup")))),
		ast.Act("log", "never"),
	)
	must(t, r.Submit(ctx, "cancel", root))
	waitFor(t, w.entered, "the first action to start")
	waitFor(t, w.entered, "the second action to start")
	const reason = "the customer changed their mind"
	must(t, r.Cancel(ctx, "cancel", reason))
	j := waitDone(t, ctx, r, st, "cancel", "the cancelled job ends once its finally has run")
	wantStatus(t, j, job.StatusCancelled)
	if got, ok := j.Cancelled(); !ok || got != reason {
		t.Errorf("Cancelled() = %q, %v; want %q", got, ok, reason)
	}
	wantLogged(t, rec, "cleanup")
	w.wantStopped(t, "seq[0].par[0]#1", "seq[0].par[1].body#1")
	if err := r.Cancel(ctx, "cancel", "again"); err != nil {
		t.Errorf("cancelling a cancelled job again: %v", err)
	}
	if got, _ := j.Cancelled(); got != reason {
		t.Errorf("a second cancel changed the reason to %q", got)
	}
	checkHistory(t, ctx, st, j)

	must(t, r.Submit(ctx, "finished", ast.Act("log", "done")))
	waitDone(t, ctx, r, st, "finished", "a one-action job")
	if err := r.Cancel(ctx, "finished", "too late"); !errors.Is(err, runner.ErrFinished) {
		t.Errorf("cancelling a finished job: err = %v, want runner.ErrFinished", err)
	}
	if err := r.Cancel(ctx, "nosuchjob", "why not"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("cancelling a job that does not exist: err = %v, want store.ErrNotFound", err)
	}
}

// atMostOnceAfterCrash: a runner killed while at-most-once actions run
// (no drain: they are handed back, with nothing saved) leaves them
// outstanding; the runner that resumes the jobs does not run them again
// but reports them lost (kind lost). Without a retry policy the job fails
// with that kind; with one, the next attempt runs, explicitly.
func (s *suite) atMostOnceAfterCrash(t *testing.T) {
	rec := newRecorder(t)
	var mu sync.Mutex
	calls := map[string]int{}
	entered := make(chan string, 8)
	open := make(chan struct{})
	must(t, rec.reg.Register("charge", func(ctx context.Context, a job.Action) ([]byte, error) {
		mu.Lock()
		calls[a.Key()]++
		mu.Unlock()
		entered <- a.Key()
		select {
		case <-open:
			return []byte(`"charged"`), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}))
	st := s.newStore(t)
	ctx := ctxFor(t)
	r1 := s.launch(t, Config{Store: st, Registry: rec.reg, DrainTimeout: -1})
	must(t, r1.Submit(ctx, "amo", ast.Act("charge", "x").AtMostOnce()))
	must(t, r1.Submit(ctx, "amo-retry", ast.Act("charge", "y").AtMostOnce().WithRetry(ast.Retry{Attempts: 2, Initial: time.Millisecond})))
	waitFor(t, entered, "an at-most-once action to start")
	waitFor(t, entered, "the other at-most-once action to start")
	if err := r1.stop(t); err != nil {
		t.Fatalf("the killed runner's Run: %v", err)
	}
	close(open)

	r2 := s.start(t, Config{Store: st, Registry: rec.reg, DrainTimeout: time.Second})
	j := waitDone(t, ctx, r2, st, "amo", "the resumed runner reports the action lost")
	wantFailure(t, j, "", job.KindLost)
	k := waitDone(t, ctx, r2, st, "amo-retry", "the retry after the lost attempt")
	wantStatus(t, k, job.StatusSucceeded)
	if n := nodeAt(t, k, "").Attempt; n != 2 {
		t.Errorf("amo-retry: %d attempts, want 2 (the lost one, then its retry)", n)
	}
	mu.Lock()
	defer mu.Unlock()
	for key, want := range map[string]int{"amo/root#1": 1, "amo-retry/root#1": 1, "amo-retry/root#2": 1} {
		if calls[key] != want {
			t.Errorf("%s ran %d times, want %d (runs: %v)", key, calls[key], want, calls)
		}
	}
	checkHistory(t, ctx, st, j)
	checkHistory(t, ctx, st, k)
}

// dataPassing: a named leaf's output reaches the leaves that take it as an
// input, in a sequence and in a dag; a rescue's action carries the failure
// it follows; the job's outputs are there by name when it ends.
func (s *suite) dataPassing(t *testing.T) {
	rec := newRecorder(t)
	type charge struct {
		ID     string `json:"id"`
		Amount int    `json:"amount"`
	}
	must(t, runner.Handle(rec.reg, "charge", func(ctx context.Context, amount int) (charge, error) {
		return charge{ID: "ch_1", Amount: amount}, nil
	}))
	must(t, runner.Handle(rec.reg, "receipt", func(ctx context.Context, _ json.RawMessage) (string, error) {
		c, err := runner.InputAs[charge](ctx, "charge")
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("receipt for %s: %d", c.ID, c.Amount), nil
	}))
	must(t, runner.Handle(rec.reg, "num", func(ctx context.Context, n int) (int, error) { return n, nil }))
	must(t, runner.Handle(rec.reg, "sum", func(ctx context.Context, _ json.RawMessage) (int, error) {
		a, _ := runner.ActionFrom(ctx)
		total := 0
		for _, in := range a.Inputs {
			var n int
			if err := json.Unmarshal(in.Output, &n); err != nil {
				return 0, fmt.Errorf("input %s: %w", in.Name, err)
			}
			total += n
		}
		return total, nil
	}))
	must(t, runner.Handle(rec.reg, "explain", func(ctx context.Context, _ json.RawMessage) (string, error) {
		a, _ := runner.ActionFrom(ctx)
		if a.Failure == nil {
			return "", errors.New("a rescue's action carries no failure")
		}
		return a.Failure.Path + ": " + a.Failure.Message, nil
	}))
	root := ast.Seq(
		ast.Act("charge", 42).Named("charge"),
		ast.Act("receipt", nil).WithInputs("charge").Named("receipt"),
		ast.Dag(
			ast.Act("num", 2).Named("two"),
			ast.Act("num", 3).Named("three"),
			ast.Act("sum", nil).Named("sum").WithAfter("two", "three").WithInputs("two", "three"),
		),
		ast.Try(ast.Act("log", "boom"), ast.Rescue(ast.Act("explain", nil).Named("why"))),
	)
	rec.fail["boom"] = true
	st := s.newStore(t)
	r := s.start(t, Config{Store: st, Registry: rec.reg, DrainTimeout: time.Second})
	ctx := ctxFor(t)
	must(t, r.Submit(ctx, "data", root))
	j := waitDone(t, ctx, r, st, "data", "every step passes its output on")
	wantStatus(t, j, job.StatusSucceeded)
	if got, err := job.OutputAs[string](j, "receipt"); err != nil || got != "receipt for ch_1: 42" {
		t.Errorf("receipt = %q, %v", got, err)
	}
	if got, err := job.OutputAs[int](j, "sum"); err != nil || got != 5 {
		t.Errorf("sum = %d, %v; want 5", got, err)
	}
	if got, err := job.OutputAs[charge](j, "charge"); err != nil || got != (charge{"ch_1", 42}) {
		t.Errorf("charge = %+v, %v", got, err)
	}
	if got, err := job.OutputAs[string](j, "why"); err != nil || got != `seq[3].body: refused "boom"` {
		t.Errorf("why = %q, %v; want the body's failure", got, err)
	}
	checkHistory(t, ctx, st, j)
}

// timerAfterRestart: a retry's wait outlives the runner that armed it. The
// runner is stopped while the leaf waits; the next runner on the store
// arms the timer again when it resumes the job, and the attempt runs once,
// no earlier than it was due.
func (s *suite) timerAfterRestart(t *testing.T) {
	rec := newRecorder(t)
	var mu sync.Mutex
	var began []time.Time
	must(t, rec.reg.Register("flaky", func(ctx context.Context, a job.Action) ([]byte, error) {
		mu.Lock()
		defer mu.Unlock()
		began = append(began, time.Now())
		if a.Attempt == 1 {
			return nil, errors.New("try again later")
		}
		return nil, nil
	}))
	st := s.newStore(t)
	ctx := ctxFor(t)
	const wait = 300 * time.Millisecond
	r1 := s.start(t, Config{Store: st, Registry: rec.reg, DrainTimeout: time.Second})
	must(t, r1.Submit(ctx, "restart", ast.Act("flaky", nil).WithRetry(ast.Retry{Attempts: 2, Initial: wait})))
	var due time.Time
	eventually(t, 10*time.Second, func() bool {
		j, err := st.Load(ctx, "restart")
		if err != nil {
			return false
		}
		due = nodeAt(t, j, "").Retry
		return !due.IsZero()
	}, "the failed first attempt waits for its retry")
	if err := r1.stop(t); err != nil {
		t.Fatalf("Run: %v", err)
	}
	r2 := s.start(t, Config{Store: st, Registry: rec.reg, DrainTimeout: time.Second})
	j := waitDone(t, ctx, r2, st, "restart", "the next runner fires the timer")
	wantStatus(t, j, job.StatusSucceeded)
	mu.Lock()
	defer mu.Unlock()
	if len(began) != 2 {
		t.Fatalf("the handler ran %d times, want 2", len(began))
	}
	if began[1].Before(due) {
		t.Errorf("attempt 2 began at %s, before it was due at %s", began[1].Format(time.RFC3339Nano), due.Format(time.RFC3339Nano))
	}
	checkHistory(t, ctx, st, j)
}
