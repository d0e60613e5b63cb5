package jobtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
)

// Env plays the runner for scripted reducer tests. It holds one job at a
// time, sends it batches of results, keeps its own list of the actions it
// has dispatched and not yet seen settle (as a runner would), and prints
// after each command what a reader needs to follow the run.
//
// After every New and Restart it checks the reducer's contracts (see the
// package documentation); a broken contract is an error from Run, never
// output, so that rewriting the expected output cannot bless it.
//
// The zero Env is ready to use. An Env is not safe for concurrent use.
type Env struct {
	// Check, when not nil, is called on every job the reducer returns;
	// an error fails the script. Tests of package job set it to job.Check.
	Check func(job.Job) error

	j        job.Job
	versions []job.Job             // versions[v-1] is the live job at version v
	steps    []job.Step            // steps[v-1] is the step that made version v
	sent     map[string]job.Result // the last result sent for each action ID
	out      map[string]job.Action // dispatched and not settled: the runner's view
	asked    map[string]job.Timer  // every timer a transition asked for, the latest by ID
	t0       time.Time             // the job's start time (new ... start=), or zero
	failures bool                  // new ... failures=on: print the failure a rescue or finally follows
}

// Job returns the current job: the zero Job before the first new command.
func (e *Env) Job() job.Job { return e.j }

// scriptError is an error that already names its place in the script.
type scriptError struct{ msg string }

func (s *scriptError) Error() string { return s.msg }

// Run executes the command of c and returns its output. The error is for
// a mistake in the script (an unknown command, a syntax error) or a
// broken contract of the reducer, and names the file and line; a failed
// workflow or a result the reducer ignores is output, not an error.
func (e *Env) Run(c *Case) (string, error) {
	words, err := splitArgs(c.Cmd)
	if err != nil {
		return "", fmt.Errorf("%s: %w", c.Pos, err)
	}
	if len(words) == 0 {
		return "", fmt.Errorf("%s: empty command", c.Pos)
	}
	var b strings.Builder
	name, args := words[0].s, words[1:]
	if name != "new" && e.j.ID() == "" {
		return "", fmt.Errorf("%s: %s: no job yet; start one with new", c.Pos, name)
	}
	if name != "new" && len(c.Input) > 0 {
		return "", fmt.Errorf("%s: %s takes no input lines", c.Pos, name)
	}
	switch name {
	case "new":
		err = e.cmdNew(&b, c, args)
	case "ok", "fail", "fire", "signal", "cancelnode", "batch":
		if name == "batch" {
			words = words[1:]
		}
		var results []job.Result
		results, err = e.parseResults(words)
		if err == nil {
			err = e.send(&b, results, nil)
		}
	case "cancel":
		err = e.cmdCancel(&b, words)
	case "timers":
		err = e.cmdTimers(&b, args)
	case "dup":
		err = e.cmdDup(&b, args)
	case "crash":
		err = e.cmdCrash(&b, args)
	case "describe":
		if err = noArgs(args); err == nil {
			b.WriteString(job.Describe(e.j))
		}
	case "history":
		err = e.cmdHistory(&b, args)
	case "replay":
		err = e.cmdReplay(&b, args)
	case "encode":
		if err = noArgs(args); err == nil {
			enc, _ := job.Encode(e.j)
			fmt.Fprintf(&b, "%s\n", enc)
		}
	case "output":
		err = e.cmdOutput(&b, args)
	case "workflow":
		if err = noArgs(args); err == nil {
			root := e.j.Workflow()
			enc, _ := ast.Encode(root)
			dsl := FormatWorkflow(root)
			if back, err := ParseWorkflow(dsl); err != nil || !ast.Equal(back, root) {
				// Retries, timeouts, deadlines and deliveries have no
				// compact syntax.
				dsl = "(none: the compact syntax cannot hold this workflow)"
			}
			fmt.Fprintf(&b, "dsl  %s\njson %s\n", dsl, enc)
		}
	default:
		err = errors.New("unknown command (want new, ok, fail, fire, cancel, batch, dup, crash, describe, history, replay, encode, output, timers or workflow)")
	}
	if err != nil {
		var se *scriptError
		if errors.As(err, &se) {
			return "", err
		}
		return "", fmt.Errorf("%s: %s: %w", c.Pos, name, err)
	}
	return b.String(), nil
}

func noArgs(args []word) error {
	if len(args) > 0 {
		return fmt.Errorf("takes no arguments, got %q", args[0].s)
	}
	return nil
}

// cmdNew starts a job: new ID [start=TIME] [failures=on], with the
// workflow on the input lines, in the compact syntax or, when it starts
// with '{', in the JSON form.
func (e *Env) cmdNew(b *strings.Builder, c *Case, args []word) error {
	if len(args) == 0 {
		return errors.New("usage: new ID [start=TIME] [failures=on], with the workflow on the following lines")
	}
	var opts []job.Option
	var t0 time.Time
	failures := false
	for _, w := range args[1:] {
		key, val, ok := w.option()
		switch {
		case ok && key == "start":
			t, err := time.Parse(time.RFC3339Nano, val)
			if err != nil {
				return fmt.Errorf("start=%s: want an RFC 3339 time (2026-01-02T15:04:05Z)", val)
			}
			t0 = t.UTC()
			opts = append(opts, job.StartedAt(t0))
		case ok && key == "failures" && val == "on":
			failures = true
		default:
			return fmt.Errorf("usage: new ID [start=TIME] [failures=on], got %q", w.s)
		}
	}
	text := strings.Join(c.Input, "\n")
	if strings.TrimSpace(text) == "" {
		return errors.New("no workflow: give it on the lines after the command")
	}
	var root ast.Node
	if strings.HasPrefix(strings.TrimSpace(text), "{") {
		var err error
		if root, err = ast.Decode([]byte(text)); err != nil {
			fmt.Fprintf(b, "error: %v\n", err)
			return nil
		}
	} else {
		var err error
		if root, err = ParseWorkflow(text); err != nil {
			var se *SyntaxError
			if errors.As(err, &se) {
				return &scriptError{fmt.Sprintf("%s:%d:%d: workflow syntax: %s", c.Pos.File, c.Pos.Line+se.Line, se.Col, se.Msg)}
			}
			return err
		}
	}
	tr, err := job.New(job.ID(args[0].s), root, opts...)
	if err != nil {
		fmt.Fprintf(b, "error: %v\n", err)
		return nil
	}
	j, acts := tr.Job, tr.Actions
	e.j = j
	e.versions = []job.Job{j}
	e.steps = []job.Step{tr.Step}
	e.sent = map[string]job.Result{}
	e.out = map[string]job.Action{}
	e.asked = map[string]job.Timer{}
	e.t0, e.failures = t0, failures
	if j.Version() != 1 || tr.Step.Version != 1 || len(tr.Step.Results) > 0 || len(tr.Ignored) > 0 || !tr.Created() || len(tr.Stops) > 0 {
		return fmt.Errorf("job.New returned version %d with step %+v and %d stops, want version 1, an empty step and no stop", j.Version(), tr.Step, len(tr.Stops))
	}
	if !j.Clock().Equal(t0) {
		return fmt.Errorf("job.New with start %v: clock %v", t0, j.Clock())
	}
	for _, a := range acts {
		if err := e.dispatch(b, "dispatch", a, j); err != nil {
			return err
		}
	}
	if err := e.arm(b, job.Job{}, tr); err != nil {
		return err
	}
	if err := e.verify(j); err != nil {
		return err
	}
	e.status(b)
	return nil
}

// parseResults reads clauses separated by ';':
//
//	ok ID [out=OUTPUT] [at=TIME] [job=JOB] {ID [out=OUTPUT] [at=TIME] [job=JOB]}
//	fail ID [MESSAGE] [kind=KIND] [final=true] [at=TIME] [job=JOB]
//	fire TIMER [at=TIME] [job=JOB] {TIMER [at=TIME] [job=JOB]}
//	cancel [REASON] [job=JOB]
func (e *Env) parseResults(words []word) ([]job.Result, error) {
	var results []job.Result
	var clause []word
	flush := func() error {
		if len(clause) == 0 {
			return errors.New("empty clause (want ok ID..., fail ID [MESSAGE], fire TIMER... or cancel [REASON])")
		}
		kind, rest := clause[0].s, clause[1:]
		clause = nil
		if kind == "signal" {
			return e.parseSignal(rest, &results)
		}
		if kind == "cancelnode" {
			if len(rest) != 2 {
				return errors.New("usage: cancelnode NAME REASON")
			}
			results = append(results, job.CancelNodeResult(e.j.ID(), rest[0].s, rest[1].s))
			return nil
		}
		if kind != "ok" && kind != "fail" && kind != "fire" && kind != "cancel" {
			return fmt.Errorf("clause starts with %q (want ok, fail, fire, signal or cancel)", kind)
		}
		if len(rest) == 0 && kind != "cancel" {
			return fmt.Errorf("%s needs an action ID", kind)
		}
		start := len(results)
		if kind == "cancel" {
			results = append(results, job.CancelResult(e.j.ID(), ""))
		}
		hasMsg := false
		timed := map[int]bool{} // the firings given a time
		for _, w := range rest {
			key, val, isOpt := w.option()
			last := len(results) - 1
			switch {
			case isOpt && len(results) == start:
				return fmt.Errorf("option %s= before any action ID", key)
			case isOpt && key == "job":
				results[last].JobID = job.ID(val)
			case isOpt && key == "at" && kind != "cancel":
				t, err := e.parseTime(val)
				if err != nil {
					return fmt.Errorf("at=%s: %v", val, err)
				}
				results[last].At = t
				timed[last] = true
			case isOpt && key == "out" && kind == "ok":
				results[last].Output = []byte(val)
			case isOpt && key == "kind" && kind == "fail":
				results[last].Kind = val
			case isOpt && key == "final" && kind == "fail" && val == "true":
				results[last].Final = true
			case isOpt:
				return fmt.Errorf("unknown option %s= for %s (want %s)", key, kind, map[string]string{
					"ok": "out=, at= or job=", "fail": "kind=, final=true, at= or job=", "fire": "at= or job=", "cancel": "job="}[kind])
			case kind == "cancel":
				if hasMsg {
					return fmt.Errorf("cancel takes one reason; quote a reason with spaces")
				}
				results[last].Error = w.s
				hasMsg = true
			case kind == "ok" || kind == "fire" || len(results) == start:
				results = append(results, job.Result{JobID: e.j.ID(), ActionID: w.s})
			case hasMsg:
				return fmt.Errorf("fail takes one action ID and one message; quote a message with spaces")
			default:
				results[last].Error = w.s
				hasMsg = true
			}
		}
		switch kind {
		case "fail":
			if r := &results[len(results)-1]; r.Error == "" {
				r.Error = "action failed"
			}
		case "fire":
			// A runner fires a timer when it is due: by default at the
			// due time of the timer of that ID that a transition asked for.
			for i := start; i < len(results); i++ {
				if timed[i] {
					continue
				}
				tm, ok := e.asked[results[i].ActionID]
				if !ok {
					return fmt.Errorf("no transition asked for a timer %s; give its time with at=", results[i].ActionID)
				}
				results[i].At = tm.Due
			}
		}
		return nil
	}
	for _, w := range words {
		if w.s == ";" && !w.quoted {
			if err := flush(); err != nil {
				return nil, err
			}
			continue
		}
		clause = append(clause, w)
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return results, nil
}

// parseTime reads a time: "+DURATION" after the job's start (new ...
// start=), an RFC 3339 time, or 0 for the zero time (a result that
// carries none: the job's clock).
func (e *Env) parseTime(s string) (time.Time, error) {
	switch {
	case s == "0":
		return time.Time{}, nil
	case strings.HasPrefix(s, "+"):
		if e.t0.IsZero() {
			return time.Time{}, errors.New("a time after the start needs a start time (new ID start=TIME)")
		}
		d, err := time.ParseDuration(s[1:])
		if err != nil {
			return time.Time{}, err
		}
		return e.t0.Add(d), nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, errors.New("want +DURATION (after the start), an RFC 3339 time or 0")
	}
	return t.UTC(), nil
}

// formatTime writes t as parseTime reads it: after the job's start when
// it has one (+1m30s), else in RFC 3339; 0 for the zero time.
func (e *Env) formatTime(t time.Time) string {
	switch {
	case t.IsZero():
		return "0"
	case e.t0.IsZero():
		return t.UTC().Format(time.RFC3339Nano)
	}
	d := t.Sub(e.t0)
	if d < 0 {
		return t.UTC().Format(time.RFC3339Nano)
	}
	return "+" + d.String()
}

// cmdCancel cancels the job with job.Cancel: cancel [REASON]. Cancel must
// be Restart with job.CancelResult, which send checks (sameStep).
func (e *Env) cmdCancel(b *strings.Builder, words []word) error {
	results, err := e.parseResults(words)
	if err != nil {
		return err
	}
	if len(results) != 1 || results[0].JobID != e.j.ID() {
		return errors.New("usage: cancel [REASON] (as a clause of batch to cancel among other results)")
	}
	reason := results[0].Error
	return e.send(b, results, func(j job.Job) (job.Transition, error) { return job.Cancel(j, reason) })
}

// cmdTimers prints the job's clock and the timers it waits for
// (job.Timers), as a runner taking the job over would arm them.
func (e *Env) cmdTimers(b *strings.Builder, args []word) error {
	if err := noArgs(args); err != nil {
		return err
	}
	fmt.Fprintf(b, "clock %s\n", e.formatTime(e.j.Clock()))
	for _, tm := range e.j.Timers() {
		fmt.Fprintf(b, "timer %s due %s\n", tm.ID, e.formatTime(tm.Due))
	}
	return nil
}

// cmdDup sends again, in one batch, the last result sent for each ID.
func (e *Env) cmdDup(b *strings.Builder, args []word) error {
	if len(args) == 0 {
		return errors.New("usage: dup ID [ID...]")
	}
	var results []job.Result
	for _, w := range args {
		r, ok := e.sent[w.s]
		if !ok {
			return fmt.Errorf("no result was sent for %s", w.s)
		}
		results = append(results, r)
	}
	return e.send(b, results, nil)
}

// send gives results to Restart as one batch (or to restart, when not
// nil: a cancel), prints what happened and checks the contracts.
func (e *Env) send(b *strings.Builder, results []job.Result, restart func(job.Job) (job.Transition, error)) error {
	prev := e.j
	before, err := job.Encode(prev)
	if err != nil {
		return err
	}
	if restart == nil {
		restart = func(j job.Job) (job.Transition, error) { return job.Restart(j, slices.Clone(results)) }
	}
	tr, rerr := restart(prev)
	next, acts := tr.Job, tr.Actions
	if after, _ := job.Encode(prev); !bytes.Equal(before, after) {
		return errors.New("job.Restart modified its input job")
	}
	for _, r := range results {
		e.sent[r.ActionID] = r
	}
	if rerr != nil {
		fmt.Fprintf(b, "error: %v\n", rerr)
		if len(acts) > 0 || tr.Changed() || len(tr.Timers)+len(tr.Stops) > 0 {
			return fmt.Errorf("job.Restart returned an error with a transition (step %+v, %d actions, %d timers, %d stops); want nothing applied", tr.Step, len(acts), len(tr.Timers), len(tr.Stops))
		}
		e.status(b)
		return nil
	}
	for _, ig := range tr.Ignored {
		// As Ignored.String, with the result written as a script clause.
		fmt.Fprintf(b, "ignored %s: %s", e.formatResult(ig.Result), ig.Reason)
		if ig.Detail != "" {
			fmt.Fprintf(b, " (%s)", oneLine(ig.Detail))
		}
		b.WriteByte('\n')
	}
	applied := next.Version() != prev.Version()
	if applied != tr.Changed() {
		return fmt.Errorf("job.Restart went from version %d to %d, but the transition says changed=%v", prev.Version(), next.Version(), tr.Changed())
	}
	if applied {
		st := tr.Step
		switch {
		case next.Version() != prev.Version()+1 || st.Version != next.Version():
			return fmt.Errorf("job.Restart went from version %d to %d (step version %d)", prev.Version(), next.Version(), st.Version)
		case len(st.Results)+len(tr.Ignored)-queueFull(tr.Ignored) != len(results):
			return fmt.Errorf("job.Restart applied %d and ignored %d of %d results", len(st.Results), len(tr.Ignored), len(results))
		}
		for _, r := range st.Results {
			if isTimer(r.ActionID) {
				continue // a firing or a cancel: no action
			}
			if _, ok := e.out[r.ActionID]; !ok {
				return fmt.Errorf("job.Restart applied a result for %s, which is not outstanding", r.ActionID)
			}
			delete(e.out, r.ActionID)
		}
	} else {
		after, _ := job.Encode(next)
		switch {
		case len(acts)+len(tr.Timers)+len(tr.Stops) > 0:
			return fmt.Errorf("job.Restart applied no result but returned %d actions, %d timers and %d stops", len(acts), len(tr.Timers), len(tr.Stops))
		case len(tr.Ignored) != len(results):
			return fmt.Errorf("job.Restart applied no result but ignored %d of %d", len(tr.Ignored), len(results))
		case tr.Step.Version != 0 || len(tr.Step.Results) > 0:
			return fmt.Errorf("job.Restart applied no result but returned step %+v", tr.Step)
		case !bytes.Equal(before, after):
			return errors.New("job.Restart applied no result but changed the job")
		}
	}
	printSettled(b, prev, next)
	// Stops name actions that were outstanding before the transition: a
	// batch's firings apply before anything it starts, so a transition
	// never stops an action it dispatches.
	for _, a := range tr.Stops {
		if slices.ContainsFunc(acts, func(x job.Action) bool { return x.ID == a.ID }) {
			return fmt.Errorf("job.Restart both dispatches and stops %s", describeAction(a))
		}
		o, ok := e.out[a.ID]
		if !ok || !sameActions([]job.Action{a}, []job.Action{o}) {
			return fmt.Errorf("job.Restart stops %s, which the runner does not have outstanding as such: %s", describeAction(a), e.outList())
		}
		delete(e.out, a.ID)
	}
	for _, a := range acts {
		if err := e.dispatch(b, "dispatch", a, next); err != nil {
			return err
		}
	}
	for _, a := range tr.Stops {
		fmt.Fprintf(b, "stop %s %s\n", a.ID, a.Name)
	}
	if err := e.arm(b, prev, tr); err != nil {
		return err
	}
	if err := e.verify(next); err != nil {
		return err
	}
	if applied {
		if err := sameStep(prev, tr, results); err != nil {
			return err
		}
		e.versions = append(e.versions, next)
		e.steps = append(e.steps, tr.Step)
	}
	e.j = next
	e.status(b)
	return nil
}

// isTimer reports whether id names a timer or the cancel, not an action:
// only they hold an '@', which no path does.
func isTimer(id string) bool { return strings.Contains(id, "@") }

// arm prints the timers the transition tr (from the job prev, the zero
// Job for New) asks for ("timer ID due TIME") and those it withdrew
// ("withdrawn ID": pending before, not now, and not fired by this step),
// and checks that the timers pending are those pending before, less
// those fired or withdrawn, plus those asked for.
func (e *Env) arm(b *strings.Builder, prev job.Job, tr job.Transition) error {
	now := map[string]job.Timer{}
	for _, tm := range tr.Job.Timers() {
		now[tm.ID] = tm
	}
	asked := map[string]bool{}
	for _, tm := range tr.Timers {
		if tm.JobID != tr.Job.ID() {
			return fmt.Errorf("timer %v of another job", tm)
		}
		if p, ok := now[tm.ID]; !ok || p != tm {
			return fmt.Errorf("the transition asks for %v, which the job does not wait for (Timers: %v)", tm, tr.Job.Timers())
		}
		if asked[tm.ID] {
			return fmt.Errorf("the transition asks for %s twice", tm.ID)
		}
		asked[tm.ID] = true
		e.asked[tm.ID] = tm
		fmt.Fprintf(b, "timer %s due %s\n", tm.ID, e.formatTime(tm.Due))
	}
	fired := map[string]bool{}
	for _, r := range tr.Step.Results {
		fired[r.ActionID] = true
	}
	was := map[string]bool{}
	if prev.ID() != "" {
		for _, tm := range prev.Timers() {
			was[tm.ID] = true
			p, ok := now[tm.ID]
			switch {
			case ok && !asked[tm.ID] && p != tm:
				return fmt.Errorf("the timer %s moved from %v to %v without the transition asking for it", tm.ID, tm.Due, p.Due)
			case ok && fired[tm.ID] && !asked[tm.ID]:
				return fmt.Errorf("the timer %s fired, and the job still waits for it", tm.ID)
			case !ok && !fired[tm.ID]:
				fmt.Fprintf(b, "withdrawn %s\n", tm.ID)
			}
		}
	}
	for id := range now {
		if !was[id] && !asked[id] {
			return fmt.Errorf("the job waits for %s, which no transition asked for", id)
		}
	}
	return nil
}

// sameStep checks that the step is deterministic and a set: the batch in
// reverse order, and the recorded step alone, give the same job, the same
// actions, timers and stops (a cancel given through job.Cancel is thus
// checked to be Restart with its job.CancelResult).
func sameStep(prev job.Job, tr job.Transition, results []job.Result) error {
	next, acts := tr.Job, tr.Actions
	want, _ := job.Encode(next)
	rev := slices.Clone(results)
	slices.Reverse(rev)
	for _, try := range []struct {
		what    string
		results []job.Result
	}{{"the batch in reverse order", rev}, {"the recorded step", tr.Step.Results}} {
		again, err := job.Restart(prev, try.results)
		j, a := again.Job, again.Actions
		if err != nil {
			return fmt.Errorf("job.Restart with %s: %v", try.what, err)
		}
		if got, _ := job.Encode(j); !bytes.Equal(got, want) {
			return fmt.Errorf("job.Restart with %s gives another job:\n%s\nwant:\n%s", try.what, job.Describe(j), job.Describe(next))
		}
		if !sameActions(a, acts) {
			return fmt.Errorf("job.Restart with %s gives other actions: %v, want %v", try.what, a, acts)
		}
		if !slices.Equal(again.Timers, tr.Timers) || !sameActions(again.Stops, tr.Stops) {
			return fmt.Errorf("job.Restart with %s gives other timers or stops: %v %v, want %v %v", try.what, again.Timers, again.Stops, tr.Timers, tr.Stops)
		}
	}
	return nil
}

func sameActions(a, b []job.Action) bool {
	return slices.EqualFunc(a, b, func(x, y job.Action) bool {
		return x.JobID == y.JobID && x.Incarnation == y.Incarnation && x.ID == y.ID && x.Name == y.Name && x.Attempt == y.Attempt && bytes.Equal(x.Payload, y.Payload) &&
			slices.EqualFunc(x.Inputs, y.Inputs, func(p, q job.Input) bool { return p.Name == q.Name && bytes.Equal(p.Output, q.Output) }) &&
			x.Timeout == y.Timeout && x.AtMostOnce == y.AtMostOnce && (x.Failure == nil) == (y.Failure == nil) && (x.Failure == nil || *x.Failure == *y.Failure)
	})
}

// cmdCrash plays a runner that dies and comes back: the job is encoded
// (stored), decoded (loaded), and Restart(decoded, nil) re-emits what was
// outstanding. The decoded job replaces the live one.
func (e *Env) cmdCrash(b *strings.Builder, args []word) error {
	if err := noArgs(args); err != nil {
		return err
	}
	enc, err := job.Encode(e.j)
	if err != nil {
		return err
	}
	d, err := job.Decode(enc)
	if err != nil {
		return fmt.Errorf("job.Decode of the stored job: %w", err)
	}
	tr, err := job.Restart(d, nil)
	if err != nil {
		return fmt.Errorf("job.Restart(decoded, nil): %w", err)
	}
	r := tr.Job
	if got, _ := job.Encode(r); !bytes.Equal(got, enc) || tr.Changed() || len(tr.Actions) > 0 || len(tr.Ignored) > 0 {
		return fmt.Errorf("job.Restart(decoded, nil) is not a no-op: %d actions, %d ignored, step %+v:\n%s\nwant:\n%s",
			len(tr.Actions), len(tr.Ignored), tr.Step, job.Describe(r), job.Describe(e.j))
	}
	acts := d.Outstanding()
	for _, a := range acts {
		fmt.Fprintf(b, "redispatch %s\n", describeAction(a))
		e.follows(b, a)
	}
	if !slices.Equal(d.Timers(), e.j.Timers()) || !d.Clock().Equal(e.j.Clock()) {
		return fmt.Errorf("the decoded job waits for %v at %v, the stored one for %v at %v", d.Timers(), d.Clock(), e.j.Timers(), e.j.Clock())
	}
	for _, tm := range d.Timers() {
		fmt.Fprintf(b, "rearm %s due %s\n", tm.ID, e.formatTime(tm.Due))
	}
	if err := e.verify(r); err != nil {
		return err
	}
	e.j = r
	e.status(b)
	return nil
}

// cmdOutput prints, for each name, the output job.Output gives the node
// of that name: "a = {"n":1}", "a = null" for a leaf that succeeded
// with an empty output, or "a: no output" for a leaf that has not
// succeeded, an inner node or an unknown name. job.OutputAs must agree:
// it decodes the output when there is one that is valid JSON, and fails
// otherwise; a disagreement is an error.
func (e *Env) cmdOutput(b *strings.Builder, args []word) error {
	if len(args) == 0 {
		return errors.New("usage: output NAME [NAME...]")
	}
	for _, w := range args {
		out, ok := e.j.Output(w.s)
		_, err := job.OutputAs[any](e.j, w.s)
		if (err == nil) != (ok && len(out) > 0 && json.Valid(out)) {
			return fmt.Errorf("job.Output(%q) = %q, %v, but job.OutputAs returns error %v", w.s, out, ok, err)
		}
		switch {
		case !ok:
			fmt.Fprintf(b, "%s: no output\n", w.s)
		case len(out) == 0:
			fmt.Fprintf(b, "%s = null\n", w.s)
		default:
			fmt.Fprintf(b, "%s = %s\n", w.s, oneLine(string(out)))
		}
	}
	return nil
}

// cmdHistory prints every step in the syntax of the result commands.
func (e *Env) cmdHistory(b *strings.Builder, args []word) error {
	if err := noArgs(args); err != nil {
		return err
	}
	for _, st := range e.steps {
		if st.Version == 1 {
			fmt.Fprintf(b, "v1 new %s\n", e.j.ID())
			continue
		}
		clauses := make([]string, len(st.Results))
		for i, r := range st.Results {
			clauses[i] = e.formatResult(r)
		}
		fmt.Fprintf(b, "v%d %s\n", st.Version, strings.Join(clauses, "; "))
	}
	return nil
}

// formatResult writes r as a clause that parseResults reads back as r: a
// firing with its time always (at=0 for none), other results with theirs
// when they carry one.
func (e *Env) formatResult(r job.Result) string {
	var s string
	switch {
	case r.ActionID == job.CancelResult("", "").ActionID:
		return "cancel " + quoteArg(r.Error)
	case isSignal(r):
		return e.formatSignal(r)
	case strings.HasPrefix(r.ActionID, "@cancel/"):
		return "cancelnode " + quoteArg(strings.TrimPrefix(r.ActionID, "@cancel/")) + " " + quoteArg(r.Error)
	case isTimer(r.ActionID):
		return "fire " + quoteArg(r.ActionID) + " at=" + e.formatTime(r.At)
	case r.Failed():
		s = "fail " + quoteArg(r.ActionID) + " " + quoteArg(r.Error)
		if r.Kind != "" {
			s += " " + quoteValue("kind", r.Kind)
		}
		if r.Final {
			s += " final=true"
		}
	default:
		s = "ok " + quoteArg(r.ActionID)
		if len(r.Output) > 0 {
			s += " " + quoteValue("out", string(r.Output))
		}
	}
	if !r.At.IsZero() {
		s += " at=" + e.formatTime(r.At)
	}
	return s
}

// cmdReplay rebuilds the job with job.Replay from a stored snapshot (the
// job at version from=N, default 1, encoded and decoded) and the whole
// journal of steps, and requires the live job, byte for byte.
func (e *Env) cmdReplay(b *strings.Builder, args []word) error {
	from := 1
	for _, w := range args {
		key, val, ok := w.option()
		if !ok || key != "from" {
			return fmt.Errorf("usage: replay [from=VERSION], got %q", w.s)
		}
		n, err := strconv.Atoi(val)
		if err != nil || n < 1 || n > len(e.versions) {
			return fmt.Errorf("from=%s: want a version from 1 to %d", val, len(e.versions))
		}
		from = n
	}
	enc, _ := job.Encode(e.versions[from-1])
	snap, err := job.Decode(enc)
	if err != nil {
		return fmt.Errorf("job.Decode of the snapshot at v%d: %w", from, err)
	}
	var steps []job.Step
	steps = append(steps, e.steps[1:]...)
	got, err := job.Replay(snap, steps)
	if err != nil {
		return fmt.Errorf("job.Replay: %w", err)
	}
	want, _ := job.Encode(e.j)
	if g, _ := job.Encode(got); !bytes.Equal(g, want) {
		return fmt.Errorf("job.Replay from v%d gives another job:\n%s\nwant:\n%s", from, job.Describe(got), job.Describe(e.j))
	}
	fmt.Fprintf(b, "replayed %d steps on the snapshot at v%d: v%d, identical to the live job\n", len(e.versions)-from, from, got.Version())
	return nil
}

// dispatch records a, dispatched with the job j, and prints it.
func (e *Env) dispatch(b *strings.Builder, verb string, a job.Action, j job.Job) error {
	if a.JobID != e.j.ID() {
		return fmt.Errorf("action %s names job %q", a.ID, a.JobID)
	}
	if err := checkInputs(a, j); err != nil {
		return err
	}
	if old, dup := e.out[a.ID]; dup {
		return fmt.Errorf("action %s dispatched again while outstanding (first as %s)", a.ID, describeAction(old))
	}
	if p, attempt, err := job.SplitActionID(a.ID); err != nil || attempt != a.Attempt || a.Path() != p {
		return fmt.Errorf("action %s has attempt %d and path %q: %v", a.ID, a.Attempt, a.Path(), err)
	}
	if a.Failure != nil && !inHandler(a.Path()) {
		return fmt.Errorf("action %s, in no rescue or finally, carries the failure %v", a.ID, a.Failure)
	}
	e.out[a.ID] = a
	fmt.Fprintf(b, "%s %s\n", verb, describeAction(a))
	e.follows(b, a)
	return nil
}

// inHandler reports whether the node at path is in a try's rescue or
// finally.
func inHandler(path string) bool {
	for p := path; p != ""; {
		_, written, rest, _ := ast.CutEdge(p)
		if written == ast.PartRescue || written == ast.PartFinally {
			return true
		}
		p = rest
	}
	return false
}

// follows prints, with failures=on, the failure an action in a rescue or
// a finally follows (Action.Failure): "  follows PATH (ACTION): MESSAGE
// [KIND]", or "  follows nothing".
func (e *Env) follows(b *strings.Builder, a job.Action) {
	if !e.failures || !inHandler(a.Path()) {
		return
	}
	if a.Failure == nil {
		b.WriteString("  follows nothing\n")
		return
	}
	fmt.Fprintf(b, "  follows %s\n", failureText(*a.Failure))
}

// failureText writes f as Failure.String does, its kind, if any, in
// brackets before its message, as job.Describe writes a failed leaf's:
// "par[1] (charge): [card_declined] declined (and 1 more failure)".
func failureText(f job.Failure) string {
	if f.Kind != "" {
		f.Message = "[" + f.Kind + "] " + f.Message
	}
	return oneLine(f.String())
}

// describeAction renders an action: ID, name, inputs, payload.
//
//	dag[2]#1 merge <a={"n":1} b=null> {"mode":"full"}
//
// Each input is NAME=OUTPUT, the output as the leaf gave it, or null for
// an empty one and for an inner node.
func describeAction(a job.Action) string {
	s := a.ID + " " + a.Name
	if len(a.Inputs) > 0 {
		ins := make([]string, len(a.Inputs))
		for i, in := range a.Inputs {
			out := "null"
			if len(in.Output) > 0 {
				out = oneLine(string(in.Output))
			}
			ins[i] = in.Name + "=" + out
		}
		s += " <" + strings.Join(ins, " ") + ">"
	}
	if len(a.Payload) > 0 {
		s += " " + oneLine(string(a.Payload))
	}
	if a.Timeout > 0 {
		s += " timeout=" + a.Timeout.String()
	}
	if a.AtMostOnce {
		s += " at-most-once"
	}
	if r := a.Replica; r != nil {
		s += fmt.Sprintf(" copy %d/%d of %s", r.Copy, r.Of, ast.ShowPath(r.Race))
	}
	return s
}

// checkInputs checks the inputs of the action a, which the job j
// dispatched: one per input its leaf lists, in that order, each holding
// the output of the named leaf, which must have succeeded (j.Output), or
// nil for a named inner node, which must have succeeded too.
func checkInputs(a job.Action, j job.Job) error {
	var leaf *ast.Node
	named := map[string][]job.NodeInfo{}
	// A copy of a map and an iteration of a loop run the node written
	// at map[0] and loop[0].
	written := astPath(a.Path())
	ast.Walk(ast.Expand(j.Workflow()), func(path string, n *ast.Node) bool {
		if path == written {
			leaf = n
		}
		return true
	})
	j.Walk(func(n job.NodeInfo) bool {
		if n.Name != "" {
			named[n.Name] = append(named[n.Name], n)
		}
		return true
	})
	if leaf == nil || leaf.Kind != ast.KindAct {
		return fmt.Errorf("action %s names no leaf of the workflow", a.ID)
	}
	if len(a.Inputs) != len(leaf.Inputs) {
		return fmt.Errorf("action %s has %d inputs, its leaf lists %d", a.ID, len(a.Inputs), len(leaf.Inputs))
	}
	for k, in := range a.Inputs {
		// Inside a replica copy, the leaf's inputs name that copy's nodes
		// (ast.Expand); the action carries the names as written.
		if name := leaf.Inputs[k]; name == ast.InputItem || name == ast.InputIndex {
			if in.Name != name || !json.Valid(in.Output) || !strings.Contains(a.Path(), "map[") {
				return fmt.Errorf("action %s: input %q is %q, outside a map or not JSON", a.ID, name, in.Output)
			}
			continue
		}
		n, ok := nearest(named[leaf.Inputs[k]], a.Path())
		inMap := strings.Contains(n.Path, "map[")
		switch {
		case in.Name != ast.WrittenName(leaf.Inputs[k]):
			return fmt.Errorf("action %s: input %d is %q, its leaf lists %q", a.ID, k, in.Name, leaf.Inputs[k])
		case !ok:
			return fmt.Errorf("action %s: input %q names no node", a.ID, in.Name)
		case n.Status != job.StatusSucceeded:
			return fmt.Errorf("action %s dispatched with input %q (%s) %s, not succeeded", a.ID, in.Name, ast.ShowPath(n.Path), n.Status)
		case n.Kind != ast.KindAct && n.Kind != ast.KindRace && n.Kind != ast.KindWait && n.Kind != ast.KindMap && n.Kind != ast.KindLoop && in.Output != nil:
			return fmt.Errorf("action %s: input %q is the inner node %s, with output %q", a.ID, in.Name, ast.ShowPath(n.Path), in.Output)
		}
		if inMap && !bytes.Equal(in.Output, n.Output) {
			return fmt.Errorf("action %s: input %q is %q, the output of %s is %q", a.ID, in.Name, in.Output, n.Path, n.Output)
		}
		if !inMap && (n.Kind == ast.KindAct || n.Kind == ast.KindRace || n.Kind == ast.KindWait || n.Kind == ast.KindMap || n.Kind == ast.KindLoop) {
			out, ok := j.Output(leaf.Inputs[k])
			if !ok || !bytes.Equal(out, in.Output) || !bytes.Equal(out, n.Output) {
				return fmt.Errorf("action %s: input %q is %q, the leaf's output %q (Output: %q, %v)", a.ID, in.Name, in.Output, n.Output, out, ok)
			}
		}
	}
	return nil
}

// astPath returns the path, in the workflow as written, of the node at
// path p of a job: every copy of a map is its template, map[0], and every
// iteration of a loop its body, loop[0].
func astPath(p string) string {
	var b strings.Builder
	for i, step := range strings.Split(p, ".") {
		if i > 0 {
			b.WriteByte('.')
		}
		if strings.HasPrefix(step, "map[") || strings.HasPrefix(step, "loop[") {
			step = step[:strings.IndexByte(step, '[')] + "[0]"
		}
		b.WriteString(step)
	}
	return b.String()
}

// nearest returns, of the nodes ns of one name, the one a leaf at path
// names: the one sharing the longest prefix of steps with path (the same
// copy of a map, else an enclosing one, else outside every map).
func nearest(ns []job.NodeInfo, path string) (job.NodeInfo, bool) {
	best, bestLen := -1, -1
	steps := strings.Split(path, ".")
	for i, n := range ns {
		common := 0
		for k, s := range strings.Split(n.Path, ".") {
			if k >= len(steps) || steps[k] != s {
				break
			}
			common++
		}
		if common > bestLen {
			best, bestLen = i, common
		}
	}
	if best < 0 {
		return job.NodeInfo{}, false
	}
	return ns[best], true
}

// status prints the job's status line: the first line of job.Describe.
func (e *Env) status(b *strings.Builder) {
	d := job.Describe(e.j)
	line, _, _ := strings.Cut(d, "\n")
	b.WriteString(line)
	b.WriteByte('\n')
}

// printSettled prints every node that settled between prev and next, in
// post-order (children before their parent), the order in which settling
// spreads up the tree.
func printSettled(b *strings.Builder, prev, next job.Job) {
	was := map[int]job.Status{}
	prev.Walk(func(n job.NodeInfo) bool {
		was[n.Index] = n.Status
		return true
	})
	var stack []job.NodeInfo
	pop := func(depth int) {
		for len(stack) > 0 && stack[len(stack)-1].Depth >= depth {
			n := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if n.Status.Settled() && !was[n.Index].Settled() {
				b.WriteString(settledLine(n))
				b.WriteByte('\n')
			}
		}
	}
	next.Walk(func(n job.NodeInfo) bool {
		pop(n.Depth)
		stack = append(stack, n)
		return true
	})
	pop(0)
}

// settledLine renders a node that just settled:
//
//	par[0]: succeeded -> {"n":1}       an action, with its output
//	par[1]: failed: card declined      an action, with its error
//	par[2] seq: cancelled              a composite node, with its kind
//	root par: failed at par[1] (charge): card declined (and 1 more failure)
func settledLine(n job.NodeInfo) string {
	s := ast.ShowPath(n.Path)
	if n.Kind != ast.KindAct {
		s += " " + n.Kind.String()
	}
	s += ": " + n.Status.String()
	switch {
	case n.Kind == ast.KindAct && n.Status == job.StatusFailed:
		s += ": "
		msg := n.Error
		if n.Failure != nil && n.Failure.Kind != "" {
			s += "[" + oneLine(n.Failure.Kind) + "] "
			if n.Failure.Action == "" {
				msg = n.Failure.Message // the leaf's own deadline ran out
			}
		}
		s += oneLine(msg)
	case n.Kind == ast.KindAct && len(n.Output) > 0:
		s += " -> " + oneLine(string(n.Output))
	case n.Failure != nil:
		s += " at " + failureText(*n.Failure)
	}
	if n.Winner != "" {
		s += ", won by " + n.Winner
	}
	return s
}

// oneLine quotes s if it holds control characters, so that one thing
// stays on one line of output.
func oneLine(s string) string {
	if strings.ContainsFunc(s, func(r rune) bool { return r < ' ' || r == 0x7f }) {
		return strconv.Quote(s)
	}
	return s
}

// verify checks the contracts that hold for every job the reducer
// returns, against the runner's view of what is outstanding.
func (e *Env) verify(j job.Job) error {
	if e.Check != nil {
		if err := e.Check(j); err != nil {
			return fmt.Errorf("invariant check failed: %w\n%s", err, job.Describe(j))
		}
	}
	enc, err := job.Encode(j)
	if err != nil {
		return err
	}
	d, err := job.Decode(enc)
	if err != nil {
		return fmt.Errorf("job.Decode(Encode(job)): %w\n%s", err, job.Describe(j))
	}
	if again, _ := job.Encode(d); !bytes.Equal(again, enc) {
		return fmt.Errorf("job.Encode(Decode(Encode(job))) differs:\n%s\nwant:\n%s", again, enc)
	}
	if job.Describe(d) != job.Describe(j) {
		return fmt.Errorf("the decoded job describes differently:\n%s\nwant:\n%s", job.Describe(d), job.Describe(j))
	}
	tr, err := job.Restart(j, nil)
	if err != nil {
		return fmt.Errorf("job.Restart(job, nil): %w", err)
	}
	if got, _ := job.Encode(tr.Job); !bytes.Equal(got, enc) || tr.Changed() || len(tr.Actions) > 0 {
		return errors.New("job.Restart(job, nil) changed the job or returned actions")
	}
	acts := j.Outstanding()
	if len(acts) != len(e.out) || j.Running() != len(e.out) {
		return fmt.Errorf("the job has %d running (Outstanding lists %d), the runner has %d: %s",
			j.Running(), len(acts), len(e.out), e.outList())
	}
	for _, a := range acts {
		if o, ok := e.out[a.ID]; !ok || !sameActions([]job.Action{a}, []job.Action{o}) {
			return fmt.Errorf("job.Outstanding lists %s, which the runner does not have outstanding as such: %s", describeAction(a), e.outList())
		}
	}
	if j.Done() && len(acts) > 0 {
		return fmt.Errorf("the job is %s with %d actions outstanding", j.Status(), len(acts))
	}
	for _, tm := range j.Timers() {
		if asked, ok := e.asked[tm.ID]; !ok || asked != tm {
			return fmt.Errorf("the job waits for %v, which no transition asked for", tm)
		}
	}
	if j.Done() && len(j.Timers()) > 0 {
		return fmt.Errorf("the job is %s and waits for %v", j.Status(), j.Timers())
	}
	if _, ok := j.Cancelled(); j.Done() && ok != (j.Status() == job.StatusCancelled) {
		return fmt.Errorf("the job ended %s, cancelled %v", j.Status(), ok)
	}
	return nil
}

func (e *Env) outList() string {
	var ids []string
	for id := range e.out {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return "[" + strings.Join(ids, " ") + "]"
}
