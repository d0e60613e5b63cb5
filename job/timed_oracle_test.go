package job_test

// The timed oracle: the step-by-step oracle of oracle_test.go taught
// retries, timeouts, at-most-once delivery, deadlines and cancellation,
// written from the documentation (ast.Retry, ast.Node's fields, job.Timer,
// job.Cancel, Transition, Result, the kinds, Restart's comments on how a
// batch applies) and sharing no code with the reducer. Like the plain
// oracle it keeps only what happened to each node (entered, cancelled, the
// results of a leaf's attempts, waits, stops, expiries) and derives every
// state from the children on demand. The rules it encodes:
//
//   - A failed attempt of a leaf with a retry policy waits for its next
//     attempt when attempts are left, the failure is not Final, and its
//     kind is neither listed in NonRetryable nor "deadline" or
//     "cancelled". The wait is a timer PATH@retry#N due at the failed
//     result's At (the zero time: the job's clock once the batch's
//     results and firings are applied) plus Initial*Multiplier^(N-2) (a multiplier
//     of 0 counts as 1), capped at Max, then moved by up to ±Jitter of
//     itself (the oracle knows the range, not the draw: it checks the
//     reducer's due time is in it and adopts it). Its firing starts
//     attempt N. A waiting leaf that a frozen par or dag, or an expired
//     node (itself included), stops from starting gives up: it fails with
//     its last failure (or its own deadline), later than any other failure
//     of the batch in which it gives up; in a later batch it is a failure
//     like any other (doc.go: "fails after the failures of its batch").
//   - A node with a deadline arms PATH@deadline when it starts, due at
//     the job's clock then plus the deadline; it is pending while the
//     node runs and has not expired. When it fires, the node expires:
//     nothing new starts under it; its running leaves (not inside a
//     finally block that has started) are stopped (Transition.Stops) and
//     settle cancelled (a leaf that expires itself fails); its waiting
//     leaves give up; it fails, kind deadline, once everything under it
//     settled.
//   - Cancel expires the root the same way; the job ends cancelled.
//   - A batch: results first (recorded: the oracle derives every
//     state, so a node whose children a result settled has settled),
//     then timer firings and the cancel in tree order on the tree as
//     the results left it, and only then does anything start, or get
//     cancelled by a freeze or an expiry, until nothing more should.
//     Results of stopped actions are ignored as stopped (a leaf that its
//     own deadline stopped too), results of earlier attempts as stale
//     (a stopped leaf's too), firings of timers not pending as such, a
//     second cancel as a duplicate.
//   - The clock is the latest At applied, from the start time on.
//   - An action in a rescue carries the failure of the body it handles;
//     one in a finally the failure its try carries when the finally
//     starts (the rescue's if it failed, else the body's, a deadline's
//     included, if the body failed), none if the body succeeded or was
//     stopped or a rescue succeeded; other actions none (Action.Failure).

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
)

// timedOutcome is how one attempt of a leaf ends.
type timedOutcome struct {
	Fail   bool
	Msg    string
	Kind   string
	Final  bool
	Output []byte
}

// tNode is a node of the timed oracle.
type tNode struct {
	o                     *tOracle
	n                     *ast.Node
	kind                  ast.Kind
	path                  string
	index                 int // pre-order
	parent                *tNode
	kids                  []*tNode // seq, par, dag
	after                 []*tNode
	body, rescue, finally *tNode

	entered, cancelled bool
	enteredAt          int64 // the clock when it started
	expired            bool
	withdrawn          bool // an expiry stopped it: its deadline is gone
	settledStep        int  // the step at which it settled (-1: not yet)

	// Leaves.
	attempt int
	results []timedOutcome // the results applied, oldest first
	done    bool           // settled by a result, or gave up
	gaveUp  bool
	// gaveUpStep is the step at which it gave up: only then is it
	// reported after the failures that settle with it.
	gaveUpStep int
	stopped    bool
	waiting    bool
	armed      bool  // its retry timer is armed
	fired      bool  // and fired: the next attempt is to begin
	failAt     int64 // At of the failed attempt it waits after (0: none)
	due        int64 // the retry timer's due time, once known exactly
	lo, hi     int64 // the range jitter allows for it
	dueExact   bool
}

// tTimer is a timer pending in the oracle.
type tTimer struct {
	ID     string
	Due    int64
	Lo, Hi int64 // jitter's range; Lo == Hi == Due when exact
	node   *tNode
	kind   int // 1 retry, 2 deadline
}

// tOracle interprets one timed workflow.
type tOracle struct {
	c      timedCase
	root   *tNode
	nodes  []*tNode          // pre-order
	byPath map[string]*tNode // by path
	clock  int64
	step   int
	cancel string
	out    []string // outstanding action IDs, in dispatch order

	// What the current step did.
	started []string
	stops   []string
	armedD  []*tNode // deadlines armed
	armedR  []*tNode // retries armed
	ignored []propIgnored
	applied []job.Result

	// follows is the failure every action started follows
	// (Action.Failure), by ID: worked out once the step that started it
	// has settled, from the tree as it stands then.
	follows map[string]*job.Failure
}

func (o *tOracle) build(n *ast.Node, path string, parent *tNode) *tNode {
	on := &tNode{o: o, n: n, kind: n.Kind, path: path, index: len(o.nodes), parent: parent, settledStep: -1}
	o.nodes = append(o.nodes, on)
	o.byPath[path] = on
	part := func(p *ast.Node, edge string) *tNode {
		if p == nil {
			return nil
		}
		return o.build(p, propJoin(path, edge), on)
	}
	switch n.Kind {
	case ast.KindSeq, ast.KindPar, ast.KindDag:
		for i := range n.Children {
			on.kids = append(on.kids, part(&n.Children[i], fmt.Sprintf("%s[%d]", n.Kind, i)))
		}
		if n.Kind == ast.KindDag {
			for i, k := range on.kids {
				for _, a := range n.Children[i].After {
					for _, s := range on.kids {
						if s.n.Name == a && !slices.Contains(k.after, s) {
							k.after = append(k.after, s)
						}
					}
				}
			}
		}
	case ast.KindTry:
		on.body, on.rescue, on.finally = part(n.Body, "body"), part(n.Rescue, "rescue"), part(n.Finally, "finally")
	}
	return on
}

// tStart builds the oracle for c and starts the job at start.
func tStart(c timedCase, start int64) *tOracle {
	o := &tOracle{c: c, byPath: map[string]*tNode{}, clock: start, follows: map[string]*job.Failure{}}
	o.root = o.build(&c.Tree, "", nil)
	o.beginStep()
	o.enter(o.root, false)
	o.advance()
	o.endStep()
	return o
}

func (n *tNode) children() []*tNode {
	if n.kind != ast.KindTry {
		return n.kids
	}
	var ks []*tNode
	for _, k := range []*tNode{n.body, n.rescue, n.finally} {
		if k != nil {
			ks = append(ks, k)
		}
	}
	return ks
}

func (n *tNode) ready() bool {
	for _, a := range n.after {
		if a.status() != job.StatusSucceeded {
			return false
		}
	}
	return true
}

func (n *tNode) last() timedOutcome { return n.results[len(n.results)-1] }

// status derives n's state. An expired node that has settled failed (the
// root of a cancelled job: cancelled).
func (n *tNode) status() job.Status {
	switch {
	case !n.entered:
		return job.StatusIdle
	case n.cancelled:
		return job.StatusCancelled
	}
	s := n.derived()
	if n.expired && s != job.StatusRunning {
		if n.parent == nil && n.o.cancel != "" {
			return job.StatusCancelled
		}
		return job.StatusFailed
	}
	return s
}

func (n *tNode) derived() job.Status {
	switch n.kind {
	case ast.KindAct:
		switch {
		case n.stopped:
			return job.StatusCancelled
		case !n.done:
			return job.StatusRunning
		case n.last().Fail:
			return job.StatusFailed
		}
		return job.StatusSucceeded
	case ast.KindSeq:
		for _, k := range n.kids {
			switch s := k.status(); s {
			case job.StatusSucceeded:
			case job.StatusIdle:
				return job.StatusRunning
			default:
				return s
			}
		}
		return job.StatusSucceeded
	case ast.KindPar, ast.KindDag:
		failed, cancelled := false, false
		for _, k := range n.kids {
			switch k.status() {
			case job.StatusIdle:
				if n.kind == ast.KindPar || k.ready() {
					return job.StatusRunning
				}
			case job.StatusRunning:
				return job.StatusRunning
			case job.StatusFailed:
				failed = true
			case job.StatusCancelled:
				cancelled = true
			}
		}
		switch {
		case failed:
			return job.StatusFailed
		case cancelled:
			return job.StatusCancelled
		}
		return job.StatusSucceeded
	case ast.KindTry:
		out := n.body.status()
		if !out.Settled() {
			return job.StatusRunning
		}
		if out == job.StatusFailed && n.rescue != nil {
			switch r := n.rescue.status(); r {
			case job.StatusSucceeded, job.StatusFailed:
				out = r
			case job.StatusCancelled:
			default:
				return job.StatusRunning
			}
		}
		if n.finally != nil {
			switch f := n.finally.status(); {
			case !f.Settled():
				return job.StatusRunning
			case f == job.StatusFailed:
				out = job.StatusFailed
			}
		}
		return out
	}
	panic("timed oracle: unknown kind")
}

// failure returns the node n's failure report (a failed leaf, or an
// expired node) and how many others it counts. n must have failed.
// Failures that settle in one step are reported a failure before a
// give-up of that step (a leaf that gave up its retries because of a
// freeze, a deadline, its own included, or a cancel fails after the
// failures of its batch), then in tree order.
func (n *tNode) failure() (*tNode, int) {
	if n.expired {
		return n, 0
	}
	switch n.kind {
	case ast.KindSeq:
		for _, k := range n.kids {
			if k.status() == job.StatusFailed {
				return k.failure()
			}
		}
	case ast.KindTry:
		out, from := n.body.status(), n.body
		if out == job.StatusFailed && n.rescue != nil {
			switch n.rescue.status() {
			case job.StatusSucceeded:
				out = job.StatusSucceeded
			case job.StatusFailed:
				from = n.rescue
			}
		}
		if out == job.StatusFailed {
			return from.failure()
		}
		return n.finally.failure()
	case ast.KindPar, ast.KindDag:
		var best *tNode
		var bestKey [3]int
		total := 0
		for _, k := range n.kids {
			if k.status() != job.StatusFailed {
				continue
			}
			cause, others := k.failure()
			total += 1 + others
			key := [3]int{k.settledStep, 0, cause.index}
			if cause.gaveUp && cause.gaveUpStep == k.settledStep {
				key[1] = 1
			}
			if best == nil || slices.Compare(key[:], bestKey[:]) < 0 {
				best, bestKey = cause, key
			}
		}
		return best, total - 1
	}
	return n.failure1()
}

func (n *tNode) failure1() (*tNode, int) {
	if n.expired {
		return n, 0
	}
	switch n.kind {
	case ast.KindAct:
		return n, 0
	case ast.KindSeq:
		for _, k := range n.kids {
			if k.status() == job.StatusFailed {
				return k.failure()
			}
		}
	case ast.KindPar, ast.KindDag:
		// First in time; in one step, a failure that gave up its retries
		// comes after the others; then the earliest in tree order.
		var first *tNode
		var firstKey [3]int
		total := 0
		for _, k := range n.kids {
			if k.status() != job.StatusFailed {
				continue
			}
			cause, others := k.failure()
			total += 1 + others
			key := [3]int{k.settledStep, 0, cause.index}
			if cause.gaveUp && cause.gaveUpStep == k.settledStep {
				key[1] = 1
			}
			if first == nil || slices.Compare(key[:], firstKey[:]) < 0 {
				first, firstKey = k, key
			}
		}
		cause, _ := first.failure()
		return cause, total - 1
	case ast.KindTry:
		out, from := n.body.status(), n.body
		if out == job.StatusFailed && n.rescue != nil {
			switch n.rescue.status() {
			case job.StatusSucceeded:
				out = job.StatusSucceeded
			case job.StatusFailed:
				from = n.rescue
			}
		}
		if out == job.StatusFailed {
			return from.failure()
		}
		return n.finally.failure()
	}
	panic("timed oracle: failure of a node that did not fail")
}

// tWant is something that should happen now under the tree: a node to
// start, a waiting leaf whose timer is to be armed, a leaf whose retry
// fired and is to begin again, or a waiting leaf a freeze stops.
type tWant struct {
	n      *tNode
	what   int // 0 enter, 1 arm, 2 retry, 3 give up
	frozen bool
}

// want adds what should happen now at k, entered or not, to ws.
func (k *tNode) want(frozen bool, ws *[]tWant) {
	switch {
	case !k.entered:
		*ws = append(*ws, tWant{k, 0, frozen})
	case k.cancelled:
	case k.kind == ast.KindAct:
		switch {
		case !k.waiting:
		case !k.armed:
			*ws = append(*ws, tWant{k, 1, frozen})
		case k.fired:
			*ws = append(*ws, tWant{k, 2, frozen})
		case frozen:
			*ws = append(*ws, tWant{k, 3, true})
		}
	default:
		k.wanted(frozen, ws)
	}
}

func (n *tNode) wanted(frozen bool, ws *[]tWant) {
	in := func(k *tNode, frozen bool) { k.want(frozen, ws) }
	kf := frozen || n.expired
	switch n.kind {
	case ast.KindAct:
		return
	case ast.KindSeq:
		for _, k := range n.kids {
			if !k.entered || k.status() != job.StatusSucceeded {
				in(k, kf)
				return
			}
		}
	case ast.KindPar, ast.KindDag:
		for _, k := range n.kids {
			if k.status() == job.StatusFailed {
				kf = true
			}
		}
		for _, k := range n.kids {
			if n.kind == ast.KindPar || k.entered || k.ready() {
				in(k, kf)
			}
		}
	case ast.KindTry:
		in(n.body, kf)
		if !n.body.entered || !n.body.status().Settled() {
			return
		}
		if n.body.status() == job.StatusFailed && n.rescue != nil {
			in(n.rescue, kf)
			if !n.rescue.entered || !n.rescue.status().Settled() {
				return
			}
		}
		if n.finally != nil {
			in(n.finally, false) // a finally runs, frozen or expired or not
		}
	}
}

// outcome returns how attempt k of the leaf at path ends.
func (c timedCase) outcome(path string, k int) timedOutcome {
	os := c.Attempts[path]
	return os[min(k, len(os))-1]
}

func (o *tOracle) actionID(n *tNode) string {
	p := n.path
	if p == "" {
		p = "root"
	}
	return p + "#" + strconv.Itoa(n.attempt)
}

// enter starts n (or cancels it if frozen).
func (o *tOracle) enter(n *tNode, frozen bool) {
	n.entered = true
	if frozen {
		n.cancelled = true
		return
	}
	n.enteredAt = o.clock
	if n.n.Deadline > 0 {
		o.armedD = append(o.armedD, n)
	}
	if n.kind == ast.KindAct {
		o.dispatch(n)
	}
}

func (o *tOracle) dispatch(n *tNode) {
	n.attempt++
	id := o.actionID(n)
	o.out = append(o.out, id)
	o.started = append(o.started, id)
}

// giveUp fails the waiting leaf n with its last failure.
func (o *tOracle) giveUp(n *tNode) {
	n.waiting, n.armed, n.fired = false, false, false
	n.done, n.gaveUp, n.gaveUpStep = true, true, o.step
}

// backoffRange returns the range of the wait before attempt next of the
// leaf n, and whether it is exact (no jitter).
func backoffRange(r *ast.Retry, next int) (lo, hi int64) {
	d := float64(r.Initial)
	m := r.Multiplier
	if m == 0 {
		m = 1
	}
	d *= math.Pow(m, float64(next-2))
	if r.Max > 0 && d > float64(r.Max) {
		d = float64(r.Max)
	}
	if r.Jitter == 0 {
		return int64(d), int64(d)
	}
	return int64(d*(1-r.Jitter)) - 1, int64(d*(1+r.Jitter)) + 1
}

func (o *tOracle) arm(n *tNode) {
	at := n.failAt
	if at == 0 {
		at = o.clock
	}
	lo, hi := backoffRange(n.n.Retry, n.attempt+1)
	n.armed, n.fired = true, false
	n.lo, n.hi = at+lo, at+hi
	n.dueExact = lo == hi
	n.due = n.lo
	o.armedR = append(o.armedR, n)
}

// advance settles and starts until nothing more should: whatever a freeze
// stops goes first (it may settle and freeze more), then the rest starts,
// one at a time in pre-order, each from a fresh look at the tree.
func (o *tOracle) advance() {
	for {
		var ws []tWant
		if o.root.status() != job.StatusRunning {
			return
		}
		o.root.want(false, &ws)
		if len(ws) == 0 {
			return
		}
		w := ws[0]
		for _, x := range ws {
			if x.frozen {
				w = x
				break
			}
		}
		switch {
		case w.what == 0:
			o.enter(w.n, w.frozen)
		case w.frozen:
			o.giveUp(w.n)
		case w.what == 1:
			o.arm(w.n)
		case w.what == 2:
			w.n.waiting, w.n.armed, w.n.fired = false, false, false
			o.dispatch(w.n)
		}
	}
}

// retryable reports whether the failed attempt r of leaf n waits for a
// next one.
func retryable(n *tNode, r timedOutcome) bool {
	p := n.n.Retry
	if p == nil || r.Final || n.attempt >= p.Attempts {
		return false
	}
	return !slices.Contains(p.NonRetryable, r.Kind) && r.Kind != job.KindDeadline && r.Kind != job.KindCancelled
}

// expire makes n expire: its running leaves outside started finally
// blocks stop, its waiting leaves give up.
func (o *tOracle) expire(n *tNode) {
	n.expired = true
	var give, stop []*tNode
	// walk reports whether k goes on running: a finally block under it
	// runs, started or to start. The deadlines of the nodes that do not
	// are withdrawn: the expiry stops them.
	var walk func(k *tNode) bool
	walk = func(k *tNode) bool {
		if k.status() != job.StatusRunning {
			return false
		}
		if k.kind == ast.KindAct {
			if k.waiting {
				give = append(give, k)
			} else {
				stop = append(stop, k)
			}
			k.withdrawn = true
			return false
		}
		keeps := k.kind == ast.KindTry && k.finally != nil
		for _, c := range k.children() {
			if k.kind == ast.KindTry && c == k.finally && c.entered {
				continue
			}
			if walk(c) {
				keeps = true
			}
		}
		if !keeps {
			k.withdrawn = true
		}
		return keeps
	}
	walk(n)
	for _, k := range give {
		o.giveUp(k)
	}
	for _, k := range stop {
		id := o.actionID(k)
		k.stopped = true
		o.stops = append(o.stops, id)
		o.out = slices.DeleteFunc(o.out, func(s string) bool { return s == id })
	}
}

// pending lists the timers the job waits for, in tree order (a node's
// retry before its deadline).
func (o *tOracle) pending() []tTimer {
	var ts []tTimer
	for _, n := range o.nodes {
		if n.kind == ast.KindAct && n.waiting && n.armed && !n.fired {
			ts = append(ts, tTimer{ID: tShowPath(n.path) + "@retry#" + strconv.Itoa(n.attempt+1), Due: n.due, Lo: n.lo, Hi: n.hi, node: n, kind: 1})
		}
		if d := n.n.Deadline; d > 0 && n.status() == job.StatusRunning && !n.expired && !n.withdrawn {
			due := n.enteredAt + int64(d)
			ts = append(ts, tTimer{ID: tShowPath(n.path) + "@deadline", Due: due, Lo: due, Hi: due, node: n, kind: 2})
		}
	}
	return ts
}

func tShowPath(p string) string {
	if p == "" {
		return "root"
	}
	return p
}

func (o *tOracle) beginStep() {
	o.started, o.stops, o.armedD, o.armedR, o.ignored, o.applied = nil, nil, nil, nil, nil, nil
}

// endStep records when nodes settled, then the failure each action the
// step started follows.
func (o *tOracle) endStep() {
	for _, n := range o.nodes {
		if n.settledStep < 0 && n.status().Settled() {
			n.settledStep = o.step
		}
	}
	for _, id := range o.started {
		path, _, _ := job.SplitActionID(id)
		o.follows[id] = o.byPath[path].followed()
	}
}

// followed returns the failure the action of the leaf n follows (doc.go,
// Data; docs/language.md, Failures): the nearest rescue or finally above
// it decides. In a rescue, the failure of the body it handles. In a
// finally, the failure the try carries when the finally starts: the
// rescue's if it failed, the body's if the body failed (by a deadline
// too) and no rescue ran (none, or it was cancelled); nothing if the
// body succeeded or was cancelled (a deadline above it, a cancelled job),
// or a rescue succeeded. Nothing outside every rescue and finally.
func (n *tNode) followed() *job.Failure {
	for c := n; c.parent != nil; c = c.parent {
		t := c.parent
		if t.kind != ast.KindTry || c == t.body {
			continue
		}
		from := t.body
		switch {
		case c == t.rescue:
		case t.body.status() != job.StatusFailed:
			return nil
		case t.rescue == nil || t.rescue.status() == job.StatusCancelled:
		case t.rescue.status() == job.StatusFailed:
			from = t.rescue
		default:
			return nil // the rescue handled it
		}
		f := from.report()
		return &f
	}
	return nil
}

// report returns the failure of n, which failed, as job.Failure reports
// it: the failed leaf's, or the expired node's deadline.
func (n *tNode) report() job.Failure {
	cause, others := n.failure()
	if cause.expired {
		return job.Failure{Path: cause.path, Message: "deadline of " + cause.n.Deadline.String() + " exceeded", Kind: job.KindDeadline, Others: others}
	}
	r := cause.last()
	return job.Failure{Path: cause.path, Action: cause.n.Action, Message: propStoredMsg(r.Msg), Kind: propStoredMsg(r.Kind), Others: others}
}

// armedPending returns the timers armed in this step that are still
// pending, in tree order: what the transition asks for.
func (o *tOracle) armedPending() []tTimer {
	var ts []tTimer
	for _, t := range o.pending() {
		if t.kind == 1 && slices.Contains(o.armedR, t.node) || t.kind == 2 && slices.Contains(o.armedD, t.node) {
			ts = append(ts, t)
		}
	}
	return ts
}

// tFiring is a firing or the cancel, parsed from its ID.
type tFiring struct {
	r       job.Result
	node    *tNode
	kind    int // 1 retry, 2 deadline, 3 cancel
	attempt int
}

// parseFiring reads a timer ID as the docs write them: "PATH@retry#N",
// "PATH@deadline" ("root" for the root), or "@cancel". ok is false for an
// ID without '@' or with an empty path ("@deadline"); n is nil when the ID has one but names no timer of the
// tree.
func (o *tOracle) parseFiring(r job.Result) (f tFiring, ok bool) {
	id := r.ActionID
	i := strings.LastIndexByte(id, '@')
	if i < 0 {
		return tFiring{}, false
	}
	f.r = r
	if id == "@cancel" {
		f.node, f.kind = o.root, 3
		return f, true
	}
	path, rest := id[:i], id[i+1:]
	switch path {
	case "":
		return tFiring{}, false // no timer: an action ID (and a bad one)
	case "root":
		path = ""
	}
	n := o.byPath[path]
	switch {
	case n == nil:
	case rest == "deadline":
		f.node, f.kind = n, 2
	case strings.HasPrefix(rest, "retry#"):
		k, err := strconv.Atoi(rest[len("retry#"):])
		if err == nil && k >= 2 && strconv.Itoa(k) == rest[len("retry#"):] {
			f.node, f.kind, f.attempt = n, 1, k
		}
	}
	return f, true
}

// apply plays one batch, as Restart documents it.
func (o *tOracle) apply(batch []job.Result) {
	o.beginStep()
	o.step++
	var firings []tFiring
	var results []job.Result
	for _, r := range batch {
		if f, ok := o.parseFiring(r); ok {
			if f.node == nil {
				o.ignored = append(o.ignored, propIgnored{r.ActionID, job.IgnoredUnknown})
				continue
			}
			firings = append(firings, f)
			continue
		}
		results = append(results, r)
	}
	done := o.root.status().Settled()
	// The canonical order doc.go gives.
	sort.SliceStable(results, func(a, b int) bool {
		x, y := results[a], results[b]
		px, ax, ex := job.SplitActionID(x.ActionID)
		py, ay, ey := job.SplitActionID(y.ActionID)
		ix, iy := -1, -1
		if n := o.byPath[px]; ex == nil && n != nil {
			ix = n.index
		}
		if n := o.byPath[py]; ey == nil && n != nil {
			iy = n.index
		}
		return tLess(ix, iy, ax, ay, 0, 0, x, y)
	})
	// Results: the reason a result is ignored depends on the leaf's state
	// as the batch left it so far, so duplicates within a batch count.
	// Identical copies may come in any order; a batch never holds two
	// different results for one attempt.
	for _, r := range results {
		path, attempt, err := job.SplitActionID(r.ActionID)
		n := o.byPath[path]
		if err != nil || n == nil || n.kind != ast.KindAct {
			o.ignored = append(o.ignored, propIgnored{r.ActionID, job.IgnoredUnknown})
			continue
		}
		st := n.status()
		var reason job.IgnoreReason
		switch {
		case done:
			reason = job.IgnoredJobDone
		case attempt > n.attempt: // never dispatched: an idle leaf has attempt 0
			reason = job.IgnoredNotDispatched
		case attempt < n.attempt: // an earlier attempt, stopped or not
			reason = job.IgnoredStale
		case n.stopped || st == job.StatusCancelled:
			// The attempt a deadline (its leaf's own too) or a cancel
			// stopped in flight.
			reason = job.IgnoredStopped
		case st != job.StatusRunning || n.waiting:
			reason = job.IgnoredDuplicate
		}
		if reason != 0 {
			o.ignored = append(o.ignored, propIgnored{r.ActionID, reason})
			continue
		}
		o.tick(r.At)
		o.applied = append(o.applied, r)
		id := o.actionID(n)
		o.out = slices.DeleteFunc(o.out, func(s string) bool { return s == id })
		res := timedOutcome{Fail: r.Failed(), Msg: r.Error, Kind: r.Kind, Final: r.Final, Output: r.Output}
		n.results = append(n.results, res)
		if res.Fail && retryable(n, res) {
			n.waiting, n.armed, n.fired = true, false, false
			n.failAt = tNano(r.At)
		} else {
			n.done = true
		}
	}
	// Nothing starts yet: the firings come first.
	sort.SliceStable(firings, func(a, b int) bool {
		x, y := firings[a], firings[b]
		return tLess(x.node.index, y.node.index, x.attempt, y.attempt, x.kind, y.kind, x.r, y.r)
	})
	// Firings are judged against the tree as the results left it: they
	// are applied, then it settles. (Only a root that is a leaf settles
	// at once when it expires, and then later firings find the job done.)
	doneF := o.root.status().Settled()
	for _, f := range firings {
		var reason job.IgnoreReason
		pending := false
		for _, t := range o.pending() {
			if t.node == f.node && t.kind == f.kind && (f.kind != 1 || f.attempt == t.node.attempt+1) {
				pending = true
			}
		}
		switch {
		case doneF || o.root.kind == ast.KindAct && o.root.status().Settled():
			reason = job.IgnoredJobDone
		case f.kind == 3 && (o.cancel != "" || f.r.Error == ""):
			reason = job.IgnoredDuplicate
		case f.kind != 3 && !pending:
			reason = job.IgnoredTimer
		}
		if reason != 0 {
			o.ignored = append(o.ignored, propIgnored{f.r.ActionID, reason})
			continue
		}
		o.tick(f.r.At)
		o.applied = append(o.applied, f.r)
		switch f.kind {
		case 1:
			f.node.fired = true
		case 2:
			o.expire(f.node)
		case 3:
			o.cancel = f.r.Error
			if !o.root.expired {
				o.expire(o.root)
			}
		}
	}
	o.advance()
	o.endStep()
}

// tLess is the canonical order of a batch: node in tree order, attempt,
// timer kind, error, output, kind, finality, time, ID as written.
func tLess(nx, ny, ax, ay, kx, ky int, x, y job.Result) bool {
	switch {
	case nx != ny:
		return nx < ny
	case ax != ay:
		return ax < ay
	case kx != ky:
		return kx < ky
	case x.Error != y.Error:
		return x.Error < y.Error
	case string(x.Output) != string(y.Output):
		return string(x.Output) < string(y.Output)
	case x.Kind != y.Kind:
		return x.Kind < y.Kind
	case x.Final != y.Final:
		return !x.Final
	case !x.At.Equal(y.At):
		return x.At.Before(y.At)
	}
	return x.ActionID < y.ActionID
}

func (o *tOracle) tick(at time.Time) {
	if n := tNano(at); n > o.clock {
		o.clock = n
	}
}

func tNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// adopt takes the reducer's due times for the retries whose jitter the
// oracle knows only as a range, once each is checked to be in its range.
func (o *tOracle) adopt(ts []job.Timer) error {
	for _, n := range o.armedR {
		if n.dueExact || !n.waiting || !n.armed {
			continue
		}
		id := tShowPath(n.path) + "@retry#" + strconv.Itoa(n.attempt+1)
		for _, t := range ts {
			if t.ID != id {
				continue
			}
			d := t.Due.UnixNano()
			if d < n.lo || d > n.hi {
				return fmt.Errorf("%s due %v, outside the jitter's range [%v, %v]", id, t.Due, time.Unix(0, n.lo).UTC(), time.Unix(0, n.hi).UTC())
			}
			n.due, n.dueExact = d, true
		}
	}
	return nil
}

// tState is a node's state as the timed tests compare it.
type tState struct {
	Path    string
	Kind    string
	Status  string
	Attempt int
	Output  string
	Error   string
	Failure string // "path (action): message [kind] +others"
	Retry   string // the next attempt's due time, for a waiting leaf

}

func tFailureString(path, action, msg, kind string, others int) string {
	return fmt.Sprintf("%s (%s): %q [%s] +%d", path, action, msg, kind, others)
}

func tTime(n int64) string { return time.Unix(0, n).UTC().Format(time.RFC3339Nano) }

func (o *tOracle) states() []tState {
	var ss []tState
	for _, n := range o.nodes {
		st := n.status()
		s := tState{Path: n.path, Kind: n.kind.String(), Status: st.String()}
		if n.kind == ast.KindAct {
			s.Attempt = n.attempt
			if len(n.results) > 0 && (st.Settled() || n.waiting) {
				s.Output, s.Error = string(n.last().Output), propStoredMsg(n.last().Msg)
			}
			if n.waiting && n.armed && !n.fired {
				s.Retry = tTime(n.due)
			}
		}
		if st == job.StatusFailed {
			f := n.report()
			s.Failure = tFailureString(f.Path, f.Action, f.Message, f.Kind, f.Others)
		}
		ss = append(ss, s)
	}
	return ss
}

// tStates lists the state of every node of j in pre-order.
func tStates(j job.Job) []tState {
	var ss []tState
	j.Walk(func(n job.NodeInfo) bool {
		s := tState{Path: n.Path, Kind: n.Kind.String(), Status: n.Status.String(), Attempt: n.Attempt, Output: string(n.Output), Error: n.Error}
		if n.Failure != nil {
			s.Failure = tFailureString(n.Failure.Path, n.Failure.Action, n.Failure.Message, n.Failure.Kind, n.Failure.Others)
		}
		if !n.Retry.IsZero() {
			s.Retry = n.Retry.Format(time.RFC3339Nano)
		}
		ss = append(ss, s)
		return true
	})
	return ss
}

// progress returns the leaves settled: succeeded or failed.
func (o *tOracle) progress() int {
	k := 0
	for _, n := range o.nodes {
		if st := n.status(); n.kind == ast.KindAct && (st == job.StatusSucceeded || st == job.StatusFailed) {
			k++
		}
	}
	return k
}
