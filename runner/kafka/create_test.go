package kafka_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	kafkarunner "github.com/batonwf/baton/runner/kafka"
	"github.com/batonwf/baton/store"
)

// TestCreateThroughEngine: a restarter creates a submitted job through
// runner.Engine.Create, as every runner does, so the creation is told
// like any transition: the timer its first transition arms (the root's
// deadline) is logged at DEBUG, and the hooks see the step.
func TestCreateThroughEngine(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var logs logBuffer
	cfg := testConfig(t)
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	st := openStore(t, cfg)
	var counts runner.Counters
	start(t, kafkarunner.Options{WorkerOptions: runner.WorkerOptions{Hooks: counts.Hooks(nil)}, Store: st, Role: kafkarunner.RoleRestarter})
	quiet := cfg
	quiet.Logger = nil
	client := start(t, kafkarunner.Options{Store: openStore(t, quiet), Role: kafkarunner.RoleClient})
	if err := client.Submit(ctx, "timed", ast.Act("later", nil).WithDeadline(time.Hour)); err != nil {
		t.Fatal(err)
	}
	j, err := st.Load(ctx, "timed")
	if err != nil || len(j.Timers()) != 1 {
		t.Fatalf("job timed: %v, timers %v; want one timer, the deadline's", err, j.Timers())
	}
	waitFor(t, "the restarter to log the deadline's timer of the created job", func() bool {
		for _, line := range strings.Split(logs.String(), "\n") {
			if strings.Contains(line, `msg="timer armed"`) && strings.Contains(line, " job=timed ") &&
				strings.Contains(line, " timer="+j.Timers()[0].ID) {
				return true
			}
		}
		return false
	})
	if c := counts.Snapshot(); c.Steps != 1 {
		t.Errorf("the restarter's hooks saw %d steps, want the creation's 1", c.Steps)
	}
}

// TestSubmitUnknownAction: a runner with a Registry refuses a workflow
// naming an action it has no handler for with runner.CheckHandlers, the
// check runner.Engine makes for the other runners (the same error), and
// nothing reaches the restarter.
func TestSubmitUnknownAction(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg := testConfig(t)
	st := openStore(t, cfg)
	c := newCounter(t)
	r := start(t, kafkarunner.Options{WorkerOptions: runner.WorkerOptions{Registry: c.reg}, Store: st})
	root := ast.Seq(ast.Act("noop", 1), ast.Act("nope", 2))
	err := r.Submit(ctx, "typo", root)

	mem := store.NewMemory()
	eng, eerr := runner.NewEngine(runner.EngineOptions[struct{}]{Store: mem, Registry: c.reg,
		Transport: runner.SaveThenDispatch(mem, runner.DispatchFunc(func(context.Context, []job.Action, []job.Timer) error { return nil }))})
	if eerr != nil {
		t.Fatal(eerr)
	}
	_, want := eng.Submit(ctx, "typo", root)
	if !errors.Is(err, runner.ErrUnknownActions) || want == nil || err.Error() != want.Error() {
		t.Fatalf("Submit of an unknown action: %v; want the engine's %v", err, want)
	}
	if _, err := st.Load(ctx, "typo"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the refused job was stored: %v", err)
	}
}
