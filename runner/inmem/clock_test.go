package inmem_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	"github.com/batonwf/baton/runner/inmem"
	"github.com/batonwf/baton/runner/runnertest"
	"github.com/batonwf/baton/store"
)

// t0 is where the tests' clocks start: far from the real time, so that a
// stamp or a timer that went by the real clock shows.
var t0 = time.Date(2031, 3, 4, 5, 6, 7, 0, time.UTC)

// waitFor polls cond until it holds, and fails the test if it does not
// within 10 seconds.
func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not so after 10s", what)
		}
	}
}

// TestRetryWaitsOnTheClock: a flaky action fails twice and succeeds on
// attempt 3; each back-off (an hour, then two) waits on the runner's
// clock: the next attempt runs when the clock has moved past its due
// time, not a moment before, and every result is stamped by that clock.
func TestRetryWaitsOnTheClock(t *testing.T) {
	reg := runner.NewRegistry()
	var calls atomic.Int32
	must(t, reg.Register("flaky", func(ctx context.Context, a job.Action) ([]byte, error) {
		if calls.Add(1) < 3 {
			return nil, errors.New("503 from upstream")
		}
		return []byte(`"ok"`), nil
	}))
	clock := runnertest.NewClock(t0)
	st := store.NewMemory()
	r, _, _ := startRunner(t, inmem.Options{WorkerOptions: runner.WorkerOptions{Registry: reg, Clock: clock}, Store: st})
	ctx := testCtx(t)
	w := ast.Act("flaky", nil).WithRetry(ast.Retry{Attempts: 5, Initial: time.Hour, Multiplier: 2})
	must(t, r.Submit(ctx, "flaky", w))

	for n, wait := range []time.Duration{time.Hour, 2 * time.Hour} {
		waitFor(t, func() bool { return calls.Load() == int32(n+1) && clock.Armed() == 1 }, "the failed attempt's back-off is armed")
		clock.Advance(wait - time.Millisecond)
		if got, armed := calls.Load(), clock.Armed(); got != int32(n+1) || armed != 1 {
			t.Fatalf("a millisecond before the back-off of %v ends: %d calls, %d timers armed; want %d and 1", wait, got, armed, n+1)
		}
		clock.Advance(time.Millisecond)
	}
	j, err := r.Wait(ctx, "flaky")
	must(t, err)
	if j.Status() != job.StatusSucceeded || calls.Load() != 3 {
		t.Fatalf("%s after %d calls:\n%s", j.Status(), calls.Load(), job.Describe(j))
	}
	if end := t0.Add(3 * time.Hour); !j.Clock().Equal(end) {
		t.Errorf("the job's clock reads %v, want the runner clock's %v", j.Clock(), end)
	}
	got, err := runnertest.Stamps(ctx, st, "flaky", t0)
	must(t, err)
	want := []string{"root#1 at t0+0s", "root@retry#2 at t0+1h0m0s", "root#2 at t0+1h0m0s", "root@retry#3 at t0+3h0m0s", "root#3 at t0+3h0m0s"}
	if strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Errorf("history (each result and firing stamped by the clock):\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestDeadlineRunsOutOnTheClock: a par whose deadline (an hour) runs out
// on the runner's clock while its actions run has their handlers stopped
// (cause runner.ErrStopped), fails with kind deadline and runs the
// finally around it; a millisecond before, nothing is stopped.
func TestDeadlineRunsOutOnTheClock(t *testing.T) {
	reg := runner.NewRegistry()
	var mu sync.Mutex
	entered := map[string]bool{}
	causes := map[string]error{}
	must(t, reg.Register("watch", func(ctx context.Context, a job.Action) ([]byte, error) {
		mu.Lock()
		entered[a.ID] = true
		mu.Unlock()
		<-ctx.Done()
		mu.Lock()
		causes[a.ID] = context.Cause(ctx)
		mu.Unlock()
		return nil, ctx.Err()
	}))
	var cleaned atomic.Bool
	must(t, reg.Register("cleanup", func(context.Context, job.Action) ([]byte, error) {
		cleaned.Store(true)
		return nil, nil
	}))
	clock := runnertest.NewClock(t0)
	r, _, _ := startRunner(t, inmem.Options{WorkerOptions: runner.WorkerOptions{Registry: reg, Clock: clock}})
	ctx := testCtx(t)
	root := ast.Seq(
		ast.Try(ast.Par(ast.Act("watch", "a"), ast.Act("watch", "b")).WithDeadline(time.Hour),
			ast.Finally(ast.Act("cleanup", nil))),
		ast.Act("cleanup", "never"),
	)
	must(t, r.Submit(ctx, "d", root))
	waitFor(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(entered) == 2 && clock.Armed() == 1
	}, "both handlers run under an armed deadline")
	clock.Advance(time.Hour - time.Millisecond)
	mu.Lock()
	early := len(causes)
	mu.Unlock()
	if early != 0 || clock.Armed() != 1 {
		t.Fatalf("a millisecond before the deadline: %d handlers stopped, %d timers armed; want 0 and 1", early, clock.Armed())
	}
	clock.Advance(time.Millisecond)
	j, err := r.Wait(ctx, "d")
	must(t, err)
	f, _ := j.Failure()
	if j.Status() != job.StatusFailed || f.Kind != job.KindDeadline || f.Path != "seq[0].body" {
		t.Fatalf("%s, failure %+v; want failed by the deadline of seq[0].body\n%s", j.Status(), f, job.Describe(j))
	}
	if !cleaned.Load() {
		t.Error("the finally did not run")
	}
	waitFor(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(causes) == 2
	}, "both handlers return")
	mu.Lock()
	defer mu.Unlock()
	for id, cause := range causes {
		if !errors.Is(cause, runner.ErrStopped) {
			t.Errorf("the handler of %s ended with cause %v, want runner.ErrStopped", id, cause)
		}
	}
}

// TestDefaultWorkers: a runner given no Workers runs runner.DefaultWorkers
// actions at once, as every runner does (inmem's default was 16, zk's
// and kafka's 8); negative Workers is refused, naming the field.
func TestDefaultWorkers(t *testing.T) {
	reg := runner.NewRegistry()
	r, err := inmem.New(inmem.Options{WorkerOptions: runner.WorkerOptions{Registry: reg}})
	must(t, err)
	if r.Workers() != runner.DefaultWorkers {
		t.Errorf("Workers %d by default, want runner.DefaultWorkers (%d)", r.Workers(), runner.DefaultWorkers)
	}
	_, err = inmem.New(inmem.Options{WorkerOptions: runner.WorkerOptions{Registry: reg, Workers: -1}})
	if err == nil || !strings.Contains(err.Error(), "WorkerOptions.Workers") {
		t.Errorf("Workers -1: %v, want an error naming WorkerOptions.Workers", err)
	}
}
