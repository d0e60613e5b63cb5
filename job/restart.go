package job

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/batonwf/baton/ast"
)

// New compiles root into a job called id and starts it: the transition
// holds the job at version 1 and the first actions to dispatch.
//
// The job must be stored durably BEFORE its actions are dispatched, so that
// a crash cannot lose a dispatched action's job.
//
// The tree is validated first (ast.Validate); an invalid tree or ID is an
// error. The job keeps the tree; the caller must not modify it afterwards.
func New(id ID, root ast.Node, opts ...Option) (Transition, error) {
	if err := id.Check(); err != nil {
		return Transition{}, err
	}
	var o origin
	for _, opt := range opts {
		opt(&o)
	}
	t, err := compile(root)
	if err != nil {
		return Transition{}, fmt.Errorf("job %s: %w", id, err)
	}
	e := newEngine(Job{id: id, version: 1, t: t, inc: o.incarnation, clock: o.start})
	// The trie belongs to this edit, so starting the job writes into it.
	e.j.st = newSplitVec(t, nil, e.token())
	e.begin(0)
	e.endRound()
	e.run()
	return Transition{Job: e.finish(), Step: Step{Version: 1}, Actions: e.actions, Timers: e.timers}, nil
}

// errBug wraps what a transition's own check finds wrong (Transition.check):
// a bug in this package, returned as an error rather than handed to a
// runner that would act on it.
func errBug(id ID, err error) error {
	return fmt.Errorf("job %s: the reducer broke its own contract (a bug in package job): %w", id, err)
}

// Restart applies a batch of results to j and returns the transition: the
// next job, the step that made it, the actions to dispatch and the results
// ignored. It never modifies j.
//
// The batch is a set, applied at once, in four phases: its results, put
// in a canonical order (by node, then attempt, error, output, kind,
// finality, time and ID), are recorded, then its signals (by time, then
// ID: see Signal); then its timer firings, node cancels and cancel apply,
// on the tree as the results left it; then the tree settles
// (freezes and expiries cancel what they stop, waiting leaves give up);
// and only then do new nodes start. So no transition both dispatches and
// stops an action. Results that cannot apply (unknown, never dispatched,
// stale, duplicate, stopped, or arriving after the job finished) change
// nothing and are listed in Ignored. If no result applies (an empty batch
// included), the transition holds j itself, unchanged, and no action.
//
// Restart is not recovery: a runner that loads a stored job after a crash
// dispatches j.Outstanding() again.
//
// The transition's Job must be stored durably BEFORE its Actions are
// dispatched. The actions are the caller's. The job keeps the results'
// Output bytes: the caller must not modify them afterwards.
//
// A failed workflow is not an error: it is the new job's status. The error
// is for broken contracts only, and then nothing is applied: a zero Job, a
// job whose version cannot grow, a result whose JobID names another job
// (a routing bug in the runner; the error wraps ErrWrongJob), or a
// transition that fails Restart's check of its own output (an action both
// in Actions and in Stops: a bug in this package, never handed on).
func Restart(j Job, results []Result) (Transition, error) {
	if j.t == nil {
		return Transition{}, fmt.Errorf("job: Restart of a zero Job")
	}
	for i, r := range results {
		if r.JobID != j.id {
			return Transition{}, &wrongJobError{fmt.Sprintf("job %s: result %d (action %q) belongs to job %q", j.id, i, r.ActionID, r.JobID)}
		}
	}
	if len(results) == 0 {
		return Transition{Job: j}, nil
	}
	if j.version == ^uint64(0) {
		return Transition{}, fmt.Errorf("job %s: version %d cannot grow", j.id, j.version)
	}

	e := newEngine(j)
	done := j.Done()
	var ignored []Ignored
	var firings []keyed
	var signals []keyedSignal
	var batchBuf [1]keyed // a batch of one allocates nothing
	batch := batchBuf[:0]
	if len(results) > len(batchBuf) {
		batch = make([]keyed, 0, len(results))
	}
	for i := range results {
		r := &results[i]
		if !utf8.ValidString(r.Error) || !utf8.ValidString(r.Kind) {
			// Stored as JSON text, so it must be valid UTF-8 to read back
			// the same; replace what is not, once, before anything records it.
			c := *r
			c.Error = strings.ToValidUTF8(c.Error, "\uFFFD")
			c.Kind = strings.ToValidUTF8(c.Kind, "\uFFFD")
			r = &c
		}
		if r.Incarnation != 0 && j.inc != 0 && r.Incarnation != j.inc {
			// Its action was dispatched for a job of the same ID that was
			// deleted since: its action IDs and attempts are this one's too.
			ignored = append(ignored, Ignored{Result: *r, Reason: IgnoredStale,
				Detail: fmt.Sprintf("from incarnation %x of the job, which is at %x", r.Incarnation, j.inc)})
			continue
		}
		if name, ok := splitCancelNode(r.ActionID); ok {
			id, known := j.t.names[name]
			if !known {
				id = -1
			}
			firings = append(firings, keyed{node: id, r: r, timer: timerCancelNode})
			continue
		}
		if s, ok := r.AsSignal(); ok {
			signals = append(signals, keyedSignal{s, r})
			continue
		}
		if path, kind, attempt, ok := splitTimerID(r.ActionID); ok {
			id, why := j.t.lookup(path)
			if id < 0 {
				ignored = append(ignored, Ignored{Result: *r, Reason: lookupReason(id, done), Detail: why})
				continue
			}
			firings = append(firings, keyed{node: id, attempt: attempt, r: r, timer: kind})
			continue
		}
		path, attempt, err := SplitActionID(r.ActionID)
		if err != nil {
			ignored = append(ignored, Ignored{Result: *r, Reason: IgnoredUnknown, Detail: err.Error()})
			continue
		}
		id, why := j.t.lookup(path)
		if id < 0 {
			ignored = append(ignored, Ignored{Result: *r, Reason: lookupReason(id, done), Detail: why})
			continue
		}
		if j.t.nodes[id].kind != ast.KindAct {
			ignored = append(ignored, Ignored{Result: *r, Reason: IgnoredUnknown,
				Detail: "path names a " + j.t.nodes[id].kind.String() + " node, not an action"})
			continue
		}
		batch = append(batch, keyed{node: id, attempt: attempt, r: r})
	}
	if len(batch) > 1 {
		sortKeyed(j.t, batch)
	}
	if len(firings) > 1 {
		sortKeyed(j.t, firings)
	}

	// Results first: each is recorded, and what it settles tells its
	// parents (a seq whose last child succeeded succeeds, a par hit by a
	// failure freezes), but nothing starts yet.
	var applied []Result
	for _, k := range batch {
		s := e.j.st.get(k.node)
		var reason IgnoreReason
		switch {
		case done:
			reason = IgnoredJobDone
		case k.attempt > int(s.attempt):
			reason = IgnoredNotDispatched // an idle leaf's attempt is 0
		case k.attempt < int(s.attempt):
			reason = IgnoredStale // stopped or not
		case s.status == StatusCancelled || s.flags&flagStopped != 0:
			// The attempt that was in flight when a deadline, a cancel
			// or a race won by a sibling stopped it (a cancelled leaf
			// with an attempt was stopped).
			reason = IgnoredStopped
		case s.status != StatusRunning || s.flags&flagWaiting != 0:
			reason = IgnoredDuplicate
		}
		if reason != 0 {
			ig := Ignored{Result: *k.r, Reason: reason}
			if reason == IgnoredStopped {
				if r := j.wonAbove(k.node); r >= 0 {
					w := j.t.nodes[r].kids[j.st.get(r).pos-1]
					ig.Detail = "a loser of the race at " + ast.ShowPath(j.t.path(r)) + ", won by " + j.t.path(w)
				}
			}
			ignored = append(ignored, ig)
			continue
		}
		if applied == nil {
			// Room for this result and every later one of the batch.
			applied = make([]Result, 0, len(batch)+len(firings))
			e.res = newResChunk(j.results, len(batch))
			// Linked at once: actions this batch starts may show a failure
			// it applied (Action.Failure).
			e.j.results = e.res
		}
		e.tick(k.r.At)
		e.settleLeaf(k.node, k.r)
		applied = append(applied, *k.r)
		applied[len(applied)-1].Incarnation = 0 // the job's: a step names none
	}
	// Then signals, in order of time, then ID: a running wait takes one,
	// or the job keeps it.
	if len(signals) > 1 {
		slices.SortStableFunc(signals, compareSignals)
	}
	for _, k := range signals {
		changed, ig := e.applySignal(k, done)
		if changed {
			applied = append(applied, *k.r)
			applied[len(applied)-1].Incarnation = 0
		}
		if ig.Reason != 0 {
			ignored = append(ignored, ig)
		}
	}
	e.propagateAll()

	// Then timer firings, and a cancel, on the tree as the results left
	// it: a result that settled a node in this batch beats its timers,
	// which are gone by now; deadlines that fire together expire together.
	// Only then does the tree settle and do new nodes start (run), so a
	// node that a result would start and a firing stops never starts: no
	// transition dispatches and stops one action.
	for _, k := range firings {
		if k.timer == timerCancelNode {
			name, _ := splitCancelNode(k.r.ActionID)
			if reason, detail := e.applyCancelNode(name, k.r); reason != 0 {
				ignored = append(ignored, Ignored{Result: *k.r, Reason: reason, Detail: detail})
			} else {
				applied = append(applied, *k.r)
			}
			continue
		}
		p, ok := e.timer(k.node, k.timer)
		switch {
		case e.j.Done():
			ignored = append(ignored, Ignored{Result: *k.r, Reason: IgnoredJobDone})
			continue
		case k.timer == timerCancel && (e.j.cancel != "" || k.r.Error == ""):
			ignored = append(ignored, Ignored{Result: *k.r, Reason: IgnoredDuplicate, Detail: "the job is cancelled already, or the cancel has no reason"})
			continue
		case k.timer == timerCancel && e.j.ended != "":
			ignored = append(ignored, Ignored{Result: *k.r, Reason: IgnoredDuplicate, Detail: "the job is ending already (an end node was reached)"})
			continue
		case k.timer != timerCancel && (!ok || k.timer == timerRetry && int(p.attempt) != k.attempt):
			ignored = append(ignored, Ignored{Result: *k.r, Reason: IgnoredTimer})
			continue
		}
		e.tick(k.r.At)
		switch k.timer {
		case timerRetry:
			e.removeTimer(k.node, k.timer)
			e.startQ.push(start{node: k.node, checks: true, kind: startRetry})
		case timerDeadline:
			e.removeTimer(k.node, k.timer)
			e.expire(k.node)
		case timerSleep:
			e.wakeUp(k.node)
		case timerCancel:
			e.j.cancel = k.r.Error
			if !k.r.At.IsZero() {
				e.j.cancelAt = k.r.At.UnixNano()
			}
			if e.get(0).flags&flagExpired == 0 {
				e.expire(0)
			}
		}
		applied = append(applied, *k.r)
	}
	e.run()

	sortIgnored(ignored)
	if len(applied) == 0 {
		return Transition{Job: j, Ignored: ignored}, nil
	}
	out := e.finish()
	out.version = j.version + 1
	tr := Transition{Job: out, Step: Step{Version: out.version, Results: applied}, Actions: e.actions, Timers: e.timers, Stops: e.stops, Ignored: ignored}
	if err := tr.check(); err != nil {
		return Transition{}, errBug(j.id, err)
	}
	return tr, nil
}

// keyed is a result of a batch with the node and attempt its ID names,
// or a timer firing with its node, kind and (for a retry) attempt.
type keyed struct {
	node    int32
	attempt int
	r       *Result
	timer   uint8
}

// compareKeyed orders a batch canonically: by node in tree order, then
// attempt, timer kind, error, output, kind, finality, time and the ID as
// written, so that of two results for one attempt (or two firings of one
// timer, which the root's may spell with or without "root") the same one
// applies whatever the order they came in.
func compareKeyed(x, y keyed) int {
	if c := cmp.Compare(x.node, y.node); c != 0 {
		return c
	}
	if c := cmp.Compare(x.attempt, y.attempt); c != 0 {
		return c
	}
	if c := cmp.Compare(x.timer, y.timer); c != 0 {
		return c
	}
	return compareResults(x.r, y.r)
}

// sortKeyed sorts a batch (compareKeyed), comparing nodes by their
// place in pre-order once a map added copies to t.
func sortKeyed(t *tree, ks []keyed) {
	if !t.reordered() {
		slices.SortFunc(ks, compareKeyed)
		return
	}
	slices.SortFunc(ks, func(x, y keyed) int {
		if c := cmp.Compare(t.order(x.node), t.order(y.node)); c != 0 {
			return c
		}
		return compareKeyed(x, y)
	})
}

// lookupReason is why a result whose path tree.lookup did not find
// (id, -1 or -2) is ignored: a path of an earlier iteration of a loop
// (-2) is stale, or the job's, done, which ignores every later result of
// its own.
func lookupReason(id int32, done bool) IgnoreReason {
	if id == -2 && done {
		return IgnoredJobDone
	}
	if id == -2 {
		return IgnoredStale
	}
	return IgnoredUnknown
}

// compareResults orders results for the same node by error, output, kind,
// finality, time and ID.
func compareResults(x, y *Result) int {
	if c := strings.Compare(x.Error, y.Error); c != 0 {
		return c
	}
	if c := bytes.Compare(x.Output, y.Output); c != 0 {
		return c
	}
	if c := strings.Compare(x.Kind, y.Kind); c != 0 {
		return c
	}
	if x.Final != y.Final {
		if !x.Final {
			return -1
		}
		return 1
	}
	if c := x.At.Compare(y.At); c != 0 {
		return c
	}
	return strings.Compare(x.ActionID, y.ActionID)
}

// engine carries one New or Restart: the job being built, the edit token
// that owns the state copied so far (made at the first write: token), the
// queue of nodes that settled and
// whose parents have not yet heard of it, and the queue of nodes to start
// once settling is over.
type engine struct {
	j       Job            // the job being built, held here so the two are one allocation
	e       *edit          // nil until token makes it
	fresh   map[int32]bool // pars whose first failure came in this batch
	res     *resChunk      // the results applied, once one is
	ownOuts bool           // j.outs is this edit's copy
	ownTime bool           // j.timers is this edit's copy
	ownSigs bool           // j.sig is this edit's copy
	armed   []pending      // the timers armed in this edit
	stops   []Action       // the actions told to stop in this edit
	timers  []Timer        // those still pending at the end, for the transition (finish)
	dagReq  map[int32]bool // dag children after several siblings, requested in this edit
	// raceWins holds the undecided races a child won in this edit: for
	// each, the edge of its candidate earliest in tree order.
	raceWins map[int32]int32
	gaveUp   map[int32]bool  // leaves that gave up their retries in this edit
	waitAt   map[int32]int64 // leaves whose attempt failed in this edit and wait: when it ended
	settleQ  smallQ[int32]
	// lateQ holds the nodes that failed as they began (a choice with
	// nothing to run): they settle once the round that began them is over.
	lateQ       []late
	lateSettled bool // some node of lateQ settled in this edit
	// abandonQ holds the pars and dags frozen in this edit, whose leaves
	// waiting for an armed retry give up when the tree settles (run).
	abandonQ []int32
	startQ   smallQ[start]
	actions  []Action
	// roundWaits holds the waits begun in the current round of run, in
	// the order they began: placeWaits gives them their places in tree
	// order once the round is over.
	roundWaits []int32
	// grown is the tree this edit grew by maps' starts, which it may grow
	// further in place (see treeEdit).
	grown treeEdit
}

// start is 8 bytes: the queue is on every Restart's path. A wait's time
// is in engine.waitAt, which only retries allocate.
type start struct {
	node   int32
	checks bool // subject to the freeze of failed parallel ancestors
	kind   uint8
}

// What a queued start does.
const (
	startBegin = iota // begin the node
	startWait         // a leaf's attempt failed: arm its retry timer
	startRetry        // a leaf's retry timer fired: begin its next attempt
)

// newEngine returns an engine building on j. Nothing points into an
// engine (its queues keep their first items in themselves, not behind a
// slice), so one that New or Restart makes stays on the stack.
func newEngine(j Job) *engine {
	return &engine{j: j}
}

func (e *engine) get(id int32) nstate  { return e.j.st.get(id) }
func (e *engine) mut(id int32) *nstate { return e.j.st.ptr(e.token(), id) }

// token returns the edit's token, the owner of the trie nodes it copied,
// making it at the first write. An edit that applies results has made its
// results chunk by then (Restart records each result before it writes the
// leaf's state), and takes the chunk's token: one allocation for both.
func (e *engine) token() *edit {
	if e.e == nil {
		if e.res != nil {
			e.e = &e.res.tok
		} else {
			e.e = new(edit)
		}
	}
	return e.e
}
func (e *engine) node(id int32) *tnode { return &e.j.t.nodes[id] }

// finish returns the job built, with the results applied linked in, and
// keeps in e.timers only the timers still pending (one armed and withdrawn
// in the same edit is not reported), in tree order.
func (e *engine) finish() Job {
	if e.res != nil {
		e.j.results = e.res
	}
	e.j.t.fixRank() // the tree is shared from now on
	if len(e.armed) > 0 {
		slices.SortFunc(e.armed, comparePending)
		for _, a := range e.armed {
			if p, ok := e.timer(a.node, a.kind); ok && p == a {
				e.timers = append(e.timers, Timer{JobID: e.j.id, ID: e.j.t.timerID(p), Due: time.Unix(0, p.due).UTC()})
			}
		}
		if e.j.t.reordered() && len(e.timers) > 1 {
			e.timers = e.j.t.sortTimers(e.timers)
		}
	}
	return e.j
}

// setOutput records the output of the named leaf whose output index is o,
// copying the job's outputs once per edit.
func (e *engine) setOutput(o int32, out []byte) {
	if !e.ownOuts {
		outs := make([][]byte, e.j.t.named)
		copy(outs, e.j.outs)
		e.j.outs, e.ownOuts = outs, true
	}
	e.j.outs[o] = out
}

func (e *engine) markFresh(p int32) {
	if e.fresh == nil {
		e.fresh = map[int32]bool{}
	}
	e.fresh[p] = true
}

// requestStart queues the start of id for run, which cancels it instead
// if a frozen par or an expiry forbids it by then. A start that a race
// won above it forbids is cancelled at once: the loser it is in then
// settles in the moment it would have started, so a race around that one
// decides among every child that succeeded in it (see decideRaces).
func (e *engine) requestStart(id int32) {
	if e.j.t.raced && e.j.wonAbove(id) >= 0 {
		e.settle(id, StatusCancelled, 0, 0)
		return
	}
	e.startQ.push(start{node: id, checks: true})
}

// settleLeaf records r as the result of the running action id, in e.res,
// which the caller has made with room for it.
func (e *engine) settleLeaf(id int32, r *Result) {
	out := r.Output
	if len(out) == 0 {
		// An empty output is none (null), as it reads back once encoded.
		out = nil
	}
	e.res.entries = append(e.res.entries, resEntry{id, result{output: out, err: r.Error, kind: r.Kind}})
	s := e.mut(id)
	if r.Failed() && e.retryable(id, s, r) {
		// It waits for its next attempt, unless a frozen ancestor stops
		// it, which is decided with the starts, once the batch settled.
		s.flags |= flagWaiting
		e.j.running--
		if e.waitAt == nil {
			e.waitAt = map[int32]int64{}
		}
		e.waitAt[id] = unixNano(r.At) // 0: the job's clock
		e.startQ.push(start{node: id, checks: true, kind: startWait})
		return
	}
	if r.Failed() {
		s.status = StatusFailed
		s.cause = id + 1
	} else {
		s.status = StatusSucceeded
		if o := e.node(id).out; o >= 0 {
			e.setOutput(o, out)
		}
	}
	e.j.running--
	e.j.settled++
	e.settled(id)
	e.settleQ.push(id)
}

// retryable reports whether the failed attempt r of the leaf id (state s)
// may be tried again: the leaf has a retry policy with attempts left, and
// neither the handler (Final) nor the policy (NonRetryable) rules it out.
func (e *engine) retryable(id int32, s *nstate, r *Result) bool {
	p := e.node(id).retry
	if p == nil || r.Final || int(s.attempt) >= p.Attempts {
		return false
	}
	return !slices.Contains(p.NonRetryable, r.Kind) && r.Kind != KindDeadline && r.Kind != KindCancelled
}

// armRetry arms the retry timer of the waiting leaf id: due at the time
// its failed attempt ended (at; 0 for the job's clock) plus the back-off.
func (e *engine) armRetry(id int32, at int64) {
	if at == 0 {
		at = e.j.clock
	}
	next := int(e.get(id).attempt) + 1
	due := at + int64(backoff(e.node(id).retry, e.j.id, e.j.t.path(id), next))
	e.addTimer(pending{node: id, kind: timerRetry, attempt: uint32(next), due: due})
}

// giveUp fails the waiting leaf id with its last failure: a frozen
// ancestor stops its retries. Its retry timer, if armed, is withdrawn.
func (e *engine) giveUp(id int32) {
	if isWaitOrSleep(e.node(id).kind) {
		e.withdraw(id)
		return
	}
	if e.gaveUp == nil {
		e.gaveUp = map[int32]bool{}
	}
	e.gaveUp[id] = true
	e.removeTimer(id, timerRetry)
	e.mut(id).flags &^= flagWaiting
	e.settle(id, StatusFailed, id+1, 0) // an expired leaf fails by its deadline instead
	if e.get(id).status == StatusFailed {
		e.j.settled++ // not the root of a cancelled job, which ends cancelled
	}
}

// abandon gives up the retries of the waiting leaves under p that a freeze
// of p stops (those not inside a finally block that has started).
func (e *engine) abandon(p int32) {
	var stop []int32
	for _, t := range e.j.timers {
		if t.kind == timerRetry && e.j.under(t.node, p) && e.j.frozen(t.node) {
			stop = append(stop, t.node)
		}
	}
	for _, id := range stop {
		e.giveUp(id)
	}
	e.withdrawUnder(p)
}

// tick moves the job's clock to at, if later.
func (e *engine) tick(at time.Time) {
	if n := unixNano(at); n > e.j.clock {
		e.j.clock = n
	}
}

// propagateAll tells the parents of the nodes settled so far, and theirs in
// turn, without starting anything: the starts stay queued for run.
//
// Once nothing is left to propagate, the races a child won in what
// settled are decided, the innermost first, each decision's stops
// propagated before the next (decideRaces).
func (e *engine) propagateAll() {
	for {
		// propagate may queue more: the loop takes them in turn.
		for i := 0; i < e.settleQ.len(); i++ {
			e.propagate(e.settleQ.at(i))
		}
		e.settleQ.truncate(0)
		if !e.decideRaces() {
			return
		}
	}
}

// run settles everything that can settle, then starts what was requested,
// until neither queue holds work. Settling always goes first, so a parallel
// node that a result of this batch failed is frozen before anything starts,
// and the leaves waiting for a retry under it give up (abandonQ). Restart
// calls it once, after the batch's results and firings.
//
// Starting is two-phased. First every queued start that a frozen par
// forbids is cancelled, and the tree settles again; a cancellation can fail
// a par and so freeze starts that were allowed a moment ago, so this
// repeats until no queued start is frozen. Then the guards of the queued
// dag children are read (a false one skips its child, and the tree
// settles again, as for a cancellation). Only then do the remaining
// starts begin. Beginning never settles anything, so nothing begun can be
// invalidated afterwards: what a batch starts does not depend on the order
// of the start queue, nor on the shape of the tree around it.
func (e *engine) run() {
	for {
		if len(e.lateQ) > 0 {
			e.settleLate()
		}

		e.propagateAll()
		if len(e.abandonQ) > 0 {
			// Giving up settles leaves, which may freeze more: settle again.
			for i := 0; i < len(e.abandonQ); i++ {
				e.abandon(e.abandonQ[i])
			}
			e.abandonQ = e.abandonQ[:0]
			continue
		}
		if e.startQ.len() == 0 && len(e.lateQ) == 0 {
			return
		}
		cancelled := false
		kept, n := 0, e.startQ.len()
		for i := range n {
			st := e.startQ.at(i)
			if st.kind != startBegin && e.get(st.node).flags&flagWaiting == 0 {
				// A leaf queued to wait or to retry that gave up since (an
				// expiry in this batch): nothing is left to do for it.
				continue
			}
			if st.checks && e.j.frozen(st.node) {
				if st.kind == startBegin {
					e.settle(st.node, StatusCancelled, 0, 0)
				} else {
					e.giveUp(st.node) // a retry is new work: it fails instead
				}
				cancelled = true
				continue
			}
			e.startQ.set(kept, st)
			kept++
		}
		e.startQ.truncate(kept)
		if cancelled {
			continue
		}
		// Guards are read only once no queued start is frozen: a
		// cancellation above may yet freeze a guarded child's dag, and
		// then it is cancelled, not skipped. (Only workflow version 3
		// has guards.)
		kept, n = 0, e.startQ.len()
		if !e.j.t.lang3 {
			kept, n = n, 0
		}
		for i := range n {
			st := e.startQ.at(i)
			if st.kind == startBegin && e.node(st.node).guardOf() != nil && !e.guardHolds(st.node) {
				// A dag child whose guard is false is skipped instead of
				// begun: a settling, so the tree settles again first.
				e.skip(st.node)
				e.settleQ.push(st.node)
				cancelled = true
				continue
			}
			e.startQ.set(kept, st)
			kept++
		}
		e.startQ.truncate(kept)
		if cancelled {
			continue
		}
		for i := range e.startQ.len() {
			switch st := e.startQ.at(i); st.kind { // none of these queues anything
			case startBegin:
				e.begin(st.node)
			case startWait:
				e.armRetry(st.node, e.waitAt[st.node])
			case startRetry:
				e.mut(st.node).flags &^= flagWaiting
				e.begin(st.node)
			}
		}
		e.startQ.truncate(0)
		e.endRound()
	}
}

// settle puts id in a final state and queues its parent's reaction.
func (e *engine) settle(id int32, status Status, cause, others int32) {
	s := e.mut(id)
	if s.flags&flagExpired != 0 && status != StatusIdle {
		// Whatever its children did, an expired node fails with its
		// deadline; the root of a cancelled job ends cancelled.
		if id == 0 && e.j.cancel != "" {
			status, cause, others = StatusCancelled, 0, 0
		} else if id == 0 && e.j.ended != "" {
			status, cause, others = StatusSucceeded, 0, 0 // stopped by an end node
		} else {
			status, cause, others = StatusFailed, id+1, 0
		}
	}
	s.status = status
	if status == StatusFailed {
		s.cause, s.others = cause, others
	} else {
		// A par that carried a failure while running, then settled
		// otherwise (the cancelled root), carries it no more.
		s.cause, s.others = 0, 0
	}
	e.settled(id)
	e.settleQ.push(id)
}

// settled withdraws the deadline of node id, which has settled.
func (e *engine) settled(id int32) {
	if e.node(id).deadline > 0 {
		e.removeTimer(id, timerDeadline)
	}
}

// expire makes node n expire (its deadline ran out, or, for the root, the
// job is cancelled): nothing new starts under it (frozen), the actions in
// flight under it are told to stop, and its leaves waiting for a retry
// give up, except inside finally blocks of tries already entered, which
// run in full (their deadlines and retries go on). The deadlines of the
// nodes stopped are withdrawn at once, and n's own: an expired node waits
// for no deadline (for a cancel, the root's may still be pending). A node
// under n that goes on running because a finally block under it runs
// keeps its deadline. n settles, failed (or the cancelled root:
// cancelled), once everything under it has.
func (e *engine) expire(n int32) {
	e.mut(n).flags |= flagExpired
	if e.node(n).deadline > 0 {
		e.removeTimer(n, timerDeadline)
	}
	var stop, give []int32
	// walk visits the running node id and reports whether it goes on
	// running: a finally block under it runs (started, or to start once
	// its try's body or rescue is stopped). The deadlines of the others,
	// which the expiry stops, are withdrawn now, so that a firing of one
	// in this batch finds it gone, leaf or not.
	var walk func(id int32) bool
	walk = func(id int32) bool {
		st := e.get(id)
		if st.status != StatusRunning {
			return false
		}
		tn := e.node(id)
		keeps := false
		switch tn.kind {
		case ast.KindAct:
			if st.flags&flagWaiting != 0 {
				give = append(give, id)
			} else {
				stop = append(stop, id)
			}
		case ast.KindWait, ast.KindSleep:
			give = append(give, id)
		case ast.KindTry:
			for part, k := range tn.kids {
				if k >= 0 && !(part == partFinally && st.pos == partFinally) && walk(k) {
					keeps = true
				}
			}
			keeps = keeps || tn.kids[partFinally] >= 0
		default:
			for _, k := range tn.kids {
				if walk(k) {
					keeps = true
				}
			}
		}
		if id != n && !keeps && tn.deadline > 0 {
			e.removeTimer(id, timerDeadline)
		}
		return keeps
	}
	walk(n)
	for _, id := range give {
		e.giveUp(id)
	}
	for _, id := range stop {
		e.stopAction(id)
		e.j.running--
		if id == n && !(n == 0 && e.j.cancel != "") {
			// The leaf that expired fails (a cancelled job's root leaf
			// ends cancelled); the others are stopped.
			e.j.settled++
			e.mut(id).flags |= flagStopped
		}
		e.settle(id, StatusCancelled, 0, 0)
	}
}

// propagate tells the parent of the settled node c what happened.
func (e *engine) propagate(c int32) {
	tc := e.node(c)
	p := tc.parent
	if p < 0 {
		return // the root settled: the job is done
	}
	cs := e.get(c)
	tp := e.node(p)
	switch tp.kind {
	case ast.KindSeq:
		switch cs.status {
		case StatusSucceeded:
			if int(tc.edge) == len(tp.kids)-1 {
				e.settle(p, StatusSucceeded, 0, 0)
			} else {
				e.mut(p).pos = tc.edge + 1
				e.requestStart(tp.kids[tc.edge+1])
			}
		case StatusFailed:
			e.settle(p, StatusFailed, cs.cause, cs.others)
		case StatusCancelled:
			e.settle(p, StatusCancelled, 0, 0)
		}
	case ast.KindPar, ast.KindChoice:
		ps := e.mut(p)
		ps.done++
		if tp.limitN() > 0 && int(ps.pos) < len(tp.kids) {
			// A slot is free: the next child in tree order starts (or,
			// frozen, is cancelled, which frees the slot again).
			ps.pos++
			e.requestStart(tp.kids[ps.pos-1])
			ps = e.mut(p)
		}
		switch cs.status {
		case StatusFailed:
			e.countFailure(p, ps, cs)
		case StatusCancelled:
			ps.out = StatusCancelled
		}
		if int(ps.done) == len(tp.kids) {
			switch {
			case ps.nfail > 0:
				e.settle(p, StatusFailed, ps.cause, ps.others)
			case ps.out == StatusCancelled:
				e.settle(p, StatusCancelled, 0, 0)
			default:
				e.settle(p, StatusSucceeded, 0, 0)
			}
		}
	case ast.KindTry:
		e.tryChild(p, tp, tc.edge, cs)
	case ast.KindMap:
		e.mapChild(p, tp, cs)
	case ast.KindLoop:
		e.loopChild(p, tp, cs)
	case ast.KindDag:
		e.dagChild(p, tp, tc, cs)
	case ast.KindRace:
		e.raceChild(p, tp, tc, cs)
	}
}

// dagChild moves the dag p on after its child tc settled with state cs.
// A dag counts in pos the children it started (begun, or cancelled by a
// frozen ancestor when they were to start) and in done those settled; it
// settles when every child it started has, since a child starts only once
// everything it is after has succeeded: after a failure, or a cancelled
// child, some never start. Failures are counted as in a par.
func (e *engine) dagChild(p int32, tp *tnode, tc *tnode, cs nstate) {
	ps := e.mut(p)
	ps.done++
	switch cs.status {
	case StatusSucceeded, StatusSkipped:
		// Start the siblings waiting for nothing else. Two siblings that
		// succeed in one batch both see the other settled: the first one
		// handled starts their common dependents.
		for _, d := range tc.rdeps {
			k := tp.kids[d]
			deps := e.node(k).deps
			ready := true
			for _, dep := range deps {
				if st := e.get(tp.kids[dep]).status; st != StatusSucceeded && st != StatusSkipped {
					ready = false
					break
				}
			}
			if !ready || (len(deps) > 1 && e.requestedOnce(k)) {
				continue
			}
			ps.pos++
			e.requestStart(k)
		}
	case StatusFailed:
		e.countFailure(p, ps, cs)
	case StatusCancelled:
		ps.out = StatusCancelled
	}
	if ps.done == ps.pos {
		switch {
		case ps.nfail > 0:
			e.settle(p, StatusFailed, ps.cause, ps.others)
		case ps.out == StatusCancelled:
			e.settle(p, StatusCancelled, 0, 0)
		default:
			e.settle(p, StatusSucceeded, 0, 0)
		}
	}
}

// requestedOnce reports whether the dag child id, which is after several
// siblings, was already requested in this edit (two of them succeeded in
// one batch: each sees the other settled), and records that it is now.
func (e *engine) requestedOnce(id int32) bool {
	if e.dagReq == nil {
		e.dagReq = map[int32]bool{}
	}
	if e.dagReq[id] {
		return true
	}
	e.dagReq[id] = true
	return false
}

// countFailure counts the failure cs of a child of the par or dag p, whose
// state is ps: the first failure is the one reported, later ones are
// counted in others. Failures that arrive in the same batch are equally
// first: the one earliest in tree order is reported.
func (e *engine) countFailure(p int32, ps *nstate, cs nstate) {
	first := ps.nfail == 0
	if first {
		ps.cause = cs.cause
		ps.others += cs.others
		e.markFresh(p)
	} else {
		ps.others += 1 + cs.others
		// A leaf that gave up its retries because of a freeze (a
		// failure, a deadline, a cancel) fails after the failures of its
		// batch: it never ties with them, whichever was handled first.
		if e.fresh[p] && e.failsBefore(cs.cause, ps.cause) {
			ps.cause = cs.cause
		}
	}
	ps.nfail++
	if first && (len(e.j.timers) > 0 || e.j.t.waitsOrSleeps) {
		// p is frozen now: the retries armed under it are new work, given
		// up when the tree settles (run), after the batch's firings; a
		// wait running under it, which has no timer, is withdrawn then.
		e.abandonQ = append(e.abandonQ, p)
	}
}

// failsBefore reports whether the cause a is reported before the cause b
// when both fail in one batch: a failure before a give-up, then tree order.
func (e *engine) failsBefore(a, b int32) bool {
	ga, gb := e.gaveUp[a-1], e.gaveUp[b-1]
	if ga != gb {
		return gb
	}
	return e.j.t.order(a-1) < e.j.t.order(b-1)
}

// tryChild moves the try p on after its part settled with state cs.
func (e *engine) tryChild(p int32, tp *tnode, part int32, cs nstate) {
	ps := e.mut(p)
	switch part {
	case partBody:
		switch cs.status {
		case StatusSucceeded:
			ps.out = StatusSucceeded
		case StatusCancelled:
			ps.out = StatusCancelled
		case StatusFailed:
			ps.out, ps.cause, ps.others = StatusFailed, cs.cause, cs.others
			if tp.kids[partRescue] >= 0 {
				ps.pos = partRescue
				e.requestStart(tp.kids[partRescue])
				return
			}
		}
	case partRescue:
		switch cs.status {
		case StatusSucceeded:
			ps.out, ps.cause, ps.others = StatusSucceeded, 0, 0
		case StatusFailed:
			// The rescue's failure replaces the body's, which it was handling.
			ps.out, ps.cause, ps.others = StatusFailed, cs.cause, cs.others
		case StatusCancelled:
			// The rescue was stopped by a frozen parallel ancestor: the
			// body's failure stands.
		}
	case partFinally:
		if cs.status == StatusFailed && ps.out != StatusFailed {
			ps.out, ps.cause, ps.others = StatusFailed, cs.cause, cs.others
		}
		e.settle(p, ps.out, ps.cause, ps.others)
		return
	}
	if f := tp.kids[partFinally]; f >= 0 {
		ps.pos = partFinally
		// A try already entered always runs its finally, frozen or not.
		e.startQ.push(start{node: f})
		return
	}
	e.settle(p, ps.out, ps.cause, ps.others)
}

// begin starts id and the parts of it that start with it.
func (e *engine) begin(id int32) {
	tn := e.node(id)
	s := e.mut(id)
	if tn.deadline > 0 && s.status == StatusIdle {
		// A deadline counts from the clock of the step that starts the
		// node (not again for a retry).
		e.addTimer(pending{node: id, kind: timerDeadline, due: e.j.clock + int64(tn.deadline)})
		s = e.mut(id)
	}
	s.status = StatusRunning
	switch tn.kind {
	case ast.KindAct:
		s.attempt++
		e.j.running++
		e.actions = append(e.actions, e.action(id, int(s.attempt)))
	case ast.KindSeq:
		s.pos = 0
		e.begin(tn.kids[0])
	case ast.KindPar, ast.KindRace:
		kids := tn.kids
		if tn.limitN() > 0 {
			// At most limit children at once; pos counts those started.
			kids = kids[:tn.limitN()]
			s.pos = tn.limitN()
		}
		// Each child begins at least one action: make room for them at
		// once. slices.Grow grows geometrically, so nested pars still cost
		// amortised O(1) per action.
		e.actions = slices.Grow(e.actions, len(kids))
		for _, k := range kids {
			e.begin(k)
		}
	case ast.KindTry:
		s.pos = partBody
		e.begin(tn.kids[partBody])
	case ast.KindChoice:
		e.beginChoice(id, tn)
	case ast.KindMap:
		e.beginMap(id)
	case ast.KindLoop:
		e.begin(tn.kids[0])
	case ast.KindWait:
		e.beginWait(id, tn)
	case ast.KindSleep:
		e.beginSleep(id, tn)
	case ast.KindEnd:
		// It stops the job once the round that began it is over.
		e.lateQ = append(e.lateQ, late{id, StatusSucceeded})
	case ast.KindDag:
		// The children after nothing start with the dag; pos counts them.
		// A guarded one is queued: it may be skipped, which settles.
		for _, k := range tn.kids {
			if len(e.node(k).deps) == 0 {
				e.beginDagChild(id, tn, k)
			}
		}
		if int(e.get(id).done) == len(tn.kids) {
			// Every child was skipped: the dag succeeds once the round
			// that began it is over.
			e.lateQ = append(e.lateQ, late{id, StatusSucceeded})
		}
	}
}

// frozen reports whether starting id is forbidden: some parallel ancestor
// has a failed child, or an ancestor expired, or a race above it was won
// (by a child that, having succeeded, starts nothing more), and no
// finally lies between them.
func (j *Job) frozen(id int32) bool {
	for c := id; ; {
		tc := &j.t.nodes[c]
		p := tc.parent
		if p < 0 {
			return false
		}
		tp := &j.t.nodes[p]
		if tp.kind == ast.KindTry && tc.edge == partFinally {
			return false
		}
		ps := j.st.get(p)
		if (tp.kind == ast.KindPar || tp.kind == ast.KindDag || tp.kind == ast.KindChoice || tp.kind == ast.KindMap) && ps.nfail > 0 || ps.flags&flagExpired != 0 || tp.kind == ast.KindRace && ps.pos > 0 ||
			tp.kind == ast.KindMap && ps.flags&flagWon != 0 {
			return true
		}
		c = p
	}
}

func (e *engine) action(id int32, attempt int) Action {
	return actionOf(&e.j, id, attempt)
}

func actionOf(j *Job, id int32, attempt int) Action {
	tn := &j.t.nodes[id]
	aid := tn.id1
	if attempt != 1 || tn.looped {
		aid = ActionID(j.t.path(id), attempt)
	}
	a := tn.act
	act := Action{
		JobID:       j.id,
		Incarnation: j.inc,
		ID:          aid,
		Name:        a.Action,
		Payload:     a.Payload,
		Attempt:     attempt,
		Timeout:     a.Timeout,
		AtMostOnce:  a.Delivery == ast.AtMostOnce,
		Priority:    a.Priority,
	}
	if len(tn.inputs) > 0 {
		act.Inputs = make([]Input, len(tn.inputs))
		for k, n := range tn.inputs {
			var out []byte
			if n < 0 {
				out = j.mapInput(id, n) // item or index
			} else {
				out = j.outputOf(n)
			}
			act.Inputs[k] = Input{Name: ast.WrittenName(a.Inputs[k]), Output: out}
		}
	}
	act.Failure = j.followed(id)
	if j.t.raced {
		act.Replica = j.replica(id)
		act.Placement = j.placement(id)
	}
	return act
}

// replica returns which copy of a node with replicas the leaf id is
// under, the nearest such node deciding, or nil.
func (j *Job) replica(id int32) *Replica {
	for c := id; ; {
		tc := &j.t.nodes[c]
		p := tc.parent
		if p < 0 {
			return nil
		}
		if n := j.t.nodes[p].copies; n > 0 {
			return &Replica{Race: j.t.path(p), Copy: int(tc.edge), Of: int(n)}
		}
		c = p
	}
}

// followed returns the failure that the rescue or finally nearest above
// node id follows (see Action.Failure), or nil.
func (j *Job) followed(id int32) *Failure {
	for c := id; ; {
		tc := &j.t.nodes[c]
		p := tc.parent
		if p < 0 {
			return nil
		}
		if j.t.nodes[p].kind == ast.KindTry && (tc.edge == partRescue || tc.edge == partFinally) {
			ps := j.st.get(p)
			if ps.out != StatusFailed || ps.cause == 0 {
				return nil // a finally after a body or rescue that succeeded (or was cancelled)
			}
			f := j.failure(p, nil)
			return &f
		}
		c = p
	}
}

// outstanding lists the running actions in tree order, visiting only
// running subtrees.
func (j Job) outstanding() []Action {
	var acts []Action
	var walk func(id int32)
	walk = func(id int32) {
		s := j.st.get(id)
		if s.status != StatusRunning {
			return
		}
		tn := &j.t.nodes[id]
		if tn.kind == ast.KindAct {
			if s.flags&flagWaiting == 0 { // a waiting leaf has no action out
				acts = append(acts, actionOf(&j, id, int(s.attempt)))
			}
			return
		}
		for _, k := range tn.kids {
			if k >= 0 {
				walk(k)
			}
		}
	}
	walk(0)
	return acts
}

// sortIgnored puts ignored results in a canonical order, so that permuting
// a batch does not change the report.
func sortIgnored(ig []Ignored) {
	if len(ig) < 2 {
		return
	}
	slices.SortStableFunc(ig, func(a, b Ignored) int {
		x, y := &a.Result, &b.Result
		if c := strings.Compare(x.ActionID, y.ActionID); c != 0 {
			return c
		}
		return compareResults(x, y)
	})
}
