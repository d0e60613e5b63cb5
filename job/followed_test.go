package job_test

import (
	"testing"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/google/go-cmp/cmp"
)

// TestActionFailureContext: the actions of a rescue and of a finally carry
// the failure they follow; the nearest enclosing rescue or finally
// decides; a finally after a success, and every other action, carry none.
func TestActionFailureContext(t *testing.T) {
	w := ast.Seq(
		ast.Try(ast.Par(ast.Act("charge", 1), ast.Act("hold", 2)),
			ast.Rescue(ast.Act("refund", nil), ast.Try(ast.Act("notify", nil), ast.Finally(ast.Act("log", "inner")))),
			ast.Finally(ast.Act("release", nil))),
		ast.Try(ast.Act("ship", nil), ast.Finally(ast.Act("close", nil))),
	)
	tr, err := job.New("f", w)
	if err != nil {
		t.Fatal(err)
	}
	step := func(rs ...job.Result) []job.Action {
		t.Helper()
		next, err := job.Restart(tr.Job, rs)
		if err != nil {
			t.Fatal(err)
		}
		tr = next
		return next.Actions
	}
	for _, a := range tr.Actions {
		if a.Failure != nil {
			t.Errorf("%s carries %v before anything failed", a.ID, a.Failure)
		}
	}
	charge, hold := tr.Actions[0], tr.Actions[1]
	// Both fail in one batch: the rescue follows the first in tree order,
	// counting the other.
	acts := step(charge.Fail("card declined"), hold.Fail("out of stock"))
	want := &job.Failure{Path: "seq[0].body.par[0]", Action: "charge", Message: "card declined", Others: 1}
	if len(acts) != 1 || acts[0].Name != "refund" {
		t.Fatalf("after the failures: %v", acts)
	}
	if diff := cmp.Diff(want, acts[0].Failure); diff != "" {
		t.Errorf("refund's failure (-want +got):\n%s", diff)
	}
	acts = step(acts[0].Succeed(nil)) // refund; the inner try starts
	if len(acts) != 1 || acts[0].Name != "notify" || cmp.Diff(want, acts[0].Failure) != "" {
		t.Fatalf("notify, in the rescue's inner try body: %v %v", acts, acts[0].Failure)
	}
	acts = step(acts[0].Fail("mail server down")) // notify fails: the inner finally follows it
	innerWant := &job.Failure{Path: "seq[0].rescue.seq[1].body", Action: "notify", Message: "mail server down"}
	if len(acts) != 1 || acts[0].Name != "log" {
		t.Fatalf("after notify: %v", acts)
	}
	if diff := cmp.Diff(innerWant, acts[0].Failure); diff != "" {
		t.Errorf("the inner finally follows the nearest failure (-want +got):\n%s", diff)
	}
	acts = step(acts[0].Succeed(nil)) // the rescue failed (notify): the outer finally follows it
	if len(acts) != 1 || acts[0].Name != "release" {
		t.Fatalf("after the rescue: %v", acts)
	}
	if diff := cmp.Diff(innerWant, acts[0].Failure); diff != "" {
		t.Errorf("release follows the rescue's failure, which replaced the body's (-want +got):\n%s", diff)
	}
	step(acts[0].Succeed(nil))
	if tr.Job.Status() != job.StatusFailed {
		t.Fatalf("job %s", tr.Job.Status())
	}

	// A finally after a body that succeeded carries nothing.
	tr, _ = job.New("g", ast.Try(ast.Act("ship", nil), ast.Finally(ast.Act("close", nil))))
	acts = step(tr.Actions[0].Succeed(nil))
	if len(acts) != 1 || acts[0].Failure != nil {
		t.Errorf("a finally after a success: %v, failure %v", acts, acts[0].Failure)
	}
	// Recovery gives the same: the stored job decides.
	tr, _ = job.New("h", ast.Try(ast.Act("ship", nil), ast.Rescue(ast.Act("undo", nil))))
	acts = step(tr.Actions[0].Fail("lost"))
	enc, _ := job.Encode(tr.Job)
	d, err := job.Decode(enc)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(acts, d.Outstanding()); diff != "" {
		t.Errorf("recovered rescue action differs (-dispatched +recovered):\n%s", diff)
	}
}
