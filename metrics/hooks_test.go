package metrics_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
)

// handlers returns a registry of the actions the tests run: ok, fail,
// panic, slow (until its context ends) and block (until release is
// closed or its context ends).
func handlers(release <-chan struct{}) *runner.Registry {
	reg := runner.NewRegistry()
	_ = reg.Register("ok", func(context.Context, job.Action) ([]byte, error) { return []byte(`"fine"`), nil })
	_ = reg.Register("fail", func(context.Context, job.Action) ([]byte, error) { return nil, errors.New("no") })
	_ = reg.Register("panic", func(context.Context, job.Action) ([]byte, error) { panic("oh") })
	_ = reg.Register("slow", func(ctx context.Context, _ job.Action) ([]byte, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	})
	_ = reg.Register("block", func(ctx context.Context, _ job.Action) ([]byte, error) {
		select {
		case <-release:
			return nil, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
	return reg
}

// TestHooksMoveTheirMetrics runs jobs on runner/inmem, with the metrics'
// hooks and store, and checks that each metric moved as the runs say.
func TestHooksMoveTheirMetrics(t *testing.T) {
	release := make(chan struct{})
	tr := newRun(t, handlers(release), nil)
	g := tr.reg

	// One of each outcome, in one job.
	j := tr.run(t, "mixed", ast.Par(
		ast.Act("ok", nil),
		ast.Try(ast.Act("fail", nil), ast.Rescue(ast.Act("ok", nil))),
		ast.Try(ast.Act("panic", nil), ast.Rescue(ast.Act("ok", nil))),
		ast.Try(ast.Act("slow", nil).WithTimeout(time.Millisecond), ast.Rescue(ast.Act("ok", nil))),
	))
	if j.Status() != job.StatusSucceeded {
		t.Fatalf("mixed: %v", j)
	}
	if got := tr.run(t, "failing", ast.Act("fail", nil)); got.Status() != job.StatusFailed {
		t.Fatalf("failing: %v", got)
	}

	for _, c := range []struct {
		action, outcome string
		want            float64
	}{{"ok", "succeeded", 4}, {"fail", "failed", 2}, {"panic", "panicked", 1}, {"slow", "timed_out", 1}, {"fail", "succeeded", 0}, {"panic", "failed", 0}} {
		if got := value(t, g, "baton_actions_finished_total", "action", c.action, "outcome", c.outcome); got != c.want {
			t.Errorf("baton_actions_finished_total{action=%s,outcome=%s} = %v, want %v", c.action, c.outcome, got, c.want)
		}
	}
	for action, want := range map[string]uint64{"ok": 4, "fail": 2, "panic": 1, "slow": 1} {
		if got := value(t, g, "baton_actions_dispatched_total", "action", action); got != float64(want) {
			t.Errorf("baton_actions_dispatched_total{action=%s} = %v, want %v", action, got, want)
		}
		if got := count(t, g, "baton_action_duration_seconds", "action", action); got != want {
			t.Errorf("baton_action_duration_seconds{action=%s} has %d samples, want %d", action, got, want)
		}
		// Dispatched and started in this process: every start is timed.
		if got := count(t, g, "baton_action_wait_seconds", "action", action); got != want {
			t.Errorf("baton_action_wait_seconds{action=%s} has %d samples, want %d", action, got, want)
		}
		if got := value(t, g, "baton_actions_in_flight", "action", action); got != 0 {
			t.Errorf("baton_actions_in_flight{action=%s} = %v after the jobs ended", action, got)
		}
	}
	if got := value(t, g, "baton_jobs_submitted_total"); got != 2 {
		t.Errorf("baton_jobs_submitted_total = %v, want 2", got)
	}
	if s, f := value(t, g, "baton_jobs_finished_total", "status", "succeeded"), value(t, g, "baton_jobs_finished_total", "status", "failed"); s != 1 || f != 1 {
		t.Errorf("baton_jobs_finished_total: %v succeeded, %v failed; want 1 and 1", s, f)
	}
	steps := value(t, g, "baton_steps_total")
	if steps < 2+4 { // two creations, then at least as many steps as the mixed job's rounds
		t.Errorf("baton_steps_total = %v", steps)
	}
	if got := count(t, g, "baton_step_duration_seconds"); float64(got) != steps {
		t.Errorf("baton_step_duration_seconds has %d samples, %v steps", got, steps)
	}
	if got := count(t, g, "baton_step_results"); float64(got) != steps-2 {
		t.Errorf("baton_step_results has %d samples; want one per step but the 2 creations (%v)", got, steps)
	}
	for _, op := range []string{"create", "save", "load"} {
		if count(t, g, "baton_store_operation_duration_seconds", "op", op) == 0 {
			t.Errorf("no %s timed", op)
		}
	}

	// A running job: in flight, and counted running, until it ends.
	if err := tr.r.Submit(tr.ctx, "blocked", ast.Act("block", nil)); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the blocked action in flight", func() bool {
		return value(t, g, "baton_actions_in_flight", "action", "block") == 1 && value(t, g, "baton_jobs_running") == 1
	})
	close(release)
	if _, err := tr.r.Wait(tr.ctx, "blocked"); err != nil {
		t.Fatal(err)
	}
	if a, r := value(t, g, "baton_actions_in_flight", "action", "block"), value(t, g, "baton_jobs_running"); a != 0 || r != 0 {
		t.Errorf("after the end: %v in flight, %v jobs running", a, r)
	}

	// A late result, delivered again: ignored, the job being settled.
	if err := tr.r.Deliver(tr.ctx, job.Result{JobID: "failing", ActionID: "root#1", Error: "late"}); err != nil {
		t.Fatal(err)
	}
	if got := value(t, g, "baton_results_ignored_total", "reason", "settled"); got != 1 {
		t.Errorf("baton_results_ignored_total{reason=settled} = %v, want 1", got)
	}
}

// TestCancelledJob: a cancelled job counts as finished cancelled; its
// stopped action leaves the in-flight gauge.
func TestCancelledJob(t *testing.T) {
	tr := newRun(t, handlers(nil), nil)
	g := tr.reg
	if err := tr.r.Submit(tr.ctx, "c", ast.Act("block", nil)); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the action in flight", func() bool { return value(t, g, "baton_actions_in_flight", "action", "block") == 1 })
	if err := tr.r.Cancel(tr.ctx, "c", "test"); err != nil {
		t.Fatal(err)
	}
	if j, err := tr.r.Wait(tr.ctx, "c"); err != nil || j.Status() != job.StatusCancelled {
		t.Fatalf("Wait: %v, %v", j, err)
	}
	eventually(t, "the stopped action out of flight", func() bool { return value(t, g, "baton_actions_in_flight", "action", "block") == 0 })
	if got := value(t, g, "baton_jobs_finished_total", "status", "cancelled"); got != 1 {
		t.Errorf("baton_jobs_finished_total{status=cancelled} = %v", got)
	}
	if got := value(t, g, "baton_jobs_running"); got != 0 {
		t.Errorf("baton_jobs_running = %v", got)
	}
}

// TestLongIDsInExemplars: a job ID of 200 bytes (the longest there is)
// and a long action ID go into exemplars clipped to client_golang's 128
// runes, without the panic that ObserveWithExemplar gives past them.
func TestLongIDsInExemplars(t *testing.T) {
	tr := newRun(t, handlers(nil), nil)
	for _, id := range []job.ID{
		job.ID(strings.Repeat("j", job.MaxIDLen)),
		job.ID(strings.Repeat("é", job.MaxIDLen/2)), // 100 runes of 2 bytes
	} {
		if err := id.Check(); err != nil {
			t.Fatal(err)
		}
		// A deep tree for a long action ID.
		root := ast.Act("ok", nil)
		for range 12 {
			root = ast.Seq(ast.Act("ok", nil), root)
		}
		if j := tr.run(t, id, root); j.Status() != job.StatusSucceeded {
			t.Fatalf("%v", j)
		}
	}
	for _, name := range []string{"baton_action_duration_seconds", "baton_step_duration_seconds"} {
		n := 0
		for _, m := range family(t, tr.reg, name).GetMetric() {
			h := m.GetHistogram()
			exs := h.GetExemplars()
			for _, b := range h.GetBucket() {
				if b.Exemplar != nil {
					exs = append(exs, b.Exemplar)
				}
			}
			for _, ex := range exs {
				runes := 0
				for _, l := range ex.GetLabel() {
					runes += utf8.RuneCountInString(l.GetName()) + utf8.RuneCountInString(l.GetValue())
					if l.GetName() == "job_id" && l.GetValue() == "" {
						t.Errorf("%s: empty job_id", name)
					}
				}
				if runes > prometheus.ExemplarMaxRunes {
					t.Errorf("%s: exemplar of %d runes", name, runes)
				}
				n++
			}
		}
		if n == 0 {
			t.Errorf("%s: no exemplar", name)
		}
	}
}

// TestHooksNeverPanicOnOddInput calls the hooks directly with what no
// runner sends but a hook must survive: IDs past any limit, invalid
// UTF-8, unknown ignore reasons, an action finished that never started.
func TestHooksNeverPanicOnOddInput(t *testing.T) {
	tr := newRun(t, handlers(nil), nil)
	h := tr.m.Hooks(nil)
	long := strings.Repeat("\xff界", 300)
	a := job.Action{JobID: job.ID(long), ID: long, Name: long}
	h.Dispatched([]job.Action{a})
	h.ActionStarted(a)
	h.ActionPanicked(a)
	h.ActionFinished(a, job.Result{Error: long}, time.Second)
	h.ActionHandedBack(a)
	h.Ignored(job.ID(long), job.Ignored{Reason: 200})
	if got := value(t, tr.reg, "baton_results_ignored_total", "reason", "other"); got != 1 {
		t.Errorf("an unknown reason counted as other %v times", got)
	}
	if got := value(t, tr.reg, "baton_actions_finished_total", "action", "other", "outcome", "panicked"); got != 1 {
		t.Errorf("an unregistered name's panic counted %v times under other", got)
	}
}

// TestSeriesBounded: after 10,000 jobs with distinct IDs, running 100
// action names the metrics were not told of, there are as many series as
// after the first job.
func TestSeriesBounded(t *testing.T) {
	all := handlers(nil)
	for i := range 100 {
		_ = all.Register(fmt.Sprintf("unknown.%d", i), func(context.Context, job.Action) ([]byte, error) { return nil, nil })
	}
	tr := newRun(t, all, handlers(nil))
	jobs := 10000
	if testing.Short() {
		jobs = 1000
	}
	first := -1
	for i := range jobs {
		id := job.ID(fmt.Sprintf("job-%05d", i))
		if err := tr.r.Submit(tr.ctx, id, ast.Seq(ast.Act("ok", nil), ast.Act(fmt.Sprintf("unknown.%d", i%100), nil))); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			if _, err := tr.r.Wait(tr.ctx, id); err != nil {
				t.Fatal(err)
			}
			first = seriesCount(t, tr.reg)
		}
	}
	for i := range jobs {
		if _, err := tr.r.Wait(tr.ctx, job.ID(fmt.Sprintf("job-%05d", i))); err != nil {
			t.Fatal(err)
		}
	}
	if got := value(t, tr.reg, "baton_actions_finished_total", "action", "other", "outcome", "succeeded"); got != float64(jobs) {
		t.Errorf("the unknown names counted %v times as other, want %d", got, jobs)
	}
	if got := seriesCount(t, tr.reg); got != first {
		t.Errorf("%d series after %d jobs, %d after the first", got, jobs, first)
	}
	if n := testutil.CollectAndCount(tr.reg, "baton_actions_dispatched_total"); n != 6 {
		t.Errorf("baton_actions_dispatched_total has %d series, want 6 (5 names and other)", n)
	}
}
