package job_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
)

var t0 = time.Date(2026, 11, 25, 3, 0, 0, 0, time.UTC)

// retryRun drives one job in a test: results are stamped with the times
// given, timers fire when asked.
type retryRun struct {
	t  *testing.T
	tr job.Transition
}

func newRetryRun(t *testing.T, w ast.Node) *retryRun {
	t.Helper()
	tr, err := job.New("r", w, job.StartedAt(t0))
	if err != nil {
		t.Fatal(err)
	}
	return &retryRun{t: t, tr: tr}
}

func (r *retryRun) apply(rs ...job.Result) job.Transition {
	r.t.Helper()
	tr, err := job.Restart(r.tr.Job, rs)
	if err != nil {
		r.t.Fatal(err)
	}
	if err := job.Check(tr.Job); err != nil {
		r.t.Fatalf("Check: %v\n%s", err, job.Describe(tr.Job))
	}
	r.tr = tr
	return tr
}

func failAt(a job.Action, msg string, at time.Time) job.Result {
	res := a.Fail(msg)
	res.At = at
	return res
}

func TestRetryBackoff(t *testing.T) {
	w := ast.Act("charge", 500).WithRetry(ast.Retry{Attempts: 3, Initial: time.Second, Multiplier: 2})
	r := newRetryRun(t, w)
	a1 := r.tr.Actions[0]
	tr := r.apply(failAt(a1, "502", t0.Add(time.Second)))
	if len(tr.Actions) != 0 || len(tr.Timers) != 1 || tr.Timers[0].ID != "root@retry#2" || !tr.Timers[0].Due.Equal(t0.Add(2*time.Second)) {
		t.Fatalf("after attempt 1 failed: actions %v, timers %v", tr.Actions, tr.Timers)
	}
	if tr.Job.Done() || tr.Job.Running() != 0 || len(tr.Job.Outstanding()) != 0 {
		t.Fatalf("a waiting leaf: %s, %d running", tr.Job.Status(), tr.Job.Running())
	}
	if !strings.Contains(job.Describe(tr.Job), "act charge 500: running #1: 502; #2 due 2026-11-25T03:00:02Z") {
		t.Errorf("Describe of a waiting leaf:\n%s", job.Describe(tr.Job))
	}
	// The failed attempt's result again: a duplicate.
	dup := r.apply(failAt(a1, "502", t0.Add(time.Second)))
	if dup.Changed() || len(dup.Ignored) != 1 || dup.Ignored[0].Reason != job.IgnoredDuplicate {
		t.Fatalf("the failed attempt again: %+v", dup.Ignored)
	}
	r.tr = tr
	// A firing for another attempt is not pending.
	bad := r.apply(job.Timer{JobID: "r", ID: "root@retry#3", Due: t0}.Fire(t0))
	if bad.Changed() || len(bad.Ignored) != 1 || bad.Ignored[0].Reason != job.IgnoredTimer {
		t.Fatalf("a firing never asked for: %+v", bad.Ignored)
	}
	r.tr = tr
	tr = r.apply(tr.Timers[0].Fire(t0.Add(2 * time.Second)))
	if len(tr.Actions) != 1 || tr.Actions[0].ID != "root#2" || tr.Actions[0].Attempt != 2 || len(tr.Timers) != 0 {
		t.Fatalf("after the timer: actions %v, timers %v", tr.Actions, tr.Timers)
	}
	// The timer again: gone.
	again := r.apply(job.Timer{JobID: "r", ID: "root@retry#2"}.Fire(t0.Add(3 * time.Second)))
	if again.Changed() || again.Ignored[0].Reason != job.IgnoredTimer {
		t.Fatalf("the timer fired twice: %+v", again.Ignored)
	}
	r.tr = tr
	tr = r.apply(failAt(tr.Actions[0], "502", t0.Add(5*time.Second)))
	if len(tr.Timers) != 1 || tr.Timers[0].ID != "root@retry#3" || !tr.Timers[0].Due.Equal(t0.Add(7*time.Second)) {
		t.Fatalf("after attempt 2 failed: timers %v (want #3 due 2s after it: the initial wait times 2)", tr.Timers)
	}
	tr = r.apply(tr.Timers[0].Fire(t0.Add(7 * time.Second)))
	tr = r.apply(failAt(tr.Actions[0], "502 again", t0.Add(8*time.Second)))
	if tr.Job.Status() != job.StatusFailed || len(tr.Timers) != 0 {
		t.Fatalf("after the last attempt: %s, timers %v", tr.Job.Status(), tr.Timers)
	}
	if f, _ := tr.Job.Failure(); f.Message != "502 again" || f.Path != "" {
		t.Errorf("failure %+v", f)
	}
	if c := tr.Job.Clock(); !c.Equal(t0.Add(8 * time.Second)) {
		t.Errorf("clock %v, want the last result's time", c)
	}
}

func TestRetryNotRetried(t *testing.T) {
	policy := ast.Retry{Attempts: 5, Initial: time.Second, NonRetryable: []string{"card_declined"}}
	for _, tc := range []struct {
		name string
		res  func(a job.Action) job.Result
	}{
		{"a kind the policy lists", func(a job.Action) job.Result { r := a.Fail("no"); r.Kind = "card_declined"; return r }},
		{"a failure the handler made final", func(a job.Action) job.Result { r := a.Fail("no"); r.Final = true; return r }},
		{"a deadline kind", func(a job.Action) job.Result { r := a.Fail("no"); r.Kind = job.KindDeadline; return r }},
	} {
		r := newRetryRun(t, ast.Act("charge", 1).WithRetry(policy))
		tr := r.apply(tc.res(r.tr.Actions[0]))
		if tr.Job.Status() != job.StatusFailed || len(tr.Timers) != 0 {
			t.Errorf("%s: %s, timers %v", tc.name, tr.Job.Status(), tr.Timers)
		}
	}
	// A timeout is retried unless listed.
	r := newRetryRun(t, ast.Act("charge", 1).WithRetry(policy))
	res := r.tr.Actions[0].Fail("too slow")
	res.Kind = job.KindTimeout
	if tr := r.apply(res); len(tr.Timers) != 1 {
		t.Errorf("a timeout was not retried: %v", tr.Timers)
	}
}

// TestRetryUnderFrozenPar: a retry is new work. A leaf waiting for its
// retry when a sibling fails gives up at once, failing with its last
// failure; a leaf whose attempt fails in the batch that freezes its par
// never waits; inside a finally block that started, retries go on.
func TestRetryUnderFrozenPar(t *testing.T) {
	policy := ast.Retry{Attempts: 3, Initial: time.Minute}
	r := newRetryRun(t, ast.Par(ast.Act("flaky", 1).WithRetry(policy), ast.Act("other", 2)))
	flaky, other := r.tr.Actions[0], r.tr.Actions[1]
	tr := r.apply(failAt(flaky, "first", t0))
	if len(tr.Timers) != 1 {
		t.Fatalf("timers %v", tr.Timers)
	}
	timer := tr.Timers[0]
	tr = r.apply(other.Fail("boom"))
	if tr.Job.Status() != job.StatusFailed || len(tr.Job.Timers()) != 0 {
		t.Fatalf("the par froze: the waiting leaf gives up: %s, timers %v\n%s", tr.Job.Status(), tr.Job.Timers(), job.Describe(tr.Job))
	}
	if f, _ := tr.Job.Failure(); f.Path != "par[1]" || f.Others != 1 {
		t.Errorf("failure %+v: want par[1] first, the gave-up leaf counted", f)
	}
	late := r.apply(timer.Fire(t0.Add(time.Minute)))
	if late.Changed() {
		t.Errorf("the withdrawn timer's firing applied")
	}

	// Same batch: the retryable failure and the freezing failure.
	r = newRetryRun(t, ast.Par(ast.Act("flaky", 1).WithRetry(policy), ast.Act("other", 2)))
	tr = r.apply(failAt(r.tr.Actions[0], "first", t0), r.tr.Actions[1].Fail("boom"))
	if tr.Job.Status() != job.StatusFailed || len(tr.Timers) != 0 || len(tr.Job.Timers()) != 0 {
		t.Fatalf("same batch: %s, timers %v", tr.Job.Status(), tr.Timers)
	}

	// In a finally block that started, the retries go on.
	r = newRetryRun(t, ast.Par(ast.Try(ast.Act("body", 1), ast.Finally(ast.Act("cleanup", 2).WithRetry(policy))), ast.Act("other", 3)))
	body, other := r.tr.Actions[0], r.tr.Actions[1]
	tr = r.apply(body.Succeed(nil))
	cleanup := tr.Actions[0]
	tr = r.apply(failAt(cleanup, "busy", t0), other.Fail("boom"))
	if len(tr.Timers) != 1 || tr.Job.Done() {
		t.Fatalf("a finally's retries go on under a frozen par: %s, timers %v", tr.Job.Status(), tr.Timers)
	}
	tr = r.apply(tr.Timers[0].Fire(tr.Timers[0].Due))
	tr = r.apply(tr.Actions[0].Succeed(nil))
	if tr.Job.Status() != job.StatusFailed {
		t.Fatalf("%s", tr.Job.Status())
	}
}

// TestBackoffJitter: jitter moves each wait within ±jitter of it, the same
// way every time for the same job, leaf and attempt, and differently for
// other attempts; the cap applies before the jitter.
func TestBackoffJitter(t *testing.T) {
	policy := ast.Retry{Attempts: 10, Initial: time.Second, Multiplier: 3, Max: 10 * time.Second, Jitter: 0.5}
	waits := map[time.Duration]bool{}
	r := newRetryRun(t, ast.Act("flaky", nil).WithRetry(policy))
	at := t0
	for attempt := 1; attempt < 10; attempt++ {
		tr := r.apply(failAt(r.tr.Actions[0], "x", at))
		d := tr.Timers[0].Due.Sub(at)
		base := time.Second * time.Duration(min(10, pow3(attempt-1)))
		if d < base/2 || d > base*3/2 {
			t.Errorf("attempt %d waits %v, want within ±50%% of %v", attempt+1, d, base)
		}
		waits[d] = true
		at = tr.Timers[0].Due
		r.apply(tr.Timers[0].Fire(at))
	}
	if len(waits) < 5 {
		t.Errorf("jitter drew only %d distinct waits over 9 attempts", len(waits))
	}
	// The factors themselves differ from attempt to attempt (each wait is
	// not the same multiple of its base), and across jobs whose IDs differ
	// in their last byte they spread over the whole ±jitter range.
	factor := func(id job.ID, attempt int) float64 {
		tr, err := job.New(id, ast.Act("flaky", nil).WithRetry(ast.Retry{Attempts: attempt, Initial: time.Second, Multiplier: 1, Jitter: 0.5}), job.StartedAt(t0))
		if err != nil {
			t.Fatal(err)
		}
		for a := 1; ; a++ {
			tr, err = job.Restart(tr.Job, []job.Result{failAt(tr.Actions[0], "x", t0)})
			if err != nil {
				t.Fatal(err)
			}
			if a+1 == attempt {
				return float64(tr.Timers[0].Due.Sub(t0)) / float64(time.Second)
			}
			if tr, err = job.Restart(tr.Job, []job.Result{tr.Timers[0].Fire(t0)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	spread := func(fs []float64) (lo, hi, mean float64) {
		lo, hi = fs[0], fs[0]
		for _, f := range fs {
			lo, hi, mean = min(lo, f), max(hi, f), mean+f/float64(len(fs))
		}
		return lo, hi, mean
	}
	var byAttempt []float64
	for a := 2; a <= 10; a++ {
		byAttempt = append(byAttempt, factor("r", a))
	}
	if lo, hi, _ := spread(byAttempt); hi-lo < 0.2 {
		t.Errorf("the factors of attempts 2 to 10 span only %.3f to %.3f: %v", lo, hi, byAttempt)
	}
	var byJob []float64
	for c := 0; c < 400; c++ {
		byJob = append(byJob, factor(job.ID(fmt.Sprintf("order-%c%c", 'a'+c/26%26, 'a'+c%26)), 2))
	}
	if lo, hi, mean := spread(byJob); lo > 0.55 || hi < 1.45 || mean < 0.93 || mean > 1.07 {
		t.Errorf("the factors of 400 jobs span %.3f to %.3f, mean %.3f: want about 0.5 to 1.5, mean 1", lo, hi, mean)
	}
	// The same job again waits the same.
	r2 := newRetryRun(t, ast.Act("flaky", nil).WithRetry(policy))
	tr := r2.apply(failAt(r2.tr.Actions[0], "x", t0))
	r3 := newRetryRun(t, ast.Act("flaky", nil).WithRetry(policy))
	tr3 := r3.apply(failAt(r3.tr.Actions[0], "y", t0))
	if !tr.Timers[0].Due.Equal(tr3.Timers[0].Due) {
		t.Errorf("the same job, leaf and attempt wait %v and %v", tr.Timers[0].Due, tr3.Timers[0].Due)
	}
}

func pow3(n int) int {
	p := 1
	for range n {
		p *= 3
	}
	return p
}

// TestBatchOrderTies: a batch is a set (doc.go: permuting the results
// inside a batch changes nothing). Two results for the same attempt that
// differ only in their time, kind or finality (a redelivery stamped
// anew, a runner that classified a failure twice), and two firings of
// one timer at different times, must give the same job and the same
// transition in either order: which one applies, and what the other is
// ignored as, cannot depend on where they stand in the batch.
func TestBatchOrderTies(t *testing.T) {
	w := ast.Par(
		ast.Act("a", 1).WithRetry(ast.Retry{Attempts: 3, Initial: time.Second, NonRetryable: []string{"card_declined"}}),
		ast.Act("b", 2).WithRetry(ast.Retry{Attempts: 3, Initial: time.Second}),
	)
	r := newRetryRun(t, w)
	a, b := r.tr.Actions[0], r.tr.Actions[1]
	early, late := failAt(a, "x", t0), failAt(a, "x", t0.Add(time.Hour))
	declined := early
	declined.Kind = "card_declined"
	final := early
	final.Final = true
	tr := r.apply(failAt(b, "y", t0))
	tm := tr.Timers[0]
	rootDeadline, err := job.New("r", ast.Par(ast.Act("a", 1), ast.Act("b", 2)).WithDeadline(time.Minute), job.StartedAt(t0))
	if err != nil || len(rootDeadline.Timers) != 1 || rootDeadline.Timers[0].ID != "root@deadline" {
		t.Fatalf("%v: timers %v", err, rootDeadline.Timers)
	}
	for _, tc := range []struct {
		name string
		from job.Job
		x, y job.Result
	}{
		{"result times", r.tr.Job, early, late},
		{"result kinds", r.tr.Job, early, declined},
		{"result finality", r.tr.Job, early, final},
		{"firing times", tr.Job, tm.Fire(tm.Due), tm.Fire(tm.Due.Add(time.Hour))},
		// The root's timers are read with or without "root" ("@deadline"
		// too): two spellings of one firing, at one time, are two results
		// that differ only in their ID (found by TestTimedSchedules).
		{"timer ID spellings", rootDeadline.Job, rootDeadline.Timers[0].Fire(t0.Add(time.Minute)),
			job.Result{JobID: "r", ActionID: "@deadline", At: t0.Add(time.Minute)}},
	} {
		xy, err1 := job.Restart(tc.from, []job.Result{tc.x, tc.y})
		yx, err2 := job.Restart(tc.from, []job.Result{tc.y, tc.x})
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		e1, _ := job.Encode(xy.Job)
		e2, _ := job.Encode(yx.Job)
		if string(e1) != string(e2) {
			t.Errorf("%s: the order of the batch changed the job:\n%s\n%s", tc.name, e1, e2)
		}
		if !reflect.DeepEqual(xy.Timers, yx.Timers) || !reflect.DeepEqual(xy.Ignored, yx.Ignored) || !reflect.DeepEqual(xy.Step, yx.Step) {
			t.Errorf("%s: the order of the batch changed the transition:\n%+v\n%+v", tc.name, xy, yx)
		}
	}
}
