package kafka_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	kafkarunner "github.com/batonwf/baton/runner/kafka"
	"github.com/batonwf/baton/runner/runnertest"
)

// TestRetryWaitsOnTheClock: the restarter arms a retry's back-off on the
// runner's clock: the next attempt runs once the clock has moved past it
// (an hour, then two, with no sleep), and the job's start, every result
// and every firing are stamped by that clock.
func TestRetryWaitsOnTheClock(t *testing.T) {
	cfg := testConfig(t)
	cfg.Retention = -1 // no sweeps armed on the clock
	st := openStore(t, cfg)
	reg := runner.NewRegistry()
	var calls atomic.Int32
	if err := reg.Register("flaky", func(ctx context.Context, a job.Action) ([]byte, error) {
		if calls.Add(1) < 3 {
			return nil, errors.New("503 from upstream")
		}
		return []byte(`"ok"`), nil
	}); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2031, 3, 4, 5, 6, 7, 0, time.UTC)
	clock := runnertest.NewClock(t0)
	r := start(t, kafkarunner.Options{WorkerOptions: runner.WorkerOptions{Registry: reg, Clock: clock}, Store: st})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	w := ast.Act("flaky", nil).WithRetry(ast.Retry{Attempts: 5, Initial: time.Hour, Multiplier: 2})
	if err := r.Submit(ctx, "flaky", w); err != nil {
		t.Fatal(err)
	}
	for n, wait := range []time.Duration{time.Hour, 2 * time.Hour} {
		waitFor(t, "the failed attempt's back-off is stored", func() bool {
			j, err := st.Load(ctx, "flaky")
			return err == nil && calls.Load() == int32(n+1) && len(j.Timers()) == 1
		})
		clock.Advance(wait - time.Millisecond)
		clock.Advance(time.Millisecond)
	}
	j, err := r.Wait(ctx, "flaky")
	if err != nil {
		t.Fatal(err)
	}
	if j.Status() != job.StatusSucceeded || calls.Load() != 3 {
		t.Fatalf("%s after %d calls:\n%s", j.Status(), calls.Load(), job.Describe(j))
	}
	got, err := runnertest.Stamps(ctx, st, "flaky", t0)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"root#1 at t0+0s", "root@retry#2 at t0+1h0m0s", "root#2 at t0+1h0m0s", "root@retry#3 at t0+3h0m0s", "root#3 at t0+3h0m0s"}
	if strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Errorf("history (each result and firing stamped by the clock):\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
