package job_test

// An oracle for the reducer: a deliberately naive interpreter of the
// workflow language, written from the semantics in doc.go and sharing no
// code with the reducer. It has two parts.
//
// oracleOutcome computes the job's final status from the tree and the
// outcome of every leaf, with no schedule at all: as if every node that
// would run did run. That is the final status for every schedule: a par
// or dag that freezes has a failed child and fails whatever its frozen
// parts would have done, and nothing outside it is ever frozen by it.
//
// oracle is a step-by-step interpreter for one result at a time. It keeps
// only which nodes were entered (or refused: cancelled) and the result of
// each leaf, and derives every other state from the children on demand,
// with no counters. After each result it starts, one at a time and each
// time from a fresh look at the whole tree, the first node in pre-order
// that should start now; a node that would start under a par or dag with a
// failed child (no finally between them) is cancelled instead.
//
// Dags, in both: a child should start once every sibling it is after has
// succeeded (those after nothing start with the dag); a dag freezes like a
// par once a child has failed; it is running while a child runs or should
// start, and once none does, it is failed if a child failed, cancelled if
// one was cancelled, and succeeded otherwise (then every child ran and
// succeeded). An action's inputs are read, when it starts, from the nodes
// they name: a leaf's output, or nil for an inner node; the oracle notes
// any that has not succeeded by then.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
)

// oracleOutcome returns the final status of the node n at path when every
// leaf ends as c says (every wait is sent a signal, every sleep's timer
// fires), or StatusIdle when that depends on the schedule: a map with
// need, some of whose copies fail and enough others succeed, succeeds
// if they succeed before a failure, and fails otherwise.
func oracleOutcome(c propCase, n *ast.Node, path string) job.Status {
	undetermined := false
	st := oracleOutcomeIn(c, n, path, &oracleEnv{names: map[string]string{}, undetermined: &undetermined})
	if undetermined {
		return job.StatusIdle
	}
	return st
}

// oracleEnv is where oracleOutcomeIn finds the path of a named node: the
// names of a map's copy or a loop's iteration first, then those around it.
type oracleEnv struct {
	names        map[string]string
	parent       *oracleEnv
	undetermined *bool // set when the outcome depends on the schedule
}

func (e *oracleEnv) lookup(name string) string {
	for ; e != nil; e = e.parent {
		if p, ok := e.names[name]; ok {
			return p
		}
	}
	panic("oracle: no node named " + name)
}

// oracleOutcomeIn is oracleOutcome with the names seen so far: a map
// reads its over leaf's output (which has succeeded, being sure) and runs
// a copy per element, as a par, or, with need N, succeeds when N copies
// would; a loop runs iterations until its until leaf matches, failing at
// the first failed iteration or after max.
func oracleOutcomeIn(c propCase, n *ast.Node, path string, env *oracleEnv) job.Status {
	if n.Name != "" {
		env.names[n.Name] = path
	}
	kids, edges := propEdges(n)
	st := func(i int) job.Status { return oracleOutcomeIn(c, kids[i], propJoin(path, edges[i]), env) }
	switch n.Kind {
	case ast.KindAct:
		if c.outcome(path).Fail {
			return job.StatusFailed
		}
		return job.StatusSucceeded
	case ast.KindWait, ast.KindSleep:
		return job.StatusSucceeded
	case ast.KindChoice:
		// The cases it selects run as a par; selecting none, it fails.
		out := c.outcome(env.lookup(n.On)).Output
		var elems [][]byte
		if n.Multi {
			var ok bool
			if elems, ok = oracleElements(out); !ok {
				return job.StatusFailed // not_an_array
			}
		} else {
			elems = [][]byte{out}
		}
		var chosen []int
		for i, cs := range n.Cases {
			if slices.ContainsFunc(cs.Values, func(v json.RawMessage) bool {
				return slices.ContainsFunc(elems, func(e []byte) bool { return oracleEqualJSON(e, v) })
			}) {
				chosen = append(chosen, i)
				if !n.Multi {
					break
				}
			}
		}
		if len(chosen) == 0 && len(n.Children) > len(n.Cases) {
			chosen = []int{len(n.Cases)} // else
		}
		if len(chosen) == 0 {
			return job.StatusFailed // no_case
		}
		out2 := job.StatusSucceeded
		for _, i := range chosen {
			if st(i) == job.StatusFailed {
				out2 = job.StatusFailed
			}
		}
		return out2
	case ast.KindMap:
		elems, ok := oracleElements(c.outcome(env.lookup(n.Over)).Output)
		if !ok {
			return job.StatusFailed
		}
		won, failed := 0, false
		for i := range elems {
			k := oracleOutcomeIn(c, &n.Children[0], propJoin(path, fmt.Sprintf("map[%d]", i)), &oracleEnv{names: map[string]string{}, parent: env, undetermined: env.undetermined})
			if k == job.StatusSucceeded {
				won++
			} else {
				failed = true
			}
		}
		if n.Need > 0 && len(elems) > 0 && won >= min(n.Need, len(elems)) {
			if failed {
				*env.undetermined = true
			}
			return job.StatusSucceeded
		}
		if failed {
			return job.StatusFailed
		}
		return job.StatusSucceeded
	case ast.KindLoop:
		for i := range n.Max {
			it := &oracleEnv{names: map[string]string{}, parent: env, undetermined: env.undetermined}
			if oracleOutcomeIn(c, &n.Children[0], propJoin(path, fmt.Sprintf("loop[%d]", i)), it) == job.StatusFailed {
				return job.StatusFailed
			}
			if oracleEqualJSON(c.outcome(it.lookup(n.Until.Output)).Output, n.Until.Equals) {
				return job.StatusSucceeded
			}
		}
		return job.StatusFailed
	case ast.KindSeq:
		for i := range kids {
			if st(i) == job.StatusFailed {
				return job.StatusFailed
			}
		}
		return job.StatusSucceeded
	case ast.KindPar:
		out := job.StatusSucceeded
		for i := range kids {
			if st(i) == job.StatusFailed {
				out = job.StatusFailed
			}
		}
		return out
	case ast.KindRace:
		// Succeeds if and only if some child would on its own (with need
		// N: N children).
		won := 0
		for i := range kids {
			if st(i) == job.StatusSucceeded {
				won++
			}
		}
		if won >= max(n.Need, 1) {
			return job.StatusSucceeded
		}
		return job.StatusFailed
	case ast.KindDag:
		runs := oracleDagRuns(n, st)
		for i := range kids {
			if runs[i] && st(i) == job.StatusFailed {
				return job.StatusFailed
			}
		}
		// No child that runs fails, so every child runs.
		return job.StatusSucceeded
	case ast.KindTry:
		part := func(p *ast.Node, edge string) job.Status { return oracleOutcomeIn(c, p, propJoin(path, edge), env) }
		out := part(n.Body, "body")
		if out == job.StatusFailed && n.Rescue != nil {
			out = part(n.Rescue, "rescue")
		}
		if n.Finally != nil && part(n.Finally, "finally") == job.StatusFailed {
			out = job.StatusFailed
		}
		return out
	}
	panic("oracle: unknown kind")
}

// oracleDagRuns says which children of the dag n run when nothing is ever
// frozen, given the outcome each would have if it ran: a child runs once
// every sibling it is after has run and succeeded.
func oracleDagRuns(n *ast.Node, outcome func(i int) job.Status) []bool {
	index := map[string]int{}
	for i := range n.Children {
		index[n.Children[i].Name] = i
	}
	runs, known := make([]bool, len(n.Children)), make([]bool, len(n.Children))
	var run func(i int) bool
	run = func(i int) bool {
		if !known[i] {
			r := true
			for _, a := range n.Children[i].After {
				j := index[a]
				r = r && run(j) && outcome(j) == job.StatusSucceeded
			}
			runs[i], known[i] = r, true
		}
		return runs[i]
	}
	for i := range n.Children {
		run(i)
	}
	return runs
}

// oracleWouldRun adds to ran the action IDs that run under n at path when
// nothing is ever frozen: a seq runs its children up to the first failure,
// a par all of them, a dag those whose siblings they are after ran and
// succeeded, a try its body, its rescue if the body failed, and its
// finally. Freezing only stops work from starting, so whatever any
// schedule runs must be among these.
func oracleWouldRun(c propCase, n *ast.Node, path string, ran map[string]bool) {
	kids, edges := propEdges(n)
	switch n.Kind {
	case ast.KindAct:
		ran[propActionID(path)] = true
	case ast.KindSeq:
		for i, k := range kids {
			p := propJoin(path, edges[i])
			oracleWouldRun(c, k, p, ran)
			if oracleOutcome(c, k, p) == job.StatusFailed {
				return
			}
		}
	case ast.KindPar, ast.KindRace:
		for i, k := range kids {
			oracleWouldRun(c, k, propJoin(path, edges[i]), ran)
		}
	case ast.KindDag:
		runs := oracleDagRuns(n, func(i int) job.Status { return oracleOutcome(c, kids[i], propJoin(path, edges[i])) })
		for i, k := range kids {
			if runs[i] {
				oracleWouldRun(c, k, propJoin(path, edges[i]), ran)
			}
		}
	case ast.KindTry:
		oracleWouldRun(c, n.Body, propJoin(path, "body"), ran)
		if n.Rescue != nil && oracleOutcome(c, n.Body, propJoin(path, "body")) == job.StatusFailed {
			oracleWouldRun(c, n.Rescue, propJoin(path, "rescue"), ran)
		}
		if n.Finally != nil {
			oracleWouldRun(c, n.Finally, propJoin(path, "finally"), ran)
		}
	}
}

// oracleNode is a node of the step-by-step oracle.
type oracleNode struct {
	kind                  ast.Kind
	path                  string
	name                  string
	action                string
	inputs                []string      // act: the names of its inputs
	parent                *oracleNode   // nil for the root
	kids                  []*oracleNode // seq, par and dag
	after                 []*oracleNode // child of a dag: the siblings it is after
	body, rescue, finally *oracleNode   // try

	entered   bool        // its parent started it, or tried to
	cancelled bool        // it was refused: a frozen par stopped it; or, a leaf, a race won by another child stopped it in flight
	winner    *oracleNode // race: the child that won it, once one did
	stopped   bool        // act: dispatched, then stopped by a race won by another child
	done      bool        // act: its result came
	out       propOutcome // act: that result
	at        int         // the step at which it got its result or was cancelled; for a dag whose every child was skipped, the step whose round ended it

	guard    *ast.Guard // dag child: its guard, or nil
	choice   *ast.Node  // choice: as written
	skipped  bool       // a case its choice did not select, or under one
	chose    []bool     // choice: which children it selected, once entered
	late     bool       // choice: selected nothing; fails once the round that entered it is over
	began    int        // act: the step that dispatched it
	lateDone bool       // dag: every child was skipped, and the round that began it is over
	failKind string     // choice: selected nothing: no_case or not_an_array; map: not_an_array or map_too_large; loop: loop_limit; wait, sleep: withdrawn
	failMsg  string     // choice, map, loop, wait, sleep: the message of that failure

	o         *oracle
	scope     *oracleScope  // where the names it reads are found first
	tmpl      *ast.Node     // map: its template; loop: its body
	signal    string        // wait: the name of the signal it waits for
	transient bool          // wait: takes only signals that arrive while it runs
	sleep     time.Duration // sleep: how long
	due       time.Time     // sleep: when its timer is due
	startSeq  int           // wait: its place among the waits begun (1 for the first)
	takeKept  bool          // wait: began while a signal of its name was kept: takes the oldest once its round is over
	gaveUp    bool          // wait or sleep: withdrawn, which fails it after the other failures of its step
}

// oracleScope holds the names of one map copy or loop iteration (or,
// without a parent, of the tree outside every map and loop): a name read
// inside is the node of the same copy, else of the enclosing ones, else
// outside (the note's rule 17).
type oracleScope struct {
	names  map[string]*oracleNode
	parent *oracleScope
	copy   bool   // a map's copy, whose element and index item and index read
	item   []byte // the element, compact JSON
	index  int
}

func (s *oracleScope) lookup(name string) *oracleNode {
	for ; s != nil; s = s.parent {
		if n, ok := s.names[name]; ok {
			return n
		}
	}
	panic("oracle: no node named " + name)
}

// oracleSignal is a signal sent to the oracle's job.
type oracleSignal struct {
	Name, ID string
	Payload  []byte
}

// oracle runs one workflow for a propCase.
type oracle struct {
	c      propCase
	root   *oracleNode
	leaves map[string]*oracleNode // by action ID
	global *oracleScope           // the names outside every map and loop
	step   int
	starts int                    // waits begun so far
	clock  time.Time              // the latest time of a batch
	kept   []oracleSignal         // signals no wait took, oldest first
	seen   map[string]bool        // every signal applied, by name/ID
	queue  []string               // outstanding action IDs, in dispatch order
	ran    []string               // every dispatched action ID, in dispatch order
	inputs map[string][]job.Input // the inputs of every dispatched action, by ID
	bad    []string               // inputs read from a node that had not succeeded
	// follows is the failure every dispatched action follows
	// (Action.Failure), by ID: worked out once the step that started it
	// has settled, from the tree as it stands then.
	follows map[string]*job.Failure
}

func (o *oracle) build(n *ast.Node, path string, sc *oracleScope) *oracleNode {
	on := &oracleNode{kind: n.Kind, path: path, name: n.Name, action: n.Action, inputs: n.Inputs, guard: n.When, o: o, scope: sc}
	if n.Name != "" {
		sc.names[n.Name] = on
	}
	part := func(p *ast.Node, edge string) *oracleNode {
		if p == nil {
			return nil
		}
		k := o.build(p, propJoin(path, edge), sc)
		k.parent = on
		return k
	}
	switch n.Kind {
	case ast.KindWait:
		on.signal, on.transient = n.Signal, n.Transient
	case ast.KindSleep:
		on.sleep = n.Sleep
	case ast.KindMap, ast.KindLoop:
		on.choice, on.tmpl = n, &n.Children[0]
		if n.Kind == ast.KindLoop {
			o.iterate(on) // iteration 0 is there from the start, idle
		}
	case ast.KindAct:
		o.leaves[propActionID(path)] = on
	case ast.KindSeq, ast.KindPar, ast.KindDag, ast.KindRace, ast.KindChoice:
		on.choice = n
		for i := range n.Children {
			on.kids = append(on.kids, part(&n.Children[i], fmt.Sprintf("%s[%d]", n.Kind, i)))
		}
		if n.Kind == ast.KindDag {
			for i, k := range on.kids {
				for _, a := range n.Children[i].After {
					for _, s := range on.kids {
						if s.name == a && !slices.Contains(k.after, s) {
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

// oracleStart builds the oracle for c and starts the workflow.
func oracleStart(c propCase) *oracle {
	o := &oracle{c: c, leaves: map[string]*oracleNode{}, global: &oracleScope{names: map[string]*oracleNode{}}, inputs: map[string][]job.Input{}, follows: map[string]*job.Failure{},
		seen: map[string]bool{}, clock: c.Start}
	o.root = o.build(&c.Tree, "", o.global)
	o.enter(o.root, false)
	o.advance()
	o.noteFollows(0)
	return o
}

// noteFollows works out the failure each action dispatched since
// o.ran[from] follows.
func (o *oracle) noteFollows(from int) {
	for _, id := range o.ran[from:] {
		o.follows[id] = o.leaves[id].followed()
	}
}

// followed returns the failure the action of the leaf n follows (doc.go,
// Data; docs/language.md, Failures): the nearest rescue or finally above
// it decides. In a rescue, the failure of the body it handles. In a
// finally, the failure the try carries when the finally starts: the
// rescue's if it failed, the body's if the body failed and no rescue ran
// (none, or it was cancelled); nothing if the body succeeded or was
// cancelled, or a rescue succeeded. Nothing outside every rescue and
// finally.
func (n *oracleNode) followed() *job.Failure {
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
		leaf, others := from.failure()
		f := &job.Failure{Path: leaf.path, Action: leaf.action, Message: propStoredMsg(leaf.out.Msg), Others: others}
		if leaf.failKind != "" {
			f.Message, f.Kind = leaf.failMsg, leaf.failKind
		}
		if r := from.outermostFailedRace(leaf); r != nil {
			f.Message, f.Kind = r.raceMessage(), r.raceKind() // a failed race's message lists its children's
		}
		return f
	}
	return nil
}

// children lists n's children in pre-order (try: body, rescue, finally).
func (n *oracleNode) children() []*oracleNode {
	if n.kind != ast.KindTry {
		return n.kids
	}
	var ks []*oracleNode
	for _, k := range []*oracleNode{n.body, n.rescue, n.finally} {
		if k != nil {
			ks = append(ks, k)
		}
	}
	return ks
}

// ready reports whether the dag child n should start: every sibling it is
// after has succeeded.
func (n *oracleNode) ready() bool {
	for _, a := range n.after {
		if st := a.status(); st != job.StatusSucceeded && st != job.StatusSkipped {
			return false
		}
	}
	return true
}

// status derives n's state from its children.
func (n *oracleNode) status() job.Status {
	switch {
	case n.skipped:
		return job.StatusSkipped
	case !n.entered:
		return job.StatusIdle
	case n.cancelled:
		return job.StatusCancelled
	}
	switch n.kind {
	case ast.KindAct, ast.KindWait, ast.KindSleep:
		switch {
		case !n.done:
			return job.StatusRunning
		case n.out.Fail:
			return job.StatusFailed
		}
		return job.StatusSucceeded
	case ast.KindSeq:
		// Runs its children in order; the first that does not succeed decides.
		for _, k := range n.kids {
			switch s := k.status(); s {
			case job.StatusSucceeded:
			case job.StatusIdle:
				return job.StatusRunning // about to start it
			default:
				return s
			}
		}
		return job.StatusSucceeded
	case ast.KindPar, ast.KindChoice, ast.KindMap:
		switch {
		case n.late:
			return job.StatusRunning
		case n.failKind != "":
			return job.StatusFailed
		case n.kind == ast.KindMap && n.choice.Need > 0:
			return n.mapNeedStatus()
		}
		return n.parStatus()
	case ast.KindRace:
		return n.needStatus()
	case ast.KindLoop:
		// As a seq of its iterations, the last deciding; once it has
		// succeeded, its until decides whether the loop succeeds, fails
		// (after max iterations) or goes on.
		last := n.kids[len(n.kids)-1]
		switch s := last.status(); s {
		case job.StatusIdle:
			return job.StatusRunning
		case job.StatusSucceeded:
			switch {
			case n.untilMatches(last):
				return job.StatusSucceeded
			case len(n.kids) >= n.choice.Max:
				return job.StatusFailed
			}
			return job.StatusRunning // about to start the next
		default:
			return s
		}
	case ast.KindDag:
		// Running while a child runs or should start; then, as a par, over
		// the children that ran. One that never started is after one that
		// did not succeed. A dag whose every child was skipped succeeds
		// once the round that began it is over.
		if !n.lateDone && !slices.ContainsFunc(n.kids, func(k *oracleNode) bool { return !k.skipped }) {
			return job.StatusRunning
		}
		failed, cancelled := false, false
		for _, k := range n.kids {
			switch k.status() {
			case job.StatusIdle:
				if k.ready() {
					return job.StatusRunning // about to start it
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
				// The body's failure stands.
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
	panic("oracle: unknown kind")
}

// parStatus is the status of the par n (or a choice's, or a map's
// without need) from its children: running while one runs or is to
// start; then failed if one failed, cancelled if one was, else succeeded.
func (n *oracleNode) parStatus() job.Status {
	failed, cancelled := false, false
	for _, k := range n.kids {
		switch k.status() {
		case job.StatusIdle, job.StatusRunning:
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
}

// needStatus is the status of the race n (or of a map with need): running
// while a child runs (a loser in its finally block, once it is won); then
// succeeded if won, else as a par. A map whose copies all succeeded, too
// few for its need, fails.
func (n *oracleNode) needStatus() job.Status {
	failed, cancelled := false, false
	for _, k := range n.kids {
		switch k.status() {
		case job.StatusIdle, job.StatusRunning:
			return job.StatusRunning
		case job.StatusFailed:
			failed = true
		case job.StatusCancelled:
			cancelled = true
		}
	}
	succeeded := n.succeeded() >= n.need()
	switch {
	case n.winner != nil:
		return job.StatusSucceeded
	case succeeded:
		return job.StatusRunning // a child won it: about to be decided
	case failed:
		return job.StatusFailed
	case cancelled:
		return job.StatusCancelled
	}
	panic("oracle: a race with no child settled")
}

// untilMatches reports whether the until leaf of the loop n, in its
// iteration it (which has succeeded), output the value that ends it.
func (n *oracleNode) untilMatches(it *oracleNode) bool {
	return oracleEqualJSON(it.scope.lookup(n.choice.Until.Output).out.Output, n.choice.Until.Equals)
}

// oracleEqualJSON compares an output with a value written in the tree,
// naively: both decoded with encoding/json (numbers as float64, the
// tests' numbers being small) and compared with reflect.DeepEqual; an
// empty output is null, one that is not JSON matches nothing.
func oracleEqualJSON(out, want []byte) bool {
	if len(out) == 0 {
		out = []byte("null")
	}
	var v, w any
	if json.Unmarshal(out, &v) != nil || json.Unmarshal(want, &w) != nil {
		return false
	}
	return reflect.DeepEqual(v, w)
}

// oracleElements decodes the output a map maps, naively: a JSON array of
// at most 10,000 elements, each returned as compact JSON, or false.
func oracleElements(out []byte) ([][]byte, bool) {
	var raw []json.RawMessage
	if json.Unmarshal(out, &raw) != nil || raw == nil || len(raw) > 10000 {
		return nil, false
	}
	elems := make([][]byte, len(raw))
	for i, r := range raw {
		var b bytes.Buffer
		if json.Compact(&b, r) != nil {
			panic("oracle: an element that does not compact")
		}
		elems[i] = b.Bytes()
	}
	return elems, true
}

// settledAt is when n settled: twice the step, plus one for a wait or
// sleep withdrawn, which fails after the other failures of its step.
func (n *oracleNode) settledAt() int {
	switch {
	case n.kind == ast.KindLoop && !n.cancelled:
		return n.kids[len(n.kids)-1].settledAt()
	case n.kind == ast.KindMap && len(n.kids) == 0:
		return 2 * n.at // over an empty array: once its round was over
	case n.kind == ast.KindDag && n.lateDone:
		return 2 * n.at // every child skipped: once its round was over
	case n.cancelled || n.kind == ast.KindAct || n.kind == ast.KindWait || n.kind == ast.KindSleep || n.failKind != "":
		if n.gaveUp {
			return 2*n.at + 1
		}
		return 2 * n.at
	}
	switch n.kind {
	case ast.KindSeq:
		for _, k := range n.kids {
			if k.status() != job.StatusSucceeded {
				return k.settledAt()
			}
		}
		return n.kids[len(n.kids)-1].settledAt()
	case ast.KindPar, ast.KindDag, ast.KindRace, ast.KindChoice, ast.KindMap:
		last := 0
		for _, k := range n.kids {
			if k.entered {
				last = max(last, k.settledAt())
			}
		}
		return last
	default: // try
		switch {
		case n.finally != nil:
			return n.finally.settledAt()
		case n.body.status() == job.StatusFailed && n.rescue != nil:
			return n.rescue.settledAt()
		}
		return n.body.settledAt()
	}
}

// failedAt is when the failed node n failed, for the node around it:
// the step it settled in, twice, plus one when the failure it reports is
// a wait's or a sleep's withdrawal in that step, which comes after the
// other failures of its step (doc.go: "fails after the failures of its
// batch").
func (n *oracleNode) failedAt() int {
	leaf, _ := n.failure()
	at := n.settledAt() / 2 * 2
	if leaf.gaveUp && 2*leaf.at == at {
		at++ // withdrawn in the step n settled in: after that step's other failures
	}
	return at
}

// failure returns the failed leaf that n's failure reports and how many
// other failures it counts. n must have failed.
func (n *oracleNode) failure() (*oracleNode, int) {
	switch {
	case n.failKind != "":
		return n, 0 // a choice or map failed as it began, a loop at its limit, a wait or sleep withdrawn
	}
	switch n.kind {
	case ast.KindAct:
		return n, 0
	case ast.KindLoop:
		return n.kids[len(n.kids)-1].failure()
	case ast.KindSeq:
		for _, k := range n.kids {
			if k.status() == job.StatusFailed {
				return k.failure()
			}
		}
	case ast.KindPar, ast.KindDag, ast.KindChoice, ast.KindMap:
		// The child that failed first is the cause; every other failure
		// under it, and every failure counted below, is one more.
		var first *oracleNode
		total := 0
		for _, k := range n.kids {
			if k.status() != job.StatusFailed {
				continue
			}
			_, others := k.failure()
			total += 1 + others
			if first == nil || k.failedAt() < first.failedAt() {
				first = k
			}
		}
		leaf, _ := first.failure()
		return leaf, total - 1
	case ast.KindRace:
		return n.needFailure()
	case ast.KindTry:
		out, from := n.body.status(), n.body
		if out == job.StatusFailed && n.rescue != nil {
			switch n.rescue.status() {
			case job.StatusSucceeded:
				out = job.StatusSucceeded
			case job.StatusFailed:
				from = n.rescue // its failure replaces the body's
			}
		}
		if out == job.StatusFailed {
			return from.failure()
		}
		return n.finally.failure() // only the finally can have failed it
	}
	panic("oracle: failure of a node that did not fail")
}

// needFailure is the failure of the race n (or of a map with need): the
// earliest failed child in tree order is the cause, whenever it came;
// every other failure is one more.
func (n *oracleNode) needFailure() (*oracleNode, int) {
	var first *oracleNode
	total := 0
	for _, k := range n.kids {
		if k.status() != job.StatusFailed {
			continue
		}
		_, others := k.failure()
		total += 1 + others
		if first == nil {
			first = k
		}
	}
	leaf, _ := first.failure()
	return leaf, total - 1
}

// oracleWant is a node that should start now, and whether a frozen par
// stops it.
type oracleWant struct {
	n      *oracleNode
	frozen bool
}

// wanted adds to ws, in pre-order, the nodes under the entered node n that
// should start now and have not. frozen tells whether a par or dag above n
// has a failed child with no finally between them.
func (n *oracleNode) wanted(frozen bool, ws *[]oracleWant) {
	in := func(k *oracleNode, frozen bool) {
		switch {
		case k.skipped:
		case !k.entered:
			*ws = append(*ws, oracleWant{k, frozen})
		case !k.cancelled && k.kind != ast.KindAct:
			k.wanted(frozen, ws)
		}
	}
	if n.kind == ast.KindMap || n.kind == ast.KindLoop {
		n.wantedGrowing(frozen, ws, in)
		return
	}
	switch n.kind {
	case ast.KindSeq:
		for _, k := range n.kids {
			if !k.entered || k.status() != job.StatusSucceeded {
				in(k, frozen) // the first child that has not succeeded
				return
			}
		}
	case ast.KindPar, ast.KindChoice:
		kf := frozen
		for _, k := range n.kids {
			if k.status() == job.StatusFailed {
				kf = true
			}
		}
		running := 0
		for _, k := range n.kids {
			if k.entered && !k.status().Settled() {
				running++
			}
		}
		for _, k := range n.kids {
			switch {
			case k.skipped:
			case !k.entered && n.kind == ast.KindPar && n.choice.Limit > 0 && running >= n.choice.Limit:
				return // a limited par starts no more than its limit
			case !k.entered:
				running++
				in(k, kf)
			default:
				in(k, kf)
			}
		}
	case ast.KindRace:
		// Nothing new starts in a race once it is won.
		for _, k := range n.kids {
			in(k, frozen || n.winner != nil)
		}
	case ast.KindDag:
		kf := frozen
		for _, k := range n.kids {
			if k.status() == job.StatusFailed {
				kf = true
			}
		}
		for _, k := range n.kids {
			if k.entered || k.ready() {
				in(k, kf)
			}
		}
	case ast.KindTry:
		in(n.body, frozen)
		if !n.body.entered || !n.body.status().Settled() {
			return
		}
		if n.body.status() == job.StatusFailed && n.rescue != nil {
			in(n.rescue, frozen)
			if !n.rescue.entered || !n.rescue.status().Settled() {
				return
			}
		}
		if n.finally != nil {
			in(n.finally, false) // a finally runs, frozen or not
		}
	}
}

// enter starts n, or cancels it if a frozen par or dag stops it. An
// action reads its inputs now.
func (o *oracle) enter(n *oracleNode, frozen bool) {
	n.entered = true
	if frozen {
		n.cancelled, n.at = true, o.step
		return
	}
	if n.guard != nil && !o.guardHolds(n) {
		// A dag child whose guard is false is skipped, not entered.
		n.entered = false
		oracleSkip(n)
		n.at = o.step
		return
	}
	switch n.kind {
	case ast.KindChoice:
		o.choose(n)
	case ast.KindMap:
		o.expand(n)
	case ast.KindWait:
		o.starts++
		n.began, n.startSeq = o.step, o.starts
		n.takeKept = !n.transient && slices.ContainsFunc(o.kept, func(s oracleSignal) bool { return s.Name == n.signal })
	case ast.KindSleep:
		n.began, n.due = o.step, o.clock.Add(n.sleep)
	case ast.KindAct:
		id := propActionID(n.path)
		n.began = o.step
		o.queue = append(o.queue, id)
		o.ran = append(o.ran, id)
		var ins []job.Input
		for _, name := range n.inputs {
			in := job.Input{Name: name}
			if name == ast.InputItem || name == ast.InputIndex {
				// The innermost copy's element or index.
				sc := n.scope
				for !sc.copy {
					sc = sc.parent
				}
				in.Output = sc.item
				if name == ast.InputIndex {
					in.Output = []byte(strconv.Itoa(sc.index))
				}
				ins = append(ins, in)
				continue
			}
			src := n.scope.lookup(name)
			if st := src.status(); st != job.StatusSucceeded {
				o.bad = append(o.bad, fmt.Sprintf("%s starts at step %d with input %q (%s) %s", id, o.step, name, ast.ShowPath(src.path), st))
			}
			if (src.kind == ast.KindAct || src.kind == ast.KindWait) && src.done {
				in.Output = src.out.Output
			}
			ins = append(ins, in)
		}
		o.inputs[id] = ins
	}
}

// advance starts whatever should start. Settling comes first: the races
// a child has won are decided (decide), and as long as a node that should
// start is stopped by a frozen par or a won race, it is cancelled (which
// may settle more, freeze more pars and win more races); only then do the
// others start, in pre-order. Starting settles nothing, so the order among them
// changes only the order of the actions.
func (o *oracle) advance() {
	for {
		o.markLoops(o.root)
		var ws []oracleWant
		o.root.wanted(false, &ws)
		frozen := slices.IndexFunc(ws, func(x oracleWant) bool { return x.frozen })
		// A dag child whose guard is false is skipped, which settles it:
		// as cancellations, before anything starts.
		skip := slices.IndexFunc(ws, func(x oracleWant) bool { return x.n.guard != nil && !o.guardHolds(x.n) })
		switch {
		case frozen >= 0:
			o.enter(ws[frozen].n, true)
		case o.decideOne():
			// What the cancellations settled may have won a race: the
			// innermost is decided once they have all been made, and
			// before any guard is read: a guard is read when its child
			// would start, and nothing starts in a race's loser. A race
			// (or a map with a need) that its children won in this batch
			// is decided before the freezes' withdrawals too: a wait it
			// stops is a loser's, which does not fail it.
		case o.withdrawOne(o.root):
			// A running wait or sleep that a freeze stops is withdrawn: it
			// fails, which may freeze more.
		case skip >= 0:
			o.enter(ws[skip].n, false)
		case len(ws) == 0 && o.failLate():
			// The choices that selected nothing fail once nothing else
			// is to start: what their round started stays started.
		case len(ws) == 0:
			return
		default:
			o.enter(ws[0].n, false)
		}
	}
}

// deliver gives the outstanding action id its outcome, as one step.
func (o *oracle) deliver(id string) { o.deliverBatch([]string{id}) }

// deliverBatch gives outstanding actions their outcomes, all in one step:
// every result is recorded before anything starts.
func (o *oracle) deliverBatch(ids []string) { o.deliverEvents(time.Time{}, ids, nil, nil) }

// deliverEvents applies one batch at time at (the time of each of its
// results, signals and firings; the zero time leaves the clock as it
// is): the outcomes of the outstanding actions ids, then the signals in
// order of ID, then name, each taken by the running wait of its name that
// began first or else kept (a repeated name/ID is ignored), then the
// firings of the timers of the sleeps at the paths fires (one not running
// is ignored); only then does anything start.
func (o *oracle) deliverEvents(at time.Time, ids []string, sigs []oracleSignal, fires []string) {
	o.step++
	mark := len(o.ran)
	for _, id := range ids {
		i := slices.Index(o.queue, id)
		if i < 0 {
			panic("oracle: " + id + " is not outstanding")
		}
		o.queue = slices.Delete(o.queue, i, i+1)
		n := o.leaves[id]
		n.done, n.out, n.at = true, o.c.outcome(n.path), o.step
	}
	if at.After(o.clock) && len(ids) > 0 {
		o.clock = at
	}
	sigs = slices.Clone(sigs)
	slices.SortStableFunc(sigs, func(a, b oracleSignal) int {
		if a.ID != b.ID {
			return strings.Compare(a.ID, b.ID)
		}
		return strings.Compare(a.Name, b.Name)
	})
	for _, s := range sigs {
		if o.seen[s.Name+"/"+s.ID] {
			continue
		}
		o.seen[s.Name+"/"+s.ID] = true
		if at.After(o.clock) {
			o.clock = at
		}
		s.Payload = oracleCompact(s.Payload)
		if w := o.waitFor(s.Name); w != nil {
			w.done, w.out, w.at = true, propOutcome{Output: s.Payload}, o.step
			continue
		}
		o.kept = append(o.kept, s)
	}
	// The races the results and signals won are decided before the
	// firings apply: a success from a result beats one that only follows
	// from a firing of the same batch (doc.go, Races). What a decision
	// stops settles with it (a loser's next step is cancelled), which may
	// decide the race around it.
	// (As advance does: what a freeze or a won race stops from starting
	// is cancelled first, then the innermost race won is decided.)
	for len(fires) > 0 {
		var ws []oracleWant
		o.root.wanted(false, &ws)
		if i := slices.IndexFunc(ws, func(x oracleWant) bool { return x.frozen }); i >= 0 {
			o.enter(ws[i].n, true)
			continue
		}
		if !o.decideOne() {
			break
		}
	}
	for _, p := range fires {
		n := o.sleeping()[p]
		if n == nil {
			continue
		}
		if at.After(o.clock) {
			o.clock = at
		}
		n.done, n.at = true, o.step
	}
	o.advance()
	o.noteFollows(mark)
}

// oracleCompact is a payload as a wait outputs it: compact JSON, null as
// nothing.
func oracleCompact(p []byte) []byte {
	var b bytes.Buffer
	if len(p) == 0 || json.Compact(&b, p) != nil || b.String() == "null" {
		return nil
	}
	return b.Bytes()
}

// waitFor returns the running wait for the signal name that began first,
// or nil.
func (o *oracle) waitFor(name string) *oracleNode {
	var best *oracleNode
	o.visit(func(n *oracleNode) {
		if n.kind == ast.KindWait && n.signal == name && n.status() == job.StatusRunning && (best == nil || n.startSeq < best.startSeq) {
			best = n
		}
	})
	return best
}

// sleeping returns the running sleeps, by path.
func (o *oracle) sleeping() map[string]*oracleNode {
	m := map[string]*oracleNode{}
	o.visit(func(n *oracleNode) {
		if n.kind == ast.KindSleep && n.status() == job.StatusRunning {
			m[n.path] = n
		}
	})
	return m
}

// runningWaits returns the paths of the running waits, and the signal
// each waits for.
func (o *oracle) runningWaits() map[string]string {
	m := map[string]string{}
	o.visit(func(n *oracleNode) {
		if n.kind == ast.KindWait && n.status() == job.StatusRunning {
			m[n.path] = n.signal
		}
	})
	return m
}

// visit calls f for every node in pre-order.
func (o *oracle) visit(f func(n *oracleNode)) {
	var walk func(n *oracleNode)
	walk = func(n *oracleNode) {
		f(n)
		for _, k := range n.children() {
			walk(k)
		}
	}
	walk(o.root)
}

// decideOne decides the innermost race that a child has won by now and
// that has no winner yet (a race comes after its descendants in
// post-order), from a fresh look at the tree: the earliest child in tree
// order that has succeeded wins, and the actions in flight in the others,
// outside the finally blocks of tries they entered, are stopped. It
// reports whether it decided one. A decision can make a race around it
// succeed: advance calls it again, once it has cancelled what the
// decision forbids.
func (o *oracle) decideOne() bool {
	{
		var races []*oracleNode
		var visit func(n *oracleNode)
		visit = func(n *oracleNode) {
			if !n.entered || n.cancelled {
				return
			}
			for _, k := range n.children() {
				visit(k)
			}
			if (n.kind == ast.KindRace || n.kind == ast.KindMap && n.choice.Need > 0 && !n.anyFailed()) && n.winner == nil {
				races = append(races, n) // after its descendants: innermost first
			}
		}
		visit(o.root)
		decided := false
		for _, r := range races {
			for _, k := range r.kids {
				if k.status() == job.StatusSucceeded && r.succeeded() >= r.need() {
					r.winner = k
					for _, l := range r.kids {
						if l != k {
							o.stop(l)
						}
					}
					decided = true
					break
				}
			}
			if decided {
				break
			}
		}
		return decided
	}
}

// stop stops the actions in flight under n, a loser of a race, except
// inside the finally block of a try whose finally has started.
func (o *oracle) stop(n *oracleNode) {
	switch {
	case !n.entered || n.cancelled:
	case n.kind == ast.KindWait || n.kind == ast.KindSleep:
		if !n.done {
			n.withdraw()
		}
	case n.kind == ast.KindAct:
		if !n.done {
			n.cancelled, n.stopped, n.at = true, true, o.step
			id := propActionID(n.path)
			i := slices.Index(o.queue, id)
			o.queue = slices.Delete(o.queue, i, i+1)
			if n.began == o.step {
				// Dispatched in this very step, before a node that
				// settled as it began won the race: withdrawn, never sent.
				n.stopped = false
				if r := slices.Index(o.ran, id); r >= 0 {
					o.ran = slices.Delete(o.ran, r, r+1)
				}
			}
		}
	case n.kind == ast.KindTry:
		o.stop(n.body)
		if n.rescue != nil {
			o.stop(n.rescue)
		}
		// Its finally, started or to start, runs in full.
	default:
		for _, k := range n.kids {
			o.stop(k)
		}
	}
}

// raceMessage is the failure message of the race n, failed because every
// child did: each child's failure in tree order, a child stopped
// otherwise by its status.
func (n *oracleNode) raceMessage() string {
	var parts []string
	for _, k := range n.kids {
		if k.status() != job.StatusFailed {
			parts = append(parts, k.path+": "+k.status().String())
			continue
		}
		leaf, _ := k.failure()
		msg := propStoredMsg(leaf.out.Msg)
		if leaf.failKind != "" {
			msg = leaf.failMsg
		}
		if r := k.outermostFailedRace(leaf); r != nil {
			msg = r.raceMessage()
		}
		if len(msg) > 80 {
			msg = msg[:80] + "..." // the tests' messages are ASCII
		}
		if leaf.action == "" {
			parts = append(parts, leaf.path+": "+msg)
		} else {
			parts = append(parts, leaf.path+" ("+leaf.action+"): "+msg)
		}
	}
	if n.need() > 1 {
		return fmt.Sprintf("fewer than %d children succeeded: ", n.need()) + strings.Join(parts, "; ")
	}
	return "every child failed: " + strings.Join(parts, "; ")
}

// raceKind is the kind of the failure of the race n, failed because
// every child did: the kind its children's failures share, if they all
// failed with the same, else none.
func (n *oracleNode) raceKind() string {
	shared := ""
	for i, k := range n.kids {
		if k.status() != job.StatusFailed {
			return ""
		}
		leaf, _ := k.failure()
		kind := leaf.failKind
		if r := k.outermostFailedRace(leaf); r != nil {
			kind = r.raceKind()
		}
		if i == 0 {
			shared = kind
		} else if kind != shared {
			return ""
		}
	}
	return shared
}

// outermostFailedRace returns the outermost race from leaf up to n (n
// included) that failed, or nil.
func (n *oracleNode) outermostFailedRace(leaf *oracleNode) *oracleNode {
	var r *oracleNode
	for c := leaf; c != nil; c = c.parent {
		if c.kind == ast.KindRace && c.status() == job.StatusFailed {
			r = c
		}
		if c == n {
			break
		}
	}
	return r
}

// states lists every node's state in pre-order, as propStates does for a job.
func (o *oracle) states() []propNodeState {
	var ss []propNodeState
	var visit func(n *oracleNode)
	visit = func(n *oracleNode) {
		s := propNodeState{Path: n.path, Name: n.name, Kind: n.kind.String(), Status: n.status().String()}
		if n.kind == ast.KindAct && n.entered && (!n.cancelled || n.stopped) {
			s.Attempt = 1
		}
		if n.done {
			s.Output, s.Error = string(n.out.Output), propStoredMsg(n.out.Msg)
		}
		if n.kind == ast.KindRace && n.name != "" && n.winner != nil && n.winner.kind == ast.KindAct && n.status() == job.StatusSucceeded {
			s.Output = string(n.winner.out.Output) // a named race keeps its winning leaf's output
		}
		if (n.kind == ast.KindMap || n.kind == ast.KindLoop) && n.name != "" {
			s.Output = string(n.output()) // a named map or loop keeps its output
		}
		switch n.kind {
		case ast.KindLoop:
			s.Iteration = len(n.kids) - 1
		case ast.KindMap:
			s.Copies = len(n.kids)
		}
		if n.status() == job.StatusFailed {
			leaf, others := n.failure()
			msg := propStoredMsg(leaf.out.Msg)
			if leaf.failKind != "" {
				msg = leaf.failMsg
			}
			if r := n.outermostFailedRace(leaf); r != nil {
				msg = r.raceMessage()
			}
			s.Failure = propFailureString(leaf.path, leaf.action, msg, others)
		}
		ss = append(ss, s)
		kids := n.children()
		if n.kind == ast.KindLoop && len(kids) > 0 {
			kids = kids[len(kids)-1:] // a loop shows its last iteration only
		}
		for _, k := range kids {
			visit(k)
		}
	}
	visit(o.root)
	return ss
}

// TestOracleStatus checks the final status of random workflows under
// random schedules, and under the simplest ones, against oracleOutcome, and
// that no schedule runs an action that oracleWouldRun does not.
func TestOracleStatus(t *testing.T) {
	propCheck(t, func(t *rapid.T, shape propShape) {
		c := propDrawAnyCase(t, shape)
		want := oracleOutcome(c, &c.Tree, "")
		may := map[string]bool{}
		oracleWouldRun(c, &c.Tree, "", may)
		for name, choose := range map[string]propChooser{
			"random":      propRandomBatch(t, c),
			"fifo":        propFIFO(c),
			"lifo":        propLIFO(c),
			"all at once": propAllAtOnce(c),
		} {
			run := propPlay(t, c, choose, false)
			if got := run.final().Status(); got != want {
				t.Fatalf("%s schedule: job %s, oracle says %s\n%s", name, got, want, c)
			}
			for _, s := range run.Steps {
				for _, a := range s.Actions {
					if !may[a.ID] {
						t.Fatalf("%s schedule: %s ran, but would not even if nothing were frozen\n%s%s", name, a.ID, c, job.Describe(run.final()))
					}
				}
			}
		}
	})
}

// oracleCheckActions fails unless every action in acts carries the inputs
// the oracle gave it when it started it and the failure the oracle says
// it follows (Action.Failure), and the oracle found every input succeeded
// when it was read.
func oracleCheckActions(t propT, o *oracle, acts []job.Action) {
	t.Helper()
	if len(o.bad) > 0 {
		t.Fatalf("the oracle read inputs that had not succeeded: %v\n%s", o.bad, o.c)
	}
	for _, a := range acts {
		if diff := cmp.Diff(o.inputs[a.ID], a.Inputs); diff != "" {
			t.Fatalf("inputs of %s (-oracle +reducer):\n%s\n%s", a.ID, diff, o.c)
		}
		want, ok := o.follows[a.ID]
		if !ok {
			t.Fatalf("%s: the oracle did not start it\n%s", a.ID, o.c)
		}
		if diff := cmp.Diff(want, a.Failure); diff != "" {
			t.Fatalf("the failure %s follows (-oracle +reducer):\n%s\n%s", a.ID, diff, o.c)
		}
	}
}

// TestOracleFIFO delivers results one at a time, oldest first, to the
// reducer and to the oracle, each on its own: both must dispatch the same
// actions, with the same inputs and following the same failures
// (Action.Failure), in the same order and end with every node in the same
// state, failures included.
func TestOracleFIFO(t *testing.T) {
	propCheck(t, func(t *rapid.T, shape propShape) {
		c := propDrawAnyCase(t, shape)
		o := oracleStart(c)
		for len(o.queue) > 0 {
			o.deliver(o.queue[0])
		}
		if got, want := o.root.status(), oracleOutcome(c, &c.Tree, ""); got != want {
			t.Fatalf("the oracle contradicts itself: stepped to %s, outcome %s\n%s", got, want, c)
		}
		run := propPlay(t, c, propFIFO(c), false)
		var ran []string
		for _, s := range run.Steps {
			ran = append(ran, propIDs(s.Actions)...)
			oracleCheckActions(t, o, s.Actions)
		}
		if diff := cmp.Diff(o.ran, ran); diff != "" {
			t.Fatalf("dispatched actions (-oracle +reducer):\n%s\n%s", diff, c)
		}
		if diff := cmp.Diff(o.states(), propStates(run.final())); diff != "" {
			t.Fatalf("final node states (-oracle +reducer):\n%s\n%s%s", diff, c, job.Describe(run.final()))
		}
	})
}

// TestOracleLockstep delivers results one at a time in random order to the
// reducer and the oracle together, and compares the outstanding actions
// (with their inputs and the failure each follows) and the state of every
// node after every step.
func TestOracleLockstep(t *testing.T) {
	propCheck(t, func(t *rapid.T, shape propShape) {
		c := propDrawAnyCase(t, shape)
		o := oracleStart(c)
		compare := func(j job.Job, out []job.Action) {
			want := append([]string(nil), o.queue...)
			sort.Strings(want)
			if diff := cmp.Diff(want, propSortedIDs(out)); diff != "" {
				t.Fatalf("step %d: outstanding actions (-oracle +reducer):\n%s\n%s%s", o.step, diff, c, job.Describe(j))
			}
			oracleCheckActions(t, o, out)
			if diff := cmp.Diff(o.states(), propStates(j)); diff != "" {
				t.Fatalf("step %d: node states (-oracle +reducer):\n%s\n%s%s", o.step, diff, c, job.Describe(j))
			}
		}
		run := propPlay(t, c, func(j job.Job, out []job.Action, _ []job.Result) []job.Result {
			compare(j, out)
			a := out[rapid.IntRange(0, len(out)-1).Draw(t, "next")]
			o.deliver(a.ID)
			return []job.Result{c.result(a)}
		}, false)
		compare(run.final(), nil)
	})
}

// oracleExampleCase makes a propCase from a tree and the leaves that fail.
func oracleExampleCase(tree ast.Node, failing ...string) propCase {
	c := propCase{Tree: tree, Outcomes: map[string]propOutcome{}, Graph: true}
	propLeafPaths(&c.Tree, "", &c.Leaves)
	for _, p := range c.Leaves {
		c.Outcomes[p] = propOutcome{}
	}
	for _, p := range failing {
		if _, ok := c.Outcomes[p]; !ok {
			panic("no leaf " + p)
		}
		c.Outcomes[p] = propOutcome{Fail: true, Msg: "failed: " + p}
	}
	return c.withIndex()
}

// TestOracleExamples pins the oracle itself to hand-worked examples of the
// rules in doc.go, so that the oracle is checked by more than agreement
// with the reducer: FIFO order, which actions run, and the final status.
func TestOracleExamples(t *testing.T) {
	a, b, c, d := ast.Act("a", nil), ast.Act("b", nil), ast.Act("c", nil), ast.Act("d", nil)
	tests := []struct {
		name    string
		tree    ast.Node
		failing []string
		ran     []string // FIFO
		status  job.Status
	}{
		{"seq stops at the first failure", ast.Seq(a, b, c), []string{"seq[1]"},
			[]string{"seq[0]#1", "seq[1]#1"}, job.StatusFailed},
		{"par runs everything", ast.Par(a, b), []string{"par[0]"},
			[]string{"par[0]#1", "par[1]#1"}, job.StatusFailed},
		// FIFO: a succeeds first, so b starts before c fails and then runs to its end.
		{"par: work started before the failure goes on", ast.Par(ast.Seq(a, b), c), []string{"par[1]"},
			[]string{"par[0].seq[0]#1", "par[1]#1", "par[0].seq[1]#1"}, job.StatusFailed},
		// c fails first in FIFO order; b is then cancelled, d never starts.
		{"frozen par cancels what would start", ast.Par(c, ast.Seq(a, b, d)), []string{"par[0]"},
			[]string{"par[0]#1", "par[1].seq[0]#1"}, job.StatusFailed},
		{"rescue replaces the failure", ast.Try(a, ast.Rescue(b)), []string{"body"},
			[]string{"body#1", "rescue#1"}, job.StatusSucceeded},
		{"rescue does not run after success", ast.Try(a, ast.Rescue(b), ast.Finally(c)), nil,
			[]string{"body#1", "finally#1"}, job.StatusSucceeded},
		{"a failing finally fails the try", ast.Try(a, ast.Rescue(b), ast.Finally(c)), []string{"finally"},
			[]string{"body#1", "finally#1"}, job.StatusFailed},
		{"a failing rescue fails the try", ast.Try(a, ast.Rescue(b), ast.Finally(c)), []string{"body", "rescue"},
			[]string{"body#1", "rescue#1", "finally#1"}, job.StatusFailed},
		// d fails first; a then fails too: the rescue would start, but the
		// par is frozen, so it is cancelled; the finally still runs.
		{"finally runs under a frozen par, rescue does not", ast.Par(d, ast.Try(ast.Seq(a, b), ast.Rescue(c), ast.Finally(ast.Act("f", nil)))),
			[]string{"par[0]", "par[1].body.seq[0]"},
			[]string{"par[0]#1", "par[1].body.seq[0]#1", "par[1].finally#1"}, job.StatusFailed},

		// Dags.
		{"dag: a child starts once everything it is after succeeded", ast.Dag(a.Named("a"), b.Named("b"), c.Named("c").WithAfter("a", "b"), d.Named("d").WithAfter("c")), nil,
			[]string{"dag[0]#1", "dag[1]#1", "dag[2]#1", "dag[3]#1"}, job.StatusSucceeded},
		{"dag: the children after nothing start with it, in tree order", ast.Dag(a.Named("a").WithAfter("c"), b.Named("b"), c.Named("c")), nil,
			[]string{"dag[1]#1", "dag[2]#1", "dag[0]#1"}, job.StatusSucceeded},
		{"dag: a failed child's dependents never start", ast.Dag(a.Named("a"), b.Named("b").WithAfter("a"), c.Named("c")), []string{"dag[0]"},
			[]string{"dag[0]#1", "dag[2]#1"}, job.StatusFailed},
		// a fails first: the dag is frozen, so when b succeeds c, after
		// b, is cancelled.
		{"dag: a failure freezes it, a sibling in flight goes on", ast.Dag(a.Named("a"), b.Named("b"), c.Named("c").WithAfter("b")), []string{"dag[0]"},
			[]string{"dag[0]#1", "dag[1]#1"}, job.StatusFailed},
		// The par fails first; the dag's next child is cancelled, and the
		// dag with it, since nothing under it failed.
		{"dag under a frozen par", ast.Par(d, ast.Dag(a.Named("a"), b.Named("b").WithAfter("a"))), []string{"par[0]"},
			[]string{"par[0]#1", "par[1].dag[0]#1"}, job.StatusFailed},
		// The try was entered before the dag froze: its body's next step
		// is cancelled, its finally runs.
		{"finally runs under a frozen dag", ast.Dag(d.Named("d"), ast.Try(ast.Seq(a, b), ast.Finally(c)).Named("t")), []string{"dag[0]"},
			[]string{"dag[0]#1", "dag[1].body.seq[0]#1", "dag[1].finally#1"}, job.StatusFailed},
		{"dag in a seq in a dag", ast.Dag(a.Named("a"), ast.Seq(b, ast.Dag(c.Named("c"), d.Named("d").WithAfter("c"))).Named("s").WithAfter("a")), nil,
			[]string{"dag[0]#1", "dag[1].seq[0]#1", "dag[1].seq[1].dag[0]#1", "dag[1].seq[1].dag[1]#1"}, job.StatusSucceeded},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pc := oracleExampleCase(tc.tree, tc.failing...)
			o := oracleStart(pc)
			for len(o.queue) > 0 {
				o.deliver(o.queue[0])
			}
			if diff := cmp.Diff(tc.ran, o.ran); diff != "" {
				t.Errorf("oracle ran (-want +got):\n%s", diff)
			}
			if got := o.root.status(); got != tc.status {
				t.Errorf("oracle status %s, want %s", got, tc.status)
			}
			if got := oracleOutcome(pc, &pc.Tree, ""); got != tc.status {
				t.Errorf("oracleOutcome %s, want %s", got, tc.status)
			}
			run := propPlay(t, pc, propFIFO(pc), false)
			var ran []string
			for _, s := range run.Steps {
				ran = append(ran, propIDs(s.Actions)...)
			}
			if diff := cmp.Diff(tc.ran, ran); diff != "" {
				t.Errorf("reducer ran (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(o.states(), propStates(run.final())); diff != "" {
				t.Errorf("node states (-oracle +reducer):\n%s", diff)
			}
		})
	}
}

// TestOracleDagFailures pins how a dag reports its failures: the first in
// time, the others counted; failures in one batch count as simultaneous,
// and the one earliest in tree order is reported.
func TestOracleDagFailures(t *testing.T) {
	a, b, c := ast.Act("a", nil), ast.Act("b", nil), ast.Act("c", nil)
	tree := ast.Dag(a.Named("a"), b.Named("b"), c.Named("c"))
	pc := oracleExampleCase(tree, "dag[0]", "dag[1]", "dag[2]")
	for _, tc := range []struct {
		name    string
		batches [][]string
		want    string
	}{
		{"one at a time, last first", [][]string{{"dag[2]#1"}, {"dag[0]#1"}, {"dag[1]#1"}}, "dag[2] (c): \"failed: dag[2]\" +2"},
		{"two in a batch", [][]string{{"dag[2]#1", "dag[1]#1"}, {"dag[0]#1"}}, "dag[1] (b): \"failed: dag[1]\" +2"},
		{"all in a batch", [][]string{{"dag[2]#1", "dag[1]#1", "dag[0]#1"}}, "dag[0] (a): \"failed: dag[0]\" +2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := oracleStart(pc)
			step := 0
			run := propPlay(t, pc, func(j job.Job, out []job.Action, _ []job.Result) []job.Result {
				ids := tc.batches[step]
				step++
				o.deliverBatch(ids)
				var batch []job.Result
				for _, a := range out {
					if slices.Contains(ids, a.ID) {
						batch = append(batch, pc.result(a))
					}
				}
				return batch
			}, false)
			got := propStates(run.final())[0].Failure
			if got != tc.want {
				t.Errorf("reducer: dag failure %s, want %s", got, tc.want)
			}
			if diff := cmp.Diff(o.states(), propStates(run.final())); diff != "" {
				t.Errorf("node states (-oracle +reducer):\n%s", diff)
			}
		})
	}
}

// TestOracleInputs pins the inputs of an action, in the oracle and in the
// reducer: the outputs of the named leaves it lists, in its order, and
// null for a named inner node.
func TestOracleInputs(t *testing.T) {
	tree := ast.Seq(
		ast.Par(ast.Act("x", nil).Named("a"), ast.Act("y", nil).Named("b")).Named("p"),
		ast.Act("merge", nil).WithInputs("b", "p", "a"),
	)
	pc := oracleExampleCase(tree)
	pc.Outcomes["seq[0].par[0]"] = propOutcome{Output: []byte(`{"n":1}`)}
	pc.Outcomes["seq[0].par[1]"] = propOutcome{Output: []byte(`"b"`)}
	want := []job.Input{{Name: "b", Output: []byte(`"b"`)}, {Name: "p"}, {Name: "a", Output: []byte(`{"n":1}`)}}
	o := oracleStart(pc)
	for len(o.queue) > 0 {
		o.deliver(o.queue[0])
	}
	if diff := cmp.Diff(want, o.inputs["seq[1]#1"]); diff != "" || len(o.bad) > 0 {
		t.Errorf("oracle inputs (-want +got):\n%s%v", diff, o.bad)
	}
	run := propPlay(t, pc, propAllAtOnce(pc), false)
	last := run.Steps[len(run.Steps)-2].Actions
	if len(last) != 1 || last[0].ID != "seq[1]#1" {
		t.Fatalf("the last step dispatched %v", propIDs(last))
	}
	if diff := cmp.Diff(want, last[0].Inputs); diff != "" {
		t.Errorf("reducer inputs (-want +got):\n%s", diff)
	}
	for name, want := range map[string]string{"a": `{"n":1}`, "b": `"b"`} {
		if got, ok := run.final().Output(name); !ok || string(got) != want {
			t.Errorf("Output(%q) = %s, %v; want %s", name, got, ok, want)
		}
	}
	if got, ok := run.final().Output("p"); ok || got != nil {
		t.Errorf("Output of the inner node p = %s, %v; want nothing", got, ok)
	}
	if v, err := job.OutputAs[struct{ N int }](run.final(), "a"); err != nil || v.N != 1 {
		t.Errorf("OutputAs(a) = %+v, %v", v, err)
	}
}

// TestOracleBatchExample is the example of doc.go: for par(seq(a, b), c)
// the batch {a: ok, c: failed} does not start b.
func TestOracleBatchExample(t *testing.T) {
	trJ, err := job.New("doc", ast.Par(ast.Seq(ast.Act("a", nil), ast.Act("b", nil)), ast.Act("c", nil)))
	j, acts := trJ.Job, trJ.Actions
	if err != nil {
		t.Fatal(err)
	}
	if got := propIDs(acts); !cmp.Equal(got, []string{"par[0].seq[0]#1", "par[1]#1"}) {
		t.Fatalf("first actions %v", got)
	}
	for _, batch := range [][]job.Result{
		{acts[0].Succeed(nil), acts[1].Fail("no")},
		{acts[1].Fail("no"), acts[0].Succeed(nil)},
	} {
		trNext, err := job.Restart(j, batch)
		next, more := trNext.Job, trNext.Actions
		if err != nil {
			t.Fatal(err)
		}
		if len(more) != 0 || next.Status() != job.StatusFailed {
			t.Fatalf("batch %v: started %v, job %s\n%s", batch, more, next.Status(), job.Describe(next))
		}
		f, _ := next.Failure()
		if f.Path != "par[1]" || f.Message != "no" || f.Others != 0 {
			t.Fatalf("failure %+v", f)
		}
		var b job.NodeInfo
		next.Walk(func(n job.NodeInfo) bool {
			if n.Path == "par[0].seq[1]" {
				b = n
			}
			return true
		})
		if b.Status != job.StatusCancelled || b.Attempt != 0 {
			t.Fatalf("b is %s (attempt %d), want cancelled and never dispatched", b.Status, b.Attempt)
		}
	}
}

// oracleBatchScenario is a case and the choices that make its batches.
type oracleBatchScenario struct {
	c     propCase
	picks []int
}

// oracleSeedT prefixes failures with the example seed that produced them.
type oracleSeedT struct {
	*testing.T
	shape propShape
	seed  int
}

func (t oracleSeedT) Fatalf(format string, args ...any) {
	t.T.Helper()
	t.T.Fatalf("%s example seed %d: "+format, append([]any{t.shape, t.seed}, args...)...)
}

// oracleBatchExamples is how many scenarios of each shape
// TestOracleBatchLockstep plays: fewer graphs, which cost about three
// times as much as plain trees to play.
var oracleBatchExamples = map[propShape]int{propPlain: 400, propGraph: 200}

// TestOracleBatchLockstep is TestOracleLockstep with batches: random
// subsets of the outstanding actions, answered together. The oracle
// records a whole batch, settles (cancelling whatever a frozen par or dag
// stops, which may freeze more), and only then starts the rest, as doc.go
// says.
//
// The scenarios come from fixed seeds (Generator.Example), not from
// rapid.Check, so that the test gives the same answer on every run: the
// plain ones as before dags existed, then graphs.
func TestOracleBatchLockstep(t *testing.T) {
	for _, shape := range []propShape{propPlain, propGraph} {
		gen := rapid.Custom(func(t *rapid.T) oracleBatchScenario {
			return oracleBatchScenario{
				c:     propDrawAnyCase(t, shape),
				picks: rapid.SliceOfN(rapid.IntRange(0, 1<<20), 64, 64).Draw(t, "picks"),
			}
		})
		for seed := 0; seed < oracleBatchExamples[shape]; seed++ {
			oracleBatchPlay(oracleSeedT{t, shape, seed}, gen.Example(seed))
		}
	}
}

// oracleBatchPlay plays one scenario of TestOracleBatchLockstep.
func oracleBatchPlay(st oracleSeedT, sc oracleBatchScenario) {
	c, o, pick := sc.c, oracleStart(sc.c), 0
	next := func() int {
		pick++
		return sc.picks[pick%len(sc.picks)]
	}
	compare := func(j job.Job, out []job.Action) {
		want := append([]string(nil), o.queue...)
		sort.Strings(want)
		if diff := cmp.Diff(want, propSortedIDs(out)); diff != "" {
			st.Fatalf("step %d: outstanding actions (-oracle +reducer):\n%s\n%s%s", o.step, diff, c, job.Describe(j))
		}
		oracleCheckActions(st, o, out)
		if diff := cmp.Diff(o.states(), propStates(j)); diff != "" {
			st.Fatalf("step %d: node states (-oracle +reducer):\n%s\n%s%s", o.step, diff, c, job.Describe(j))
		}
	}
	run := propPlay(st, c, func(j job.Job, out []job.Action, _ []job.Result) []job.Result {
		compare(j, out)
		perm := append([]job.Action(nil), out...)
		for i := len(perm) - 1; i > 0; i-- {
			k := next() % (i + 1)
			perm[i], perm[k] = perm[k], perm[i]
		}
		var batch []job.Result
		var ids []string
		for _, a := range perm[:1+next()%len(perm)] {
			batch = append(batch, c.result(a))
			ids = append(ids, a.ID)
		}
		o.deliverBatch(ids)
		return batch
	}, false)
	compare(run.final(), nil)
}

// TestOracleWideDag is TestOracleBatchLockstep over dags wider than a
// leaf of the reducer's state trie (16 nodes), whose state is kept apart
// from their children's: 17 to 40 children, small subtrees with names and
// inputs, each child after a sparse random set of the others.
func TestOracleWideDag(t *testing.T) {
	gen := rapid.Custom(func(t *rapid.T) oracleBatchScenario {
		d := propDrawer{shape: propGraph, budget: 120}
		c := propCase{Tree: d.dagOf(t, propMaxDepth-2, rapid.IntRange(17, 40).Draw(t, "width"), 8), Outcomes: map[string]propOutcome{}, Graph: true}
		d.nameAndInputs(t, &c.Tree)
		propLeafPaths(&c.Tree, "", &c.Leaves)
		failPct := rapid.SampledFrom([]int{0, 3, 10}).Draw(t, "failPct")
		for _, p := range c.Leaves {
			o := propOutcome{Output: []byte(fmt.Sprint(len(p)))}
			if rapid.IntRange(0, 99).Draw(t, "fails") < failPct {
				o = propOutcome{Fail: true, Msg: "failed: " + p}
			}
			c.Outcomes[p] = o
		}
		return oracleBatchScenario{c: c.withIndex(), picks: rapid.SliceOfN(rapid.IntRange(0, 1<<20), 64, 64).Draw(t, "picks")}
	})
	for seed := 0; seed < 20; seed++ {
		sc := gen.Example(seed)
		if err := ast.Validate(sc.c.Tree); err != nil {
			t.Fatalf("seed %d: drew an invalid tree: %v", seed, err)
		}
		oracleBatchPlay(oracleSeedT{t, propGraph, seed}, sc)
	}
}

// TestOracleBatchFreezeCascade answers every first action in one batch.
// In each tree a start that this batch requests is stopped by a frozen
// par, and cancelling it makes a par fail, which freezes the root par:
// the root is hit by a failure in this batch, so (doc.go, Batches) it
// must freeze before anything starts, and b must be cancelled, not run.
// The reducer instead starts pending nodes one by one in the order it
// requested them, so whether b runs depends on which request came first:
// wrapping a leaf in a one-child par is enough to change it.
func TestOracleBatchFreezeCascade(t *testing.T) {
	a := func(name string) ast.Node { return ast.Act(name, nil) }
	for _, tc := range []struct {
		name    string
		tree    ast.Node
		failing []string
	}{
		// x is stopped by the failed f; the inner par fails; the root freezes.
		{"seq after a seq", ast.Par(ast.Par(a("f"), ast.Seq(a("x0"), a("x"))), ast.Seq(a("a"), a("b"))),
			[]string{"par[0].par[0]"}},
		{"seq after a one-child par", ast.Par(ast.Par(a("f"), ast.Seq(ast.Par(a("x0")), a("x"))), ast.Seq(a("a"), a("b"))),
			[]string{"par[0].par[0]"}},
		// The rescue r is stopped by the failed d; the try and its par fail; the root freezes.
		{"seq before a rescue", ast.Par(ast.Seq(a("a"), a("b")), ast.Par(ast.Try(a("c"), ast.Rescue(a("r"))), a("d"))),
			[]string{"par[1].par[0].body", "par[1].par[1]"}},
		// x, after y, is stopped by the failed f; the dag fails; the root freezes.
		{"seq after a dag child", ast.Par(ast.Dag(a("f").Named("f"), a("y").Named("y"), a("x").Named("x").WithAfter("y")), ast.Seq(a("a"), a("b"))),
			[]string{"par[0].dag[0]"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pc := oracleExampleCase(tc.tree, tc.failing...)
			o := oracleStart(pc)
			o.deliverBatch(append([]string(nil), o.queue...))
			if len(o.queue) != 0 || o.root.status() != job.StatusFailed {
				t.Fatalf("oracle: %v outstanding, %s", o.queue, o.root.status())
			}
			run := propPlay(t, pc, propAllAtOnce(pc), false)
			if diff := cmp.Diff(o.states(), propStates(run.final())); diff != "" {
				t.Errorf("node states (-oracle +reducer):\n%s\n%s", diff, job.Describe(run.final()))
			}
			if len(run.Steps) != 2 {
				t.Errorf("the job took %d steps, want 2 (New, one batch); after the batch:\n%s", len(run.Steps), job.Describe(run.Steps[1].Job))
			}
		})
	}
}

// choose selects the cases of the choice n as it is entered, naively:
// the output of its on leaf and every case's value decoded with
// encoding/json (numbers as float64, the tests' numbers being small) and
// compared with reflect.DeepEqual. Unselected children, and everything
// under them, are skipped; selecting nothing, n fails late.
func (o *oracle) choose(n *oracleNode) {
	src := n.scope.lookup(n.choice.On)
	out := src.out.Output
	if len(out) == 0 {
		out = []byte("null")
	}
	decode := func(b []byte) (any, bool) {
		var v any
		return v, json.Unmarshal(b, &v) == nil
	}
	matches := func(v any, c ast.Case) bool {
		for _, raw := range c.Values {
			if w, ok := decode(raw); ok && reflect.DeepEqual(v, w) {
				return true
			}
		}
		return false
	}
	n.chose = make([]bool, len(n.kids))
	v, ok := decode(out)
	hit := false
	if n.choice.Multi {
		elems, isArray := v.([]any)
		if !ok || !isArray {
			n.failKind = job.KindNotAnArray
			n.failMsg = "the output of " + n.choice.On + " is not an array: " + string(out)
		}
		for i, c := range n.choice.Cases {
			for _, e := range elems {
				if matches(e, c) {
					n.chose[i], hit = true, true
				}
			}
		}
	} else if ok {
		for i, c := range n.choice.Cases {
			if matches(v, c) {
				n.chose[i], hit = true, true
				break
			}
		}
	}
	if n.failKind == "" && !hit {
		if len(n.kids) > len(n.choice.Cases) {
			n.chose[len(n.choice.Cases)] = true
		} else {
			n.failKind = job.KindNoCase
			n.failMsg = "no case matches the output of " + n.choice.On + ": " + string(out)
		}
	}
	if n.failKind != "" {
		n.late = true
		clear(n.chose)
	}
	for i, k := range n.kids {
		if !n.chose[i] {
			oracleSkip(k)
		}
	}
}

func oracleSkip(n *oracleNode) {
	n.skipped = true
	for _, k := range n.children() {
		oracleSkip(k)
	}
}

// failLate fails the choices that selected nothing, and reports whether
// there were any.
func (o *oracle) failLate() bool {
	found := false
	var visit func(n *oracleNode)
	visit = func(n *oracleNode) {
		if n.late {
			n.late, n.at, found = false, o.step, true
		}
		if n.kind == ast.KindDag && n.entered && !n.cancelled && !n.lateDone && !slices.ContainsFunc(n.kids, func(k *oracleNode) bool { return !k.skipped }) {
			n.lateDone, n.at, found = true, o.step, true
		}
		for _, k := range n.children() {
			visit(k)
		}
	}
	visit(o.root)
	// The waits that began while a signal of their name was kept take
	// the oldest, in the order they began (one begun before may have
	// taken it).
	var waits []*oracleNode
	o.visit(func(n *oracleNode) {
		if n.takeKept {
			waits = append(waits, n)
		}
	})
	slices.SortFunc(waits, func(a, b *oracleNode) int { return a.startSeq - b.startSeq })
	for _, w := range waits {
		w.takeKept, found = false, true
		if w.status() != job.StatusRunning {
			continue
		}
		if i := slices.IndexFunc(o.kept, func(s oracleSignal) bool { return s.Name == w.signal }); i >= 0 {
			w.done, w.out, w.at = true, propOutcome{Output: o.kept[i].Payload}, o.step
			o.kept = slices.Delete(o.kept, i, i+1)
		}
	}
	return found
}

// guardHolds evaluates the guard of the dag child n naively, as choose
// compares cases.
func (o *oracle) guardHolds(n *oracleNode) bool {
	out := n.scope.lookup(n.guard.Output).out.Output
	if len(out) == 0 {
		out = []byte("null")
	}
	var v, w any
	if json.Unmarshal(out, &v) != nil || json.Unmarshal(n.guard.Equals, &w) != nil {
		return false
	}
	return reflect.DeepEqual(v, w)
}

// need is how many children the race n needs to succeed (a map with
// need: copies, all of them when it has fewer).
func (n *oracleNode) need() int {
	if n.kind == ast.KindMap {
		return min(n.choice.Need, len(n.kids))
	}
	return max(n.choice.Need, 1)
}

// succeeded counts the children of n that succeeded.
func (n *oracleNode) succeeded() int {
	c := 0
	for _, k := range n.kids {
		if k.status() == job.StatusSucceeded {
			c++
		}
	}
	return c
}
