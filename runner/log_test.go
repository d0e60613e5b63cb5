package runner_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	"github.com/batonwf/baton/store"
)

// record is a log record as captured: its level, message and attributes,
// each attribute's value as its Any (strings, int64s, durations).
type record struct {
	Level slog.Level
	Msg   string
	Attrs map[string]any
}

// capture is a slog.Handler that keeps every record at or above its level.
type capture struct {
	level slog.Level
	mu    sync.Mutex
	recs  []record
}

func (c *capture) Enabled(_ context.Context, l slog.Level) bool { return l >= c.level }

func (c *capture) Handle(_ context.Context, r slog.Record) error {
	rec := record{Level: r.Level, Msg: r.Message, Attrs: map[string]any{}}
	r.Attrs(func(a slog.Attr) bool {
		rec.Attrs[a.Key] = a.Value.Resolve().Any()
		return true
	})
	c.mu.Lock()
	defer c.mu.Unlock()
	c.recs = append(c.recs, rec)
	return nil
}

func (c *capture) WithAttrs([]slog.Attr) slog.Handler { return c }
func (c *capture) WithGroup(string) slog.Handler      { return c }

// take returns the records kept so far with message msg, and forgets all.
func (c *capture) take(msgs ...string) []record {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []record
	for _, r := range c.recs {
		for _, m := range msgs {
			if r.Msg == m {
				out = append(out, r)
			}
		}
	}
	c.recs = nil
	return out
}

// withoutTook drops the "took" attribute (a duration the test cannot
// predict) after checking it is there.
func withoutTook(t *testing.T, recs []record) []record {
	t.Helper()
	for _, r := range recs {
		if r.Msg == "action succeeded" || r.Msg == "action failed" {
			if _, ok := r.Attrs["took"].(time.Duration); !ok {
				t.Errorf("%s: no took duration in %v", r.Msg, r.Attrs)
			}
			delete(r.Attrs, "took")
		}
	}
	return recs
}

// TestExecuteLogs: Execute logs each action's start and success at DEBUG
// and every failure at WARN, with the job, the action ID, the attempt, the
// action's name, the failure's kind and its message, clipped to one short
// line; a missing handler is a failure like any other.
func TestExecuteLogs(t *testing.T) {
	reg := runner.NewRegistry()
	_ = reg.Register("ok", func(context.Context, job.Action) ([]byte, error) { return []byte(`1`), nil })
	_ = reg.Register("declines", func(context.Context, job.Action) ([]byte, error) {
		return nil, runner.WithKind(errors.New("card declined"), "card_declined")
	})
	_ = reg.Register("rambles", func(context.Context, job.Action) ([]byte, error) {
		return nil, errors.New(strings.Repeat("é", 300) + "\nsecond line")
	})
	_ = reg.Register("slow", func(ctx context.Context, _ job.Action) ([]byte, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	})
	h := &capture{level: slog.LevelDebug}
	opts := runner.ExecOptions{Logger: slog.New(h)}
	a := func(name string) job.Action {
		return job.Action{JobID: "j-42", ID: "seq[1]#3", Name: name, Attempt: 3}
	}
	attrs := func(name string, more ...any) map[string]any {
		m := map[string]any{"job": "j-42", "action": "seq[1]#3", "attempt": int64(3), "name": name}
		for i := 0; i < len(more); i += 2 {
			m[more[i].(string)] = more[i+1]
		}
		return m
	}
	clipped := strings.Repeat("é", 100) + "..."
	for _, c := range []struct {
		name string
		opts runner.ExecOptions
		want []record
	}{
		{"ok", opts, []record{
			{slog.LevelDebug, "action started", attrs("ok")},
			{slog.LevelDebug, "action succeeded", attrs("ok")},
		}},
		{"declines", opts, []record{
			{slog.LevelDebug, "action started", attrs("declines")},
			{slog.LevelWarn, "action failed", attrs("declines", "kind", "card_declined", "message", "card declined")},
		}},
		{"rambles", opts, []record{
			{slog.LevelDebug, "action started", attrs("rambles")},
			{slog.LevelWarn, "action failed", attrs("rambles", "kind", "", "message", clipped)},
		}},
		{"slow", runner.ExecOptions{Logger: opts.Logger, Timeout: 10 * time.Millisecond}, []record{
			{slog.LevelDebug, "action started", attrs("slow")},
			{slog.LevelWarn, "action failed", attrs("slow", "kind", "timeout", "message", `action "slow" timed out after 10ms`)},
		}},
		{"missing", opts, []record{
			{slog.LevelWarn, "action failed", attrs("missing", "kind", "", "message", `no handler registered for action "missing"`)},
		}},
	} {
		if _, err := runner.Execute(context.Background(), reg, a(c.name), c.opts); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got := withoutTook(t, h.take("action started", "action succeeded", "action failed"))
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("%s: records (-want +got):\n%s", c.name, diff)
		}
	}
	// At INFO, only the failures are logged.
	h = &capture{level: slog.LevelInfo}
	for _, name := range []string{"ok", "declines"} {
		if _, err := runner.Execute(context.Background(), reg, a(name), runner.ExecOptions{Logger: slog.New(h)}); err != nil {
			t.Fatal(err)
		}
	}
	if got := h.take("action started", "action succeeded", "action failed"); len(got) != 1 || got[0].Attrs["name"] != "declines" {
		t.Errorf("at INFO: %+v, want the failure only", got)
	}
}

// TestEngineLogsJobEnd: the line of a job's end says why a failed job
// failed (the node, its action's name, the failure's kind and message)
// and why a cancelled one was cancelled.
func TestEngineLogsJobEnd(t *testing.T) {
	ctx := context.Background()
	st := store.NewMemory()
	d := &collect{}
	h := &capture{level: slog.LevelInfo}
	eng, err := runner.NewEngine(runner.EngineOptions[struct{}]{Store: st, Transport: runner.SaveThenDispatch(st, d), Logger: slog.New(h)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Submit(ctx, "j-1", ast.Seq(ast.Act("log", "a"), ast.Act("charge", nil))); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Apply(ctx, "j-1", []job.Result{d.acts[0].Succeed(nil)}); err != nil {
		t.Fatal(err)
	}
	r := d.acts[1].Fail("card declined\nby the bank")
	r.Kind = "card_declined"
	if _, err := eng.Apply(ctx, "j-1", []job.Result{r}); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Submit(ctx, "j-2", ast.Act("log", "a")); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Apply(ctx, "j-2", []job.Result{d.acts[2].Succeed(nil)}); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Submit(ctx, "j-3", ast.Act("log", "a")); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Cancel(ctx, "j-3", "not needed"); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Submit(ctx, "j-4", ast.Par(ast.Act("a", nil), ast.Act("b", nil))); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Apply(ctx, "j-4", []job.Result{d.acts[4].Fail("x"), d.acts[5].Fail("y")}); err != nil {
		t.Fatal(err)
	}
	want := []record{
		{slog.LevelInfo, "job finished", map[string]any{"job": "j-1", "status": "failed", "version": uint64(3),
			"failed_at": "seq[1]", "name": "charge", "kind": "card_declined", "message": "card declined\nby the bank"}},
		{slog.LevelInfo, "job finished", map[string]any{"job": "j-2", "status": "succeeded", "version": uint64(2)}},
		{slog.LevelInfo, "job finished", map[string]any{"job": "j-3", "status": "cancelled", "version": uint64(2), "reason": "not needed"}},
		{slog.LevelInfo, "job finished", map[string]any{"job": "j-4", "status": "failed", "version": uint64(2),
			"failed_at": "par[0]", "name": "a", "kind": "", "message": "x", "more_failures": int64(1)}},
	}
	if diff := cmp.Diff(want, h.take("job finished")); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
}

// TestEngineLogsTimers: at DEBUG, every timer a committed transition arms
// is logged (a retry's wait, a deadline), so that --verbose shows when a
// failed attempt runs again.
func TestEngineLogsTimers(t *testing.T) {
	ctx := context.Background()
	st := store.NewMemory()
	d := &collect{}
	h := &capture{level: slog.LevelDebug}
	t0 := time.Date(2026, 11, 26, 1, 0, 0, 0, time.UTC)
	eng, err := runner.NewEngine(runner.EngineOptions[struct{}]{Store: st, Transport: runner.SaveThenDispatch(st, d), Logger: slog.New(h),
		Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	leaf := ast.Act("charge", nil).WithRetry(ast.Retry{Attempts: 2, Initial: time.Minute})
	if _, err := eng.Submit(ctx, "j-5", leaf); err != nil {
		t.Fatal(err)
	}
	r := d.acts[0].Fail("busy")
	r.At = t0.Add(time.Second)
	if _, err := eng.Apply(ctx, "j-5", []job.Result{r}); err != nil {
		t.Fatal(err)
	}
	want := []record{{slog.LevelDebug, "timer armed", map[string]any{"job": "j-5", "timer": "root@retry#2", "due": t0.Add(time.Second + time.Minute)}}}
	if diff := cmp.Diff(want, h.take("timer armed")); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
}

// TestLogClaimed: a claim is one DEBUG line naming the action and what was
// claimed; a nil logger logs nothing.
func TestLogClaimed(t *testing.T) {
	h := &capture{level: slog.LevelDebug}
	a := job.Action{JobID: "j-6", ID: "par[2]#1", Name: "mail", Attempt: 1}
	runner.LogClaimed(context.Background(), slog.New(h), a, slog.String("entry", "q-0001"))
	runner.LogClaimed(context.Background(), nil, a)
	want := []record{{slog.LevelDebug, "action claimed", map[string]any{"job": "j-6", "action": "par[2]#1", "attempt": int64(1), "name": "mail", "entry": "q-0001"}}}
	if diff := cmp.Diff(want, h.take("action claimed")); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
}

// TestExecuteLogsNothingCostly: on a logger at INFO, an action that
// succeeds costs no allocation more than on none: its DEBUG lines are not
// built.
func TestExecuteLogsNothingCostly(t *testing.T) {
	reg := runner.NewRegistry()
	_ = reg.Register("ok", func(context.Context, job.Action) ([]byte, error) { return nil, nil })
	a := act("ok", "")
	ctx := context.Background()
	count := func(o runner.ExecOptions) float64 {
		return testing.AllocsPerRun(100, func() {
			if _, err := runner.Execute(ctx, reg, a, o); err != nil {
				t.Fatal(err)
			}
		})
	}
	none := count(runner.ExecOptions{})
	info := count(runner.ExecOptions{Logger: slog.New(&capture{level: slog.LevelInfo})})
	if info > none {
		t.Errorf("Execute allocates %v times with a logger at INFO, %v without", info, none)
	}
}
