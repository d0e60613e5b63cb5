package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/batonwf/baton/api"
	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
)

// The text of the commands, from the API's values (see view.go). The
// texts of jobs are job.Describe's, rendered from api.Job: the API clips
// text to api.ClipBytes (200) and job.Clip to 60 bytes at the same rune
// boundaries, so the API's clipped text prints as the whole would.

// describeJob renders v as job.Describe renders the job it is the value
// of: a header line, one line per node, the deadlines armed; a started
// map's line also counts its copies per state, a loop's says its
// iteration ("map seq[1]: running, 3 copies: 1 running, 2 succeeded";
// "loop: running, iteration 3"), a wait's its signal and the one it took
// ("wait seq[2]: succeeded, waits for signal go, took go/g1"), a choice's what
// it read and chose ("choice seq[1]: succeeded, on tier = "gold", chose
// case 0"), and a line follows for each signal a wait took and each the
// job keeps, which job.Describe does not.
func describeJob(v api.Job) string {
	var b strings.Builder
	fmt.Fprintf(&b, "job %s v%d: %s", v.ID, v.Version, v.Status)
	if v.Cancel != nil {
		fmt.Fprintf(&b, " (cancel: %s)", job.Clip(v.Cancel.Reason))
	}
	if v.Failure != nil {
		fmt.Fprintf(&b, " at %s", failureText(*v.Failure))
	}
	if v.Outstanding != nil && *v.Outstanding > 0 {
		fmt.Fprintf(&b, ", %d outstanding", *v.Outstanding)
	}
	fmt.Fprintf(&b, ", %d/%d actions settled\n", v.Settled, v.Total)
	for _, n := range v.Nodes {
		describeNode(&b, n, v.Signals)
	}
	for _, t := range v.Timers {
		if path, ok := strings.CutSuffix(t.ID, "@deadline"); ok {
			fmt.Fprintf(&b, "deadline of %s due %s\n", path, t.Due.UTC().Format(time.RFC3339Nano))
		}
	}
	if v.Signals != nil {
		signalsText(&b, *v.Signals)
	}
	return b.String()
}

// signalsText writes a line for each signal a wait took, in the order
// taken, then for each signal the job keeps, oldest first:
//
//	signal go (id g1) taken by the wait at seq[2]
//	signal later (id l1) kept for a wait to come, received 2026-01-02T03:04:06Z -> "early"
func signalsText(b *strings.Builder, s api.Signals) {
	for _, t := range s.Taken {
		fmt.Fprintf(b, "signal %s (id %s) taken by the wait at %s\n", t.Name, job.Clip(t.ID), ast.ShowPath(t.Path))
	}
	for _, k := range s.Kept {
		fmt.Fprintf(b, "signal %s (id %s) kept for a wait to come", k.Name, job.Clip(k.ID))
		if k.At != nil {
			b.WriteString(", received " + k.At.UTC().Format(time.RFC3339Nano))
		}
		b.WriteString(" -> " + job.Clip(k.Payload) + "\n")
	}
}

// choiceText says what the choice c read and chose: "on tier" before it
// started, then "on tier = "gold", chose case 0" ("cases 0, 2", "else",
// "nothing").
func choiceText(c api.Chosen, started bool) string {
	s := "on " + c.On
	if !started {
		return s
	}
	if c.Read != "" { // "" only if the leaf's output is not known
		s += " = " + job.Clip(c.Read)
	}
	s += ", chose "
	var what []string
	if len(c.Cases) > 0 {
		ix := make([]string, len(c.Cases))
		for i, k := range c.Cases {
			ix[i] = strconv.Itoa(k)
		}
		what = append(what, map[bool]string{true: "case ", false: "cases "}[len(c.Cases) == 1]+strings.Join(ix, ", "))
	}
	if c.Else {
		what = append(what, "else")
	}
	if len(what) == 0 {
		return s + "nothing"
	}
	return s + strings.Join(what, " and ")
}

// tookBy returns the ID of the signal the wait at path took last, and
// whether one did. (Under a loop, the waits of the earlier iterations
// have the path of the current one: the caller asks only of a wait that
// succeeded, and the last taken is its own.)
func tookBy(s *api.Signals, path string) (id string, ok bool) {
	if s == nil {
		return "", false
	}
	for _, t := range s.Taken {
		if t.Path == path {
			id, ok = t.ID, true
		}
	}
	return id, ok
}

func describeNode(b *strings.Builder, n api.Node, signals *api.Signals) {
	act := n.Kind == ast.KindAct.String()
	// A wait or a sleep fails as an act does (a deadline, a race won by
	// another child): its own failure is told, not a path to itself.
	leaf := act || n.Kind == ast.KindWait.String() || n.Kind == ast.KindSleep.String()
	b.WriteString(strings.Repeat("  ", n.Depth))
	b.WriteString(n.Kind)
	if act {
		b.WriteString(" " + n.Action)
		if n.Payload != "" {
			b.WriteString(" " + job.Clip(n.Payload))
		}
	}
	if n.Path != "" {
		b.WriteString(" " + n.Path)
	}
	if n.Name != "" {
		b.WriteString(" @" + n.Name)
	}
	b.WriteString(": " + n.Status)
	if n.Copies != nil {
		b.WriteString(", " + copiesText(*n.Copies))
	}
	if n.Iteration > 0 {
		fmt.Fprintf(b, ", iteration %d", n.Iteration)
	}
	if n.Signal != "" {
		b.WriteString(", waits for signal " + n.Signal)
		if id, ok := tookBy(signals, n.Path); ok && n.Status == job.StatusSucceeded.String() {
			b.WriteString(", took " + n.Signal + "/" + job.Clip(id))
		}
	}
	if n.Choice != nil {
		b.WriteString(", " + choiceText(*n.Choice, n.Status != job.StatusIdle.String() && n.Status != job.StatusSkipped.String()))
	}
	if act && n.Attempt > 0 {
		fmt.Fprintf(b, " #%d", n.Attempt)
	}
	switch {
	case act && n.Retry != nil:
		fmt.Fprintf(b, ": %s; #%d due %s", job.Clip(n.Error), n.Attempt+1, n.Retry.UTC().Format(time.RFC3339Nano))
	case leaf && n.Status == job.StatusFailed.String():
		b.WriteString(": ")
		msg := n.Error
		if n.Failure != nil {
			if n.Failure.Kind != "" {
				b.WriteString("[" + n.Failure.Kind + "] ")
			}
			if msg == "" {
				msg = n.Failure.Message // a leaf whose own deadline ran out
			}
		}
		b.WriteString(job.Clip(msg))
	case act && n.Output != "":
		b.WriteString(" -> " + job.Clip(n.Output))
	case n.Failure != nil:
		fmt.Fprintf(b, " (%s", ast.ShowPath(n.Failure.Path))
		if n.Failure.Others > 0 {
			fmt.Fprintf(b, " +%d more", n.Failure.Others)
		}
		b.WriteString(")")
	}
	b.WriteByte('\n')
}

// copiesText says how many copies a map has, and in which states:
// "3 copies: 1 running, 2 succeeded".
func copiesText(c api.Copies) string {
	s := fmt.Sprintf("%d cop%s", c.Count, map[bool]string{true: "y", false: "ies"}[c.Count == 1])
	sep := ": "
	for _, x := range []struct {
		n    int
		what string
	}{{c.Running, "running"}, {c.Succeeded, "succeeded"}, {c.Failed, "failed"}, {c.Cancelled, "cancelled"}, {c.Skipped, "skipped"}, {c.Idle, "idle"}} {
		if x.n > 0 {
			s += fmt.Sprintf("%s%d %s", sep, x.n, x.what)
			sep = ", "
		}
	}
	return s
}

// failureText is job.Failure's String of f, whose message the API
// clipped to 200 bytes as String clips it: String then marks the cut with
// "..." and quotes a message with control characters.
func failureText(f api.Failure) string {
	action := ""
	if f.Action != "" {
		action = " (" + f.Action + ")"
	}
	msg := f.Message
	if strings.ContainsFunc(msg, func(r rune) bool { return r < ' ' || r == 0x7f || r == 0x2028 || r == 0x2029 }) {
		msg = fmt.Sprintf("%q", msg)
	}
	if f.Clipped {
		msg += "..."
	}
	s := fmt.Sprintf("%s%s: %s", ast.ShowPath(f.Path), action, msg)
	if f.Others > 0 {
		s += fmt.Sprintf(" (and %d more failure", f.Others)
		if f.Others > 1 {
			s += "s"
		}
		s += ")"
	}
	return s
}

// progressLine is the progress line of a run:
//
//	[run] 2/6 actions settled, 1 running, 0.4s
func progressLine(s api.Summary, took time.Duration) string {
	running := 0
	if s.Outstanding != nil {
		running = *s.Outstanding
	}
	return fmt.Sprintf("[run] %d/%d actions settled, %d running, %.1fs", s.Settled, s.Total, running, took.Seconds())
}

// summaryLine is the one line that ends a run:
//
//	job hello-20260101T120000.000Z succeeded: 6/6 actions settled, v7, 1.2s
//	job fail-... failed at par[1] (fail): boom: 2/3 actions settled, v4, 0.3s
//	job order-7 cancelled (not needed): 1/3 actions settled, v3, 4ms
func summaryLine(s api.Summary, took time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "job %s %s", s.ID, s.Status)
	if s.Failure != nil {
		fmt.Fprintf(&b, " at %s", failureText(*s.Failure))
	}
	if s.Cancel != nil {
		fmt.Fprintf(&b, " (%s)", job.Clip(s.Cancel.Reason))
	}
	fmt.Fprintf(&b, ": %d/%d actions settled, v%d", s.Settled, s.Total, s.Version)
	if took > 0 {
		fmt.Fprintf(&b, ", %s", took.Round(time.Millisecond))
	}
	return b.String()
}

// writeHistory prints h, every step of a job: a header, then one block
// per version.
//
//	job hello-1: 3 versions, now succeeded
//	v1  created: running, 0/2 actions settled, 1 dispatched
//	v2  running, 1/2 actions settled
//	      seq[0]#1 log: ok
//	v3  succeeded, 2/2 actions settled
//	      seq[1]#1 fail: failed: boom
//
// A step that applied a cancel says so first ("cancelled: REASON"). A
// signal says where it went, a node's cancel which node and why, a timer
// when it fired:
//
//	@signal/approval/a1: signal approval (id a1) taken by the wait at seq[0] -> {"ok":true}
//	@signal/later/l1: signal later (id l1) kept for a wait to come
//	@cancel/gate: node gate at par[1] cancelled: no answer
//	seq[1]@sleep: timer fired at 2026-01-02T03:04:05Z
//	signal later (id l1), kept before, taken by the wait at seq[2]
//
// and a map that started or a loop's next iteration, what it grew:
//
//	map seq[1] started 3 copies
//	loop seq[2] began iteration 2
func writeHistory(w io.Writer, h api.History) {
	fmt.Fprintf(w, "job %s: %d version%s, now %s\n", h.ID, len(h.Steps), plural(len(h.Steps)), h.Status)
	for _, st := range h.Steps {
		if st.Created {
			fmt.Fprintf(w, "v%d  created: %s, %d dispatched\n", st.Version, stepState(st), len(st.Dispatched))
		} else {
			fmt.Fprintf(w, "v%d  %s\n", st.Version, stepState(st))
		}
		if st.Cancel != nil {
			fmt.Fprintf(w, "      cancelled: %s\n", job.Clip(st.Cancel.Reason))
		}
		for _, r := range st.Results {
			if line, ok := specialResult(r); ok {
				fmt.Fprintf(w, "      %s: %s\n", r.ActionID, line)
				continue
			}
			if r.Timer {
				var at time.Time
				if r.At != nil {
					at = *r.At
				}
				fmt.Fprintf(w, "      %s: timer fired at %s\n", r.ActionID, at.UTC().Format(time.RFC3339Nano))
				continue
			}
			name := r.Action
			if name == "" {
				name = "?"
			}
			if r.Worker != "" {
				name += " on " + r.Worker // the worker that ran the attempt
			}
			fmt.Fprintf(w, "      %s %s: %s\n", r.ActionID, name, outcome(r))
		}
		for _, t := range st.Taken {
			fmt.Fprintf(w, "      signal %s (id %s), kept before, taken by the wait at %s\n", t.Name, job.Clip(t.ID), ast.ShowPath(t.Path))
		}
		for _, g := range st.Grew {
			fmt.Fprintf(w, "      %s\n", growthText(g))
		}
		for _, t := range st.Waits {
			fmt.Fprintf(w, "      waits: %s due %s\n", t.ID, t.Due.UTC().Format(time.RFC3339Nano))
		}
	}
}

// specialResult is the line of a result that is a signal or a node's
// cancel, and whether r is one.
func specialResult(r api.Result) (string, bool) {
	switch {
	case r.Signal != nil:
		line := fmt.Sprintf("signal %s (id %s)", r.Signal.Name, job.Clip(r.Signal.ID))
		switch {
		case r.Signal.Taken:
			line += " taken by the wait at " + ast.ShowPath(r.Path)
		case r.Signal.Kept:
			line += " kept for a wait to come"
		}
		if r.Output != "" {
			line += " -> " + job.Clip(r.Output)
		}
		return line, true
	case r.NodeCancel != nil:
		return fmt.Sprintf("node %s at %s cancelled: %s", r.NodeCancel.Node, ast.ShowPath(r.Path), job.Clip(r.NodeCancel.Reason)), true
	}
	return "", false
}

// growthText says what a step grew: "map seq[1] started 3 copies",
// "loop seq[2] began iteration 2".
func growthText(g api.Growth) string {
	if g.Kind == ast.KindMap.String() {
		return fmt.Sprintf("map %s started %s", ast.ShowPath(g.Path), copiesText(api.Copies{Count: g.Copies}))
	}
	return fmt.Sprintf("loop %s began iteration %d", ast.ShowPath(g.Path), g.Iteration)
}

// stateOf is where a job stands: "running, 1/6 actions settled", and why
// it failed.
func stateOf(sm api.Summary) string {
	s := fmt.Sprintf("%s, %d/%d actions settled", sm.Status, sm.Settled, sm.Total)
	if sm.Failure != nil {
		s += " (" + failureText(*sm.Failure) + ")"
	}
	return s
}

// stepState is where a job stood after step st.
func stepState(st api.Step) string {
	return stateOf(api.Summary{Status: st.Status, Settled: st.Settled, Total: st.Total, Failure: st.Failure})
}

// outcome is "ok", "ok -> OUTPUT" or "failed: MESSAGE", clipped, with
// the failure's kind in brackets.
func outcome(r api.Result) string {
	switch {
	case !r.OK && r.Kind != "":
		return "failed [" + r.Kind + "]: " + job.Clip(r.Error)
	case !r.OK:
		return "failed: " + job.Clip(r.Error)
	case r.Output != "":
		return "ok -> " + job.Clip(r.Output)
	}
	return "ok"
}
