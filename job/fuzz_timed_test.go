package job_test

import (
	"bytes"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
)

// fuzzTimedWorkflows are the seed workflows of FuzzTimed, one for each
// feature of time: retries with back-off, jitter, a cap and non-retryable
// kinds; timeouts; at-most-once delivery; nested deadlines over a try
// with a rescue and a finally; a finally that retries (for cancels); a
// dag with retries, a deadline and inputs.
var fuzzTimedWorkflows = map[string]string{
	"retry": `{"version":1,"root":{"par":[` +
		`{"act":"a","retry":{"attempts":4,"initial":"1s","multiplier":2,"max":"3s","jitter":0.5,"non_retryable":["card_declined"]}},` +
		`{"act":"b","retry":{"attempts":2,"initial":"500ms"}}]}}`,
	"timeout": `{"version":1,"root":{"seq":[` +
		`{"act":"a","timeout":"1s","retry":{"attempts":3,"initial":"1s","non_retryable":["lost"]}},` +
		`{"act":"b","timeout":"5s"}]}}`,
	"at-most-once": `{"version":1,"root":{"par":[` +
		`{"act":"sms","delivery":"at-most-once"},` +
		`{"act":"ledger","delivery":"at-most-once","retry":{"attempts":3,"initial":"1s"}}]}}`,
	"deadline": `{"version":1,"root":{"seq":[` +
		`{"try":{"seq":[{"act":"a","retry":{"attempts":3,"initial":"2s"}},{"act":"b"}],"deadline":"5s"},` +
		`"rescue":{"act":"r"},"finally":{"act":"f","deadline":"3s"}},` +
		`{"act":"c"}],"deadline":"1m"}}`,
	"cancel": `{"version":1,"root":{"par":[{"act":"a"},` +
		`{"try":{"act":"b"},"finally":{"act":"f","retry":{"attempts":2,"initial":"1s"}}}]}}`,
	"dag": `{"version":1,"root":{"dag":[` +
		`{"name":"a","do":{"act":"a","retry":{"attempts":3,"initial":"1s"}}},` +
		`{"name":"b","do":{"act":"b","deadline":"2s"}},` +
		`{"name":"c","after":["a","b"],"do":{"act":"c","inputs":["a"]}}]}}`,
	"map": `{"version":3,"root":{"seq":[{"act":"l","name":"xs"},` +
		`{"map":{"over":"xs","do":{"seq":[{"act":"a","inputs":["item"],"retry":{"attempts":3,"initial":"1s"},"timeout":"2s"},` +
		`{"race":[{"wait":"go"},{"sleep":"5s"}]}],"deadline":"10s"},"limit":2}}]}}`,
	"loop": `{"version":3,"root":{"try":{"loop":{"do":{"seq":[{"act":"p","delivery":"at-most-once","retry":{"attempts":2,"initial":"1s"}},` +
		`{"act":"u","name":"u","deadline":"3s"}]},"until":{"output":"u","equals":1},"max":3},"deadline":"1m"},"finally":{"act":"f"}}}`,
}

// The operations of a FuzzTimed schedule, one byte each (mod 10), with
// the bytes that follow as their arguments.
const (
	ftAnswer  = 0 // 0 to 2: answer an outstanding action: index, mode, message or output
	ftTick    = 3 // move the runner's clock: how far
	ftFire    = 4 // fire a timer a transition asked for: which, when
	ftCancel  = 5 // a cancel: its reason (maybe empty)
	ftFlush   = 6 // end of batch: Restart
	ftOdd     = 7 // an old result again, an arbitrary ID, a root timer's alias, a stray job
	ftCrash   = 8 // store and reload
	ftAnswerA = 9 // answer every outstanding action, one way
)

var (
	fuzzTimedKinds = []string{"", job.KindTimeout, job.KindLost, "card_declined", job.KindDeadline, job.KindCancelled, "other"}
	fuzzTimedTicks = []time.Duration{0, 100 * time.Millisecond, time.Second, 3 * time.Second, 10 * time.Second, time.Minute, time.Hour}
	fuzzTimedIDs   = []string{"@deadline", "@retry#2", "root@deadline", "root@retry#2", "@cancel", "root#1", "x@y", "@", "root@retry#02", "par[0]@retry#2", "seq[0]@deadline", "dag[0]@retry#3"}
)

// ftSeed writes a schedule: each op and its argument bytes.
func ftSeed(ops ...[]byte) []byte {
	var b []byte
	for _, o := range ops {
		b = append(b, o...)
	}
	return b
}

// Schedule pieces for the seeds.
var (
	ftFail     = []byte{ftAnswer, 0, 1, 4, 'b', 'o', 'o', 'm', 0} // fail the first action out, plain, now
	ftFailKind = func(k byte, final bool) []byte {                // fail it with fuzzTimedKinds[k], final or not
		mode := 1 | k<<2
		if final {
			mode |= 2
		}
		return []byte{ftAnswer, 0, mode, 1, 'x', 0}
	}
	ftEnd     = []byte{ftFlush}
	ftFireDue = []byte{ftFire, 0, 0} // fire the first pending timer at its due time
	ftLate    = []byte{ftFire, 0, 1} // at the runner's clock
	ftSec     = []byte{ftTick, 2}    // a second passes
	ftMin     = []byte{ftTick, 5}    // a minute
	ftStop    = []byte{ftCancel, 2, 'n', 'o'}
	ftAll     = []byte{ftAnswerA, 0} // succeed everything out
	ftCrashed = []byte{ftCrash}
)

// FuzzTimed plays a workflow decoded from JSON (retries, timeouts,
// deliveries, deadlines: whatever ast.Decode reads) under a schedule
// decoded from bytes: results with kinds, Final and times (the runner's
// clock, none, or earlier), timer firings at, after or before their due
// time, cancels with or without a reason, duplicates, arbitrary IDs, the
// root's timer aliases, results for another job, batch boundaries and
// crashes. No input may make New or Restart panic, and after every batch:
// Restart is deterministic and the batch a set (the same batch reversed
// gives the same job and transition); it returns no error (so its check
// of its own output holds: no action both dispatched and stopped); it
// leaves its input alone; the job
// passes Check; the version grows by one exactly when something applied;
// the step's record (EncodeStep, DecodeStep) replays on the stored job to
// the same job; the job survives Encode/Decode and recovers exactly the
// runner's outstanding actions and pending timers, each timer one a
// transition asked for; actions carry their leaf's timeout and delivery;
// a running job has an action out or a timer pending, a finished one
// neither. Then everything out succeeds and every timer fires, until the
// job ends, which it must; late results change nothing.
func FuzzTimed(f *testing.F) {
	k := func(i int) byte { return byte(i) } // an index into fuzzTimedKinds
	seeds := map[string][]byte{
		// Fail, wait, fire, fail with a listed kind; b fails final.
		"retry": ftSeed(ftFail, ftEnd, ftFireDue, ftEnd, ftSec, ftFailKind(k(3), false), ftEnd,
			[]byte{ftAnswer, 0, 3, 1, 'f', 0}, ftEnd),
		// A timeout retried, then a lost attempt that the policy refuses.
		"timeout": ftSeed(ftFailKind(k(1), false), ftEnd, ftFireDue, ftEnd, ftFailKind(k(2), false), ftEnd, ftAll, ftEnd),
		// Both lost; the ledger retries; a crash between.
		"at-most-once": ftSeed(ftCrashed, []byte{ftAnswer, 1, 1 | 2<<2, 1, 'l', 2}, ftEnd, ftCrashed, ftFireDue, ftEnd,
			ftFailKind(k(2), false), ftEnd),
		// a waits for its retry when the body's deadline (the third timer
		// by ID) runs out; the finally runs, with its own deadline; the
		// root's fires, twice; a late result.
		"deadline": ftSeed(ftFail, ftEnd, ftSec, ftSec, ftSec, ftSec, ftSec, []byte{ftFire, 2, 0}, ftEnd, ftMin,
			ftFireDue, ftLate, ftEnd, []byte{ftOdd, 0, 0}, ftEnd),
		// b succeeds, the finally fails and waits, then a cancel; again,
		// and one without a reason.
		"cancel": ftSeed([]byte{ftAnswer, 1, 0, 0, 0}, ftEnd, []byte{ftAnswer, 1, 1, 1, 'x', 0}, ftEnd, ftStop, ftEnd, ftStop, []byte{ftCancel, 0}, ftEnd,
			ftFireDue, ftEnd),
		// a fails and waits, b's deadline fires with the retry in one
		// batch, a root alias and a stray result.
		"dag": ftSeed(ftFail, ftEnd, ftMin, ftFireDue, []byte{ftFire, 1, 2}, ftEnd, []byte{ftOdd, 1, 0}, ftEnd,
			[]byte{ftOdd, 3}, ftEnd),
	}
	var names []string
	for name := range fuzzTimedWorkflows {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		wf := []byte(fuzzTimedWorkflows[name])
		f.Add(wf, seeds[name])
		f.Add(wf, ftSeed(ftAll, ftEnd, ftAll, ftEnd))
	}
	f.Fuzz(func(t *testing.T, wf, sched []byte) {
		if len(wf) > 4096 {
			return
		}
		root, err := ast.Decode(wf)
		if err != nil {
			return
		}
		n := 0
		ast.Walk(root, func(string, *ast.Node) bool { n++; return true })
		if n > 48 {
			return
		}
		ftPlay(t, root, sched)
	})
}

// ftRunner is what a runner knows while FuzzTimed plays: the job, the
// actions it has out, every timer it was asked for, its clock, what it
// sent, and the leaves of the tree by path.
type ftRunner struct {
	t      *testing.T
	j      job.Job
	out    map[string]job.Action
	asked  map[string]job.Timer
	now    time.Time
	sent   []job.Result
	leaves map[string]*ast.Node
}

func ftPlay(t *testing.T, root ast.Node, sched []byte) {
	tr, err := job.New("fz", root, job.StartedAt(t0))
	if err != nil {
		return // ast.Decode validated it: only a bad ID could fail, and it is good
	}
	r := &ftRunner{t: t, out: map[string]job.Action{}, asked: map[string]job.Timer{}, now: t0, leaves: map[string]*ast.Node{}}
	ast.Walk(tr.Job.Workflow(), func(path string, n *ast.Node) bool {
		if n.Kind == ast.KindAct {
			r.leaves[path] = n
		}
		return true
	})
	if err := job.Check(tr.Job); err != nil {
		t.Fatalf("New: Check: %v\n%s", err, job.Describe(tr.Job))
	}
	r.take(job.Job{}, tr, nil)
	r.j = tr.Job
	r.recover()

	rd := &fuzzReader{b: sched}
	var batch []job.Result
	stray := false
	flush := func() {
		if len(batch) > 0 {
			r.step(batch, stray)
		}
		batch, stray = nil, false
	}
	for steps := 0; len(rd.b) > 0 && steps < 300; steps++ {
		switch op := rd.byte() % 10; op {
		case 0, 1, 2:
			if len(r.out) == 0 {
				continue
			}
			a := r.outList()[int(rd.byte())%len(r.out)]
			batch = append(batch, r.answer(a, rd.byte(), rd.bytes(8), rd.byte()))
		case ftAnswerA:
			mode := rd.byte()
			for _, a := range r.outList() {
				batch = append(batch, r.answer(a, mode, []byte("all"), mode>>4))
			}
		case ftTick:
			r.now = r.now.Add(fuzzTimedTicks[int(rd.byte())%len(fuzzTimedTicks)])
		case ftFire:
			ts := r.askedList()
			if len(ts) == 0 {
				continue
			}
			tm := ts[int(rd.byte())%len(ts)]
			switch rd.byte() % 3 {
			case 0:
				batch = append(batch, tm.Fire(tm.Due))
			case 1:
				batch = append(batch, tm.Fire(maxTime(tm.Due, r.now)))
			default:
				batch = append(batch, tm.Fire(tm.Due.Add(-time.Second))) // early: a runner's clock skew
			}
		case ftCancel:
			batch = append(batch, job.CancelResult("fz", string(rd.bytes(8))))
		case ftFlush:
			flush()
		case ftOdd:
			switch rd.byte() % 4 {
			case 0:
				if len(r.sent) > 0 {
					batch = append(batch, r.sent[int(rd.byte())%len(r.sent)])
				}
			case 1:
				batch = append(batch, job.Result{JobID: "fz", ActionID: fuzzTimedIDs[int(rd.byte())%len(fuzzTimedIDs)], At: r.now})
			case 2:
				batch = append(batch, job.Result{JobID: "fz", ActionID: string(rd.bytes(24)), Error: string(rd.bytes(4)), At: r.now})
			default:
				batch = append(batch, job.Result{JobID: "other", ActionID: "root#1"})
				stray = true
			}
		case ftCrash:
			flush()
			r.j = r.recover()
		}
	}
	flush()
	r.finish()
}

// answer returns the result of the outstanding action a: by mode, a
// success with output, or a failure with message msg, a kind and Final;
// stamped by when.
func (r *ftRunner) answer(a job.Action, mode byte, data []byte, when byte) job.Result {
	var res job.Result
	if mode&1 == 0 {
		res = a.Succeed(data)
	} else {
		res = a.Fail(string(data))
		res.Kind = fuzzTimedKinds[int(mode>>2)%len(fuzzTimedKinds)]
		res.Final = mode&2 != 0
	}
	switch when % 4 {
	case 1: // none: the job's clock
	case 2:
		res.At = r.now.Add(-5 * time.Second) // a result that took its time to come
	default:
		res.At = r.now
	}
	return res
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// outList returns the actions out, by ID.
func (r *ftRunner) outList() []job.Action {
	var as []job.Action
	for _, a := range r.out {
		as = append(as, a)
	}
	sort.Slice(as, func(i, k int) bool { return as[i].ID < as[k].ID })
	return as
}

// askedList returns every timer asked for, by ID: pending, fired or
// withdrawn (a runner need not cancel a withdrawn timer).
func (r *ftRunner) askedList() []job.Timer {
	var ts []job.Timer
	for _, tm := range r.asked {
		ts = append(ts, tm)
	}
	sort.Slice(ts, func(i, k int) bool { return ts[i].ID < ts[k].ID })
	return ts
}

// step applies one batch and checks everything FuzzTimed promises.
func (r *ftRunner) step(batch []job.Result, stray bool) {
	t := r.t
	t.Helper()
	prev := r.j
	before := propEnc(t, prev)
	tr, err := job.Restart(prev, slices.Clone(batch))
	if e := propEnc(t, prev); !bytes.Equal(e, before) {
		t.Fatalf("Restart modified its input job:\nbefore %s\n after %s", before, e)
	}
	if stray {
		if err == nil || tr.Changed() {
			t.Fatalf("Restart accepted a batch with a result of another job: %v", err)
		}
		return
	}
	if err != nil {
		t.Fatalf("Restart: %v", err)
	}
	next := tr.Job
	if err := job.Check(next); err != nil {
		t.Fatalf("Check: %v\nbatch %v\nfrom\n%s\nto\n%s", err, batch, job.Describe(prev), job.Describe(next))
	}
	enc := propEnc(t, next)
	// Deterministic, and a set: the same batch again, and reversed.
	rev := slices.Clone(batch)
	slices.Reverse(rev)
	for _, again := range [][]job.Result{slices.Clone(batch), rev} {
		tr2, err := job.Restart(prev, again)
		if err != nil {
			t.Fatalf("Restart again: %v", err)
		}
		if e := propEnc(t, tr2.Job); !bytes.Equal(e, enc) {
			t.Fatalf("the batch again, or reversed, gives another job:\n%s\n%s\nbatch %v", e, enc, batch)
		}
		for _, d := range []bool{
			reflect.DeepEqual(tr.Actions, tr2.Actions), reflect.DeepEqual(tr.Timers, tr2.Timers), reflect.DeepEqual(tr.Stops, tr2.Stops),
			reflect.DeepEqual(tr.Step, tr2.Step), reflect.DeepEqual(tr.Ignored, tr2.Ignored),
		} {
			if !d {
				t.Fatalf("the batch again, or reversed, gives another transition:\n%+v\n%+v\nbatch %v", tr, tr2, batch)
			}
		}
	}
	if len(tr.Step.Results)+len(tr.Ignored) != len(batch) {
		t.Fatalf("%d applied and %d ignored of %d", len(tr.Step.Results), len(tr.Ignored), len(batch))
	}
	if !tr.Changed() {
		if next.Version() != prev.Version() || !bytes.Equal(enc, before) || len(tr.Actions)+len(tr.Timers)+len(tr.Stops) > 0 || len(tr.Step.Results) > 0 {
			t.Fatalf("a batch that applied nothing changed the job or asked for something")
		}
		return
	}
	if next.Version() != prev.Version()+1 || tr.Step.Version != next.Version() || len(tr.Step.Results) == 0 {
		t.Fatalf("version %d -> %d, step %d with %d results", prev.Version(), next.Version(), tr.Step.Version, len(tr.Step.Results))
	}
	// The journal: the step's record replays on the stored job.
	rec := job.EncodeStep(tr.Step)
	st, err := job.DecodeStep("fz", tr.Step.Version, rec)
	if err != nil {
		t.Fatalf("DecodeStep(EncodeStep(step)): %v", err)
	}
	if again := job.EncodeStep(st); !bytes.Equal(again, rec) {
		t.Fatalf("the step record does not read back the same")
	}
	stored, err := job.Decode(before)
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	replayed, err := job.Replay(stored, []job.Step{st})
	if err != nil {
		t.Fatalf("Replay of the step: %v", err)
	}
	if e := propEnc(t, replayed); !bytes.Equal(e, enc) {
		t.Fatalf("Replay of the step gives another job:\n%s\n%s", e, enc)
	}
	r.sent = append(r.sent, batch...)
	r.take(prev, tr, tr.Step.Results)
	r.j = next
	r.recover()
}

// take updates the runner's view with the transition tr from prev (the
// zero Job for New), applied being the results it applied, and checks
// the actions, stops and timers, and Changed between the two jobs.
func (r *ftRunner) take(prev job.Job, tr job.Transition, applied []job.Result) {
	t := r.t
	t.Helper()
	changedCheck(t, "the job before, the transition's", prev, tr.Job)
	for _, res := range applied {
		if strings.Contains(res.ActionID, "@") {
			continue // a firing or a cancel
		}
		if _, ok := r.out[res.ActionID]; !ok {
			t.Fatalf("applied a result for %s, which is not out", res.ActionID)
		}
		delete(r.out, res.ActionID)
	}
	for _, a := range tr.Actions {
		leaf := r.leaves[growWrittenPath(a.Path())] // a map's copy or a loop's iteration: its template's
		if leaf == nil || a.JobID != "fz" || a.Timeout != leaf.Timeout || a.AtMostOnce != (leaf.Delivery == ast.AtMostOnce) || a.Name != leaf.Action {
			t.Fatalf("bad action %+v", a)
		}
		if _, dup := r.out[a.ID]; dup {
			t.Fatalf("%s dispatched again while out", a.ID)
		}
		r.out[a.ID] = a
	}
	for _, a := range tr.Stops {
		if _, ok := r.out[a.ID]; !ok {
			t.Fatalf("stops %s, which is not out", a.ID)
		}
		delete(r.out, a.ID)
	}
	was := map[string]job.Timer{}
	if prev.ID() != "" {
		for _, tm := range prev.Timers() {
			was[tm.ID] = tm
		}
	}
	asked := map[string]bool{}
	for _, tm := range tr.Timers {
		if tm.JobID != "fz" || asked[tm.ID] {
			t.Fatalf("bad or repeated timer %v", tm)
		}
		asked[tm.ID] = true
		r.asked[tm.ID] = tm
	}
	for _, tm := range tr.Job.Timers() {
		if w, ok := was[tm.ID]; !asked[tm.ID] && (!ok || w != tm) {
			t.Fatalf("the job waits for %v, which it did not wait for before and no transition asked for", tm)
		}
	}
}

// recover stores and reloads the job: the decoded job is the same, lists
// as outstanding exactly the actions out, and waits for exactly the
// timers pending, each asked for. It returns the decoded job.
func (r *ftRunner) recover() job.Job {
	t := r.t
	t.Helper()
	j := r.j
	d := propRoundTrip(t, j)
	var got, want []string
	for _, a := range d.Outstanding() {
		o, ok := r.out[a.ID]
		if !ok || !reflect.DeepEqual(a, o) {
			t.Fatalf("recovery re-emits %+v; out as %+v", a, o)
		}
		got = append(got, a.ID)
	}
	for id := range r.out {
		want = append(want, id)
	}
	sort.Strings(got)
	sort.Strings(want)
	if !slices.Equal(got, want) || j.Running() != len(want) {
		t.Fatalf("recovery re-emits %v, out %v, running %d", got, want, j.Running())
	}
	if !reflect.DeepEqual(d.Timers(), j.Timers()) || !d.Clock().Equal(j.Clock()) {
		t.Fatalf("recovered timers %v at %v, live %v at %v", d.Timers(), d.Clock(), j.Timers(), j.Clock())
	}
	for _, tm := range j.Timers() {
		if r.asked[tm.ID] != tm {
			t.Fatalf("the job waits for %v, which no transition asked for", tm)
		}
	}
	switch {
	case j.Done() && (len(r.out) > 0 || len(j.Timers()) > 0):
		t.Fatalf("a %s job with %d out and timers %v", j.Status(), len(r.out), j.Timers())
	case !j.Done() && len(r.out) == 0 && len(j.Timers()) == 0:
		t.Fatalf("a running job with nothing out and no timer pending: it can never end\n%s", job.Describe(j))
	}
	_, cancelled := j.Cancelled()
	_, failed := j.Failure()
	if j.Done() && (cancelled != (j.Status() == job.StatusCancelled) || failed != (j.Status() == job.StatusFailed)) {
		t.Fatalf("a %s job: cancelled %v, failure %v", j.Status(), cancelled, failed)
	}
	return d
}

// finish lets everything settle: every action out succeeds, and when none
// is out the earliest pending timer fires at its due time. The job must
// end, and then every result sent again changes nothing.
func (r *ftRunner) finish() {
	t := r.t
	t.Helper()
	for round := 0; !r.j.Done(); round++ {
		if round > 200 {
			t.Fatalf("no end after %d rounds\n%s", round, job.Describe(r.j))
		}
		var batch []job.Result
		for _, a := range r.outList() {
			res := a.Succeed(nil)
			res.At = r.now
			batch = append(batch, res)
		}
		if len(batch) == 0 {
			ts := r.j.Timers()
			slices.SortStableFunc(ts, func(a, b job.Timer) int { return a.Due.Compare(b.Due) })
			r.now = maxTime(r.now, ts[0].Due)
			batch = append(batch, ts[0].Fire(ts[0].Due))
		}
		v := r.j.Version()
		r.step(batch, false)
		if r.j.Version() != v+1 {
			t.Fatalf("round %d: a batch of answers and due firings applied nothing", round)
		}
	}
	late, err := job.Restart(r.j, slices.Clone(r.sent))
	if err != nil || late.Changed() || len(late.Actions)+len(late.Timers)+len(late.Stops) > 0 {
		t.Fatalf("late results changed a finished job: %v", err)
	}
	for _, ig := range late.Ignored {
		if ig.Reason != job.IgnoredJobDone && ig.Reason != job.IgnoredUnknown {
			t.Fatalf("late %s ignored as %q", ig.Result.ActionID, ig.Reason)
		}
	}
}
