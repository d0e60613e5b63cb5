package job

import (
	"fmt"
	"slices"

	"github.com/batonwf/baton/ast"
)

// The race: its state is a par's (done, nfail, cause, others, out), and
// pos, 1 + the index of the child that won, 0 while it is undecided. See
// the package doc for its rules.

// raceChild moves the race p on after its child tc settled with state cs.
// A child that succeeds while the race is undecided is a candidate: the
// race is decided once the moment that made it settled (decideRaces),
// among every candidate of that moment.
func (e *engine) raceChild(p int32, tp *tnode, tc *tnode, cs nstate) {
	ps := e.mut(p)
	ps.done++
	switch cs.status {
	case StatusSucceeded:
		if ps.pos == 0 {
			if e.raceWins == nil {
				e.raceWins = map[int32]int32{}
			}
			if tp.needN() > 1 {
				// Won once need children have succeeded; the winner is
				// the first of them in tree order.
				if first, n := e.succeededKids(tp); n >= tp.needN() {
					e.raceWins[p] = first
				}
			} else if w, ok := e.raceWins[p]; !ok || tc.edge < w {
				e.raceWins[p] = tc.edge
			}
		}
	case StatusFailed:
		ps.nfail++
		if ps.pos > 0 {
			break // a loser's failure: the race is won
		}
		// A race never freezes: its first failure in tree order is the
		// one it carries (node indexes grow in tree order, so the lowest
		// cause is the earliest child's), every other is counted.
		if ps.nfail == 1 {
			ps.cause, ps.others = cs.cause, cs.others
		} else {
			if e.j.t.order(cs.cause-1) < e.j.t.order(ps.cause-1) {
				ps.cause = cs.cause
			}
			ps.others += 1 + cs.others
		}
	case StatusCancelled:
		ps.out = StatusCancelled
	}
	e.settleRace(p, tp, ps)
}

// succeededKids returns the edge of the first child of the race tp that
// succeeded, and how many did.
func (e *engine) succeededKids(tp *tnode) (first, n int32) {
	first = -1
	for i, k := range tp.kids {
		if e.get(k).status == StatusSucceeded {
			if first < 0 {
				first = int32(i)
			}
			n++
		}
	}
	return first, n
}

// settleRace settles the race p (state ps) once every child has: it
// succeeded if a child won, else it failed if a child failed, else (every
// child cancelled by a freeze or an expiry around it) it is cancelled.
// An undecided race with a candidate waits for decideRaces.
func (e *engine) settleRace(p int32, tp *tnode, ps *nstate) {
	if int(ps.done) != len(tp.kids) {
		return
	}
	if _, ok := e.raceWins[p]; ok && ps.pos == 0 {
		return // decided first
	}
	switch {
	case ps.pos > 0:
		e.settle(p, StatusSucceeded, 0, 0)
	case ps.nfail > 0:
		e.settle(p, StatusFailed, ps.cause, ps.others)
	default:
		e.settle(p, StatusCancelled, 0, 0)
	}
}

// decideRaces decides the races that a child won in the moment just
// settled, the innermost first: its candidate earliest in tree order
// wins, its other children still running are stopped (stopLosers), and
// what that settles is propagated before the next race is decided, so a
// race around one that settles now sees it among its candidates. It
// reports whether it decided any.
func (e *engine) decideRaces() bool {
	if len(e.raceWins) == 0 {
		return false
	}
	// Innermost first: a race's descendants come after it in pre-order.
	var p int32 = -1
	for r := range e.raceWins {
		if r > p {
			p = r
		}
	}
	w := e.raceWins[p]
	delete(e.raceWins, p)
	tp := e.node(p)
	ps := e.mut(p)
	ps.pos = w + 1
	// A race won carries no failure: its losers' failures are theirs.
	ps.cause, ps.others = 0, 0
	if o := tp.out; o >= 0 {
		var out []byte
		if k := tp.kids[w]; e.node(k).kind == ast.KindAct || e.node(k).kind == ast.KindWait {
			if r := e.j.resultOf(k); r != nil {
				out = r.output
			}
		}
		e.setOutput(o, out)
	}
	e.stopLosers(p, tp)
	e.cancelStarts(p)
	e.settleRace(p, tp, e.mut(p))
	return true
}

// cancelStarts cancels the starts queued under the race p that its win
// forbids (those outside finally blocks), as run would, but now: the
// losers then settle in the moment that decided the race, so a race
// around p decides among every child that succeeded in it (an earlier
// child of the outer race may win only once such a start is cancelled).
func (e *engine) cancelStarts(p int32) {
	kept, n := 0, e.startQ.len()
	for i := range n {
		st := e.startQ.at(i)
		if st.checks && e.j.under(st.node, p) && e.j.frozen(st.node) {
			switch {
			case st.kind == startBegin:
				e.settle(st.node, StatusCancelled, 0, 0)
				continue
			case e.get(st.node).flags&flagWaiting == 0:
				continue // gave up already (stopLosers)
			}
		}
		e.startQ.set(kept, st)
		kept++
	}
	e.startQ.truncate(kept)
}

// stopLosers stops the children of the race p still running, as an
// expiry stops its subtree (see expire): actions in flight outside the
// finally blocks of tries already entered are told to stop, leaves
// waiting for a retry give up, and the deadlines of the nodes stopped are
// withdrawn; nothing new starts under them (frozen: the race is won).
func (e *engine) stopLosers(p int32, tp *tnode) {
	var stop, give []int32
	for _, k := range tp.kids {
		e.collectStops(k, -1, &stop, &give)
	}
	for _, id := range give {
		e.giveUp(id)
	}
	for _, id := range stop {
		e.stopAction(id)
		e.j.running--
		e.settle(id, StatusCancelled, 0, 0)
	}
}

// stopAction tells the action in flight of the leaf id to stop
// (Transition.Stops). An action begun in this very transition, by the
// round before a late settling (an end node, or a dag whose children were
// all skipped) stopped it, is withdrawn instead: never both dispatched and
// stopped.
func (e *engine) stopAction(id int32) {
	a := e.action(id, int(e.get(id).attempt))
	if i := e.dispatchedNow(a.ID); i >= 0 {
		e.actions = slices.Delete(e.actions, i, i+1)
		e.mut(id).attempt--
		return
	}
	e.stops = append(e.stops, a)
}

// dispatchedNow returns the index in e.actions of the action called id,
// or -1: an action this edit dispatched.
func (e *engine) dispatchedNow(id string) int {
	if len(e.lateQ) == 0 && !e.lateSettled {
		return -1 // only a late settling wins a race after a round began actions
	}
	return slices.IndexFunc(e.actions, func(a Action) bool { return a.ID == id })
}

// collectStops walks the running node id, under a node that stops it
// (n, whose own deadline its caller withdraws; -1 for none), and reports
// whether it goes on running: a finally block under it runs (started, or
// to start once its try's body or rescue is stopped). It appends the
// leaves in flight to stop and those waiting for a retry to give, and
// withdraws the deadlines of the nodes that do not go on, so that a firing
// of one in this batch finds it gone, leaf or not.
func (e *engine) collectStops(id, n int32, stop, give *[]int32) bool {
	st := e.get(id)
	if st.status != StatusRunning {
		return false
	}
	tn := e.node(id)
	keeps := false
	switch tn.kind {
	case ast.KindAct:
		if st.flags&flagWaiting != 0 {
			*give = append(*give, id)
		} else {
			*stop = append(*stop, id)
		}
	case ast.KindWait, ast.KindSleep:
		*give = append(*give, id)
	case ast.KindTry:
		for part, k := range tn.kids {
			if k >= 0 && !(part == partFinally && st.pos == partFinally) && e.collectStops(k, n, stop, give) {
				keeps = true
			}
		}
		keeps = keeps || tn.kids[partFinally] >= 0
	default:
		for _, k := range tn.kids {
			if e.collectStops(k, n, stop, give) {
				keeps = true
			}
		}
	}
	if id != n && !keeps && tn.deadline > 0 {
		e.removeTimer(id, timerDeadline)
	}
	return keeps
}

// wonAbove returns the nearest race above id that a child won and whose
// winner does not hold id, reached without climbing out of a finally
// block (what stopped id, if a race did), or -1.
func (j *Job) wonAbove(id int32) int32 {
	for c := id; ; {
		tc := &j.t.nodes[c]
		p := tc.parent
		if p < 0 {
			return -1
		}
		tp := &j.t.nodes[p]
		if tp.kind == ast.KindTry && tc.edge == partFinally {
			return -1
		}
		if tp.kind == ast.KindRace {
			if ps := j.st.get(p); ps.pos > 0 && ps.pos-1 != tc.edge {
				return p
			}
		}
		c = p
	}
}

// raceOutput returns the output of the race id: its winner's when the
// winner is a leaf that succeeded with one, else nil.
func (j *Job) raceOutput(id int32) []byte {
	s := j.st.get(id)
	if s.pos == 0 {
		return nil
	}
	k := j.t.nodes[id].kids[s.pos-1]
	if k := j.t.nodes[k].kind; k != ast.KindAct && k != ast.KindWait {
		return nil
	}
	if r := j.resultOf(k); r != nil && r.err == "" {
		return r.output
	}
	return nil
}

// checkRace checks a race's counts against its children: a race won has
// a winner that succeeded, and no child running but inside a finally
// block; an undecided one no child that succeeded.
func (j Job) checkRace(tn *tnode, s nstate, res *result) error {
	if s.attempt != 0 || res != nil {
		return fmt.Errorf("race has foreign state %+v", s)
	}
	kid := func(k int32) Status { return j.st.get(k).status }
	done, failed, idle, succeeded, cancelled := j.countKids(tn.kids)
	if idle > 0 {
		if s.status != StatusCancelled || idle != int32(len(tn.kids)) || s != (nstate{status: StatusCancelled}) {
			return fmt.Errorf("%d idle children", idle)
		}
		return nil // cancelled before it began
	}
	if s.done != done || s.nfail != failed || (s.out == StatusCancelled) != cancelled || (s.out != 0 && s.out != StatusCancelled) {
		return fmt.Errorf("counts done=%d nfail=%d out=%s, children say %d, %d, cancelled=%v", s.done, s.nfail, s.out, done, failed, cancelled)
	}
	if s.pos < 0 || int(s.pos) > len(tn.kids) {
		return fmt.Errorf("winner %d of %d", s.pos, len(tn.kids))
	}
	if s.pos > 0 && kid(tn.kids[s.pos-1]) != StatusSucceeded {
		return fmt.Errorf("won by child %d, which is %s", s.pos-1, kid(tn.kids[s.pos-1]))
	}
	if s.pos == 0 && succeeded >= tn.needN() {
		return fmt.Errorf("undecided with %d children succeeded (it needs %d)", succeeded, tn.needN())
	}
	if s.pos > 0 && succeeded < tn.needN() {
		return fmt.Errorf("won with %d children succeeded (it needs %d)", succeeded, tn.needN())
	}
	settled := int(done) == len(tn.kids)
	if settled == (s.status == StatusRunning) {
		return fmt.Errorf("%s with %d of %d children settled", s.status, done, len(tn.kids))
	}
	if s.flags&flagExpired != 0 {
		return nil // checkExpired checked it settled
	}
	want := StatusSucceeded
	switch {
	case s.pos > 0:
	case failed > 0:
		want = StatusFailed
	case cancelled:
		want = StatusCancelled
	}
	if settled && s.status != want {
		return fmt.Errorf("%s, children say %s", s.status, want)
	}
	if s.pos > 0 && (s.cause != 0 || s.others != 0) {
		return fmt.Errorf("won, carrying cause %d, others %d", s.cause, s.others)
	}
	return nil
}

// countKids counts kids by state, as a par's and a race's checks need:
// done (settled), failed, idle and succeeded, and whether one is
// cancelled.
func (j Job) countKids(kids []int32) (done, failed, idle, succeeded int32, cancelled bool) {
	for _, c := range kids {
		switch j.st.get(c).status {
		case StatusIdle:
			idle++
		case StatusFailed:
			failed++
			done++
		case StatusCancelled:
			cancelled = true
			done++
		case StatusSucceeded:
			succeeded++
			done++
		}
	}
	return done, failed, idle, succeeded, cancelled
}
