package job

import (
	"fmt"

	"github.com/batonwf/baton/ast"
)

// The choice: its state is a par's (done, nfail, cause, others, out),
// done counting the cases it skipped as settled. It reads the output of
// its On leaf when it begins (ast.Choose), skips what it did not select
// and begins the rest together; from then on it is a par of what it
// selected. A choice that selects nothing (no case and no else, or a
// multi choice on an output that is not an array) fails on its own,
// cause itself, once the dispatch round that began it is over (lateQ).

// beginChoice begins the choice id (state already running): the cases
// selected begin, the others are skipped.
func (e *engine) beginChoice(id int32, tn *tnode) {
	run, failure := ast.Choose(tn.x.choice, e.j.outputOf(tn.x.reads))
	next := 0
	for i, k := range tn.kids {
		if next < len(run) && run[next] == i {
			next++
			continue
		}
		e.skip(k)
		e.mut(id).done++
	}
	if failure != "" {
		if failure == "not_an_array" {
			e.mut(id).flags |= flagNotArray
		}
		e.lateQ = append(e.lateQ, late{id, StatusFailed})
		return
	}
	for _, i := range run {
		e.begin(tn.kids[i])
	}
}

// skip marks id and everything under it skipped.
func (e *engine) skip(id int32) {
	e.mut(id).status = StatusSkipped
	for _, k := range e.node(id).kids {
		if k >= 0 {
			e.skip(k)
		}
	}
}

// settleLate fails the nodes that failed as they began (lateQ), now that
// the round that began them is over. A node stopped since (an expiry, a
// won race) is left to that.
func (e *engine) settleLate() {
	e.lateSettled = true
	for _, l := range e.lateQ {
		if e.get(l.node).status != StatusRunning {
			continue
		}
		if e.node(l.node).kind == ast.KindWait {
			e.takeKept(l.node) // unless a wait begun before it took the signal
			continue
		}
		if e.node(l.node).kind == ast.KindEnd && e.j.cancel == "" && e.j.ended == "" {
			// An end: everything stops as for a cancel, and the job
			// ends succeeded once what still runs has settled.
			e.j.ended = e.node(l.node).x.endReason
			if e.get(0).flags&flagExpired == 0 {
				e.expire(0)
			}
		}
		if l.status == StatusFailed {
			e.settle(l.node, StatusFailed, l.node+1, 0)
		} else {
			e.settle(l.node, l.status, 0, 0)
			if tn := e.node(l.node); tn.kind == ast.KindMap && tn.out >= 0 && e.get(l.node).status == StatusSucceeded {
				e.setOutput(tn.out, e.j.mapOutput(l.node)) // a map over an empty array
			}
		}
	}
	e.lateQ = e.lateQ[:0]
}

// late is a node that settles, as status, once the round that began it
// is over.
type late struct {
	node   int32
	status Status
}

// beginDagChild begins the child k of the dag id as the dag begins, or,
// when its guard does not hold, skips it (counted started and settled),
// and then treats the siblings after it that are ready the same way.
func (e *engine) beginDagChild(id int32, tn *tnode, k int32) {
	e.mut(id).pos++
	if e.node(k).guardOf() == nil || e.guardHolds(k) {
		e.begin(k)
		return
	}
	e.skip(k)
	e.mut(id).done++
	for _, d := range e.node(k).rdeps {
		r := tn.kids[d]
		if e.get(r).status != StatusIdle {
			continue
		}
		ready := true
		for _, dep := range e.node(r).deps {
			if st := e.get(tn.kids[dep]).status; st != StatusSkipped {
				ready = false // a dependency not skipped has not settled yet
			}
		}
		if ready {
			e.beginDagChild(id, tn, r)
		}
	}
}

// Failure kinds of a choice.
const (
	KindNoCase     = "no_case"      // no case matched and the choice has no else
	KindNotAnArray = "not_an_array" // a multi choice's output is not an array
)

// choiceFailure returns the kind and message of the choice c, which
// failed as it began.
func (j Job) choiceFailure(c int32) (kind, msg string) {
	tn := &j.t.nodes[c]
	out := j.outputOf(tn.x.reads)
	shown := "null"
	if len(out) > 0 {
		shown = clip(string(out), maxRaceChildText)
	}
	if j.st.get(c).flags&flagNotArray != 0 {
		return KindNotAnArray, "the output of " + tn.x.choice.On + " is not an array: " + shown
	}
	return KindNoCase, "no case matches the output of " + tn.x.choice.On + ": " + shown
}

// choiceFailed reports whether node c is a choice that failed as it
// began (its own cause).
func (j Job) choiceFailed(c int32) bool {
	s := j.st.get(c)
	return j.t.nodes[c].kind == ast.KindChoice && s.status == StatusFailed && s.cause == c+1
}

// checkSkipped checks the skipped node id: nothing ran in it, and what
// skipped it is its parent (a choice, or a skipped node).
func (j Job) checkSkipped(id int32, tn *tnode, s nstate, res *result) error {
	if s != (nstate{status: StatusSkipped}) || res != nil {
		return fmt.Errorf("skipped node has state %+v, result %v", s, res != nil)
	}
	if tn.parent < 0 {
		return fmt.Errorf("the root is skipped")
	}
	p := &j.t.nodes[tn.parent]
	ps := j.st.get(tn.parent)
	switch {
	case ps.status == StatusSkipped, p.kind == ast.KindChoice:
	case p.kind == ast.KindDag && tn.guardOf() != nil:
		if j.guardHolds(id) {
			return fmt.Errorf("skipped, and its guard holds")
		}
	default:
		return fmt.Errorf("skipped under a %s that is %s", p.kind, ps.status)
	}
	return nil
}

// checkChoice checks a choice against what it read: the cases
// ast.Choose selects began (or the choice failed as it began), the
// others are skipped, and its counts are a par's over its children.
func (j Job) checkChoice(id int32, tn *tnode, s nstate, res *result) error {
	if s.attempt != 0 || s.pos != 0 || res != nil {
		return fmt.Errorf("choice has foreign state %+v", s)
	}
	if s.status == StatusCancelled && s == (nstate{status: StatusCancelled}) {
		for _, k := range tn.kids {
			if j.st.get(k).status != StatusIdle {
				return fmt.Errorf("cancelled before it began, with a child %s", j.st.get(k).status)
			}
		}
		return nil
	}
	if j.st.get(tn.x.reads).status != StatusSucceeded {
		return fmt.Errorf("began before %s succeeded", tn.x.choice.On)
	}
	run, failure := ast.Choose(tn.x.choice, j.outputOf(tn.x.reads))
	if (failure == KindNotAnArray) != (s.flags&flagNotArray != 0) {
		return fmt.Errorf("flags %d, and the output read says %q", s.flags, failure)
	}
	selected := make([]bool, len(tn.kids))
	for _, i := range run {
		selected[i] = true
	}
	var done, failed int32
	cancelled := false
	for i, k := range tn.kids {
		st := j.st.get(k).status
		switch {
		case !selected[i] && st != StatusSkipped:
			return fmt.Errorf("case %d is %s, not selected", i, st)
		case !selected[i]:
			done++
		case st == StatusSkipped || st == StatusIdle:
			return fmt.Errorf("case %d is %s, selected", i, st)
		case st == StatusFailed:
			done++
			failed++
		case st == StatusCancelled:
			done++
			cancelled = true
		case st == StatusSucceeded:
			done++
		}
	}
	if failure != "" {
		if s.status != StatusFailed || s.cause != id+1 {
			return fmt.Errorf("%s with nothing selected (%s)", s.status, failure)
		}
		return nil
	}
	if s.done != done || s.nfail != failed || (s.out == StatusCancelled) != cancelled || (s.out != 0 && s.out != StatusCancelled) {
		return fmt.Errorf("counts done=%d nfail=%d out=%s, children say %d, %d, cancelled=%v", s.done, s.nfail, s.out, done, failed, cancelled)
	}
	settled := int(done) == len(tn.kids)
	if settled == (s.status == StatusRunning) {
		return fmt.Errorf("%s with %d of %d children settled", s.status, done, len(tn.kids))
	}
	want := StatusSucceeded
	if failed > 0 {
		want = StatusFailed
	} else if cancelled {
		want = StatusCancelled
	}
	if settled && s.status != want && s.flags&flagExpired == 0 {
		return fmt.Errorf("%s, children say %s", s.status, want)
	}
	return nil
}

// guardHolds reports whether the guard of the dag child id holds: the
// output of the leaf it reads equals its value (ast.EqualJSON; no output
// is null).
func (j *Job) guardHolds(id int32) bool {
	tn := &j.t.nodes[id]
	out := j.outputOf(tn.x.guardOn)
	if len(out) == 0 {
		out = []byte("null")
	}
	return ast.EqualJSON(out, tn.x.guard.Equals)
}

func (e *engine) guardHolds(id int32) bool { return e.j.guardHolds(id) }
