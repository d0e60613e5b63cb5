package job_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
)

// The timed oracle checks the reducer; these cases check the timed
// oracle. Each runs the oracle alone (no reducer) on a tiny workflow
// under a fixed schedule and compares, after every step, what it started,
// stopped and waits for (timers with their due times, after t0) and what
// it ignored, and at the end the job's status, its failure (path, action,
// message, kind, others) and some nodes' failures, with outcomes worked
// out by hand from doc.go; the comment of each case gives the working.

// teStep is one batch of a case and what the oracle must do with it.
type teStep struct {
	batch   []job.Result
	started []string // action IDs, in the order started
	stops   []string
	pending []string // "ID +DUE" after t0, in tree order (a node's retry before its deadline)
	ignored []propIgnored
}

// teFailure is a failure as the cases write it.
type teFailure struct {
	Path, Action, Message, Kind string
	Others                      int
}

func (f teFailure) String() string {
	return tFailureString(f.Path, f.Action, f.Message, f.Kind, f.Others)
}

func teAt(d time.Duration) time.Time { return t0.Add(d) }

func teOK(id string, at time.Duration) job.Result {
	return job.Result{JobID: propJobID, ActionID: id, At: teAt(at)}
}

func teFail(id, msg string, at time.Duration) job.Result {
	return job.Result{JobID: propJobID, ActionID: id, Error: msg, At: teAt(at)}
}

func teFailKind(id, msg, kind string, final bool, at time.Duration) job.Result {
	r := teFail(id, msg, at)
	r.Kind, r.Final = kind, final
	return r
}

func teFire(id string, at time.Duration) job.Result {
	return job.Result{JobID: propJobID, ActionID: id, At: teAt(at)}
}

// tePending writes the oracle's pending timers as the cases do.
func tePending(o *tOracle) []string {
	var s []string
	for _, tm := range o.pending() {
		if tm.Lo != tm.Hi {
			s = append(s, fmt.Sprintf("%s in [+%v, +%v]", tm.ID, time.Duration(tm.Lo-t0.UnixNano()), time.Duration(tm.Hi-t0.UnixNano())))
			continue
		}
		s = append(s, fmt.Sprintf("%s +%v", tm.ID, time.Duration(tm.Due-t0.UnixNano())))
	}
	return s
}

// teFailureOf returns the oracle's failure of node n, which failed.
func teFailureOf(n *tNode) teFailure {
	f := n.report()
	return teFailure{f.Path, f.Action, f.Message, f.Kind, f.Others}
}

// TestTimedOracleExamples pins the timed oracle to hand-worked cases.
func TestTimedOracleExamples(t *testing.T) {
	a := func(name string) ast.Node { return ast.Act(name, nil) }
	retry := func(n ast.Node, r ast.Retry) ast.Node { return n.WithRetry(r) }
	tests := []struct {
		name    string
		tree    ast.Node
		first   teStep // what New does (its batch is empty)
		steps   []teStep
		status  job.Status
		failure teFailure            // the job's, when it failed
		nodes   map[string]teFailure // failures of other nodes, by path
		idle    []string             // nodes that never started
		cancel  string
		follows map[string]*job.Failure // the failure actions follow (Action.Failure), by ID
	}{
		{
			// Attempts 4, initial 1s, multiplier 2, max 3s. Attempt 1
			// fails at 1s: #2 is due at 1s + 1s×2^0 = 2s. It fires at 2s;
			// #2 fails at 3s: #3 due at 3s + 1s×2^1 = 5s; it fires late,
			// at 6s, and #3 fails at 7s: #4 due at 7s + min(1s×2^2, 3s) =
			// 10s, counted from the failure, not the late firing. #4 fails:
			// no attempt is left, the leaf fails with its last failure.
			name:  "back-off doubles from each failure, capped at max",
			tree:  retry(a("a"), ast.Retry{Attempts: 4, Initial: time.Second, Multiplier: 2, Max: 3 * time.Second}),
			first: teStep{started: []string{"root#1"}},
			steps: []teStep{
				{batch: []job.Result{teFail("root#1", "e1", time.Second)}, pending: []string{"root@retry#2 +2s"}},
				{batch: []job.Result{teFire("root@retry#2", 2*time.Second)}, started: []string{"root#2"}},
				{batch: []job.Result{teFail("root#2", "e2", 3*time.Second)}, pending: []string{"root@retry#3 +5s"}},
				{batch: []job.Result{teFire("root@retry#3", 6*time.Second)}, started: []string{"root#3"}},
				{batch: []job.Result{teFail("root#3", "e3", 7*time.Second)}, pending: []string{"root@retry#4 +10s"}},
				{batch: []job.Result{teFire("root@retry#4", 10*time.Second)}, started: []string{"root#4"}},
				{batch: []job.Result{teFail("root#4", "e4", 11*time.Second)}},
			},
			status:  job.StatusFailed,
			failure: teFailure{"", "a", "e4", "", 0},
		},
		{
			// b's failure carries no time: it waits from the job's clock,
			// the latest time applied (a's success at 5s): due 6s.
			name:  "a failure without a time waits from the clock",
			tree:  ast.Seq(a("a"), retry(a("b"), ast.Retry{Attempts: 2, Initial: time.Second})),
			first: teStep{started: []string{"seq[0]#1"}},
			steps: []teStep{
				{batch: []job.Result{teOK("seq[0]#1", 5*time.Second)}, started: []string{"seq[1]#1"}},
				{batch: []job.Result{{JobID: propJobID, ActionID: "seq[1]#1", Error: "x"}}, pending: []string{"seq[1]@retry#2 +6s"}},
				{batch: []job.Result{teFire("seq[1]@retry#2", 6*time.Second)}, started: []string{"seq[1]#2"}},
				{batch: []job.Result{teOK("seq[1]#2", 7*time.Second)}},
			},
			status: job.StatusSucceeded,
		},
		{
			// All three fail in one batch and none waits: a's kind is
			// listed, b's failure is final, c's kind is deadline, never
			// retried. None gave up, so the first in tree order, a, is
			// reported, counting the two others.
			name: "listed kinds, final failures and the deadline kind are not retried",
			tree: ast.Par(
				retry(a("a"), ast.Retry{Attempts: 3, Initial: time.Second, NonRetryable: []string{"card_declined"}}),
				retry(a("b"), ast.Retry{Attempts: 3, Initial: time.Second}),
				retry(a("c"), ast.Retry{Attempts: 3, Initial: time.Second})),
			first: teStep{started: []string{"par[0]#1", "par[1]#1", "par[2]#1"}},
			steps: []teStep{
				{batch: []job.Result{
					teFailKind("par[0]#1", "declined", "card_declined", false, time.Second),
					teFailKind("par[1]#1", "invalid", "", true, time.Second),
					teFailKind("par[2]#1", "late", job.KindDeadline, false, time.Second),
				}},
			},
			status:  job.StatusFailed,
			failure: teFailure{"par[0]", "a", "declined", "card_declined", 2},
		},
		{
			// a's timeout is retried: due 1s + 500ms. b, at most once with
			// no policy, is lost at 1.2s and fails; the par freezes and a,
			// waiting, gives up with its timeout. It gave up because of
			// the freeze, in the same batch: b is reported, a counted.
			name: "a timeout is retried, a lost attempt without a policy fails",
			tree: ast.Par(
				retry(a("a"), ast.Retry{Attempts: 2, Initial: 500 * time.Millisecond}).WithTimeout(time.Second),
				a("b").AtMostOnce()),
			first: teStep{started: []string{"par[0]#1", "par[1]#1"}},
			steps: []teStep{
				{batch: []job.Result{teFailKind("par[0]#1", "too slow", job.KindTimeout, false, time.Second)}, pending: []string{"par[0]@retry#2 +1.5s"}},
				{batch: []job.Result{teFailKind("par[1]#1", "lost", job.KindLost, false, 1200*time.Millisecond)}},
			},
			status:  job.StatusFailed,
			failure: teFailure{"par[1]", "b", "lost", job.KindLost, 1},
			nodes:   map[string]teFailure{"par[0]": {"par[0]", "a", "too slow", job.KindTimeout, 0}},
		},
		{
			// a waits (step 1). z fails (step 2): the root par freezes and
			// a gives up, so par[1].par[0] holds a's failure, but its try
			// runs on. c fails (step 3); b succeeds and the finally starts
			// (step 4); f and d succeed together (step 5): par[1].par[0]
			// (a) and par[1].par[1] (c) settle failed in one batch. a gave
			// up in step 2, not in this batch: the two tie, and par[1]
			// reports the first in tree order, a, counting c. The root's
			// first failure is z's (step 2), counting a and c.
			name: "a leaf that gave up in an earlier batch ties with the failures of a later one",
			tree: ast.Par(a("z"), ast.Par(
				ast.Par(retry(a("a"), ast.Retry{Attempts: 2, Initial: time.Hour}), ast.Try(a("b"), ast.Finally(a("f")))),
				ast.Par(a("c"), a("d")))),
			first: teStep{started: []string{"par[0]#1", "par[1].par[0].par[0]#1", "par[1].par[0].par[1].body#1", "par[1].par[1].par[0]#1", "par[1].par[1].par[1]#1"}},
			steps: []teStep{
				{batch: []job.Result{teFail("par[1].par[0].par[0]#1", "flaky", time.Second)}, pending: []string{"par[1].par[0].par[0]@retry#2 +1h0m1s"}},
				{batch: []job.Result{teFail("par[0]#1", "z failed", 2*time.Second)}},
				{batch: []job.Result{teFail("par[1].par[1].par[0]#1", "c failed", 3*time.Second)}},
				{batch: []job.Result{teOK("par[1].par[0].par[1].body#1", 4*time.Second)}, started: []string{"par[1].par[0].par[1].finally#1"}},
				{batch: []job.Result{teOK("par[1].par[0].par[1].finally#1", 5*time.Second), teOK("par[1].par[1].par[1]#1", 5*time.Second)}},
			},
			status:  job.StatusFailed,
			failure: teFailure{"par[0]", "z", "z failed", "", 2},
			nodes: map[string]teFailure{
				"par[1]":        {"par[1].par[0].par[0]", "a", "flaky", "", 1},
				"par[1].par[0]": {"par[1].par[0].par[0]", "a", "flaky", "", 0},
			},
		},
		{
			// a fails at 1s and waits (#2 due 1h0m1s); both deadlines are
			// due at 2s and fire together. a expires while waiting: it
			// gives up, failing by its deadline; b expires running: it is
			// stopped and fails by its deadline. a gave up its retries
			// because of a deadline, its own, so it fails after b's
			// failure of the same batch (doc.go, Par): b is reported.
			name: "a waiting leaf expiring gives up, after a failure of its batch",
			tree: ast.Par(
				retry(a("a"), ast.Retry{Attempts: 2, Initial: time.Hour}).WithDeadline(2*time.Second),
				a("b").WithDeadline(2*time.Second)),
			first: teStep{started: []string{"par[0]#1", "par[1]#1"}, pending: []string{"par[0]@deadline +2s", "par[1]@deadline +2s"}},
			steps: []teStep{
				{batch: []job.Result{teFail("par[0]#1", "flaky", time.Second)},
					pending: []string{"par[0]@retry#2 +1h0m1s", "par[0]@deadline +2s", "par[1]@deadline +2s"}},
				{batch: []job.Result{teFire("par[0]@deadline", 2*time.Second), teFire("par[1]@deadline", 2*time.Second)}, stops: []string{"par[1]#1"}},
			},
			status:  job.StatusFailed,
			failure: teFailure{"par[1]", "", "deadline of 2s exceeded", job.KindDeadline, 1},
			nodes:   map[string]teFailure{"par[0]": {"par[0]", "", "deadline of 2s exceeded", job.KindDeadline, 0}},
		},
		{
			// The try's deadline (10s) fires while b runs: b is stopped,
			// the body is cancelled, and the finally, the try being
			// entered, runs in full. b's late result is ignored as
			// stopped. The try fails by its deadline once the finally
			// settles, whatever the finally did.
			name:  "an expired try stops its body and runs its finally",
			tree:  ast.Try(ast.Seq(a("a"), a("b")), ast.Finally(a("f"))).WithDeadline(10 * time.Second),
			first: teStep{started: []string{"body.seq[0]#1"}, pending: []string{"root@deadline +10s"}},
			steps: []teStep{
				{batch: []job.Result{teOK("body.seq[0]#1", time.Second)}, started: []string{"body.seq[1]#1"}, pending: []string{"root@deadline +10s"}},
				{batch: []job.Result{teFire("root@deadline", 10*time.Second)}, stops: []string{"body.seq[1]#1"}, started: []string{"finally#1"}},
				{batch: []job.Result{teOK("body.seq[1]#1", 11*time.Second)}, ignored: []propIgnored{{"body.seq[1]#1", job.IgnoredStopped}}},
				{batch: []job.Result{teFail("finally#1", "cleanup failed", 12*time.Second)}},
			},
			status:  job.StatusFailed,
			failure: teFailure{"", "", "deadline of 10s exceeded", job.KindDeadline, 0},
			// The body was stopped, not failed.
			follows: map[string]*job.Failure{"finally#1": nil, "body.seq[1]#1": nil},
		},
		{
			// The root's deadline (10s) fires first: a and c stop, the
			// inner deadline (par[0], 1m) is withdrawn, and its firing
			// finds the job done.
			name: "an outer deadline withdraws the inner ones",
			tree: ast.Par(ast.Seq(a("a"), a("b")).WithDeadline(time.Minute), a("c")).WithDeadline(10 * time.Second),
			first: teStep{started: []string{"par[0].seq[0]#1", "par[1]#1"},
				pending: []string{"root@deadline +10s", "par[0]@deadline +1m0s"}},
			steps: []teStep{
				{batch: []job.Result{teFire("root@deadline", 10*time.Second)}, stops: []string{"par[0].seq[0]#1", "par[1]#1"}},
				{batch: []job.Result{teFire("par[0]@deadline", time.Minute)}, ignored: []propIgnored{{"par[0]@deadline", job.IgnoredJobDone}}},
			},
			status:  job.StatusFailed,
			failure: teFailure{"", "", "deadline of 10s exceeded", job.KindDeadline, 0},
			idle:    []string{"par[0].seq[1]"},
		},
		{
			// c waits; the cancel stops a and b, c gives up (its timer
			// withdrawn), the finally starts. A second cancel is a
			// duplicate. The finally fails: the job ends cancelled all
			// the same, with the first reason; a late cancel finds it done.
			name:  "a cancel stops what runs, runs the finally, and ends cancelled",
			tree:  ast.Par(a("a"), ast.Try(a("b"), ast.Finally(a("f"))), retry(a("c"), ast.Retry{Attempts: 3, Initial: time.Hour})),
			first: teStep{started: []string{"par[0]#1", "par[1].body#1", "par[2]#1"}},
			steps: []teStep{
				{batch: []job.Result{teFail("par[2]#1", "flaky", time.Second)}, pending: []string{"par[2]@retry#2 +1h0m1s"}},
				{batch: []job.Result{job.CancelResult(propJobID, "stop")}, stops: []string{"par[0]#1", "par[1].body#1"}, started: []string{"par[1].finally#1"}},
				{batch: []job.Result{job.CancelResult(propJobID, "again")}, ignored: []propIgnored{{"@cancel", job.IgnoredDuplicate}}},
				{batch: []job.Result{teFail("par[1].finally#1", "cleanup failed", 3*time.Second)}},
				{batch: []job.Result{job.CancelResult(propJobID, "late")}, ignored: []propIgnored{{"@cancel", job.IgnoredJobDone}}},
			},
			status:  job.StatusCancelled,
			cancel:  "stop",
			follows: map[string]*job.Failure{"par[1].finally#1": nil}, // the body was stopped
			nodes: map[string]teFailure{
				"par[1]": {"par[1].finally", "f", "cleanup failed", "", 0},
				"par[2]": {"par[2]", "c", "flaky", "", 0},
			},
		},
		{
			// a fails, declined: the rescue follows it. b's seq runs out
			// of time at 5s: b is stopped, the body fails by its deadline
			// and the finally g follows that (a failure naming the node,
			// no action). The rescue fails at 6s: the finally f follows
			// the rescue's failure, which replaced the body's. f and g
			// succeed together: both tries fail in one batch, the par
			// reports the first in tree order, par[0] (the rescue's
			// failure), counting par[1]'s.
			name: "the failure a rescue and a finally follow",
			tree: ast.Par(
				ast.Try(a("a"), ast.Rescue(a("r")), ast.Finally(a("f"))),
				ast.Try(ast.Seq(a("b")).WithDeadline(5*time.Second), ast.Finally(a("g")))),
			first: teStep{started: []string{"par[0].body#1", "par[1].body.seq[0]#1"}, pending: []string{"par[1].body@deadline +5s"}},
			steps: []teStep{
				{batch: []job.Result{teFailKind("par[0].body#1", "declined", "card_declined", false, time.Second)},
					started: []string{"par[0].rescue#1"}, pending: []string{"par[1].body@deadline +5s"}},
				{batch: []job.Result{teFire("par[1].body@deadline", 5*time.Second)}, stops: []string{"par[1].body.seq[0]#1"}, started: []string{"par[1].finally#1"}},
				{batch: []job.Result{teFail("par[0].rescue#1", "refund failed", 6*time.Second)}, started: []string{"par[0].finally#1"}},
				{batch: []job.Result{teOK("par[0].finally#1", 7*time.Second), teOK("par[1].finally#1", 7*time.Second)}},
			},
			status:  job.StatusFailed,
			failure: teFailure{"par[0].rescue", "r", "refund failed", "", 1},
			follows: map[string]*job.Failure{
				"par[0].body#1":        nil,
				"par[0].rescue#1":      {Path: "par[0].body", Action: "a", Message: "declined", Kind: "card_declined"},
				"par[1].finally#1":     {Path: "par[1].body", Message: "deadline of 5s exceeded", Kind: job.KindDeadline},
				"par[0].finally#1":     {Path: "par[0].rescue", Action: "r", Message: "refund failed"},
				"par[1].body.seq[0]#1": nil,
			},
		},
		{
			// a waits (#2 due 2s); b fails at 1.5s: the dag freezes, a
			// gives up (after b, in the same batch), its timer is
			// withdrawn, and c, after a, never starts.
			name: "a dag's failure makes a waiting child give up",
			tree: ast.Dag(retry(a("a"), ast.Retry{Attempts: 3, Initial: time.Second}).Named("a"), a("b").Named("b"),
				a("c").Named("c").WithAfter("a")),
			first: teStep{started: []string{"dag[0]#1", "dag[1]#1"}},
			steps: []teStep{
				{batch: []job.Result{teFail("dag[0]#1", "flaky", time.Second)}, pending: []string{"dag[0]@retry#2 +2s"}},
				{batch: []job.Result{teFail("dag[1]#1", "boom", 1500*time.Millisecond)}},
				{batch: []job.Result{teFire("dag[0]@retry#2", 2*time.Second)}, ignored: []propIgnored{{"dag[0]@retry#2", job.IgnoredJobDone}}},
			},
			status:  job.StatusFailed,
			failure: teFailure{"dag[1]", "b", "boom", "", 1},
			idle:    []string{"dag[2]"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := ast.Validate(tc.tree); err != nil {
				t.Fatal(err)
			}
			o := tStart(timedCase{propCase: propCase{Tree: tc.tree}}, t0.UnixNano())
			check := func(i int, want teStep) {
				t.Helper()
				for what, d := range map[string]string{
					"started": tDiff(want.started, o.started),
					"stops":   tDiff(want.stops, o.stops),
					"pending": tDiff(want.pending, tePending(o)),
					"ignored": tDiff(want.ignored, o.ignored),
				} {
					if d != "" {
						t.Errorf("step %d: %s (-want +oracle):\n%s", i, what, d)
					}
				}
			}
			check(0, tc.first)
			for i, st := range tc.steps {
				o.apply(slices.Clone(st.batch))
				check(i+1, st)
			}
			if got := o.root.status(); got != tc.status {
				t.Fatalf("status %s, want %s", got, tc.status)
			}
			if tc.status == job.StatusFailed {
				if got := teFailureOf(o.root); got != tc.failure {
					t.Errorf("failure %v, want %v", got, tc.failure)
				}
			}
			if o.cancel != tc.cancel {
				t.Errorf("cancel %q, want %q", o.cancel, tc.cancel)
			}
			if len(o.out) > 0 || len(o.pending()) > 0 {
				t.Errorf("ended with %v out and %v pending", o.out, tePending(o))
			}
			for path, want := range tc.nodes {
				n := o.byPath[path]
				if n == nil || n.status() != job.StatusFailed {
					t.Errorf("%s did not fail", path)
					continue
				}
				if got := teFailureOf(n); got != want {
					t.Errorf("%s: failure %v, want %v", path, got, want)
				}
			}
			for id, want := range tc.follows {
				got, ok := o.follows[id]
				if !ok {
					t.Errorf("%s never started", id)
					continue
				}
				if d := tDiff(want, got); d != "" {
					t.Errorf("the failure %s follows (-want +oracle):\n%s", id, d)
				}
			}
			for _, path := range tc.idle {
				if n := o.byPath[path]; n == nil || n.status() != job.StatusIdle {
					t.Errorf("%s started; it never should", path)
				}
			}
		})
	}
}
