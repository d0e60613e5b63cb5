package job_test

// Disagreements the lockstep of the reducer and the oracle found
// (maploop_prop_test.go), each decided by the team's note on the
// language's rules, as the smallest failing case.

import (
	"fmt"
	"testing"
	"time"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
)

// TestFoundFreezeWithdrawsWait: a running wait under a par that a failure
// freezes is withdrawn and fails (the note's rule 12; doc.go, Withdrawn),
// whether or not the job has a timer pending.
//
// Fixed (it failed before): countFailure queued the freeze's give-ups
// (abandonQ, whose abandon calls withdrawUnder) only when the job had a
// timer pending (len(e.j.timers) > 0), so with no sleep and no retry
// armed the wait went on running under the frozen par, and the par did
// not fail until a signal came.
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

// TestFoundWaitsBegunInOneRoundTreeOrder: of two waits for one signal
// begun in the same round, the first in tree order takes it (the note's
// rule 10; doc.go: "started in the same round, in tree order").
//
// Before the fix (this test failed): a wait's place is the order in
// which it began (beginWait counts starts), and one round begins its
// nodes in the order their starts were requested, not in tree order:
// here the wait of par[1] is requested as the batch's result applies,
// the wait of par[0] only as its firing does, so the later wait in tree
// order takes the signal. Now the waits begun in one round take their
// places in tree order (placeWaits).
func TestFoundWaitsBegunInOneRoundTreeOrder(t *testing.T) {
	w := ast.Par(
		ast.Seq(ast.Sleep(time.Hour), ast.Wait("s")),
		ast.Seq(ast.Act("a", nil), ast.Wait("s")),
	)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tr, err := job.New("j", w, job.StartedAt(t0))
	if err != nil {
		t.Fatal(err)
	}
	timer := tr.Job.Timers()[0]
	tr, err = job.Restart(tr.Job, []job.Result{tr.Actions[0].Succeed(nil), timer.Fire(timer.Due)})
	if err != nil {
		t.Fatal(err)
	}
	tr, err = job.Restart(tr.Job, []job.Result{job.SignalResult("j", job.Signal{Name: "s", ID: "1", At: timer.Due})})
	if err != nil {
		t.Fatal(err)
	}
	_, taken := tr.Job.Signals()
	if len(taken) != 1 || taken[0].Path != "par[0].seq[1]" {
		t.Errorf("taken %+v, want the signal taken by par[0].seq[1], begun in the same round as par[1].seq[1] and before it in tree order\n%s", taken, job.Describe(tr.Job))
	}
}

// TestFoundCopiesWaitsInIndexOrder: of the waits two copies of a map begin
// in one round, the first copy's takes the first signal (the note's rules
// 10 and 13: tree order among copies is index order).
//
// Before the fix (this test failed)
// (TestFoundWaitsBegunInOneRoundTreeOrder's cause): here each copy's
// wait follows a race that one batch wins in both copies; the waits
// begin in the order the races were decided, copy 1's first, and copy
// 1's wait takes the signal. Now the waits begun in one round take their
// places in tree order (placeWaits).
func TestFoundCopiesWaitsInIndexOrder(t *testing.T) {
	w := ast.Seq(ast.Act("l", nil).Named("xs"),
		ast.Map("xs", ast.Seq(ast.Race(ast.Act("a", nil), ast.Act("b", nil)), ast.Wait("s"))))
	tr, err := job.New("j", w)
	if err != nil {
		t.Fatal(err)
	}
	if tr, err = job.Restart(tr.Job, []job.Result{tr.Actions[0].Succeed([]byte("[1,2]"))}); err != nil {
		t.Fatal(err)
	}
	var rs []job.Result
	for _, a := range tr.Actions {
		if a.Name == "a" {
			rs = append(rs, a.Succeed(nil)) // both copies' races won in one batch
		}
	}
	if tr, err = job.Restart(tr.Job, rs); err != nil {
		t.Fatal(err)
	}
	if tr, err = job.Restart(tr.Job, []job.Result{job.SignalResult("j", job.Signal{Name: "s", ID: "1"})}); err != nil {
		t.Fatal(err)
	}
	_, taken := tr.Job.Signals()
	if len(taken) != 1 || taken[0].Path != "seq[1].map[0].seq[1]" {
		t.Errorf("taken %+v, want the signal taken by copy 0's wait, seq[1].map[0].seq[1]\n%s", taken, job.Describe(tr.Job))
	}
}

// TestFoundChangedNextIteration: Changed(old, new) lists exactly the nodes
// whose NodeInfo differs between the two Walks (changed.go), and a loop's
// next iteration changes the path of every node of its body.
//
// Before the fix (this test failed): when iteration 1 starts, Changed
// leaves out the body's root, loop[0] then loop[1], whose state is the
// same while its path is not: for a loop of one leaf (running #1 in
// both), Changed reports nothing at all.
func TestFoundChangedNextIteration(t *testing.T) {
	for _, w := range []ast.Node{
		ast.Loop(ast.Act("u", nil).Named("u"), "u", true, 3),
		ast.Loop(ast.Seq(ast.Act("p", nil), ast.Act("u", nil).Named("u")), "u", true, 3),
	} {
		tr, err := job.New("j", w)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 2; i++ {
			old := tr.Job
			if tr, err = job.Restart(old, []job.Result{tr.Job.Outstanding()[0].Succeed([]byte("false"))}); err != nil {
				t.Fatal(err)
			}
			if len(tr.Actions) == 0 {
				continue
			}
			t.Run(fmt.Sprintf("%s step %d", w.Children[0].Kind, i+1), func(t *testing.T) { changedCheck(t, "the step", old, tr.Job) })
		}
	}
}

// TestFoundChangedMapStart: as TestFoundChangedNextIteration, when a map
// starts and its copies are made.
//
// Before the fix (this test failed): Changed also lists nodes above the
// map whose NodeInfo is the same in both Walks (here the root par and
// the seq holding the map).
func TestFoundChangedMapStart(t *testing.T) {
	w := ast.Par(ast.Seq(ast.Act("l", nil).Named("xs"), ast.Map("xs", ast.Act("x", nil))), ast.Act("b", nil))
	tr, err := job.New("j", w)
	if err != nil {
		t.Fatal(err)
	}
	old := tr.Job
	if tr, err = job.Restart(old, []job.Result{tr.Actions[0].Succeed([]byte("[1,2]"))}); err != nil {
		t.Fatal(err)
	}
	changedCheck(t, "the step that starts the map", old, tr.Job)
}

// TestFoundLateIterationResultJobDone: once the job has ended, every later
// result is ignored with IgnoredJobDone (doc.go, Semantics), a result of
// an earlier iteration of a loop too.
//
// Before the fix (this test failed): it is ignored as stale
// (IgnoredStale).
func TestFoundLateIterationResultJobDone(t *testing.T) {
	w := ast.Loop(ast.Act("u", nil).Named("u"), "u", true, 3)
	tr, err := job.New("j", w)
	if err != nil {
		t.Fatal(err)
	}
	u0 := tr.Actions[0].Succeed([]byte("false"))
	if tr, err = job.Restart(tr.Job, []job.Result{u0}); err != nil {
		t.Fatal(err)
	}
	if tr, err = job.Restart(tr.Job, []job.Result{tr.Actions[0].Succeed([]byte("true"))}); err != nil {
		t.Fatal(err)
	}
	if !tr.Job.Done() {
		t.Fatalf("the job did not end:\n%s", job.Describe(tr.Job))
	}
	late, err := job.Restart(tr.Job, []job.Result{u0})
	if err != nil {
		t.Fatal(err)
	}
	if len(late.Ignored) != 1 || late.Ignored[0].Reason != job.IgnoredJobDone {
		t.Errorf("%s of iteration 0, sent after the job ended: ignored %v, want %q", u0.ActionID, late.Ignored, job.IgnoredJobDone)
	}
}

// TestFoundGuardUnderFreezingDag: a dag child that becomes ready in the
// batch that freezes its dag is cancelled, guard or not (doc.go, Guards:
// "under a frozen dag it is cancelled instead, as any start"; Batches:
// what a freeze stops from starting is cancelled, and what that settles
// settles in turn, before anything starts). Found by
// TestOracleChoiceLockstep (not maps or loops: on main too).
//
// Before the fix (this test failed): the freeze here comes one cascade
// later (the limited par's next child is cancelled, then the par fails,
// then the dag freezes), and the reducer had already read d4's guard in
// the same pass over its queued starts and skipped d4. Guards are now
// read only once no queued start is frozen.
func TestFoundGuardUnderFreezingDag(t *testing.T) {
	a := func(name string) ast.Node { return ast.Act(name, nil) }
	w := ast.Seq(a("k").Named("k"), ast.Dag(
		ast.Par(a("f"), a("x")).WithLimit(1).Named("d2"),
		a("y").Named("d3"),
		a("z").Named("d4").WithAfter("d3").WithWhen("k", "a"),
	))
	tr, err := job.New("j", w)
	if err != nil {
		t.Fatal(err)
	}
	if tr, err = job.Restart(tr.Job, []job.Result{tr.Actions[0].Succeed([]byte(`"b"`))}); err != nil {
		t.Fatal(err)
	}
	var rs []job.Result
	for _, act := range tr.Actions {
		if act.Name == "f" {
			rs = append(rs, act.Fail("no"))
		} else {
			rs = append(rs, act.Succeed(nil))
		}
	}
	if tr, err = job.Restart(tr.Job, rs); err != nil {
		t.Fatal(err)
	}
	tr.Job.Walk(func(n job.NodeInfo) bool {
		if n.Path == "seq[1].dag[2]" && n.Status != job.StatusCancelled {
			t.Errorf("d4 is %s, want cancelled: its dag froze in the batch that made it ready\n%s", n.Status, job.Describe(tr.Job))
		}
		return true
	})
}

// TestFoundChangedFailedRace: the failure of a race every child of which
// failed names each child's failure, in Changed as in Walk.
//
// Before the fix (this test failed): Changed read the result of the
// race's cause only, so the other children's messages were empty.
func TestFoundChangedFailedRace(t *testing.T) {
	w := ast.Par(ast.Race(ast.Act("a", nil), ast.Act("b", nil)), ast.Act("c", nil))
	tr, err := job.New("j", w)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a", "b", "c"} {
		old := tr.Job
		var rs []job.Result
		for _, a := range old.Outstanding() {
			if a.Name == name {
				rs = append(rs, a.Fail("no "+name))
			}
		}
		if tr, err = job.Restart(old, rs); err != nil {
			t.Fatal(err)
		}
		changedCheck(t, "the failure of "+name, old, tr.Job)
	}
}

// TestFoundChangedWaitOutput: a wait that took a signal shows its payload
// as its output, in Changed as in Walk.
//
// Before the fix (this test failed): Changed read the results of actions
// only, so the wait's output was empty.
func TestFoundChangedWaitOutput(t *testing.T) {
	tr, err := job.New("j", ast.Race(ast.Wait("s"), ast.Sleep(time.Hour)))
	if err != nil {
		t.Fatal(err)
	}
	old := tr.Job
	if tr, err = job.Restart(old, []job.Result{job.SignalResult("j", job.Signal{Name: "s", ID: "1", Payload: []byte("1")})}); err != nil {
		t.Fatal(err)
	}
	changedCheck(t, "the signal", old, tr.Job)
}

// TestFoundChangedRaceWinner: a race that a child won while another runs
// its finally block is still running, and shows its winner, in Changed as
// in Walk.
//
// Before the fix (this test failed): Changed compared a race's status
// only, not its winner, and left the race out.
func TestFoundChangedRaceWinner(t *testing.T) {
	w := ast.Race(ast.Try(ast.Act("a", nil), ast.Finally(ast.Act("f", nil))), ast.Act("b", nil))
	tr, err := job.New("j", w)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a", "b"} {
		old := tr.Job
		var rs []job.Result
		for _, a := range old.Outstanding() {
			if a.Name == name {
				rs = append(rs, a.Succeed(nil))
			}
		}
		if tr, err = job.Restart(old, rs); err != nil {
			t.Fatal(err)
		}
		changedCheck(t, "the success of "+name, old, tr.Job)
	}
}

// TestFoundInPlaceGrowthKeepsOutputs: two inner maps that start in one
// batch, each copy holding a named leaf, make room for every named
// leaf's output, and the job runs to its end with each output kept.
//
// Fixed (TestMapLoopRandom found it, it failed before): the second
// start grows the tree the first one made in place (treeEdit), and
// engine.grow compared the new tree's named leaves with the tree's
// before the start, which was that very tree, so the outputs were not
// grown ("8 outputs kept for 9 named leaves").
func TestFoundInPlaceGrowthKeepsOutputs(t *testing.T) {
	root := ast.Seq(ast.Act("list", nil).Named("outer"),
		ast.Map("outer", ast.Seq(ast.Act("list", nil).Named("mid"), ast.Map("mid", ast.Act("leaf", nil).Named("in")))))
	tr, err := job.New("j", root)
	if err != nil {
		t.Fatal(err)
	}
	tr, err = job.Restart(tr.Job, []job.Result{tr.Actions[0].Succeed([]byte(`[1,2]`))})
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Actions) != 2 {
		t.Fatalf("%d actions after the outer list, want the two copies' lists", len(tr.Actions))
	}
	var batch []job.Result
	for _, a := range tr.Actions {
		batch = append(batch, a.Succeed([]byte(`["x","y"]`)))
	}
	tr, err = job.Restart(tr.Job, batch) // both inner maps start here
	if err != nil {
		t.Fatal(err)
	}
	if err := job.Check(tr.Job); err != nil {
		t.Fatalf("the job after both starts: %v", err)
	}
	if len(tr.Actions) != 4 {
		t.Fatalf("%d actions after both lists, want 4 leaves", len(tr.Actions))
	}
	j := tr.Job
	for i, a := range tr.Actions {
		next, err := job.Restart(j, []job.Result{a.Succeed(fmt.Appendf(nil, "%d", i))})
		if err != nil {
			t.Fatal(err)
		}
		j = next.Job
		if err := job.Check(j); err != nil {
			t.Fatalf("v%d: %v", j.Version(), err)
		}
	}
	if j.Status() != job.StatusSucceeded {
		t.Fatalf("job %s:\n%s", j.Status(), job.Describe(j))
	}
	b, err := job.Encode(j)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := job.Decode(b); err != nil {
		t.Fatalf("decode: %v", err)
	}
}
