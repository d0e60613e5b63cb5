package job_test

import (
	"strings"
	"testing"
	"time"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
)

// The order inside one batch (doc.go, Batches): results are applied, then
// firings, then the tree settles, then new nodes start. These are the
// reproductions of issue 15, through the public API.

// batchRun starts w at t0 and applies one batch: the results of the
// actions at the paths in ok (each successful, at t0+at), and the firings
// of the timers named in fire (at t0+firedAt).
func batchRun(t *testing.T, w ast.Node, ok map[string]time.Duration, fail map[string]time.Duration, fire map[string]time.Duration) job.Transition {
	t.Helper()
	tr, err := job.New("b", w, job.StartedAt(t0))
	if err != nil {
		t.Fatal(err)
	}
	var batch []job.Result
	for _, a := range tr.Actions {
		if at, found := ok[a.ID]; found {
			r := a.Succeed(nil)
			r.At = t0.Add(at)
			batch = append(batch, r)
		}
		if at, found := fail[a.ID]; found {
			batch = append(batch, failAt(a, "boom", t0.Add(at)))
		}
	}
	for _, tm := range tr.Timers {
		if at, found := fire[tm.ID]; found {
			batch = append(batch, tm.Fire(t0.Add(at)))
		}
	}
	if len(batch) != len(ok)+len(fail)+len(fire) {
		t.Fatalf("batch %v: an action or timer is missing from New's %v, %v", batch, ids(tr.Actions), tr.Timers)
	}
	next, err := job.Restart(tr.Job, batch)
	if err != nil {
		t.Fatal(err)
	}
	if err := job.Check(next.Job); err != nil {
		t.Fatal(err)
	}
	if len(next.Ignored) > 0 {
		t.Fatalf("ignored %v", next.Ignored)
	}
	return next
}

// TestBatchDeadlineBeforeNextChild: seq(a, b) with a 10ms deadline; {a
// succeeded at +27ms, the deadline fires at +38ms}: b is never dispatched.
func TestBatchDeadlineBeforeNextChild(t *testing.T) {
	w := ast.Seq(ast.Act("a", nil), ast.Act("b", nil)).WithDeadline(10 * time.Millisecond)
	tr := batchRun(t, w, map[string]time.Duration{"seq[0]#1": 27 * time.Millisecond}, nil, map[string]time.Duration{"root@deadline": 38 * time.Millisecond})
	if len(tr.Actions) != 0 || len(tr.Stops) != 0 {
		t.Fatalf("actions %q, stops %q: want none", ids(tr.Actions), ids(tr.Stops))
	}
	f, _ := tr.Job.Failure()
	if tr.Job.Status() != job.StatusFailed || f.Kind != job.KindDeadline || f.Path != "" {
		t.Fatalf("%s, failure %+v: want failed by the root's deadline", tr.Job.Status(), f)
	}
	var b job.NodeInfo
	tr.Job.Walk(func(n job.NodeInfo) bool {
		if n.Path == "seq[1]" {
			b = n
		}
		return true
	})
	if b.Status != job.StatusCancelled || b.Attempt != 0 {
		t.Fatalf("b is %s at attempt %d: want cancelled, never dispatched", b.Status, b.Attempt)
	}
}

// TestBatchDeadlineFreezesPar: par(seq(a, b), c) with a 30ms deadline on
// c; {a succeeded, c's deadline fires}: the par froze in that batch, so b
// does not start, exactly as when c fails by a plain result.
func TestBatchDeadlineFreezesPar(t *testing.T) {
	w := ast.Par(ast.Seq(ast.Act("a", nil), ast.Act("b", nil)), ast.Act("c", nil).WithDeadline(30*time.Millisecond))
	ok := map[string]time.Duration{"par[0].seq[0]#1": 20 * time.Millisecond}
	for _, tc := range []struct {
		name       string
		fail, fire map[string]time.Duration
	}{
		{"deadline", nil, map[string]time.Duration{"par[1]@deadline": 30 * time.Millisecond}},
		{"failure", map[string]time.Duration{"par[1]#1": 25 * time.Millisecond}, nil},
	} {
		tr := batchRun(t, w, ok, tc.fail, tc.fire)
		if len(tr.Actions) != 0 {
			t.Errorf("%s: actions %q: want none (the par froze)", tc.name, ids(tr.Actions))
		}
		if tr.Job.Status() != job.StatusFailed {
			t.Errorf("%s: job %s, want failed", tc.name, tr.Job.Status())
		}
	}
}

// TestBatchDeadlineBeforeTry: seq(a, try(b, finally(c))) with a deadline on
// the seq; {a succeeded, the deadline fires}: the try was not entered
// when the deadline fired, so nothing under it runs: b is never
// dispatched, nor is the finally of a try that never started.
func TestBatchDeadlineBeforeTry(t *testing.T) {
	w := ast.Seq(ast.Act("a", nil), ast.Try(ast.Act("b", nil), ast.Finally(ast.Act("c", nil)))).WithDeadline(10 * time.Millisecond)
	tr := batchRun(t, w, map[string]time.Duration{"seq[0]#1": 5 * time.Millisecond}, nil, map[string]time.Duration{"root@deadline": 10 * time.Millisecond})
	if len(tr.Actions) != 0 || len(tr.Stops) != 0 {
		t.Fatalf("actions %q, stops %q: want none", ids(tr.Actions), ids(tr.Stops))
	}
	if tr.Job.Status() != job.StatusFailed {
		t.Fatalf("job %s, want failed by its deadline", tr.Job.Status())
	}
}

// TestTransitionCheck: the check Restart makes of its own output refuses
// a transition that dispatches and stops one action, and passes others.
func TestTransitionCheck(t *testing.T) {
	a := job.Action{JobID: "b", ID: "seq[1]#1", Attempt: 1}
	b := job.Action{JobID: "b", ID: "seq[0]#1", Attempt: 1}
	if err := job.CheckTransition(job.Transition{Actions: []job.Action{a}, Stops: []job.Action{b, a}}); err == nil || !strings.Contains(err.Error(), "seq[1]#1") {
		t.Errorf("an action dispatched and stopped: %v", err)
	}
	for _, tr := range []job.Transition{{Actions: []job.Action{a}, Stops: []job.Action{b}}, {Actions: []job.Action{a, b}}, {Stops: []job.Action{a, b}}} {
		if err := job.CheckTransition(tr); err != nil {
			t.Errorf("%v", err)
		}
	}
}
