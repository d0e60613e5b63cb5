package runner_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
)

// TestWorkerOptionsDefaults: the zero WorkerOptions get the one set of
// defaults; what is set stays; a negative Workers or ActionTimeout is an
// error naming the field, a negative DrainTimeout is kept (hand back at
// once).
func TestWorkerOptionsDefaults(t *testing.T) {
	o, err := runner.WorkerOptions{}.WithDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if o.Workers != runner.DefaultWorkers || o.DrainTimeout != runner.DefaultDrainTimeout || o.ActionTimeout != 0 || o.Logger == nil || o.Clock == nil {
		t.Errorf("defaults %+v", o)
	}
	if d := time.Since(o.Clock.Now()); d < 0 || d > time.Hour {
		t.Errorf("the default clock is %v off the real one", d)
	}
	set := runner.WorkerOptions{Workers: 3, DrainTimeout: -1, ActionTimeout: time.Second}
	if o, err := set.WithDefaults(); err != nil || o.Workers != 3 || o.DrainTimeout != -1 || o.ActionTimeout != time.Second {
		t.Errorf("set options became %+v, %v", o, err)
	}
	for field, o := range map[string]runner.WorkerOptions{
		"WorkerOptions.Workers":       {Workers: -1},
		"WorkerOptions.ActionTimeout": {ActionTimeout: -time.Second},
	} {
		if _, err := o.WithDefaults(); err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("%s negative: %v, want an error naming it", field, err)
		}
	}
}

// fixedClock reads one time.
type fixedClock struct{ t time.Time }

func (c fixedClock) Now() time.Time { return c.t }
func (c fixedClock) AfterFunc(d time.Duration, f func()) runner.Timer {
	return time.AfterFunc(d, f)
}

// TestExecuteStampsWithTheClock: the result of an action is stamped by
// the clock of the options it runs with.
func TestExecuteStampsWithTheClock(t *testing.T) {
	reg := runner.NewRegistry()
	if err := reg.Register("ok", func(context.Context, job.Action) ([]byte, error) { return nil, nil }); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2031, 1, 2, 3, 4, 5, 0, time.UTC)
	o, err := runner.WorkerOptions{Clock: fixedClock{at}}.WithDefaults()
	if err != nil {
		t.Fatal(err)
	}
	res, err := runner.Execute(context.Background(), reg, job.Action{JobID: "j", ID: "root#1", Name: "ok"}, o.ExecOptions())
	if err != nil {
		t.Fatal(err)
	}
	if !res.At.Equal(at) {
		t.Errorf("result stamped %v, want the clock's %v", res.At, at)
	}
}

// TestExecuteStampsTheWorker: every result Execute makes names the worker
// of its options: a success, a failure, a timeout, a panic and a missing
// handler alike. WithDefaults names an unnamed worker HOST-PID-RANDOM and
// keeps a name that is set; ExecOptions carries it.
func TestExecuteStampsTheWorker(t *testing.T) {
	reg := runner.NewRegistry()
	_ = reg.Register("ok", func(context.Context, job.Action) ([]byte, error) { return []byte(`1`), nil })
	_ = reg.Register("errs", func(context.Context, job.Action) ([]byte, error) { return nil, errors.New("no") })
	_ = reg.Register("panics", func(context.Context, job.Action) ([]byte, error) { panic("boom") })
	_ = reg.Register("slow", func(ctx context.Context, _ job.Action) ([]byte, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	})
	o, err := runner.WorkerOptions{Name: "w-7", ActionTimeout: 10 * time.Millisecond}.WithDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if o.Name != "w-7" || o.ExecOptions().Worker != "w-7" {
		t.Fatalf("a set name became %q, ExecOptions.Worker %q", o.Name, o.ExecOptions().Worker)
	}
	for _, name := range []string{"ok", "errs", "panics", "slow", "missing"} {
		res, err := runner.Execute(context.Background(), reg, job.Action{JobID: "j", ID: "root#1", Name: name}, o.ExecOptions())
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if res.Worker != "w-7" {
			t.Errorf("%s: the result names worker %q, want w-7 (%+v)", name, res.Worker, res)
		}
	}
	d, err := runner.WorkerOptions{}.WithDefaults()
	if err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	if want := fmt.Sprintf("%s-%d-", host, os.Getpid()); !strings.HasPrefix(d.Name, want) || len(d.Name) != len(want)+4 {
		t.Errorf("the default name is %q, want %sXXXX", d.Name, want)
	}
}
