package job_test

import (
	"strings"
	"testing"
	"time"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
)

func ids(acts []job.Action) string {
	var s []string
	for _, a := range acts {
		s = append(s, a.ID)
	}
	return strings.Join(s, " ")
}

func TestDeadlineStopsSubtree(t *testing.T) {
	r := newRetryRun(t, ast.Seq(ast.Act("a", 1), ast.Act("b", 2), ast.Act("c", 3)).WithDeadline(5*time.Second))
	if len(r.tr.Timers) != 1 || r.tr.Timers[0].ID != "root@deadline" || !r.tr.Timers[0].Due.Equal(t0.Add(5*time.Second)) {
		t.Fatalf("New's timers %v: want the deadline from the start time", r.tr.Timers)
	}
	deadline := r.tr.Timers[0]
	tr := r.apply(job.Result{JobID: "r", ActionID: "seq[0]#1", At: t0.Add(time.Second)})
	b := tr.Actions[0]
	tr = r.apply(deadline.Fire(t0.Add(5 * time.Second)))
	if ids(tr.Stops) != "seq[1]#1" || len(tr.Actions) != 0 || tr.Job.Status() != job.StatusFailed {
		t.Fatalf("after the deadline: stops %v, actions %v, %s", ids(tr.Stops), ids(tr.Actions), tr.Job.Status())
	}
	f, _ := tr.Job.Failure()
	if f.Kind != job.KindDeadline || f.Path != "" || f.Action != "" || f.Message != "deadline of 5s exceeded" {
		t.Errorf("failure %+v", f)
	}
	late := r.apply(b.Succeed(nil))
	if late.Changed() || late.Ignored[0].Reason != job.IgnoredJobDone {
		t.Errorf("a stopped action's late result: %+v", late.Ignored)
	}
}

// TestDeadlineResultWins: a result that settles the node in the same batch
// as its deadline's firing wins.
func TestDeadlineResultWins(t *testing.T) {
	r := newRetryRun(t, ast.Act("a", 1).WithDeadline(time.Second))
	tr := r.apply(r.tr.Actions[0].Succeed(nil), r.tr.Timers[0].Fire(t0.Add(time.Second)))
	if tr.Job.Status() != job.StatusSucceeded || len(tr.Ignored) != 1 || tr.Ignored[0].Reason != job.IgnoredJobDone {
		t.Fatalf("%s, ignored %+v", tr.Job.Status(), tr.Ignored)
	}
}

// TestDeadlineFinallyRuns: an expired try still runs its finally; a
// finally that started before the deadline is not stopped; the node fails
// by its deadline once they settle, whatever they did.
func TestDeadlineFinallyRuns(t *testing.T) {
	r := newRetryRun(t, ast.Try(ast.Seq(ast.Act("a", 1), ast.Act("b", 2)), ast.Finally(ast.Act("f", 3))).WithDeadline(time.Second))
	tr := r.apply(r.tr.Timers[0].Fire(t0.Add(time.Second)))
	if ids(tr.Stops) != "body.seq[0]#1" || ids(tr.Actions) != "finally#1" || tr.Job.Done() {
		t.Fatalf("stops %v, actions %v, %s", ids(tr.Stops), ids(tr.Actions), tr.Job.Status())
	}
	tr = r.apply(tr.Actions[0].Succeed(nil))
	if f, _ := tr.Job.Failure(); tr.Job.Status() != job.StatusFailed || f.Kind != job.KindDeadline {
		t.Fatalf("%s %+v", tr.Job.Status(), f)
	}

	r = newRetryRun(t, ast.Seq(ast.Try(ast.Act("x", 1), ast.Finally(ast.Act("f", 2))), ast.Act("y", 3)).WithDeadline(time.Second))
	deadline := r.tr.Timers[0]
	tr = r.apply(r.tr.Actions[0].Succeed(nil)) // x; the finally starts
	fin := tr.Actions[0]
	tr = r.apply(deadline.Fire(t0.Add(time.Second)))
	if len(tr.Stops) != 0 || tr.Job.Done() {
		t.Fatalf("a finally that started is not stopped: stops %v, %s", ids(tr.Stops), tr.Job.Status())
	}
	tr = r.apply(fin.Fail("cleanup failed"))
	if f, _ := tr.Job.Failure(); tr.Job.Status() != job.StatusFailed || f.Kind != job.KindDeadline || len(tr.Actions) != 0 {
		t.Fatalf("y must not start, the seq fails by its deadline: %s %+v %v", tr.Job.Status(), f, ids(tr.Actions))
	}
}

// TestDeadlineFreezesPar: outside it, an expired node's failure is a
// failure like any other: it freezes a par, whose running child goes on.
func TestDeadlineFreezesPar(t *testing.T) {
	r := newRetryRun(t, ast.Par(ast.Seq(ast.Act("a", 1), ast.Act("a2", 1)).WithDeadline(time.Second), ast.Seq(ast.Act("b", 2), ast.Act("b2", 2))))
	a, b := r.tr.Actions[0], r.tr.Actions[1]
	tr := r.apply(r.tr.Timers[0].Fire(t0.Add(time.Second)))
	if ids(tr.Stops) != a.ID || tr.Job.Done() {
		t.Fatalf("stops %v, %s", ids(tr.Stops), tr.Job.Status())
	}
	tr = r.apply(b.Succeed(nil))
	if f, _ := tr.Job.Failure(); tr.Job.Status() != job.StatusFailed || f.Path != "par[0]" || f.Kind != job.KindDeadline || len(tr.Actions) != 0 {
		t.Fatalf("b2 must not start, the par fails by par[0]'s deadline: %s %+v %v", tr.Job.Status(), f, ids(tr.Actions))
	}
}

// TestDeadlineOfALaterNode counts from the clock of the step that starts
// the node, and a leaf's own deadline bounds all its attempts.
func TestDeadlineOfALaterNode(t *testing.T) {
	w := ast.Seq(ast.Act("a", 1), ast.Act("b", 2).WithDeadline(2*time.Second).WithRetry(ast.Retry{Attempts: 5, Initial: time.Second}))
	r := newRetryRun(t, w)
	tr := r.apply(job.Result{JobID: "r", ActionID: "seq[0]#1", At: t0.Add(10 * time.Second)})
	if len(tr.Timers) != 1 || tr.Timers[0].ID != "seq[1]@deadline" || !tr.Timers[0].Due.Equal(t0.Add(12*time.Second)) {
		t.Fatalf("timers %v: want b's deadline 2s after the step that started it", tr.Timers)
	}
	deadline := tr.Timers[0]
	tr = r.apply(failAt(tr.Actions[0], "flaky", t0.Add(11*time.Second)))
	if len(tr.Timers) != 1 || tr.Timers[0].ID != "seq[1]@retry#2" {
		t.Fatalf("timers %v", tr.Timers)
	}
	tr = r.apply(deadline.Fire(t0.Add(12 * time.Second)))
	if f, _ := tr.Job.Failure(); tr.Job.Status() != job.StatusFailed || f.Kind != job.KindDeadline || f.Path != "seq[1]" || len(tr.Job.Timers()) != 0 {
		t.Fatalf("the waiting leaf's deadline: %s %+v, timers %v\n%s", tr.Job.Status(), f, tr.Job.Timers(), job.Describe(tr.Job))
	}
}

func TestCancel(t *testing.T) {
	r := newRetryRun(t, ast.Par(ast.Act("a", 1), ast.Try(ast.Act("b", 2), ast.Finally(ast.Act("f", 3))), ast.Act("c", 4).WithRetry(ast.Retry{Attempts: 3, Initial: time.Hour})))
	a := r.tr.Actions[0]
	tr := r.apply(failAt(r.tr.Actions[2], "flaky", t0)) // c waits for its retry
	tr = r.apply(job.CancelResult("r", "the customer cancelled the order"))
	if ids(tr.Stops) != "par[0]#1 par[1].body#1" || ids(tr.Actions) != "par[1].finally#1" || tr.Job.Done() || len(tr.Job.Timers()) != 0 {
		t.Fatalf("after the cancel: stops %v, actions %v, %s, timers %v", ids(tr.Stops), ids(tr.Actions), tr.Job.Status(), tr.Job.Timers())
	}
	if reason, ok := tr.Job.Cancelled(); !ok || reason != "the customer cancelled the order" {
		t.Errorf("Cancelled() = %q, %v", reason, ok)
	}
	again, err := job.Cancel(tr.Job, "again")
	if err != nil || again.Changed() {
		t.Errorf("a second cancel changed the job: %v", err)
	}
	fin := tr.Actions[0]
	tr = r.apply(fin.Fail("cleanup failed"), a.Succeed(nil))
	if tr.Job.Status() != job.StatusCancelled || !tr.Job.Done() {
		t.Fatalf("after the finally: %s\n%s", tr.Job.Status(), job.Describe(tr.Job))
	}
	if _, failed := tr.Job.Failure(); failed {
		t.Errorf("a cancelled job reports a failure")
	}
	if reason, _ := tr.Job.Cancelled(); reason != "the customer cancelled the order" {
		t.Errorf("the first reason stays: %q", reason)
	}
	ended, err := job.Cancel(tr.Job, "too late")
	if err != nil || ended.Changed() {
		t.Errorf("cancelling an ended job changed it: %v", err)
	}
	// Nothing left: cancelled at once.
	r = newRetryRun(t, ast.Act("a", 1))
	tr = r.apply(job.CancelResult("r", "stop"))
	if tr.Job.Status() != job.StatusCancelled || ids(tr.Stops) != "root#1" {
		t.Fatalf("%s, stops %v", tr.Job.Status(), ids(tr.Stops))
	}
	if _, err := job.Cancel(tr.Job, ""); err == nil {
		t.Errorf("a cancel without a reason was accepted")
	}
}

// TestDeadlineAndCancelSurviveEncoding: mid-expiry and mid-cancel jobs
// encode, decode and finish the same.
func TestDeadlineAndCancelSurviveEncoding(t *testing.T) {
	r := newRetryRun(t, ast.Par(ast.Try(ast.Act("b", 2), ast.Finally(ast.Act("f", 3))), ast.Act("x", 1)).WithDeadline(time.Second))
	tr := r.apply(r.tr.Timers[0].Fire(t0.Add(time.Second)))
	enc, err := job.Encode(tr.Job)
	if err != nil {
		t.Fatal(err)
	}
	d, err := job.Decode(enc)
	if err != nil {
		t.Fatalf("Decode: %v\n%s", err, enc)
	}
	if job.Describe(d) != job.Describe(tr.Job) || ids(d.Outstanding()) != "par[0].finally#1" {
		t.Fatalf("decoded:\n%s\nlive:\n%s\noutstanding %v", job.Describe(d), job.Describe(tr.Job), ids(d.Outstanding()))
	}
	c, err := job.Cancel(d, "stop")
	if err != nil {
		t.Fatal(err)
	}
	enc, _ = job.Encode(c.Job)
	d, err = job.Decode(enc)
	if err != nil {
		t.Fatalf("Decode of the cancelled: %v\n%s", err, enc)
	}
	fin, err := job.Restart(d, []job.Result{d.Outstanding()[0].Succeed(nil)})
	if err != nil || fin.Job.Status() != job.StatusCancelled {
		t.Fatalf("%v %s\n%s", err, fin.Job.Status(), job.Describe(fin.Job))
	}
}

// TestCancelWithdrawsRootDeadline: cancelling a job whose root has a
// deadline expires the root, so the root's deadline timer is withdrawn
// (Timer: "a timer a later transition withdraws ... is simply not pending
// any more"; Check: a deadline timer belongs to a running node that has
// not expired). The cancelled job must pass Check, list no timer, and
// survive Encode and Decode, or a runner that stores it cannot load it
// again.
func TestCancelWithdrawsRootDeadline(t *testing.T) {
	for _, w := range []ast.Node{
		ast.Act("a", 1).WithDeadline(time.Hour),
		ast.Par(ast.Act("a", 1), ast.Try(ast.Act("b", 2), ast.Finally(ast.Act("f", 3)))).WithDeadline(time.Hour),
	} {
		tr, err := job.New("r", w, job.StartedAt(t0))
		if err != nil {
			t.Fatal(err)
		}
		tr, err = job.Cancel(tr.Job, "stop")
		if err != nil {
			t.Fatal(err)
		}
		if err := job.Check(tr.Job); err != nil {
			t.Errorf("Check of the cancelled job: %v\n%s", err, job.Describe(tr.Job))
		}
		if ts := tr.Job.Timers(); len(ts) != 0 {
			t.Errorf("the cancelled job still waits for %v", ts)
		}
		enc, err := job.Encode(tr.Job)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := job.Decode(enc); err != nil {
			t.Errorf("the stored cancelled job does not load: %v", err)
		}
	}
}

// TestDeadlineUnderExpiredKeepsRunningNodesTimer: when a node expires, a
// node under it that still runs (a try whose finally block runs, whether
// it had started before or starts now that the body was stopped) is not
// stopped, and keeps its own deadline (expire: finally blocks "run in
// full (their deadlines and retries go on)"; Check: a running node with a
// deadline that has not expired has its deadline timer). The job must
// pass Check and decode after the outer deadline, and the inner deadline,
// when it fires, stops nothing: the finally runs in full.
func TestDeadlineUnderExpiredKeepsRunningNodesTimer(t *testing.T) {
	for _, startFinally := range []bool{false, true} {
		w := ast.Seq(ast.Try(ast.Act("a", 1), ast.Finally(ast.Act("f", 2))).WithDeadline(5*time.Second), ast.Act("b", 3)).WithDeadline(time.Second)
		r := newRetryRun(t, w)
		if startFinally {
			r.tr = r.apply(job.Result{JobID: "r", ActionID: "seq[0].body#1", At: t0})
		}
		tr, err := job.Restart(r.tr.Job, []job.Result{{JobID: "r", ActionID: "root@deadline", At: t0.Add(time.Second)}})
		if err != nil {
			t.Fatal(err)
		}
		if err := job.Check(tr.Job); err != nil {
			t.Errorf("finally started before: %v: Check after the outer deadline: %v\n%s", startFinally, err, job.Describe(tr.Job))
		}
		if enc, err := job.Encode(tr.Job); err != nil {
			t.Fatal(err)
		} else if _, err := job.Decode(enc); err != nil {
			t.Errorf("finally started before: %v: the stored job does not load: %v", startFinally, err)
		}
		var timers []string
		for _, tm := range tr.Job.Timers() {
			timers = append(timers, tm.ID)
		}
		if strings.Join(timers, " ") != "seq[0]@deadline" || ids(tr.Job.Outstanding()) != "seq[0].finally#1" {
			t.Errorf("finally started before: %v: timers %v, outstanding %v; want the try's deadline and its finally", startFinally, timers, ids(tr.Job.Outstanding()))
			continue
		}
		inner, err := job.Restart(tr.Job, []job.Result{{JobID: "r", ActionID: "seq[0]@deadline", At: t0.Add(5 * time.Second)}})
		if err != nil || len(inner.Stops) != 0 || job.Check(inner.Job) != nil {
			t.Errorf("the inner deadline: %v, stops %v, Check %v", err, ids(inner.Stops), job.Check(inner.Job))
		}
	}
}

// TestDeadlineNestedSameBatch: a node's deadline and the deadline of a
// node it stops fire in one batch. The inner node is stopped with
// everything under it, leaf or not, so its deadline is withdrawn and its
// firing ignored: it ends cancelled, as when the firings come one batch
// apart, and whether it is a leaf or a seq.
func TestDeadlineNestedSameBatch(t *testing.T) {
	for _, inner := range []ast.Node{
		ast.Act("a", 1).WithDeadline(2 * time.Second),
		ast.Seq(ast.Act("a", 1), ast.Act("b", 2)).WithDeadline(2 * time.Second),
	} {
		r := newRetryRun(t, ast.Par(inner, ast.Act("c", 3)).WithDeadline(2*time.Second))
		var fire []job.Result
		for _, tm := range r.tr.Timers {
			fire = append(fire, tm.Fire(tm.Due))
		}
		tr := r.apply(fire...)
		if len(tr.Ignored) != 1 || tr.Ignored[0].Result.ActionID != "par[0]@deadline" || tr.Ignored[0].Reason != job.IgnoredTimer {
			t.Errorf("%s: ignored %v; want the inner deadline's firing, not pending", inner.Kind, tr.Ignored)
		}
		var st job.Status
		tr.Job.Walk(func(n job.NodeInfo) bool {
			if n.Path == "par[0]" {
				st = n.Status
			}
			return true
		})
		if st != job.StatusCancelled {
			t.Errorf("%s: the inner node is %s, want cancelled (stopped by the outer deadline)\n%s", inner.Kind, st, job.Describe(tr.Job))
		}
	}
}

// TestCancelWaitingRootLeafProgress: a job whose only leaf waits for its
// retry is cancelled: the leaf gives up and the root, a cancelled job's,
// ends cancelled, so it is not counted as settled (Progress counts the
// leaves that succeeded or failed), live as after Encode and Decode:
// Describe must not change over a store and a load.
func TestCancelWaitingRootLeafProgress(t *testing.T) {
	r := newRetryRun(t, ast.Act("a", 1).WithRetry(ast.Retry{Attempts: 2, Initial: time.Second}))
	r.apply(failAt(r.tr.Actions[0], "x", t0))
	tr := r.apply(job.CancelResult("r", "stop"))
	enc, _ := job.Encode(tr.Job)
	d, err := job.Decode(enc)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := job.Describe(tr.Job), job.Describe(d); a != b {
		t.Errorf("Describe changed over Encode/Decode:\n%s\n%s", a, b)
	}
	if settled, _ := tr.Job.Progress(); settled != 0 || tr.Job.Status() != job.StatusCancelled {
		t.Errorf("%s, %d settled; want cancelled, 0 settled", tr.Job.Status(), settled)
	}
}

// TestDescribeDeadlineAndCancel: Describe shows a pending deadline with its
// due time, and a cancelled job's reason.
func TestDescribeDeadlineAndCancel(t *testing.T) {
	r := newRetryRun(t, ast.Seq(ast.Act("a", 1).WithDeadline(2*time.Second), ast.Act("b", 2)))
	d := job.Describe(r.tr.Job)
	if want := "deadline of seq[0] due " + t0.Add(2*time.Second).UTC().Format(time.RFC3339Nano) + "\n"; !strings.HasSuffix(d, want) {
		t.Errorf("Describe does not end with %q:\n%s", want, d)
	}
	tr, err := job.Cancel(r.tr.Job, "stop\nnow")
	if err != nil {
		t.Fatal(err)
	}
	d = job.Describe(tr.Job)
	if first, _, _ := strings.Cut(d, "\n"); !strings.HasPrefix(first, `job r v2: cancelled (cancel: "stop\nnow")`) || strings.Contains(d, "deadline of") {
		t.Errorf("Describe of the cancelled job:\n%s", d)
	}
}

// TestCancelRootLeaf: a cancelled job whose root is a leaf ends cancelled
// with nothing settled (the stopped leaf did not fail), in memory and
// once decoded; a leaf whose own deadline runs out fails, settled, and
// Describe shows why.
func TestCancelRootLeaf(t *testing.T) {
	r := newRetryRun(t, ast.Act("a", 1))
	tr, err := job.Cancel(r.tr.Job, "no")
	if err != nil {
		t.Fatal(err)
	}
	if s, n := tr.Job.Progress(); tr.Job.Status() != job.StatusCancelled || s != 0 || n != 1 || ids(tr.Stops) != "root#1" {
		t.Fatalf("%s, %d/%d settled, stops %v", tr.Job.Status(), s, n, ids(tr.Stops))
	}
	enc, err := job.Encode(tr.Job)
	if err != nil {
		t.Fatal(err)
	}
	d, err := job.Decode(enc)
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := d.Progress(); s != 0 || d.Running() != 0 {
		t.Errorf("decoded: %d settled, %d running", s, d.Running())
	}

	r = newRetryRun(t, ast.Act("a", 1).WithDeadline(time.Second))
	tr = r.apply(r.tr.Timers[0].Fire(t0.Add(time.Second)))
	if s, _ := tr.Job.Progress(); tr.Job.Status() != job.StatusFailed || s != 1 {
		t.Fatalf("%s, %d settled", tr.Job.Status(), s)
	}
	if desc := job.Describe(tr.Job); !strings.Contains(desc, "act a 1: failed #1: [deadline] deadline of 1s exceeded\n") {
		t.Errorf("Describe:\n%s", desc)
	}
}

// TestCancelFailureBeforeGiveUp: a cancel arrives with two failures, one
// retryable (its leaf gives up its retries because of the cancel) and one
// final in a try whose rescue the cancel keeps from starting. The par
// reports the final failure: a leaf that gives up because of a freeze
// fails after the failures of its batch, whatever the order the reducer
// handles them in (found by TestTimedSchedules).
func TestCancelFailureBeforeGiveUp(t *testing.T) {
	r := newRetryRun(t, ast.Seq(ast.Par(
		ast.Act("a", 1).WithRetry(ast.Retry{Attempts: 2, Initial: time.Hour}),
		ast.Try(ast.Act("b", 2), ast.Rescue(ast.Act("c", 3))),
	)))
	a, b := r.tr.Actions[0], r.tr.Actions[1]
	tr := r.apply(failAt(a, "flaky", t0), failAt(b, "declined", t0), job.CancelResult("r", "stop"))
	if !tr.Job.Done() || tr.Job.Status() != job.StatusCancelled {
		t.Fatalf("%s\n%s", tr.Job.Status(), job.Describe(tr.Job))
	}
	var f *job.Failure
	tr.Job.Walk(func(n job.NodeInfo) bool {
		if n.Path == "seq[0]" {
			f = n.Failure
		}
		return true
	})
	if f == nil || f.Path != "seq[0].par[1].body" || f.Others != 1 {
		t.Fatalf("the par's failure %+v, want seq[0].par[1].body's with one other\n%s", f, job.Describe(tr.Job))
	}
}

// TestTimerIDsNeedAPath: the root's deadline is "root@deadline", as its
// action is "root#1"; an ID with an empty path names no timer (only the
// job's cancel, "@cancel", has none), and no action either.
func TestTimerIDsNeedAPath(t *testing.T) {
	for _, id := range []string{"@deadline", "@retry#2"} {
		r := newRetryRun(t, ast.Seq(ast.Act("a", 1).WithRetry(ast.Retry{Attempts: 2, Initial: time.Second})).WithDeadline(time.Minute))
		tr := r.apply(failAt(r.tr.Actions[0], "flaky", t0))
		got, err := job.Restart(tr.Job, []job.Result{{JobID: "r", ActionID: id, At: t0.Add(time.Hour)}})
		if err != nil {
			t.Fatal(err)
		}
		if got.Changed() || len(got.Ignored) != 1 || got.Ignored[0].Reason != job.IgnoredUnknown {
			t.Errorf("%s: changed %v, ignored %+v; want it ignored as unknown", id, got.Changed(), got.Ignored)
		}
	}
}
