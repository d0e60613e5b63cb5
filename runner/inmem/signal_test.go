package inmem_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	"github.com/batonwf/baton/runner/inmem"
)

// TestSignalsWaitsSleeps runs waits, signals, sleeps and a cancelled node
// through the in-memory runner: a signal sent before its wait starts is
// kept and taken, a duplicate changes nothing, a race of a wait and a
// short sleep is won by the sleep when no signal comes, a cancelled node
// is rescued, and a signal to a finished job is refused.
func TestSignalsWaitsSleeps(t *testing.T) {
	reg := runner.NewRegistry()
	gate := make(chan struct{})
	_ = runner.Handle(reg, "gate", func(ctx context.Context, _ struct{}) (string, error) {
		select {
		case <-gate:
			return "open", nil
		case <-ctx.Done():
			return "", context.Cause(ctx)
		}
	})
	_ = runner.Handle(reg, "echo", func(ctx context.Context, s string) (string, error) { return s, nil })
	r, err := inmem.New(inmem.Options{WorkerOptions: runner.WorkerOptions{Registry: reg, Workers: 4}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	go r.Run(ctx)
	defer r.Close()

	// Early signal: kept while the gate holds, taken when the wait starts.
	early := ast.Seq(ast.Act("gate", nil), ast.Wait("approval").Named("answer"), ast.Act("echo", "done").WithInputs("answer"))
	if err := r.Submit(ctx, "early", early); err != nil {
		t.Fatal(err)
	}
	if err := r.Signal(ctx, "early", "approval", "a1", []byte(`{"ok":true}`)); err != nil {
		t.Fatal(err)
	}
	if err := r.Signal(ctx, "early", "approval", "a1", []byte(`{"ok":false}`)); err != nil {
		t.Fatal(err) // a duplicate is not an error: it changes nothing
	}
	if err := r.Signal(ctx, "early", "bad name", "x", nil); err == nil {
		t.Fatal("a signal with a bad name was accepted")
	}
	if err := r.Signal(ctx, "early", "approval", "big", make([]byte, job.MaxSignalPayload+1)); err == nil {
		t.Fatal("a payload over the limit was accepted")
	}

	// A cancelled node, rescued; and deferred choice won by the sleep.
	cancelled := ast.Try(ast.Act("gate", nil).Named("slow"), ast.Rescue(ast.Act("echo", "rescued")))
	if err := r.Submit(ctx, "cancel", cancelled); err != nil {
		t.Fatal(err)
	}
	timeout := ast.Race(ast.Wait("never"), ast.Sleep(10*time.Millisecond))
	if err := r.Submit(ctx, "timeout", timeout); err != nil {
		t.Fatal(err)
	}
	// The cancel applies to a running node: wait for it to run, cancel
	// it, and see it fail before the gate opens.
	nodeIs := func(want job.Status) {
		t.Helper()
		for {
			j, err := r.Status(ctx, "cancel")
			if err != nil {
				t.Fatal(err)
			}
			st := job.StatusIdle
			j.Walk(func(n job.NodeInfo) bool {
				if n.Name == "slow" {
					st = n.Status
				}
				return true
			})
			if st == want {
				return
			}
			select {
			case <-ctx.Done():
				t.Fatalf("node slow is %s, want %s", st, want)
			case <-time.After(time.Millisecond):
			}
		}
	}
	nodeIs(job.StatusRunning)
	if err := r.CancelNode(ctx, "cancel", "slow", "taking too long"); err != nil {
		t.Fatal(err)
	}
	nodeIs(job.StatusFailed)
	close(gate)

	j, err := r.Wait(ctx, "early")
	if err != nil {
		t.Fatal(err)
	}
	if j.Status() != job.StatusSucceeded {
		t.Fatalf("early: %s\n%s", j.Status(), job.Describe(j))
	}
	if out, _ := j.Output("answer"); string(out) != `{"ok":true}` {
		t.Fatalf("early: the wait's output is %s, want the first signal's payload", out)
	}
	if _, taken := j.Signals(); len(taken) != 1 || taken[0].ID != "a1" {
		t.Fatalf("early: taken %v", taken)
	}
	j, err = r.Wait(ctx, "cancel")
	if err != nil {
		t.Fatal(err)
	}
	if f, _ := j.Failure(); j.Status() != job.StatusSucceeded || !strings.Contains(job.Describe(j), "[cancelled] cancelled: taking too long") {
		t.Fatalf("cancel: %s %v\n%s", j.Status(), f, job.Describe(j))
	}
	j, err = r.Wait(ctx, "timeout")
	if err != nil {
		t.Fatal(err)
	}
	if j.Status() != job.StatusSucceeded {
		t.Fatalf("timeout: %s\n%s", j.Status(), job.Describe(j))
	}
	if err := r.Signal(ctx, "timeout", "never", "late", nil); !errors.Is(err, runner.ErrFinished) {
		t.Fatalf("a signal to a finished job: %v, want ErrFinished", err)
	}
}
