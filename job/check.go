package job

import (
	"bytes"
	"fmt"

	"github.com/batonwf/baton/ast"
)

// check verifies the invariants that hold for every job New and Restart
// return. Decode calls it so that a corrupt encoding cannot reach Restart;
// tests call it after every step. It is O(tree).
func (j Job) check() error {
	byRes := j.resultsByNode()
	for i := range j.t.nodes {
		if j.t.nodes[i].inert {
			// A map's template, or copies a loop's iteration left.
			if j.st.get(int32(i)) != (nstate{}) || byRes[i] != nil {
				return fmt.Errorf("node %d (%s) is inert, with state %+v, result %v", i, j.t.nodes[i].kind, j.st.get(int32(i)), byRes[i] != nil)
			}
			continue
		}
		if err := j.checkNode(int32(i), byRes[i]); err != nil {
			return fmt.Errorf("node %d (%s, %s): %v", i, ast.ShowPath(j.t.path(int32(i))), j.t.nodes[i].kind, err)
		}
	}
	switch st := j.st.get(0).status; {
	case st == StatusIdle, st == StatusCancelled && j.cancel == "":
		return fmt.Errorf("root is %s (a job is running, succeeded, failed, or cancelled by Cancel)", st)
	case j.cancel != "" && j.st.get(0).flags&flagExpired == 0:
		return fmt.Errorf("cancelled (%q) with a root that does not know it", j.cancel)
	case j.ended != "" && j.st.get(0).flags&flagExpired == 0:
		return fmt.Errorf("ended (%q) with a root that does not know it", j.ended)
	case j.ended != "" && j.cancel == "" && st.Settled() && st != StatusSucceeded:
		return fmt.Errorf("ended (%q), then %s", j.ended, st)
	case j.cancel != "" && st.Settled() && st != StatusCancelled:
		return fmt.Errorf("cancelled (%q), ended %s", j.cancel, st)
	}
	for k, p := range j.timers {
		if k > 0 && comparePending(j.timers[k-1], p) >= 0 {
			return fmt.Errorf("timers out of order at %d", k)
		}
		if p.node < 0 || int(p.node) >= len(j.t.nodes) {
			return fmt.Errorf("timer %d names node %d", k, p.node)
		}
		if p.kind == timerRetry && (j.t.nodes[p.node].kind != ast.KindAct || j.st.get(p.node).flags&flagWaiting == 0) {
			return fmt.Errorf("retry timer %s for a node that does not wait", j.t.timerID(p))
		}
		if p.kind == timerDeadline {
			ps := j.st.get(p.node)
			if j.t.nodes[p.node].deadline == 0 || ps.status != StatusRunning || ps.flags&flagExpired != 0 || p.attempt != 0 {
				return fmt.Errorf("deadline timer %s for a node that is %s, expired %v", j.t.timerID(p), ps.status, ps.flags&flagExpired != 0)
			}
		}
		if p.kind == timerSleep && j.t.nodes[p.node].kind != ast.KindSleep {
			return fmt.Errorf("sleep timer %s for a %s", j.t.timerID(p), j.t.nodes[p.node].kind)
		}
		if p.kind != timerRetry && p.kind != timerDeadline && p.kind != timerSleep {
			return fmt.Errorf("timer %s of kind %d", j.t.timerID(p), p.kind)
		}
	}
	for i := range j.t.nodes {
		s := j.st.get(int32(i))
		if j.t.nodes[i].deadline > 0 && s.status == StatusRunning && s.flags&flagExpired == 0 {
			if _, ok := j.pendingTimer(int32(i), timerDeadline); !ok {
				return fmt.Errorf("node %d (%s) runs with a deadline and no deadline timer", i, ast.ShowPath(j.t.path(int32(i))))
			}
		}
	}
	if err := j.checkNodeCancels(); err != nil {
		return err
	}
	if err := j.checkSignals(); err != nil {
		return err
	}
	settled, running := 0, 0
	for i := range j.t.nodes {
		if j.t.nodes[i].kind != ast.KindAct {
			continue
		}
		switch s := j.st.get(int32(i)); {
		case s.status == StatusSucceeded || s.status == StatusFailed:
			settled++
		case s.status == StatusRunning && s.flags&flagWaiting == 0:
			running++
		}
	}
	if settled != j.settled || running != j.running {
		return fmt.Errorf("counts %d settled and %d running, the leaves say %d and %d", j.settled, j.running, settled, running)
	}
	if j.outs != nil && len(j.outs) != j.t.named {
		return fmt.Errorf("%d outputs kept for %d named leaves", len(j.outs), j.t.named)
	}
	for i := range j.t.nodes {
		o := j.t.nodes[i].out
		if o < 0 {
			continue
		}
		var want []byte
		if res := byRes[i]; res != nil && res.err == "" {
			want = res.output
		} else if j.t.nodes[i].kind == ast.KindRace {
			want = j.raceOutput(int32(i))
		} else if k := j.t.nodes[i].kind; (k == ast.KindMap || k == ast.KindLoop) && j.st.get(int32(i)).status == StatusSucceeded {
			want = j.growthOutput(int32(i))
		}
		if got := j.outputOf(int32(i)); !bytes.Equal(got, want) {
			return fmt.Errorf("node %d (%s): output kept %q, result %q", i, ast.ShowPath(j.t.path(int32(i))), got, want)
		}
	}
	return nil
}

// checkNode checks node id, whose result (for a settled action) is res.
func (j Job) checkNode(id int32, res *result) error {
	tn := &j.t.nodes[id]
	s := j.st.get(id)
	if s.status > StatusSkipped || s.out > StatusCancelled {
		return fmt.Errorf("bad status %d/%d", s.status, s.out)
	}
	if s.status == StatusSkipped {
		return j.checkSkipped(id, tn, s, res)
	}
	if s.status == StatusIdle {
		if s != (nstate{}) {
			return fmt.Errorf("idle node has state %+v", s)
		}
		if res != nil {
			return fmt.Errorf("idle node has a result")
		}
		return nil
	}
	if tn.parent >= 0 && j.st.get(tn.parent).status == StatusIdle {
		return fmt.Errorf("%s under an idle parent", s.status)
	}
	if s.status == StatusCancelled && !j.frozen(id) && !(id == 0 && j.cancel != "") {
		return fmt.Errorf("cancelled with no failed par or expired node above it")
	}
	// cause and others: only where a failure is being carried.
	carries := s.status == StatusFailed ||
		(s.status == StatusRunning && ((tn.kind == ast.KindPar || tn.kind == ast.KindDag || tn.kind == ast.KindChoice || tn.kind == ast.KindMap) && s.nfail > 0 || tn.kind == ast.KindTry && s.out == StatusFailed ||
			tn.kind == ast.KindRace && s.nfail > 0 && s.pos == 0))
	if carries {
		c := s.cause - 1
		if c < 0 || int(c) >= len(j.t.nodes) || j.st.get(c).status != StatusFailed || !j.under(c, id) ||
			j.t.nodes[c].kind != ast.KindAct && !isWaitOrSleep(j.t.nodes[c].kind) && j.st.get(c).flags&flagExpired == 0 && !j.choiceFailed(c) && !j.ownFailure(c) {
			return fmt.Errorf("cause %d is not a failed action or an expired node under it", s.cause)
		}
		if s.others < 0 {
			return fmt.Errorf("others %d", s.others)
		}
	} else if s.cause != 0 || s.others != 0 {
		return fmt.Errorf("cause %d and others %d without a failure", s.cause, s.others)
	}
	if tn.kind != ast.KindAct && s.flags&^flagExpired != 0 && !(tn.kind == ast.KindChoice && s.flags&^(flagExpired|flagNotArray) == 0) &&
		!(tn.kind == ast.KindMap && s.flags&^(flagExpired|flagNotArray|flagTooLarge|flagWon) == 0) {
		return fmt.Errorf("%s node with flags %d", tn.kind, s.flags)
	}
	if s.flags&flagStopped != 0 {
		// A leaf its own deadline stopped in flight: failed by it, with
		// no result for the attempt stopped.
		if s.status != StatusFailed || s.flags&flagExpired == 0 || s.attempt < 1 || s.attempt == 1 && res != nil {
			return fmt.Errorf("stopped by its deadline, yet %s, flags %d, attempt %d, result %v", s.status, s.flags, s.attempt, res != nil)
		}
	}
	if s.flags&flagExpired != 0 {
		if _, cancelled := j.cancelledNode(id); tn.deadline == 0 && !cancelled && !(id == 0 && (j.cancel != "" || j.ended != "")) {
			return fmt.Errorf("expired without a deadline or a cancel")
		}
		if s.status.Settled() {
			return j.checkExpired(id, tn, s)
		}
	}
	kid := func(k int32) Status { return j.st.get(k).status }
	switch tn.kind {
	case ast.KindWait, ast.KindSleep:
		return j.checkWaitSleep(id, tn, s, res)
	case ast.KindAct:
		if s.out != 0 || s.pos != 0 || s.done != 0 || s.nfail != 0 {
			return fmt.Errorf("action has composite state %+v", s)
		}
		waiting := s.flags&flagWaiting != 0
		if s.flags&^(flagWaiting|flagExpired|flagStopped) != 0 || waiting && s.status != StatusRunning {
			return fmt.Errorf("%s action with flags %d", s.status, s.flags)
		}
		t, timed := j.pendingTimer(id, timerRetry)
		if waiting != timed || timed && int(t.attempt) != int(s.attempt)+1 {
			return fmt.Errorf("waiting=%v, retry timer %v for attempt %d (attempt %d ran)", waiting, timed, t.attempt, s.attempt)
		}
		switch s.status {
		case StatusRunning:
			// An attempt after the first follows a failed one, whose result
			// stays until it settles; a waiting leaf has one too.
			earlier := res != nil && res.err != "" && s.attempt > 1
			if s.attempt < 1 || waiting && res == nil || res != nil && !earlier && !(waiting && res.err != "") {
				return fmt.Errorf("running action with attempt %d, waiting=%v, result %v", s.attempt, waiting, res != nil)
			}
		case StatusSucceeded, StatusFailed:
			if s.attempt < 1 || res == nil || (res.err != "") != (s.status == StatusFailed) {
				return fmt.Errorf("%s action without a matching result", s.status)
			}
			if s.status == StatusFailed && s.cause != id+1 {
				return fmt.Errorf("failed action's cause is %d, not itself", s.cause)
			}
		case StatusCancelled:
			// Stopped in flight by an expired node above it, or never
			// dispatched; a stopped action may have failed attempts before.
			stopped := s.attempt > 0 && (j.expiredAbove(id) || j.wonAbove(id) >= 0 || j.wonMapAbove(id))
			if !stopped && (s.attempt != 0 || res != nil) || stopped && res != nil && res.err == "" {
				return fmt.Errorf("cancelled action was dispatched (attempt %d) with no expired node above it", s.attempt)
			}
		}
	case ast.KindSeq:
		if s.out != 0 || s.attempt != 0 || s.done != 0 || s.nfail != 0 || res != nil {
			return fmt.Errorf("seq has foreign state %+v", s)
		}
		if s.pos < 0 || int(s.pos) >= len(tn.kids) {
			return fmt.Errorf("seq position %d of %d", s.pos, len(tn.kids))
		}
		if s.status == StatusCancelled && s.pos == 0 && kid(tn.kids[0]) == StatusIdle {
			break // cancelled before it began
		}
		for k, c := range tn.kids {
			want := StatusIdle
			switch {
			case int32(k) < s.pos:
				want = StatusSucceeded
			case int32(k) == s.pos:
				want = s.status
			}
			if kid(c) != want {
				return fmt.Errorf("child %d is %s, want %s (position %d)", k, kid(c), want, s.pos)
			}
		}
		if s.status == StatusSucceeded && int(s.pos) != len(tn.kids)-1 {
			return fmt.Errorf("succeeded at position %d of %d", s.pos, len(tn.kids))
		}
		if s.status == StatusFailed {
			if ks := j.st.get(tn.kids[s.pos]); ks.cause != s.cause || ks.others != s.others {
				return fmt.Errorf("failure differs from child %d's", s.pos)
			}
		}
	case ast.KindPar:
		if s.attempt != 0 || s.pos != 0 && tn.limitN() == 0 || res != nil {
			return fmt.Errorf("par has foreign state %+v", s)
		}
		done, failed, idle, _, cancelled := j.countKids(tn.kids)
		if tn.limitN() > 0 && s.pos > 0 {
			if err := j.checkLimit(tn, s, done, idle); err != nil {
				return err
			}
			idle = 0 // those not started yet
		}
		if idle > 0 {
			if s.status != StatusCancelled || idle != int32(len(tn.kids)) || s != (nstate{status: StatusCancelled}) {
				return fmt.Errorf("%d idle children", idle)
			}
			break // cancelled before it began
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
		if settled && s.status != want {
			return fmt.Errorf("%s, children say %s", s.status, want)
		}
	case ast.KindDag:
		if err := j.checkDag(tn, s, res); err != nil {
			return err
		}
	case ast.KindRace:
		if err := j.checkRace(tn, s, res); err != nil {
			return err
		}
	case ast.KindChoice:
		if err := j.checkChoice(id, tn, s, res); err != nil {
			return err
		}
	case ast.KindMap:
		if err := j.checkMap(id, tn, s, res); err != nil {
			return err
		}
	case ast.KindLoop:
		if err := j.checkLoop(id, tn, s, res); err != nil {
			return err
		}
	case ast.KindEnd:
		if s != (nstate{status: s.status, flags: s.flags}) || res != nil || s.status == StatusRunning || s.status == StatusFailed {
			return fmt.Errorf("end node has state %+v", s)
		}
		if s.status == StatusSucceeded && j.ended == "" && j.cancel == "" {
			return fmt.Errorf("end node succeeded, and the job was not stopped")
		}
	case ast.KindTry:
		if s.attempt != 0 || s.done != 0 || s.nfail != 0 || res != nil {
			return fmt.Errorf("try has foreign state %+v", s)
		}
		body, rescue, fin := tn.kids[partBody], tn.kids[partRescue], tn.kids[partFinally]
		if s.status == StatusCancelled && s.pos == 0 && s.out == 0 && kid(body) == StatusIdle {
			break // cancelled before it began
		}
		st := func(k int32) Status {
			if k < 0 {
				return StatusIdle
			}
			return kid(k)
		}
		switch s.pos {
		case partBody:
			if rescue >= 0 && st(rescue) != StatusIdle || st(fin) != StatusIdle {
				return fmt.Errorf("rescue or finally began during the body")
			}
			if s.status == StatusRunning {
				if kid(body) != StatusRunning || s.out != 0 {
					return fmt.Errorf("running in body, body is %s, outcome %s", kid(body), s.out)
				}
			} else if kid(body) != s.status || s.out != s.status {
				return fmt.Errorf("%s after body %s, outcome %s", s.status, kid(body), s.out)
			} else if s.status == StatusFailed && rescue >= 0 {
				return fmt.Errorf("failed in body without trying its rescue")
			}
		case partRescue:
			if rescue < 0 || kid(body) != StatusFailed || st(fin) != StatusIdle {
				return fmt.Errorf("in rescue with body %s, finally %s", kid(body), st(fin))
			}
			if s.status == StatusRunning && kid(rescue) != StatusRunning || s.status != StatusRunning && !kid(rescue).Settled() {
				return fmt.Errorf("%s with rescue %s", s.status, kid(rescue))
			}
		case partFinally:
			if fin < 0 || !kid(body).Settled() || (rescue >= 0 && kid(rescue) != StatusIdle && !kid(rescue).Settled()) {
				return fmt.Errorf("in finally before body and rescue settled")
			}
			if s.status == StatusRunning && kid(fin) != StatusRunning || s.status != StatusRunning && !kid(fin).Settled() {
				return fmt.Errorf("%s with finally %s", s.status, kid(fin))
			}
			if !s.out.Settled() {
				return fmt.Errorf("in finally with outcome %s", s.out)
			}
		default:
			return fmt.Errorf("try part %d", s.pos)
		}
		if s.status.Settled() && fin >= 0 && s.pos != partFinally {
			return fmt.Errorf("%s without running its finally", s.status)
		}
		if s.status.Settled() && s.status != s.out {
			return fmt.Errorf("%s with outcome %s", s.status, s.out)
		}
	}
	return nil
}

// checkDag checks a dag's counts against its children, and that a child
// started exactly when everything it is after had succeeded.
func (j Job) checkDag(tn *tnode, s nstate, res *result) error {
	if s.attempt != 0 || res != nil {
		return fmt.Errorf("dag has foreign state %+v", s)
	}
	kid := func(k int32) Status { return j.st.get(k).status }
	var started, done, failed int32
	cancelled := false
	for k, c := range tn.kids {
		ready := true
		for _, d := range j.t.nodes[c].deps {
			st := kid(tn.kids[d])
			ready = ready && (st == StatusSucceeded || st == StatusSkipped)
		}
		if g := j.t.nodes[c].guardOf(); g != nil && kid(c) != StatusIdle && kid(c) != StatusSkipped && kid(c) != StatusCancelled && !j.guardHolds(c) {
			return fmt.Errorf("child %d is %s, and its guard does not hold", k, kid(c))
		}
		switch st := kid(c); {
		case st == StatusIdle && ready && !(s.status == StatusCancelled && s.pos == 0):
			return fmt.Errorf("child %d is idle, and everything it is after has succeeded", k)
		case st == StatusIdle:
		case !ready:
			return fmt.Errorf("child %d is %s before everything it is after succeeded", k, st)
		default:
			started++
			switch st {
			case StatusSucceeded, StatusSkipped:
				done++
			case StatusFailed:
				done++
				failed++
			case StatusCancelled:
				done++
				cancelled = true
			}
		}
	}
	if started == 0 {
		if s.status != StatusCancelled || s != (nstate{status: StatusCancelled}) {
			return fmt.Errorf("%s with no child started", s.status)
		}
		return nil // cancelled before it began
	}
	if s.pos != started || s.done != done || s.nfail != failed || (s.out == StatusCancelled) != cancelled || (s.out != 0 && s.out != StatusCancelled) {
		return fmt.Errorf("counts started=%d done=%d nfail=%d out=%s, children say %d, %d, %d, cancelled=%v", s.pos, s.done, s.nfail, s.out, started, done, failed, cancelled)
	}
	if (done < started) != (s.status == StatusRunning) {
		return fmt.Errorf("%s with %d of %d started children settled", s.status, done, started)
	}
	want := StatusSucceeded
	if failed > 0 {
		want = StatusFailed
	} else if cancelled {
		want = StatusCancelled
	}
	if s.status != StatusRunning && s.status != want {
		return fmt.Errorf("%s, children say %s", s.status, want)
	}
	if s.status == StatusSucceeded && int(started) != len(tn.kids) {
		return fmt.Errorf("succeeded with %d of %d children started", started, len(tn.kids))
	}
	return nil
}

// expiredAbove reports whether an expired node above id stops it: one
// reached without climbing out of a finally block.
func (j Job) expiredAbove(id int32) bool {
	for c := id; ; {
		tc := &j.t.nodes[c]
		p := tc.parent
		if p < 0 {
			return false
		}
		if j.t.nodes[p].kind == ast.KindTry && tc.edge == partFinally {
			return false
		}
		if j.st.get(p).flags&flagExpired != 0 {
			return true
		}
		c = p
	}
}

// checkExpired checks the expired node id, settled: failed by its
// deadline (the root of a cancelled job: cancelled), with everything under
// it settled.
func (j Job) checkExpired(id int32, tn *tnode, s nstate) error {
	if id == 0 && j.cancel != "" {
		if s.status != StatusCancelled {
			return fmt.Errorf("the root of a cancelled job is %s", s.status)
		}
	} else if id == 0 && j.ended != "" {
		if s.status != StatusSucceeded || s.cause != 0 {
			return fmt.Errorf("the root of a job an end node stopped is %s", s.status)
		}
	} else if s.status != StatusFailed || s.cause != id+1 || s.others != 0 {
		return fmt.Errorf("expired node %s with cause %d, others %d", s.status, s.cause, s.others)
	}
	for _, k := range tn.kids {
		if k >= 0 && j.st.get(k).status == StatusRunning {
			return fmt.Errorf("expired node settled with a child running")
		}
	}
	return nil
}

// under reports whether node a lies in the subtree of node b.
func (j Job) under(a, b int32) bool {
	for ; a >= 0; a = j.t.nodes[a].parent {
		if a == b {
			return true
		}
	}
	return false
}

// check verifies what the transition promises beside its job, on the
// reducer's own output, as Decode checks its input: no action is both
// dispatched (Actions) and told to stop (Stops). A batch's firings apply
// before anything it starts, so an action a transition stops was
// outstanding before it. It costs nothing when nothing stops, and
// O(actions + stops) otherwise.
func (t *Transition) check() error {
	if len(t.Stops) == 0 || len(t.Actions) == 0 {
		return nil
	}
	stops := make(map[string]bool, len(t.Stops))
	for _, a := range t.Stops {
		stops[a.ID] = true
	}
	for _, a := range t.Actions {
		if stops[a.ID] {
			return fmt.Errorf("action %s is both dispatched and stopped", a.ID)
		}
	}
	return nil
}

// checkLimit checks a par with a limit that began (pos children
// started): the children before pos began, those after did not, and as
// long as some have not, limit of them run.
func (j Job) checkLimit(tn *tnode, s nstate, done, idle int32) error {
	n := int32(len(tn.kids))
	if s.pos < tn.limitN() || s.pos > n {
		return fmt.Errorf("limited par started %d of %d children (limit %d)", s.pos, n, tn.limitN())
	}
	for i, k := range tn.kids {
		if st := j.st.get(k).status; (st == StatusIdle) != (int32(i) >= s.pos) {
			return fmt.Errorf("child %d is %s, %d started", i, st, s.pos)
		}
	}
	if idle != n-s.pos {
		return fmt.Errorf("%d idle children, %d started of %d", idle, s.pos, n)
	}
	if running := s.pos - done; running > tn.limitN() || s.pos < n && running != tn.limitN() {
		return fmt.Errorf("%d children running, %d started of %d (limit %d)", running, s.pos, n, tn.limitN())
	}
	return nil
}
