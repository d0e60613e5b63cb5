package job_test

import (
	"strings"
	"testing"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
)

// TestResultOfAnotherIncarnation: a job deleted and made again under the
// same ID dispatches the same action IDs and attempts; the late result of
// a handler of the old job is ignored as stale, naming both incarnations,
// and the new job's own result applies. A result that names no
// incarnation (0) still applies, as results from before incarnations did.
func TestResultOfAnotherIncarnation(t *testing.T) {
	wf := ast.Seq(ast.Act("charge", 500))
	old, err := job.New("order-7", wf, job.WithIncarnation(0x11))
	if err != nil {
		t.Fatal(err)
	}
	again, err := job.New("order-7", wf, job.WithIncarnation(0x22))
	if err != nil {
		t.Fatal(err)
	}
	oldAct, newAct := old.Actions[0], again.Actions[0]
	if oldAct.ID != newAct.ID || oldAct.Attempt != newAct.Attempt {
		t.Fatalf("the two incarnations dispatch %s#%d and %s#%d", oldAct.ID, oldAct.Attempt, newAct.ID, newAct.Attempt)
	}
	late := oldAct.Succeed([]byte(`"charged by the old job"`))
	if late.Incarnation != 0x11 {
		t.Fatalf("Succeed copied incarnation %x, want 11", late.Incarnation)
	}
	tr, err := job.Restart(again.Job, []job.Result{late})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Changed() || len(tr.Ignored) != 1 || tr.Ignored[0].Reason != job.IgnoredStale ||
		!strings.Contains(tr.Ignored[0].Detail, "incarnation 11") || !strings.Contains(tr.Ignored[0].Detail, "22") {
		t.Fatalf("the old job's result on the new job: changed %v, ignored %+v; want ignored as stale naming both incarnations", tr.Changed(), tr.Ignored)
	}
	for _, r := range []job.Result{newAct.Fail("declined"), {JobID: "order-7", ActionID: newAct.ID, Error: "declined"}} {
		tr, err = job.Restart(again.Job, []job.Result{r})
		if err != nil || !tr.Changed() || tr.Job.Status() != job.StatusFailed {
			t.Errorf("result of incarnation %x: %v, changed %v, status %s; want it applied", r.Incarnation, err, tr.Changed(), tr.Job.Status())
		}
	}
}
