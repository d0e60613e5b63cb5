package inmem_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	"github.com/batonwf/baton/runner/inmem"
	"github.com/batonwf/baton/runner/runnertest"
	"github.com/batonwf/baton/store"
)

func factory(t *testing.T, cfg runnertest.Config) runnertest.Runner {
	r, err := inmem.New(inmem.Options{
		WorkerOptions: runner.WorkerOptions{Name: cfg.Name, Registry: cfg.Registry, DrainTimeout: cfg.DrainTimeout, Hooks: cfg.Hooks, Workers: 8},
		Store:         cfg.Store,
		NoResume:      cfg.NoResume,
	})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestConformanceMemory(t *testing.T) {
	runnertest.Run(t, func(t *testing.T) store.Store { return store.NewMemory() }, factory)
}

// The suite with runner/inmem on store/bolt runs in store/bolt's tests
// (TestConformanceInmem), whose crash scenarios crash bolt's commit
// through a hook only that package's tests can set.

// storeWithoutHistory hides the optional capabilities of the store under
// it except listing (which inmem needs to resume jobs at start): the suite
// must skip its history checks, not fail.
type storeWithoutHistory struct{ store.Store }

func (s storeWithoutHistory) List(ctx context.Context, q store.Query) ([]store.Info, error) {
	return store.List(ctx, s.Store, q)
}

func TestConformanceStoreWithoutHistory(t *testing.T) {
	runnertest.Run(t, func(t *testing.T) store.Store { return storeWithoutHistory{store.NewMemory()} }, factory)
}

func startRunner(t *testing.T, o inmem.Options) (*inmem.Runner, chan error, context.CancelFunc) {
	t.Helper()
	r, err := inmem.New(o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- r.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		r.Close()
	})
	return r, ran, cancel
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// TestResultSavedWhenActionEnds: a result is applied as soon as its action
// ends, not when some later action of the same worker ends. Two worker
// slots, a par of three fast actions and one that blocks: while it blocks,
// the three results are saved. (With one slot the blocking action may
// take it first, and the others wait for it.) (Before, a worker with a backlog took up to eight
// actions at once and saved their results together, after the last.)
func TestResultSavedWhenActionEnds(t *testing.T) {
	reg := runner.NewRegistry()
	must(t, reg.Register("fast", func(context.Context, job.Action) ([]byte, error) { return nil, nil }))
	entered, release := make(chan struct{}), make(chan struct{})
	must(t, reg.Register("block", func(ctx context.Context, a job.Action) ([]byte, error) {
		close(entered)
		<-release
		return nil, nil
	}))
	st := store.NewMemory()
	r, _, _ := startRunner(t, inmem.Options{WorkerOptions: runner.WorkerOptions{Registry: reg, Workers: 2}, Store: st})
	ctx := testCtx(t)
	must(t, r.Submit(ctx, "j", ast.Par(ast.Act("fast", 1), ast.Act("fast", 2), ast.Act("fast", 3), ast.Act("block", nil))))
	<-entered
	// The fast actions may run before or after the blocking one begins;
	// their results are saved as each ends: all three while it blocks.
	var j job.Job
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		var err error
		j, err = st.Load(ctx, "j")
		must(t, err)
		if settled, _ := j.Progress(); settled == 3 || time.Now().After(deadline) {
			break
		}
	}
	if settled, _ := j.Progress(); settled != 3 {
		t.Errorf("while the last action runs, %d results are saved, want the 3 that finished:\n%s", settled, job.Describe(j))
	}
	close(release)
	if j, err := r.Wait(ctx, "j"); err != nil || j.Status() != job.StatusSucceeded {
		t.Fatalf("Wait: %v %v", j, err)
	}
}

// TestStoppedRunner: once Run has returned, Submit, Deliver and Resume
// fail with ErrClosed and Wait for an unfinished job returns at once with
// ErrClosed, instead of blocking forever; a finished job is still returned.
func TestStoppedRunner(t *testing.T) {
	reg := runner.NewRegistry()
	must(t, reg.Register("fast", func(context.Context, job.Action) ([]byte, error) { return nil, nil }))
	block := make(chan struct{})
	must(t, reg.Register("block", func(ctx context.Context, a job.Action) ([]byte, error) {
		select {
		case <-block:
		case <-ctx.Done():
		}
		return nil, ctx.Err()
	}))
	st := store.NewMemory()
	r, ran, cancel := startRunner(t, inmem.Options{WorkerOptions: runner.WorkerOptions{Registry: reg, DrainTimeout: -1}, Store: st})
	ctx := testCtx(t)
	must(t, r.Submit(ctx, "done", ast.Act("fast", nil)))
	if _, err := r.Wait(ctx, "done"); err != nil {
		t.Fatal(err)
	}
	must(t, r.Submit(ctx, "stuck", ast.Act("block", nil)))
	cancel()
	if err := <-ran; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if err := r.Submit(ctx, "late", ast.Act("fast", nil)); !errors.Is(err, inmem.ErrClosed) {
		t.Errorf("Submit after Run returned: %v, want ErrClosed", err)
	}
	if _, err := st.Load(ctx, "late"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the refused job was stored: %v", err)
	}
	if err := r.Deliver(ctx, job.Result{JobID: "stuck", ActionID: "root#1"}); !errors.Is(err, inmem.ErrClosed) {
		t.Errorf("Deliver after Run returned: %v, want ErrClosed", err)
	}
	if err := r.Resume(ctx, "stuck"); !errors.Is(err, inmem.ErrClosed) {
		t.Errorf("Resume after Run returned: %v, want ErrClosed", err)
	}
	waited := make(chan error, 1)
	go func() {
		_, err := r.Wait(ctx, "stuck")
		waited <- err
	}()
	select {
	case err := <-waited:
		if !errors.Is(err, inmem.ErrClosed) {
			t.Errorf("Wait for an unfinished job after Run returned: %v, want ErrClosed", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Wait blocks after Run returned")
	}
	if j, err := r.Wait(ctx, "done"); err != nil || !j.Done() {
		t.Errorf("Wait for a finished job after Run returned: %v, %v", j, err)
	}
	if err := r.Run(ctx); !errors.Is(err, inmem.ErrRunning) {
		t.Errorf("second Run: %v, want ErrRunning", err)
	}
}

// TestErrorsWrapRunners: the runner's lifecycle errors are the runner
// kit's (runner.Lifecycle), so a caller tests for them as for any
// runner's: runner.ErrClosed after Close (before Run too), and
// runner.ErrRunning for a second Run.
func TestErrorsWrapRunners(t *testing.T) {
	reg := runner.NewRegistry()
	must(t, reg.Register("fast", func(context.Context, job.Action) ([]byte, error) { return nil, nil }))
	r, err := inmem.New(inmem.Options{WorkerOptions: runner.WorkerOptions{Registry: reg}})
	must(t, err)
	ctx := testCtx(t)
	must(t, r.Close())
	must(t, r.Close()) // twice: nothing
	if err := r.Submit(ctx, "j", ast.Act("fast", nil)); !errors.Is(err, runner.ErrClosed) || !errors.Is(err, inmem.ErrClosed) {
		t.Errorf("Submit after Close = %v, want inmem.ErrClosed wrapping runner.ErrClosed", err)
	}
	if err := r.Run(ctx); err != nil {
		t.Errorf("Run after Close = %v, want nil at once", err)
	}
	r2, err := inmem.New(inmem.Options{WorkerOptions: runner.WorkerOptions{Registry: reg}})
	must(t, err)
	runCtx, cancel := context.WithCancel(ctx)
	ran := make(chan error, 2)
	for range 2 {
		go func() { ran <- r2.Run(runCtx) }()
	}
	second := <-ran // the one that lost returns at once
	if !errors.Is(second, runner.ErrRunning) || !errors.Is(second, inmem.ErrRunning) {
		t.Errorf("second Run = %v, want inmem.ErrRunning wrapping runner.ErrRunning", second)
	}
	cancel()
	must(t, <-ran)
}

// TestWaitBeforeCloseWithoutRun: Close without Run wakes waiters.
func TestWaitBeforeCloseWithoutRun(t *testing.T) {
	reg := runner.NewRegistry()
	must(t, reg.Register("fast", func(context.Context, job.Action) ([]byte, error) { return nil, nil }))
	r, err := inmem.New(inmem.Options{WorkerOptions: runner.WorkerOptions{Registry: reg}})
	must(t, err)
	ctx := testCtx(t)
	must(t, r.Submit(ctx, "j", ast.Act("fast", nil))) // queued; no Run yet
	waited := make(chan error, 1)
	go func() {
		_, err := r.Wait(ctx, "j")
		waited <- err
	}()
	for deadline := time.Now().Add(10 * time.Second); r.Waiting("j") == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("Wait did not start waiting")
		}
	}
	must(t, r.Close())
	select {
	case err := <-waited:
		if !errors.Is(err, inmem.ErrClosed) {
			t.Errorf("Wait across Close: %v, want ErrClosed", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Wait blocks after Close")
	}
}

// brokenStore fails every Save after the first few with an I/O error, as a
// full disk does.
type brokenStore struct {
	*store.Memory
	mu    sync.Mutex
	saves int
	after int
}

var errDiskFull = errors.New("write baton.db: no space left on device")

func (b *brokenStore) Save(ctx context.Context, j job.Job, st job.Step) error {
	b.mu.Lock()
	b.saves++
	n := b.saves
	b.mu.Unlock()
	if n > b.after {
		return errDiskFull
	}
	return b.Memory.Save(ctx, j, st)
}

// TestStoreFailureStopsRunner: a store that fails ends Run with its error,
// wakes Wait with it, and leaves the job as last saved; nothing hangs and
// nothing is retried against the failing store.
func TestStoreFailureStopsRunner(t *testing.T) {
	reg := runner.NewRegistry()
	must(t, reg.Register("fast", func(context.Context, job.Action) ([]byte, error) { return nil, nil }))
	st := &brokenStore{Memory: store.NewMemory(), after: 2}
	r, ran, _ := startRunner(t, inmem.Options{WorkerOptions: runner.WorkerOptions{Registry: reg, Workers: 2}, Store: st})
	ctx := testCtx(t)
	must(t, r.Submit(ctx, "j", ast.Seq(ast.Act("fast", 1), ast.Act("fast", 2), ast.Act("fast", 3), ast.Act("fast", 4))))
	_, err := r.Wait(ctx, "j")
	if !errors.Is(err, inmem.ErrClosed) || !errors.Is(err, errDiskFull) {
		t.Errorf("Wait: %v, want ErrClosed and the store's error", err)
	}
	select {
	case err := <-ran:
		if !errors.Is(err, errDiskFull) || !strings.Contains(err.Error(), "job j:") {
			t.Errorf("Run: %v, want the store's error naming the job", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not stop after the store failed")
	}
	j, err := st.Memory.Load(ctx, "j")
	must(t, err)
	if j.Version() != 3 || j.Done() {
		t.Errorf("the job is not as last saved (v3, running): %v", j)
	}
	st.mu.Lock()
	if st.saves != 3 {
		t.Errorf("%d saves, want 3: a failed save must not be retried", st.saves)
	}
	st.mu.Unlock()
}

// TestHandlerSeesItsAction: a typed handler reaches its action through
// the context: job, ID, attempt and an idempotency key that names the
// job's incarnation, so a job made again under the same ID gets new keys.
func TestHandlerSeesItsAction(t *testing.T) {
	reg := runner.NewRegistry()
	var mu sync.Mutex
	var seen []job.Action
	must(t, runner.Handle(reg, "charge", func(ctx context.Context, cents int) (string, error) {
		a, ok := runner.ActionFrom(ctx)
		if !ok {
			return "", errors.New("no action in the context")
		}
		mu.Lock()
		seen = append(seen, a)
		mu.Unlock()
		return a.IdempotencyKey(), nil
	}))
	st := store.NewMemory()
	r, _, _ := startRunner(t, inmem.Options{WorkerOptions: runner.WorkerOptions{Registry: reg}, Store: st})
	ctx := testCtx(t)
	var keys []string
	for round := range 2 {
		must(t, r.Submit(ctx, "order-7", ast.Seq(ast.Act("charge", 500))))
		j, err := r.Wait(ctx, "order-7")
		must(t, err)
		if j.Status() != job.StatusSucceeded {
			t.Fatalf("round %d: %s", round, job.Describe(j))
		}
		mu.Lock()
		a := seen[len(seen)-1]
		mu.Unlock()
		if a.JobID != "order-7" || a.ID != "seq[0]#1" || a.Attempt != 1 || a.Incarnation != j.Incarnation() {
			t.Errorf("round %d: handler saw %+v, job incarnation %x", round, a, j.Incarnation())
		}
		keys = append(keys, a.IdempotencyKey())
		must(t, store.Delete(ctx, st, "order-7"))
	}
	if keys[0] == keys[1] || !strings.HasPrefix(keys[0], "order-7/") || !strings.HasSuffix(keys[0], "/seq[0]") {
		t.Errorf("idempotency keys %q: want order-7/<incarnation>/seq[0], different for the job made again", keys)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// pausingStore holds Create, after it has stored the job, until release is
// closed: the moment between a commit and the queueing of its actions.
type pausingStore struct {
	*store.Memory
	created chan struct{}
	release chan struct{}
}

func (p *pausingStore) Create(ctx context.Context, j job.Job) error {
	err := p.Memory.Create(ctx, j)
	close(p.created)
	<-p.release
	return err
}

// TestRecoveryDuringCommitRunsOnce: a recovery that loads a job between
// another goroutine's commit and its queueing must not make the action
// run twice (queued by the recovery, run and applied, then queued again by
// the commit).
func TestRecoveryDuringCommitRunsOnce(t *testing.T) {
	reg := runner.NewRegistry()
	var mu sync.Mutex
	runs := 0
	must(t, reg.Register("count", func(context.Context, job.Action) ([]byte, error) {
		mu.Lock()
		runs++
		mu.Unlock()
		return nil, nil
	}))
	st := &pausingStore{Memory: store.NewMemory(), created: make(chan struct{}), release: make(chan struct{})}
	r, _, _ := startRunner(t, inmem.Options{WorkerOptions: runner.WorkerOptions{Registry: reg}, Store: st, NoResume: true})
	ctx := testCtx(t)
	submitted := make(chan error, 1)
	go func() { submitted <- r.Submit(ctx, "j", ast.Seq(ast.Act("count", 1), ast.Act("count", 2))) }()
	<-st.created
	resumed := make(chan error, 1)
	go func() { resumed <- r.Resume(ctx, "j") }()
	time.Sleep(100 * time.Millisecond) // a recovery that does not wait has run the action by now
	close(st.release)
	must(t, <-submitted)
	must(t, <-resumed)
	j, err := r.Wait(ctx, "j")
	must(t, err)
	if j.Status() != job.StatusSucceeded {
		t.Fatal(job.Describe(j))
	}
	mu.Lock()
	defer mu.Unlock()
	if runs != 2 {
		t.Errorf("2 actions ran %d times", runs)
	}
}

// TestRedeliveryWhileLiveRunsOnce: results delivered again while the
// action they made outstanding runs re-dispatch it (runner.Engine.Apply),
// and inmem's dispatch is idempotent: the action, live, is not queued a
// second time. (The conformance suite only logs such extra runs, which
// at-least-once allows in general.)
func TestRedeliveryWhileLiveRunsOnce(t *testing.T) {
	reg := runner.NewRegistry()
	must(t, reg.Register("fast", func(context.Context, job.Action) ([]byte, error) { return nil, nil }))
	var mu sync.Mutex
	runs := 0
	entered, release := make(chan struct{}, 4), make(chan struct{})
	must(t, reg.Register("block", func(ctx context.Context, a job.Action) ([]byte, error) {
		mu.Lock()
		runs++
		mu.Unlock()
		entered <- struct{}{}
		<-release
		return nil, nil
	}))
	var counters runner.Counters
	st := store.NewMemory()
	r, _, _ := startRunner(t, inmem.Options{WorkerOptions: runner.WorkerOptions{Registry: reg, Hooks: counters.Hooks(nil)}, Store: st})
	ctx := testCtx(t)
	must(t, r.Submit(ctx, "j", ast.Seq(ast.Act("fast", nil), ast.Act("block", nil))))
	<-entered
	first := job.Result{JobID: "j", ActionID: "seq[0]#1"}
	for range 3 {
		must(t, r.Deliver(ctx, first)) // applied before Deliver returns
	}
	if n := counters.Snapshot().Ignored; n != 3 {
		t.Errorf("%d results ignored, want the 3 redelivered", n)
	}
	close(release)
	j, err := r.Wait(ctx, "j")
	must(t, err)
	if j.Status() != job.StatusSucceeded {
		t.Fatal(job.Describe(j))
	}
	mu.Lock()
	defer mu.Unlock()
	if runs != 1 {
		t.Errorf("the live action ran %d times after 3 redeliveries, want once", runs)
	}
}

// TestLateResultOfADeletedJob: a job is cancelled while its handler runs
// and ignores its context; the job is deleted and made again under the
// same ID, which dispatches the same action ID and attempt. The old
// handler's late success must not settle the new job: the new job's
// output is its own handler's.
func TestLateResultOfADeletedJob(t *testing.T) {
	reg := runner.NewRegistry()
	calls := make(chan chan string, 2)
	must(t, reg.Register("charge", func(ctx context.Context, a job.Action) ([]byte, error) {
		release := make(chan string)
		calls <- release
		return []byte(strconv.Quote(<-release)), nil // deaf to ctx on purpose
	}))
	st := store.NewMemory()
	var c runner.Counters
	r, _, _ := startRunner(t, inmem.Options{WorkerOptions: runner.WorkerOptions{Registry: reg, Workers: 2, Hooks: c.Hooks(nil)}, Store: st})
	ctx := testCtx(t)
	wf := ast.Seq(ast.Act("charge", 500).Named("paid"))

	must(t, r.Submit(ctx, "order-7", wf))
	oldCall := <-calls
	must(t, r.Cancel(ctx, "order-7", "customer left"))
	j, err := r.Wait(ctx, "order-7")
	must(t, err)
	if j.Status() != job.StatusCancelled {
		t.Fatalf("first job: %s", job.Describe(j))
	}
	must(t, store.Delete(ctx, st, "order-7"))

	must(t, r.Submit(ctx, "order-7", wf))
	newCall := <-calls
	ignored := c.Snapshot().Ignored
	oldCall <- "old" // the deleted job's handler answers first
	// Its result is applied, or ignored, before the new one exists.
	waitFor(t, func() bool {
		j, err := st.Load(ctx, "order-7")
		return err == nil && j.Done() || c.Snapshot().Ignored > ignored
	}, "the old handler's result applied or ignored")
	newCall <- "new"
	j, err = r.Wait(ctx, "order-7")
	must(t, err)
	out, _ := j.Output("paid")
	if j.Status() != job.StatusSucceeded || string(out) != `"new"` {
		t.Fatalf("the job made again: %s, output %s; want succeeded with its own handler's output \"new\"", j.Status(), out)
	}
}
