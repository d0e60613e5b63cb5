package job_test

// Disagreements the lockstep of the reducer and the oracle found
// (maploop_prop_test.go), each decided by the team's note on the
// language's rules, as the smallest failing case.

import (
	"testing"
	"time"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
)

// TestFoundFreezeWithdrawsWait: a running wait under a par that a failure
// freezes is withdrawn and fails (the note's rule 12; doc.go, Withdrawn),
// whether or not the job has a timer pending.
//
// KNOWN BUG, failing: countFailure queues the freeze's give-ups
// (abandonQ, whose abandon calls withdrawUnder) only when the job has a
// timer pending (len(e.j.timers) > 0), so with no sleep and no retry
// armed the wait goes on running under the frozen par, and the par does
// not fail until a signal comes.
func TestFoundFreezeWithdrawsWait(t *testing.T) {
	for _, tc := range []struct {
		name string
		w    ast.Node
	}{
		{"wait", ast.Par(ast.Act("f", nil), ast.Wait("go"))},
		{"transient wait", ast.Par(ast.Act("f", nil), ast.Wait("go").OnlyWhileRunning())},
		{"wait, a sleep's timer pending (passes)", ast.Par(ast.Act("f", nil), ast.Wait("go"), ast.Sleep(time.Hour))},
		{"wait, a sleep to come", ast.Par(ast.Act("f", nil), ast.Wait("go"), ast.Seq(ast.Act("a", nil), ast.Sleep(time.Hour)))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := job.New("j", tc.w)
			if err != nil {
				t.Fatal(err)
			}
			tr, err = job.Restart(tr.Job, []job.Result{tr.Actions[0].Fail("no")})
			if err != nil {
				t.Fatal(err)
			}
			var wait job.NodeInfo
			tr.Job.Walk(func(n job.NodeInfo) bool {
				if n.Path == "par[1]" {
					wait = n
				}
				return true
			})
			if wait.Status != job.StatusFailed || wait.Failure == nil || wait.Failure.Kind != job.KindWithdrawn {
				t.Errorf("the wait under the frozen par is %s (failure %+v), want failed, withdrawn\n%s", wait.Status, wait.Failure, job.Describe(tr.Job))
			}
		})
	}
}
