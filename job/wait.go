package job

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/batonwf/baton/ast"
)

// Waits and sleeps are leaves no worker runs. A wait runs until a signal
// of its name reaches it (signal.go); a sleep until its timer,
// "PATH@sleep", fires. Neither is an action: neither counts in Running,
// Progress or Outstanding, and neither is in Transition.Stops when
// stopped. A stopped one (a freeze, an expiry, a cancel, a lost race) is
// withdrawn as a leaf waiting for a retry gives up: it fails at once, its
// timer withdrawn.

// beginWait begins the wait id (state already running): it takes its
// place among the waits begun, and, unless transient, settles with the
// oldest kept signal of its name once the round that began it is over
// (settleLate, where another wait begun before it may have taken it).
func (e *engine) beginWait(id int32, tn *tnode) {
	st := e.ownSig()
	st.starts++
	e.mut(id).attempt = st.starts
	e.roundWaits = append(e.roundWaits, id)
	if !tn.x.transient && e.j.hasKept(tn.x.signal) {
		e.lateQ = append(e.lateQ, late{id, StatusSucceeded})
	}
}

// endRound ends a round of beginnings: the waits begun in it take their
// places (placeWaits).
func (e *engine) endRound() {
	if len(e.roundWaits) > 1 {
		e.placeWaits()
	}
	e.roundWaits = e.roundWaits[:0]
}

// placeWaits gives the waits begun in one round of run (roundWaits,
// more than one) their places in tree order: they began in the order
// their starts were requested, and took the places (starts) after every
// wait begun before the round; the places are dealt again, the lowest to
// the first in tree order. The waits queued to take a kept signal once
// the round is over (lateQ) take them in the same order.
func (e *engine) placeWaits() {
	ws := e.roundWaits
	t := e.j.t
	sorted := slices.IsSortedFunc(ws, func(a, b int32) int { return cmp.Compare(t.order(a), t.order(b)) })
	if sorted {
		return
	}
	places := make([]uint32, len(ws))
	for i, w := range ws {
		places[i] = e.get(w).attempt
	}
	slices.Sort(places)
	slices.SortFunc(ws, func(a, b int32) int { return cmp.Compare(t.order(a), t.order(b)) })
	for i, w := range ws {
		e.mut(w).attempt = places[i]
	}
	var at []int // the places in lateQ of its waits
	var waits []late
	for i, l := range e.lateQ {
		if e.node(l.node).kind == ast.KindWait {
			at = append(at, i)
			waits = append(waits, l)
		}
	}
	slices.SortFunc(waits, func(a, b late) int { return cmp.Compare(e.get(a.node).attempt, e.get(b.node).attempt) })
	for k, i := range at {
		e.lateQ[i] = waits[k]
	}
}

// beginSleep begins the sleep id: its timer is due at the job's clock
// plus its duration.
func (e *engine) beginSleep(id int32, tn *tnode) {
	e.addTimer(pending{node: id, kind: timerSleep, due: e.j.clock + int64(tn.x.sleep)})
}

// wakeUp applies the firing of the sleep id's timer: it succeeds.
func (e *engine) wakeUp(id int32) {
	e.removeTimer(id, timerSleep)
	e.settle(id, StatusSucceeded, 0, 0)
}

// withdraw fails the running wait or sleep id, which something above it
// stops: its timer, if any, is withdrawn.
func (e *engine) withdraw(id int32) {
	if e.gaveUp == nil {
		e.gaveUp = map[int32]bool{}
	}
	e.gaveUp[id] = true
	e.removeTimer(id, timerSleep)
	e.settle(id, StatusFailed, id+1, 0)
}

// isWaitOrSleep reports whether k is a wait's or a sleep's kind.
func isWaitOrSleep(k ast.Kind) bool { return k == ast.KindWait || k == ast.KindSleep }

// withdrawUnder withdraws the running waits and sleeps under p that the
// freeze of p stops (those outside the finally blocks of tries entered).
func (e *engine) withdrawUnder(p int32) {
	if !e.j.t.waitsOrSleeps {
		return
	}
	var give []int32
	var walk func(id int32)
	walk = func(id int32) {
		st := e.get(id)
		if st.status != StatusRunning {
			return
		}
		tn := e.node(id)
		if isWaitOrSleep(tn.kind) {
			if e.j.frozen(id) {
				give = append(give, id)
			}
			return
		}
		for _, k := range tn.kids {
			if k >= 0 {
				walk(k)
			}
		}
	}
	walk(p)
	for _, id := range give {
		e.withdraw(id)
	}
}

// waitFailure is the failure of a wait or sleep c that failed on its
// own: withdrawn.
func (j Job) waitFailure(c int32) (kind, msg string) {
	tn := &j.t.nodes[c]
	if tn.kind == ast.KindWait {
		return KindWithdrawn, "the wait for signal " + tn.x.signal + " was withdrawn"
	}
	return KindWithdrawn, "the sleep of " + tn.x.sleep.String() + " was withdrawn"
}

// KindWithdrawn is the kind of a wait or a sleep that a freeze, a won
// race, a deadline or a cancel above it stopped.
const KindWithdrawn = "withdrawn"

// checkWaitSleep checks a wait or a sleep.
func (j Job) checkWaitSleep(id int32, tn *tnode, s nstate, res *result) error {
	if s.out != 0 || s.pos != 0 || s.done != 0 || s.nfail != 0 || s.flags&^flagExpired != 0 {
		return fmt.Errorf("%s has foreign state %+v", tn.kind, s)
	}
	taken := j.takenBy(id)
	_, timed := j.pendingTimer(id, timerSleep)
	if tn.kind == ast.KindSleep {
		if s.attempt != 0 || res != nil || timed != (s.status == StatusRunning) {
			return fmt.Errorf("sleep %s with attempt %d, result %v, timer %v", s.status, s.attempt, res != nil, timed)
		}
	} else {
		if timed || s.attempt == 0 && s.status != StatusCancelled {
			return fmt.Errorf("wait %s with start %d, timer %v", s.status, s.attempt, timed)
		}
		if (s.status == StatusSucceeded) != (taken >= 0) || (res != nil) != (taken >= 0) || res != nil && res.err != "" {
			return fmt.Errorf("wait %s, took signal %v, result %v", s.status, taken >= 0, res != nil)
		}
		if s.status == StatusRunning && !tn.x.transient && j.hasKept(tn.x.signal) {
			return fmt.Errorf("wait runs while a signal %s is kept", tn.x.signal)
		}
	}
	if s.status == StatusFailed && s.cause != id+1 {
		return fmt.Errorf("failed %s's cause is %d, not itself", tn.kind, s.cause)
	}
	if s.status == StatusCancelled && s.attempt != 0 {
		return fmt.Errorf("cancelled wait that began")
	}
	return nil
}

// takenBy returns the index in j.sig.taken of the signal the wait id took,
// or -1.
func (j Job) takenBy(id int32) int {
	if j.sig == nil {
		return -1
	}
	for i, t := range j.sig.taken {
		if t.node == id {
			return i
		}
	}
	return -1
}

// checkSignals checks the job's signal state: seen is sorted and holds
// every kept and taken signal, at most MaxKeptSignals are kept, each
// taken one names a wait of its name, taken once, and the count of waits
// begun covers every wait's place.
func (j Job) checkSignals() error {
	if j.sig == nil {
		for i := range j.t.nodes {
			if j.t.nodes[i].kind == ast.KindWait && j.st.get(int32(i)).attempt != 0 {
				return fmt.Errorf("a wait began, and no count of waits begun")
			}
		}
		return nil
	}
	st := j.sig
	for i := 1; i < len(st.seen); i++ {
		if st.seen[i-1] >= st.seen[i] {
			return fmt.Errorf("signals seen out of order at %d", i)
		}
	}
	isSeen := func(name, id string) bool {
		_, ok := slices.BinarySearch(st.seen, name+"/"+id)
		return ok
	}
	if len(st.kept) > MaxKeptSignals {
		return fmt.Errorf("%d signals kept", len(st.kept))
	}
	for _, k := range st.kept {
		if !isSeen(k.name, k.id) || (Signal{Name: k.name, ID: k.id, Payload: k.payload}).Check() != nil {
			return fmt.Errorf("kept signal %s/%s is not seen, or not valid", k.name, k.id)
		}
	}
	nodes := map[int32]bool{}
	for _, t := range st.taken {
		if t.node < 0 || int(t.node) >= len(j.t.nodes) || j.t.nodes[t.node].kind != ast.KindWait || j.t.nodes[t.node].x.signal != t.name || nodes[t.node] || !isSeen(t.name, t.id) {
			return fmt.Errorf("taken signal %s/%s by node %d", t.name, t.id, t.node)
		}
		nodes[t.node] = true
	}
	for i := range j.t.nodes {
		if j.t.nodes[i].kind == ast.KindWait && j.st.get(int32(i)).attempt > st.starts {
			return fmt.Errorf("wait %d began %d, after the %d counted", i, j.st.get(int32(i)).attempt, st.starts)
		}
	}
	return nil
}

// describeWait adds to the line of a wait or a sleep what it waits for,
// and what it took.
func describeWait(b *strings.Builder, j *Job, n NodeInfo) {
	if !isWaitOrSleep(n.Kind) {
		return
	}
	id, _ := j.t.lookup(n.Path)
	tn := &j.t.nodes[id]
	ind := strings.Repeat("  ", n.Depth+1)
	if tn.kind == ast.KindSleep {
		fmt.Fprintf(b, "%ssleep %s", ind, tn.x.sleep)
		if p, ok := j.pendingTimer(id, timerSleep); ok {
			fmt.Fprintf(b, ", due %s", timeOf(p.due).Format(time.RFC3339Nano))
		}
		b.WriteByte('\n')
		return
	}
	fmt.Fprintf(b, "%swaits for signal %s", ind, tn.x.signal)
	if tn.x.transient {
		b.WriteString(" (transient)")
	}
	if i := j.takenBy(id); i >= 0 {
		fmt.Fprintf(b, ", took %s/%s", j.sig.taken[i].name, Clip(j.sig.taken[i].id))
		if len(n.Output) > 0 {
			b.WriteString(" -> ")
			b.WriteString(Clip(string(n.Output)))
		}
	}
	b.WriteByte('\n')
}

// describeKept lists the signals j keeps.
func describeKept(b *strings.Builder, j *Job) {
	if j.sig == nil {
		return
	}
	for _, k := range j.sig.kept {
		fmt.Fprintf(b, "signal %s/%s kept", k.name, Clip(k.id))
		if len(k.payload) > 0 {
			b.WriteString(": ")
			b.WriteString(Clip(string(k.payload)))
		}
		b.WriteByte('\n')
	}
}
