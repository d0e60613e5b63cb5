package job_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
)

// Why a result that comes after a stop is ignored (Transition.Stops,
// IgnoreReason).

// TestStoppedByOwnDeadline: the late result of a leaf stopped by its own
// deadline is ignored as stopped (Transition.Stops), not as a duplicate;
// with a retry policy too, while a repeat of an attempt whose result
// applied before the leaf gave up stays a duplicate, through Encode and
// Decode as well.
func TestStoppedByOwnDeadline(t *testing.T) {
	for i, w := range []ast.Node{
		ast.Par(ast.Act("a", nil).WithDeadline(time.Second), ast.Act("c", nil)),
		ast.Par(ast.Act("a", nil).WithDeadline(time.Second).WithRetry(ast.Retry{Attempts: 3, Initial: time.Millisecond}), ast.Act("c", nil)),
	} {
		r := newRetryRun(t, w)
		first := r.tr.Actions[0]
		deadline := r.tr.Timers[0]
		if w.Children[0].Retry != nil {
			// Attempt 1 fails; attempt 2 runs when the deadline fires.
			r.apply(failAt(first, "flaky", t0.Add(time.Millisecond)))
			tr := r.apply(job.Result{JobID: "r", ActionID: "par[0]@retry#2", At: t0.Add(3 * time.Millisecond)})
			if ids(tr.Actions) != "par[0]#2" {
				t.Fatalf("retry: actions %q", ids(tr.Actions))
			}
		}
		tr := r.apply(deadline.Fire(t0.Add(time.Second)))
		if len(tr.Stops) != 1 {
			t.Fatalf("stops %q", ids(tr.Stops))
		}
		stopped := tr.Stops[0]
		for _, j := range []job.Job{tr.Job, propRoundTrip(t, tr.Job)} {
			late, err := job.Restart(j, []job.Result{stopped.Succeed(nil)})
			if err != nil || len(late.Ignored) != 1 || late.Ignored[0].Reason != job.IgnoredStopped {
				t.Errorf("case %d: the late result of %s: %v %+v, want ignored as stopped", i, stopped.ID, err, late.Ignored)
			}
			if w.Children[0].Retry != nil {
				again, err := job.Restart(j, []job.Result{failAt(first, "flaky", t0.Add(time.Millisecond))})
				if err != nil || len(again.Ignored) != 1 || again.Ignored[0].Reason != job.IgnoredStale {
					t.Errorf("a repeat of attempt 1: %v %+v, want stale", err, again.Ignored)
				}
			}
		}
	}
}

// TestGaveUpByOwnDeadlineDuplicate: a leaf waiting for its retry when its
// own deadline fires gives up; a repeat of its last attempt's result, which
// applied, is a duplicate, not a stopped action's.
func TestGaveUpByOwnDeadlineDuplicate(t *testing.T) {
	r := newRetryRun(t, ast.Par(ast.Act("a", nil).WithDeadline(time.Second).WithRetry(ast.Retry{Attempts: 3, Initial: time.Minute}), ast.Act("c", nil)))
	first := r.tr.Actions[0]
	deadline := r.tr.Timers[0]
	res := failAt(first, "flaky", t0.Add(time.Millisecond))
	r.apply(res)
	tr := r.apply(deadline.Fire(t0.Add(time.Second)))
	if len(tr.Stops) != 0 || tr.Job.Done() {
		t.Fatalf("stops %q, %s", ids(tr.Stops), tr.Job.Status())
	}
	for _, j := range []job.Job{tr.Job, propRoundTrip(t, tr.Job)} {
		again, err := job.Restart(j, []job.Result{res})
		if err != nil || len(again.Ignored) != 1 || again.Ignored[0].Reason != job.IgnoredDuplicate {
			t.Errorf("%v %+v, want duplicate", err, again.Ignored)
		}
	}
}

// TestCancelledStaleAttempt: a result for an earlier attempt of a leaf a
// cancel stopped is stale, as it was before the cancel; one for the
// attempt stopped is stopped; one for a later attempt was never dispatched.
func TestCancelledStaleAttempt(t *testing.T) {
	r := newRetryRun(t, ast.Par(ast.Act("a", nil).WithRetry(ast.Retry{Attempts: 3, Initial: time.Millisecond}), ast.Try(ast.Act("b", nil), ast.Finally(ast.Act("f", nil)))))
	a1 := r.tr.Actions[0]
	r.apply(failAt(a1, "flaky", t0.Add(time.Millisecond)))
	tr := r.apply(job.Result{JobID: "r", ActionID: "par[0]@retry#2", At: t0.Add(2 * time.Millisecond)})
	if ids(tr.Actions) != "par[0]#2" {
		t.Fatalf("actions %q", ids(tr.Actions))
	}
	tr = r.apply(job.CancelResult("r", "stop"))
	if ids(tr.Stops) != "par[0]#2 par[1].body#1" || tr.Job.Done() {
		t.Fatalf("stops %q, %s", ids(tr.Stops), tr.Job.Status())
	}
	for _, j := range []job.Job{tr.Job, propRoundTrip(t, tr.Job)} {
		for _, c := range []struct {
			id   string
			want job.IgnoreReason
		}{
			{"par[0]#1", job.IgnoredStale},
			{"par[0]#2", job.IgnoredStopped},
			{"par[0]#3", job.IgnoredNotDispatched},
		} {
			late, err := job.Restart(j, []job.Result{{JobID: "r", ActionID: c.id, Error: "late", At: t0.Add(time.Second)}})
			if err != nil || len(late.Ignored) != 1 || late.Ignored[0].Reason != c.want {
				t.Errorf("%s: %v %+v, want %s", c.id, err, late.Ignored, c.want)
			}
		}
	}
}

// TestStoppedFlagEncoding: a job with a leaf its own deadline stopped is
// written in format 6 (flag 4 on the leaf); Decode refuses that flag in an
// older format, and on a leaf that did not fail by its deadline.
func TestStoppedFlagEncoding(t *testing.T) {
	r := newRetryRun(t, ast.Par(ast.Act("a", nil).WithDeadline(time.Second), ast.Act("c", nil)))
	tr := r.apply(r.tr.Timers[0].Fire(t0.Add(time.Second)))
	enc := string(propEnc(t, tr.Job))
	if !strings.HasPrefix(enc, `{"format":6,`) || !strings.Contains(enc, `[1,3,0,1,0,0,0,2,0,6]`) {
		t.Fatalf("encoded as %s: want format 6 and the stopped leaf with flags 6", enc)
	}
	for _, c := range []struct{ name, doc, want string }{
		{"in format 5", strings.Replace(enc, `"format":6`, `"format":5`, 1), "flags 6 in format 5"},
		{"on a running leaf", strings.Replace(enc, `[2,1,0,1,0,0,0,0,0,0]`, `[2,1,0,1,0,0,0,0,0,4]`, 1), "stopped by its deadline, yet running"},
		{"without the expiry", strings.Replace(enc, `[1,3,0,1,0,0,0,2,0,6]`, `[1,3,0,1,0,0,0,2,0,4]`, 1), "stopped by its deadline, yet failed"},
	} {
		if _, err := job.Decode([]byte(c.doc)); !errors.Is(err, job.ErrCorrupt) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want ErrCorrupt saying %q", c.name, err, c.want)
		}
	}
}
