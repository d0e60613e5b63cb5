package job_test

// Properties of retries, timeouts, at-most-once delivery, deadlines and
// cancellation: the trees of prop_test.go, drawn exactly as there, then
// given random retry policies, timeouts, deliveries and deadlines, and
// priorities (every action carries its leaf's; the oracle ignores them);
// a list of outcomes per leaf, one per attempt (kinds, final failures);
// and schedules in which a runner's clock advances, results carry it (or
// the zero time), timers fire at or after their due time (late,
// duplicated, or withdrawn), and the job is sometimes cancelled. The
// timed oracle (timed_oracle_test.go) runs in lockstep.

import (
	"bytes"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"pgregory.net/rapid"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
)

// timedCheck runs a timed property like any other.
func timedCheck(t *testing.T, prop func(t *rapid.T, shape propShape)) {
	t.Helper()
	propCheck(t, prop)
}

// timedCase is a timed workflow and the outcomes of each leaf's attempts
// (the last repeats for any later attempt). Its propCase's Outcomes hold
// each leaf's first attempt.
type timedCase struct {
	propCase
	Attempts map[string][]timedOutcome
}

var (
	timedDeadlines   = []time.Duration{2 * time.Second, 5 * time.Second, time.Second, 20 * time.Second, time.Minute}
	timedInitials    = []time.Duration{time.Second, 0, 500 * time.Millisecond, 3 * time.Second}
	timedMultipliers = []float64{0, 2, 1, 1.5, 3}
	timedMaxes       = []time.Duration{0, 4 * time.Second, 3 * time.Second}
	timedJitters     = []float64{0, 0.2, 0, 1, 0.5}
	timedNonRetry    = []string{"card_declined", job.KindTimeout, job.KindLost}
	timedSteps       = []time.Duration{0, time.Second, 500 * time.Millisecond, 3 * time.Second, 10 * time.Second}
	timedReasons     = []string{"the customer cancelled", "stop", "ünïcödé\nreason"}
	timedPriorities  = []int{0, 7, ast.MinPriority, 0, ast.MaxPriority, -1}
)

// timedDrawCase draws a tree as propDrawAnyCase does, then times it.
func timedDrawCase(t *rapid.T, shape propShape) timedCase {
	c := timedCase{propCase: propDrawAnyCase(t, shape), Attempts: map[string][]timedOutcome{}}
	leaf := 0
	for _, n := range propNodes(&c.Tree, nil) {
		if rapid.IntRange(0, 4).Draw(t, "deadline") == 0 {
			n.Deadline = rapid.SampledFrom(timedDeadlines).Draw(t, "d")
		}
		if n.Kind != ast.KindAct {
			continue
		}
		if rapid.Bool().Draw(t, "retry") {
			r := ast.Retry{
				Attempts:   rapid.IntRange(1, 4).Draw(t, "attempts"),
				Initial:    rapid.SampledFrom(timedInitials).Draw(t, "initial"),
				Multiplier: rapid.SampledFrom(timedMultipliers).Draw(t, "multiplier"),
				Jitter:     rapid.SampledFrom(timedJitters).Draw(t, "jitter"),
			}
			if m := rapid.SampledFrom(timedMaxes).Draw(t, "max"); m >= r.Initial {
				r.Max = m
			}
			for _, k := range timedNonRetry {
				if rapid.IntRange(0, 2).Draw(t, "nr") == 0 {
					r.NonRetryable = append(r.NonRetryable, k)
				}
			}
			n.Retry = &r
		}
		if rapid.IntRange(0, 3).Draw(t, "timeout") == 0 {
			n.Timeout = rapid.SampledFrom([]time.Duration{time.Second, 5 * time.Second}).Draw(t, "t")
		}
		if rapid.IntRange(0, 3).Draw(t, "once") == 0 {
			n.Delivery = ast.AtMostOnce
		}
		// Not drawn, so that the draws (and the fail files kept in
		// testdata/rapid) stay as they were: a priority changes nothing
		// but the actions' field.
		n.Priority = timedPriorities[leaf%len(timedPriorities)]
		leaf++
	}
	if err := ast.Validate(c.Tree); err != nil {
		t.Fatalf("drew an invalid timed tree: %v\n%s", err, c.propCase)
	}
	failPct := rapid.SampledFrom([]int{10, 40, 70}).Draw(t, "attemptFailPct")
	nodes := c.index().nodes
	for _, p := range c.Leaves {
		n := nodes[p]
		kinds := []string{"", "card_declined"}
		if n.Timeout > 0 {
			kinds = append(kinds, job.KindTimeout)
		}
		if n.Delivery == ast.AtMostOnce {
			kinds = append(kinds, job.KindLost)
		}
		kinds = append(kinds, job.KindDeadline)
		var os []timedOutcome
		for k := rapid.IntRange(1, 4).Draw(t, "outcomes"); k > 0; k-- {
			var o timedOutcome
			if rapid.IntRange(0, 99).Draw(t, "fails") < failPct {
				o = timedOutcome{Fail: true, Msg: rapid.SampledFrom(propMessages).Draw(t, "msg"),
					Kind: rapid.SampledFrom(kinds).Draw(t, "kind"), Final: rapid.IntRange(0, 5).Draw(t, "final") == 0}
			} else if out := rapid.SampledFrom(propOutputs).Draw(t, "output"); out != "" {
				o = timedOutcome{Output: []byte(out)}
			}
			os = append(os, o)
		}
		c.Attempts[p] = os
		c.Outcomes[p] = propOutcome{Fail: os[0].Fail, Msg: os[0].Msg, Output: os[0].Output}
	}
	c.propCase = c.withIndex()
	return c
}

func (c timedCase) String() string {
	b, _ := ast.Encode(c.Tree)
	var s strings.Builder
	fmt.Fprintf(&s, "tree %s\n", b)
	for _, p := range c.Leaves {
		for k, o := range c.Attempts[p] {
			if o.Fail {
				fmt.Fprintf(&s, "  %s#%d fails: %q kind %q final %v\n", tShowPath(p), k+1, o.Msg, o.Kind, o.Final)
			} else {
				fmt.Fprintf(&s, "  %s#%d ok: %q\n", tShowPath(p), k+1, o.Output)
			}
		}
	}
	return s.String()
}

// result returns the result of action a, at at.
func (c timedCase) result(a job.Action, at time.Time) job.Result {
	o := c.outcome(a.Path(), a.Attempt)
	r := job.Result{JobID: a.JobID, ActionID: a.ID, Output: o.Output, Error: o.Msg, Kind: o.Kind, Final: o.Final, At: at}
	if !o.Fail {
		r.Error, r.Kind, r.Final = "", "", false
	}
	return r
}

// effective returns the case whose leaves end as their last attempt does
// when nothing stops them: the first that succeeds, or fails and is not
// retried.
func (c timedCase) effective() propCase {
	e := c.propCase
	e.Outcomes = map[string]propOutcome{}
	nodes := c.index().nodes
	for _, p := range c.Leaves {
		r := nodes[p].Retry
		for k := 1; ; k++ {
			o := c.outcome(p, k)
			again := o.Fail && r != nil && !o.Final && k < r.Attempts && !slices.Contains(r.NonRetryable, o.Kind) &&
				o.Kind != job.KindDeadline && o.Kind != job.KindCancelled
			if !again {
				e.Outcomes[p] = propOutcome{Fail: o.Fail, Msg: o.Msg, Output: o.Output}
				break
			}
		}
	}
	return e
}

// timedView is what the runner knows: the actions it has out, the timers
// it was asked to arm and has not fired (withdrawn ones included: a
// runner need not cancel them), its clock, and what it sent.
type timedView struct {
	out    []job.Action
	timers []job.Timer
	now    time.Time
	sent   []job.Result // results applied or not, and firings
}

// timedChooser returns the next batch; it may move v.now.
type timedChooser func(j job.Job, v *timedView) []job.Result

// timedStep is one state of a timed run.
type timedStep struct {
	Job   job.Job
	Tr    job.Transition
	Enc   []byte
	Desc  string
	Batch []job.Result
}

type timedRun struct {
	Case  timedCase
	Steps []timedStep
}

func (r *timedRun) final() job.Job { return r.Steps[len(r.Steps)-1].Job }

// timedPlay runs c to its end under choose. With an oracle it compares
// everything after every step; with roundTrip every job goes through
// Encode and Decode before the next Restart. After every step it checks
// Check, that Restart left its input alone, the version, and recovery:
// the decoded job's Outstanding and Timers are exactly the actions out
// and the timers pending (the runner's list less those fired or
// withdrawn).
func timedPlay(t propT, c timedCase, choose timedChooser, roundTrip, lockstep bool) *timedRun {
	t.Helper()
	tr, err := job.New(propJobID, c.Tree, job.StartedAt(t0))
	if err != nil {
		t.Fatalf("New: %v\n%s", err, c)
	}
	var o *tOracle
	if lockstep {
		o = tStart(c, t0.UnixNano())
	}
	v := &timedView{now: t0}
	r := &timedRun{Case: c}
	record := func(tr job.Transition, batch []job.Result) {
		t.Helper()
		j := tr.Job
		if err := job.Check(j); err != nil {
			t.Fatalf("step %d: Check: %v\n%s%s", len(r.Steps), err, c, job.Describe(j))
		}
		applied := map[string]bool{}
		for _, res := range tr.Step.Results {
			applied[res.ActionID] = true
		}
		stopped := map[string]bool{}
		for _, a := range tr.Stops {
			stopped[a.ID] = true
		}
		for _, a := range tr.Actions {
			if stopped[a.ID] {
				t.Fatalf("step %d dispatches and stops %s in one transition\n%s%s", len(r.Steps), a.ID, c, job.Describe(j))
			}
			p, attempt, err := job.SplitActionID(a.ID)
			n := c.index().nodes[p]
			if err != nil || n == nil || attempt != a.Attempt || a.Timeout != n.Timeout || a.AtMostOnce != (n.Delivery == ast.AtMostOnce) ||
				a.Priority != n.Priority {
				t.Fatalf("bad action %+v\n%s", a, c)
			}
			for _, x := range v.out {
				if x.ID == a.ID {
					t.Fatalf("action %s dispatched twice\n%s", a.ID, c)
				}
			}
			v.out = append(v.out, a)
		}
		v.out = slices.DeleteFunc(v.out, func(a job.Action) bool { return applied[a.ID] || stopped[a.ID] })
		for _, res := range batch {
			v.timers = slices.DeleteFunc(v.timers, func(tm job.Timer) bool { return tm.ID == res.ActionID })
		}
		for _, tm := range tr.Timers {
			if tm.JobID != propJobID {
				t.Fatalf("timer %v of another job", tm)
			}
			v.timers = slices.DeleteFunc(v.timers, func(x job.Timer) bool { return x.ID == tm.ID })
			v.timers = append(v.timers, tm)
		}
		v.sent = append(v.sent, batch...)
		if o != nil {
			timedCompare(t, o, c, tr, len(r.Steps))
		}
		timedCheckRecovery(t, c, j, v, o)
		r.Steps = append(r.Steps, timedStep{Job: j, Tr: tr, Enc: propEnc(t, j), Desc: job.Describe(j), Batch: batch})
	}
	record(tr, nil)
	j := tr.Job
	for !j.Done() {
		if len(r.Steps) > 400 {
			t.Fatalf("no end after %d steps\n%s%s", len(r.Steps), c, job.Describe(j))
		}
		if len(v.out) == 0 && len(j.Timers()) == 0 {
			t.Fatalf("a running job with nothing out and no timer pending\n%s%s", c, job.Describe(j))
		}
		batch := choose(j, v)
		in := j
		if roundTrip {
			in = propRoundTrip(t, j)
		}
		before := propEnc(t, in)
		next, err := job.Restart(in, slices.Clone(batch))
		if err != nil {
			t.Fatalf("Restart: %v\n%s", err, c)
		}
		if e := propEnc(t, in); !bytes.Equal(e, before) {
			t.Fatalf("Restart modified its input job:\nbefore %s\n after %s", before, e)
		}
		if len(next.Step.Results) == 0 {
			if next.Changed() || next.Job.Version() != in.Version() || len(next.Actions)+len(next.Timers)+len(next.Stops) > 0 || !bytes.Equal(propEnc(t, next.Job), before) {
				t.Fatalf("a batch that applied nothing changed the job")
			}
		} else if next.Job.Version() != in.Version()+1 || next.Step.Version != next.Job.Version() {
			t.Fatalf("version v%d -> v%d, step %d", in.Version(), next.Job.Version(), next.Step.Version)
		}
		if len(next.Step.Results)+len(next.Ignored) != len(batch) {
			t.Fatalf("%d applied and %d ignored of %d", len(next.Step.Results), len(next.Ignored), len(batch))
		}
		if o != nil {
			o.apply(batch)
		}
		j = next.Job
		record(next, batch)
	}
	// Late: everything again, firings and cancels included.
	late, err := job.Restart(j, slices.Clone(v.sent))
	if err != nil || late.Changed() || len(late.Actions)+len(late.Timers)+len(late.Stops) > 0 || !bytes.Equal(propEnc(t, late.Job), propEnc(t, j)) {
		t.Fatalf("late results changed a finished job: %v", err)
	}
	for _, ig := range late.Ignored {
		if ig.Reason != job.IgnoredJobDone && ig.Reason != job.IgnoredUnknown {
			t.Fatalf("late %s ignored as %q", ig.Result.ActionID, ig.Reason)
		}
	}
	if _, ok := j.Cancelled(); ok != (j.Status() == job.StatusCancelled) {
		t.Fatalf("a job %s, cancelled %v", j.Status(), ok)
	}
	return r
}

// tDiff is cmp.Diff with nil and empty slices the same.
func tDiff(x, y any) string {
	return cmp.Diff(x, y, cmpopts.EquateEmpty(), cmpopts.IgnoreUnexported(tState{}))
}

func timedIDs(ts []tTimer) []string {
	var s []string
	for _, t := range ts {
		s = append(s, t.ID+" "+tTime(t.Due))
	}
	return s
}

func timedJobTimers(ts []job.Timer) []string {
	var s []string
	for _, t := range ts {
		s = append(s, t.ID+" "+t.Due.UTC().Format(time.RFC3339Nano))
	}
	return s
}

// timedCompare compares the transition of step with the oracle's.
func timedCompare(t propT, o *tOracle, c timedCase, tr job.Transition, step int) {
	t.Helper()
	j := tr.Job
	fail := func(what, diff string) {
		t.Helper()
		t.Fatalf("step %d: %s (-oracle +reducer):\n%s\napplied %v\n%s%s", step, what, diff, propIDsR(tr.Step.Results), c, job.Describe(j))
	}
	if diff := tDiff(propSortIgnored(append([]propIgnored(nil), o.ignored...)), propIgnoredOf(tr)); diff != "" {
		fail("ignored", diff)
	}
	if diff := tDiff(propSortedKeys(o.applied), propSortedKeys(tr.Step.Results)); step > 0 && diff != "" {
		fail("applied", diff)
	}
	started := slices.Clone(o.started)
	sort.Strings(started)
	if diff := tDiff(started, propSortedIDs(tr.Actions)); diff != "" {
		fail("actions", diff)
	}
	for _, a := range tr.Actions {
		if diff := cmp.Diff(o.follows[a.ID], a.Failure); diff != "" {
			fail("the failure "+a.ID+" follows", diff)
		}
	}
	if diff := tDiff(o.stops, propIDs(tr.Stops)); diff != "" {
		fail("stops", diff)
	}
	if err := o.adopt(tr.Timers); err != nil {
		t.Fatalf("step %d: %v\n%s", step, err, c)
	}
	if diff := tDiff(timedIDs(o.armedPending()), timedJobTimers(tr.Timers)); diff != "" {
		fail("timers armed", diff)
	}
	if diff := tDiff(timedIDs(o.pending()), timedJobTimers(j.Timers())); diff != "" {
		fail("timers pending", diff)
	}
	out := slices.Clone(o.out)
	sort.Strings(out)
	if diff := tDiff(out, propSortedIDs(j.Outstanding())); diff != "" || j.Running() != len(o.out) {
		fail("outstanding", diff)
	}
	want, got := o.states(), tStates(j)
	if diff := tDiff(want, got); diff != "" {
		fail("node states", diff)
	}
	if got := tNano(j.Clock()); got != o.clock {
		t.Fatalf("step %d: clock %v, oracle %v", step, j.Clock(), time.Unix(0, o.clock).UTC())
	}
	reason, _ := j.Cancelled()
	if settled, _ := j.Progress(); settled != o.progress() || reason != propStoredMsg(o.cancel) || j.Status() != o.root.status() {
		t.Fatalf("step %d: progress %d, cancelled %q, %s; oracle %d, %q, %s\n%s%s", step, settled, reason, j.Status(), o.progress(), o.cancel, o.root.status(), c, job.Describe(j))
	}
	if f, ok := j.Failure(); ok {
		cause, _ := o.root.failure()
		if cause.expired != (f.Kind == job.KindDeadline && f.Action == "") {
			t.Fatalf("step %d: failure %+v", step, f)
		}
	}
}

// timedCheckRecovery stores and reloads j: the decoded job lists as
// outstanding exactly the actions out, each as dispatched, and as timers
// exactly those pending (the oracle's, when there is one).
func timedCheckRecovery(t propT, c timedCase, j job.Job, v *timedView, o *tOracle) {
	t.Helper()
	d := propRoundTrip(t, j)
	want := slices.Clone(v.out)
	slices.SortFunc(want, func(a, b job.Action) int { return strings.Compare(a.ID, b.ID) })
	got := d.Outstanding()
	slices.SortFunc(got, func(a, b job.Action) int { return strings.Compare(a.ID, b.ID) })
	if diff := tDiff(want, got); diff != "" {
		t.Fatalf("recovery re-emitted (-out +got):\n%s\n%s", diff, c)
	}
	if diff := tDiff(timedJobTimers(j.Timers()), timedJobTimers(d.Timers())); diff != "" {
		t.Fatalf("recovered timers (-live +decoded):\n%s", diff)
	}
	if o != nil {
		if diff := tDiff(timedIDs(o.pending()), timedJobTimers(d.Timers())); diff != "" {
			t.Fatalf("recovered timers (-oracle +decoded):\n%s\n%s", diff, c)
		}
	}
	for _, tm := range d.Timers() {
		if !slices.ContainsFunc(v.timers, func(x job.Timer) bool { return x == tm }) {
			t.Fatalf("the job waits for %v, which no transition asked for (or which fired)", tm)
		}
	}
	if d.Clock() != j.Clock() {
		t.Fatalf("clock %v decoded as %v", j.Clock(), d.Clock())
	}
}

// timedRandom is the random runner: its clock moves on each step; it
// answers a random part of what is out, stamped with its clock (now and
// then with the zero time), fires a random part of the timers due by its
// clock (at their due time or later), and mixes in duplicates, re-sent
// results and firings, attempts never dispatched, IDs that name nothing
// and, with cancels, now and then a cancel. Timers with deadlines=false
// never fire deadlines.
func timedRandom(t *rapid.T, c timedCase, cancels, deadlines bool) timedChooser {
	return func(j job.Job, v *timedView) []job.Result {
		v.now = v.now.Add(rapid.SampledFrom(timedSteps).Draw(t, "tick"))
		fireable := func() []job.Timer {
			var ts []job.Timer
			for _, tm := range v.timers {
				if !tm.Due.After(v.now) && (deadlines || !strings.HasSuffix(tm.ID, "@deadline")) {
					ts = append(ts, tm)
				}
			}
			return ts
		}
		due := fireable()
		if len(v.out) == 0 && len(due) == 0 {
			// Nothing to answer: wait for the next timer.
			var next time.Time
			for _, tm := range v.timers {
				if (deadlines || !strings.HasSuffix(tm.ID, "@deadline")) && (next.IsZero() || tm.Due.Before(next)) {
					next = tm.Due
				}
			}
			if next.IsZero() {
				t.Fatalf("nothing out and no timer to fire\n%s%s", c, job.Describe(j))
			}
			v.now = next
			due = fireable()
		}
		var batch []job.Result
		if len(v.out) > 0 {
			perm := rapid.Permutation(v.out).Draw(t, "order")
			k := rapid.IntRange(0, len(perm)).Draw(t, "batch")
			if k == 0 && len(due) == 0 {
				k = 1
			}
			for _, a := range perm[:k] {
				at := v.now
				if rapid.IntRange(0, 7).Draw(t, "zeroAt") == 0 {
					at = time.Time{}
				}
				batch = append(batch, c.result(a, at))
			}
		}
		fired := 0
		for i, tm := range due {
			if rapid.Bool().Draw(t, "fire") || i == len(due)-1 && fired == 0 && len(batch) == 0 {
				at := tm.Due
				if rapid.Bool().Draw(t, "late") {
					at = v.now
				}
				batch = append(batch, tm.Fire(at))
				fired++
			}
		}
		if len(batch) > 0 && rapid.IntRange(0, 5).Draw(t, "dup") == 0 {
			batch = append(batch, batch[rapid.IntRange(0, len(batch)-1).Draw(t, "which")])
		}
		if len(v.sent) > 0 && rapid.IntRange(0, 3).Draw(t, "resend") == 0 {
			batch = append(batch, v.sent[rapid.IntRange(0, len(v.sent)-1).Draw(t, "old")])
		}
		if rapid.IntRange(0, 5).Draw(t, "undispatched") == 0 {
			p := rapid.SampledFrom(c.Leaves).Draw(t, "leaf")
			batch = append(batch, job.Result{JobID: propJobID, ActionID: tShowPath(p) + "#" + fmt.Sprint(rapid.IntRange(2, 6).Draw(t, "attempt")), Error: "x", At: v.now})
		}
		if rapid.IntRange(0, 7).Draw(t, "unknown") == 0 {
			ids := []string{"nope#1", "par[9]@deadline", "root@retry#1", "root@retry#02", "x@y", "@", "root@cancel", "seq[0]@retry#"}
			if deadlines {
				// Not unknown: the root's deadline, which Restart also
				// reads without "root". Only where deadlines may fire.
				ids = append(ids, "@deadline")
			}
			batch = append(batch, job.Result{JobID: propJobID, ActionID: rapid.SampledFrom(ids).Draw(t, "id"), At: v.now})
		}
		if cancels && rapid.IntRange(0, 9).Draw(t, "cancel") == 0 {
			reason := rapid.SampledFrom(timedReasons).Draw(t, "reason")
			if rapid.IntRange(0, 5).Draw(t, "noReason") == 0 {
				reason = ""
			}
			batch = append(batch, job.CancelResult(propJobID, reason))
		}
		return rapid.Permutation(batch).Draw(t, "shuffle")
	}
}

// timedMixed is a runner whose batches hold results and firings together
// as often as it can: each step moves its clock to the next timer due
// (or further), answers a random non-empty part of what is out, fires
// every timer due by then, and now and then cancels the job, so that a
// result that would start a node and a firing that stops the node above
// it meet in one batch.
func timedMixed(t *rapid.T, c timedCase) timedChooser {
	return func(j job.Job, v *timedView) []job.Result {
		var next time.Time
		for _, tm := range v.timers {
			if next.IsZero() || tm.Due.Before(next) {
				next = tm.Due
			}
		}
		if next.After(v.now) {
			v.now = next
		}
		v.now = v.now.Add(rapid.SampledFrom(timedSteps).Draw(t, "tick"))
		var batch []job.Result
		if len(v.out) > 0 {
			perm := rapid.Permutation(v.out).Draw(t, "order")
			for _, a := range perm[:rapid.IntRange(1, len(perm)).Draw(t, "batch")] {
				batch = append(batch, c.result(a, v.now))
			}
		}
		for _, tm := range v.timers {
			if !tm.Due.After(v.now) {
				batch = append(batch, tm.Fire(v.now))
			}
		}
		if rapid.IntRange(0, 7).Draw(t, "cancel") == 0 {
			batch = append(batch, job.CancelResult(propJobID, rapid.SampledFrom(timedReasons).Draw(t, "reason")))
		}
		if len(batch) == 0 {
			t.Fatalf("nothing out and no timer to fire\n%s%s", c, job.Describe(j))
		}
		return rapid.Permutation(batch).Draw(t, "shuffle")
	}
}

// timedReplay sends the batches of an earlier run again, each passed
// through shuffle.
func timedReplay(t propT, r *timedRun, shuffle func(i int, b []job.Result) []job.Result) timedChooser {
	i := 0
	return func(job.Job, *timedView) []job.Result {
		t.Helper()
		i++
		if i >= len(r.Steps) {
			t.Fatalf("the replayed run needs more steps than the %d recorded", len(r.Steps)-1)
		}
		return shuffle(i, r.Steps[i].Batch)
	}
}

// timedSameRun fails unless two runs made the same jobs, actions, timers,
// stops, steps and ignored results, step by step.
func timedSameRun(t propT, what string, a, b *timedRun) {
	t.Helper()
	if len(a.Steps) != len(b.Steps) {
		t.Fatalf("%s: %d steps, then %d", what, len(a.Steps), len(b.Steps))
	}
	for i := range a.Steps {
		x, y := a.Steps[i], b.Steps[i]
		if !bytes.Equal(x.Enc, y.Enc) {
			t.Fatalf("%s: step %d encodes differently:\n%s\n%s", what, i, x.Enc, y.Enc)
		}
		for _, d := range []string{
			cmp.Diff(x.Tr.Actions, y.Tr.Actions), cmp.Diff(x.Tr.Timers, y.Tr.Timers), cmp.Diff(x.Tr.Stops, y.Tr.Stops),
			cmp.Diff(x.Tr.Step, y.Tr.Step), cmp.Diff(x.Tr.Ignored, y.Tr.Ignored),
		} {
			if d != "" {
				t.Fatalf("%s: step %d differs (-first +second):\n%s", what, i, d)
			}
		}
	}
}

// TestTimedSchedules plays random timed workflows under random schedules
// with the timed oracle in lockstep (states, actions and the failure
// each follows, stops, timers armed and pending with their due times,
// ignored results and why, clock, progress) and checks Check, recovery and no mutation after every step;
// then determinism (the same batches again), commutation (every batch of
// results, firings and cancels permuted), Encode/Decode before every
// Restart, Replay of the steps from the start and from a snapshot, and
// that no job of the run changed afterwards.
func TestTimedSchedules(t *testing.T) {
	timedCheck(t, func(t *rapid.T, shape propShape) {
		c := timedDrawCase(t, shape)
		run := timedPlay(t, c, timedRandom(t, c, true, true), false, true)

		same := func(_ int, b []job.Result) []job.Result { return b }
		timedSameRun(t, "determinism", run, timedPlay(t, c, timedReplay(t, run, same), false, false))
		perms := make([][]job.Result, len(run.Steps))
		for i := 1; i < len(run.Steps); i++ {
			perms[i] = rapid.Permutation(run.Steps[i].Batch).Draw(t, "permutation")
		}
		permute := func(i int, _ []job.Result) []job.Result { return perms[i] }
		timedSameRun(t, "permuted batches", run, timedPlay(t, c, timedReplay(t, run, permute), false, false))
		timedSameRun(t, "Encode/Decode between steps", run, timedPlay(t, c, timedReplay(t, run, same), true, false))

		origin := run.Steps[0].Job
		var steps []job.Step
		for _, s := range run.Steps[1:] {
			steps = append(steps, s.Tr.Step)
		}
		final := run.Steps[len(run.Steps)-1].Enc
		got, err := job.Replay(propRoundTrip(t, origin), steps)
		if err != nil || !bytes.Equal(propEnc(t, got), final) {
			t.Fatalf("Replay: %v", err)
		}
		k := rapid.IntRange(0, len(run.Steps)-1).Draw(t, "snapshot")
		got, err = job.Replay(propRoundTrip(t, run.Steps[k].Job), steps)
		if err != nil || !bytes.Equal(propEnc(t, got), final) {
			t.Fatalf("Replay from the snapshot at step %d: %v", k, err)
		}
		for i, s := range run.Steps {
			if e := propEnc(t, s.Job); !bytes.Equal(e, s.Enc) || job.Describe(s.Job) != s.Desc {
				t.Fatalf("job of step %d changed after it was returned", i)
			}
		}
	})
}

// TestTimedMixedBatches plays random trees with deadlines, retries and
// cancels under a runner whose batches mix results and firings
// (timedMixed), with the timed oracle in lockstep; timedPlay checks after
// every step that no transition both dispatches and stops an action (a
// batch's firings apply before anything it starts), beside Check,
// recovery and the oracle's states, actions, stops, timers and ignored
// results.
func TestTimedMixedBatches(t *testing.T) {
	timedCheck(t, func(t *rapid.T, shape propShape) {
		c := timedDrawCase(t, shape)
		timedPlay(t, c, timedMixed(t, c), rapid.Bool().Draw(t, "roundTrip"), true)
	})
}

// TestTimedStatus: with retries, timeouts and at-most-once but no
// deadline ever firing and no cancel, the final status is what the
// schedule-free oracle (oracleOutcome) says of the leaves' effective
// outcomes (each leaf ends as its first attempt that succeeds or is not
// retried), whatever the schedule: a leaf that gives up because a par
// froze only fails a par that fails anyway.
func TestTimedStatus(t *testing.T) {
	timedCheck(t, func(t *rapid.T, shape propShape) {
		c := timedDrawCase(t, shape)
		eff := c.effective()
		want := oracleOutcome(eff, &eff.Tree, "")
		run := timedPlay(t, c, timedRandom(t, c, false, false), false, true)
		if got := run.final().Status(); got != want {
			t.Fatalf("job %s, oracleOutcome says %s\n%s%s", got, want, c, job.Describe(run.final()))
		}
	})
}

// TestTimedConcurrentRestarts restarts one timed job, with a leaf waiting
// for its retry, a deadline pending and a try in flight, from many
// goroutines at once (results, firings, cancels) while others read it;
// under -race it shows that Restart writes nothing versions share, the
// timer table included.
func TestTimedConcurrentRestarts(t *testing.T) {
	w := ast.Par(
		ast.Act("flaky", 1).WithRetry(ast.Retry{Attempts: 5, Initial: time.Second, Multiplier: 2, Jitter: 0.5}),
		ast.Try(ast.Act("b", 2).WithTimeout(time.Second), ast.Finally(ast.Act("f", 3))).WithDeadline(5*time.Second),
		ast.Seq(ast.Act("c", 4).AtMostOnce(), ast.Act("d", 5)).WithDeadline(time.Minute),
	)
	tr, err := job.New("conc", w, job.StartedAt(t0))
	if err != nil {
		t.Fatal(err)
	}
	tr, err = job.Restart(tr.Job, []job.Result{failAt(tr.Actions[0], "502", t0.Add(time.Second))})
	if err != nil || len(tr.Job.Timers()) != 3 {
		t.Fatalf("%v, timers %v", err, tr.Job.Timers())
	}
	j := tr.Job
	want := propEnc(t, j)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(2)
		go func() {
			defer wg.Done()
			cur := j
			for i := 0; i < 12 && !cur.Done(); i++ {
				var rs []job.Result
				switch (g + i) % 4 {
				case 0:
					for _, tm := range cur.Timers() {
						rs = append(rs, tm.Fire(tm.Due.Add(time.Duration(g)*time.Millisecond)))
					}
				case 1:
					for _, a := range cur.Outstanding() {
						rs = append(rs, failAt(a, "no", cur.Clock().Add(time.Second)))
					}
				case 2:
					rs = append(rs, job.CancelResult("conc", fmt.Sprint("stop ", g)))
				default:
					for _, a := range cur.Outstanding() {
						rs = append(rs, a.Succeed([]byte(fmt.Sprint(g))))
					}
				}
				if len(rs) == 0 {
					continue
				}
				next, err := job.Restart(cur, rs)
				if err != nil {
					t.Error(err)
					return
				}
				if err := job.Check(next.Job); err != nil {
					t.Error(err)
					return
				}
				cur = next.Job
			}
		}()
		go func() {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				if b, err := job.Encode(j); err != nil || !bytes.Equal(b, want) {
					t.Errorf("the shared job changed while others restarted it: %v", err)
					return
				}
				_ = job.Describe(j)
				_ = j.Outstanding()
				_ = j.Timers()
			}
		}()
	}
	wg.Wait()
}

func propIDsR(rs []job.Result) []string {
	var s []string
	for _, r := range rs {
		s = append(s, r.ActionID)
	}
	return s
}
