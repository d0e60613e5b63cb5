package job

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/batonwf/baton/ast"
)

// Maps and loops change the compiled tree as they run, which every other
// node leaves alone. The tree of a job is still never modified: each
// change makes a new tree value, which the job's next version holds (the
// old versions keep theirs), and is recorded in the job's growth log, so
// that Decode rebuilds the same tree by replaying the log on the
// workflow's compiled tree.
//
//   - A map is compiled with its template, inert (it never runs; its
//     nodes are one block of IDs), and no children. When the map starts,
//     it reads its over, and the new tree holds one copy of the template
//     per element, appended after every node there is (IDs in copy
//     order), as the map's children: copy i at "map[i]". The names inside
//     a copy are resolved per copy (an input, on, over or until naming a
//     node of the template names that node of the same copy; one outside
//     keeps what it named, which the copy of an enclosing map resolved
//     already). The node states move to tries of the new size. A map
//     start costs O(nodes of the tree), like compiling it, when the tree
//     is one an earlier version holds; later starts in the same Restart
//     add their copies to the tree the first made (treeEdit), O(copies),
//     and the ranks of tree order are computed once, when first needed
//     or as the Restart ends (tree.rankStale).
//   - A loop's body is compiled once. Its current iteration is in the
//     tree's table of iterations (tree.iters, a copy per change), and the
//     paths (so the action and timer IDs) under it carry it: "loop[i]"
//     (a leaf under a loop has its action IDs made at dispatch). When
//     iteration i succeeds without a match of its until, the next one
//     starts in the same transition: the new tree differs in the loop's
//     iteration and the loops inside the body back at 0, O(loops); a map
//     inside the body that has copies loses them (a copy of the node
//     array, O(tree): the old copies stay in it, inert and idle). The
//     body's node states, outputs and results are reset, O(body) (a
//     result is reset by a tombstone in the results chain: see
//     resultOf). A result or firing that names an earlier iteration is
//     ignored as stale.
//
// Copies are appended after every node, so node IDs are no longer in
// pre-order once a map started: tree.rank holds each node's place, and
// what is decided "in tree order" (a batch's order, the failure reported
// first, timers listed) compares ranks (order).

// growth is one change of a job's tree: a map's start (its elements) or
// a loop's next iteration (elems nil). The log is a list, newest first,
// shared by the versions of a job.
type growth struct {
	prev  *growth
	node  int32
	elems []json.RawMessage
}

// Failure kinds of maps and loops.
const (
	KindMapTooLarge = "map_too_large" // a map's over has more than ast.MaxCopies elements
	KindLoopLimit   = "loop_limit"    // a loop ran max iterations without its until matching
)

// flagTooLarge marks a map that failed as it started because its array
// has more than ast.MaxCopies elements (flagNotArray: not an array).
// flagWon marks a map with a need that as many copies have met.
const (
	flagTooLarge = 16
	flagWon      = 32
)

// Reserved inputs, as tnode.inputs holds them.
const (
	inputItem  = -2
	inputIndex = -3
)

// inputNode resolves the input called name (ast.InputItem and
// ast.InputIndex to their markers).
func inputNode(names map[string]int32, name string) int32 {
	switch name {
	case ast.InputItem:
		return inputItem
	case ast.InputIndex:
		return inputIndex
	}
	return names[name]
}

// addGrowing compiles the map or loop n, node id at path: a loop's body
// as its child, a map's template inert (see the top of this file).
func (t *tree) addGrowing(n *ast.Node, id int32, path []byte, ids *firstIDs) {
	t.grows = true
	x := t.nodes[id].x
	if n.Kind == ast.KindLoop {
		if n.Until != nil {
			x.until = n.Until
		}
		x.max = int32(n.Max)
		t.nodes[id].loopIx = int32(len(t.iters))
		t.iters = append(t.iters, 0)
		kids := t.takeKids(1)
		t.inLoop++
		kids[0] = t.add(&n.Children[0], id, 0, ast.AppendEdge(path, ast.KindLoop, 0), ids)
		t.inLoop--
		t.nodes[id].kids = kids
		return
	}
	x.need, x.limit, x.over = int32(n.Need), int32(n.Limit), n.Over
	t.inTemplate++
	x.tmpl = t.add(&n.Children[0], id, 0, ast.AppendEdge(path, ast.KindMap, 0), ids)
	t.inTemplate--
	x.tsize = int32(len(t.nodes)) - x.tmpl
}

// linkGrowing resolves what the map or loop tn reads.
func (t *tree) linkGrowing(tn *tnode) {
	if tn.kind == ast.KindMap {
		tn.x.reads = t.names[tn.x.over]
		return
	}
	tn.x.reads = t.names[tn.x.until.Output]
}

// order returns the place of node id in pre-order (id itself until a
// map added copies); a negative id stays itself.
func (t *tree) order(id int32) int32 {
	if id < 0 {
		return id
	}
	t.fixRank()
	if t.rank == nil {
		return id
	}
	return t.rank[id]
}

// reordered reports whether a map added copies to t: node IDs are no
// longer in pre-order, and order ranks them.
func (t *tree) reordered() bool { return t.rank != nil || t.rankStale }

// fixRank computes rank if copies were added since it was: on a tree
// that only the edit growing it holds (see tree.rankStale).
func (t *tree) fixRank() {
	if t.rankStale {
		t.rank, t.rankStale = t.preorder(), false
	}
}

// treeEdit is what one Restart (or Decode's replay) made of the trees it
// grew, and may so change in place: the tree withCopies made last and
// whether its waits are its own. A map's start on a tree an earlier
// version holds copies the node array, O(tree); every later start in
// the same edit appends to that copy, O(copies), so the maps a batch
// starts at once (the inner maps of a map's copies) cost O(tree) once,
// not each.
type treeEdit struct {
	t     *tree
	waits bool
}

// preorder returns every node's place in pre-order; the inert nodes,
// which no walk reaches, come last.
func (t *tree) preorder() []int32 {
	rank := make([]int32, len(t.nodes))
	for i := range rank {
		rank[i] = -1
	}
	r := int32(0)
	stack := []int32{0}
	for len(stack) > 0 {
		id := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		rank[id] = r
		r++
		kids := t.nodes[id].kids
		for i := len(kids) - 1; i >= 0; i-- {
			if kids[i] >= 0 {
				stack = append(stack, kids[i])
			}
		}
	}
	for i := range rank {
		if rank[i] < 0 {
			rank[i] = r
			r++
		}
	}
	return rank
}

// withCopies returns the tree t with the map m's copies, one per element
// of elems (see the top of this file). t is not modified, unless it is
// the tree ed made (ed may be nil): then the copies are added to it in
// place, and it is returned. ed is then the returned tree's edit.
func (t *tree) withCopies(m int32, elems []json.RawMessage, ed *treeEdit) *tree {
	x := t.nodes[m].x
	size := x.tsize
	old := int32(len(t.nodes))
	add := len(elems) * int(size)
	var nt *tree
	if ed != nil && ed.t == t {
		nt = t
		nt.nodes = slices.Grow(nt.nodes, add)
	} else {
		c := *t
		nt = &c
		nt.nodes = make([]tnode, old, int(old)+add)
		copy(nt.nodes, t.nodes)
		nt.kidsBuf = nil
		// Appended to clipped, the slices t shares are copied at their
		// first append.
		nt.wideIDs = slices.Clip(t.wideIDs)
		nt.iters = slices.Clip(t.iters)
		if ed != nil {
			*ed = treeEdit{t: nt}
		}
	}
	mx := *x
	mx.elems = elems
	nt.nodes[m].x = &mx
	kids := make([]int32, len(elems))
	copiedWaits := ed != nil && ed.t == nt && ed.waits
	looped := t.nodes[m].looped
	for i := range elems {
		base := int32(len(nt.nodes))
		kids[i] = base
		remap := func(id int32) int32 {
			if id >= x.tmpl && id < x.tmpl+size {
				return base + id - x.tmpl
			}
			return id
		}
		for k := int32(0); k < size; k++ {
			src := &t.nodes[x.tmpl+k]
			c := *src
			if k == 0 {
				c.parent, c.edge, c.inert = m, int32(i), false
			} else {
				c.parent = remap(src.parent)
				p := &nt.nodes[c.parent]
				c.inert = p.inert || p.kind == ast.KindMap
			}
			if len(src.kids) > 0 {
				c.kids = nt.takeKids(len(src.kids))
				for j, kid := range src.kids {
					if kid >= 0 {
						kid = remap(kid)
					}
					c.kids[j] = kid
				}
			}
			if len(src.inputs) > 0 {
				c.inputs = make([]int32, len(src.inputs))
				for j, in := range src.inputs {
					if in >= 0 {
						in = remap(in)
					}
					c.inputs[j] = in
				}
			}
			if src.x != nil {
				cx := *src.x
				cx.reads, cx.guardOn = remap(cx.reads), remap(cx.guardOn)
				if c.kind == ast.KindMap {
					cx.tmpl = remap(cx.tmpl)
				}
				c.x = &cx
			}
			c.id1 = ""
			c.looped = c.looped || looped
			if c.kind == ast.KindLoop && !c.inert {
				c.loopIx = int32(len(nt.iters))
				nt.iters = append(nt.iters, 0)
			}
			if c.wide {
				c.slot = int32(nt.wides)
				nt.wides++
				nt.wideIDs = append(nt.wideIDs, base+k)
			} else {
				c.slot = int32(nt.narrow)
				nt.narrow++
			}
			if src.out >= 0 {
				c.out = int32(nt.named)
				nt.named++
			}
			if c.kind == ast.KindWait && !c.inert {
				if !copiedWaits {
					w := make(map[string][]int32, len(nt.waits))
					for name, ids := range nt.waits {
						w[name] = slices.Clip(ids)
					}
					nt.waits, copiedWaits = w, true
					if ed != nil && ed.t == nt {
						ed.waits = true
					}
				}
				nt.waits[c.x.signal] = append(nt.waits[c.x.signal], base+k)
			}
			if c.kind == ast.KindAct && !c.inert {
				nt.leaves++
			}
			nt.nodes = append(nt.nodes, c)
		}
	}
	nt.nodes[m].kids = kids
	nt.rank, nt.rankStale = nil, true // computed once needed (order), or before the tree is shared (fixRank)
	nt.assignIDs(old, int32(len(nt.nodes)))
	return nt
}

// assignIDs sets the id1 of the live leaves among the nodes from to to
// (IDs), from their paths, in one string.
func (t *tree) assignIDs(from, to int32) {
	var b, scratch []byte
	var ends []int
	for id := from; id < to; id++ {
		if tn := &t.nodes[id]; tn.kind == ast.KindAct && !tn.inert && !tn.looped {
			scratch = t.appendPath(scratch[:0], id)
			b = append(b, scratch...)
			b = append(b, "#1"...)
			ends = append(ends, len(b))
		}
	}
	all := string(b)
	k, start := 0, 0
	for id := from; id < to; id++ {
		if tn := &t.nodes[id]; tn.kind == ast.KindAct && !tn.inert && !tn.looped {
			tn.id1 = all[start:ends[k]]
			start = ends[k]
			k++
		}
	}
}

// advanced returns the tree t with the loop l at its next iteration (see
// the top of this file): a copy of the iterations, the loops inside the
// body back at 0, O(loops + body); and, when a map inside the body has
// copies, a copy of the nodes with those copies detached, O(tree). t is
// not modified.
func (t *tree) advanced(l int32) *tree {
	t.fixRank() // the rank is copied, not computed again: see fixRank
	nt := *t
	nt.iters = slices.Clone(t.iters)
	nt.iters[t.nodes[l].loopIx]++
	var started []int32 // maps with copies
	var walk func(id int32)
	walk = func(id int32) {
		tn := &t.nodes[id]
		switch tn.kind {
		case ast.KindMap:
			if len(tn.kids) > 0 {
				started = append(started, id)
			}
			return
		case ast.KindLoop:
			nt.iters[tn.loopIx] = 0
		}
		for _, k := range tn.kids {
			if k >= 0 {
				walk(k)
			}
		}
	}
	walk(t.nodes[l].kids[0])
	if len(started) == 0 {
		return &nt
	}
	nt.nodes = slices.Clone(t.nodes)
	for _, m := range started {
		tn := &nt.nodes[m]
		for _, k := range tn.kids {
			nt.detach(k)
		}
		tn.kids = nil
		mx := *tn.x
		mx.elems = nil
		tn.x = &mx
	}
	return &nt
}

// detach makes the subtree of id inert: a loop's next iteration left it.
func (t *tree) detach(id int32) {
	tn := &t.nodes[id]
	if tn.inert {
		return
	}
	tn.inert = true
	if tn.kind == ast.KindAct {
		t.leaves--
	}
	for _, k := range tn.kids {
		if k >= 0 {
			t.detach(k)
		}
	}
}

// grow moves the job being built to the tree nt, which has the nodes of
// its tree and more, recording g in its growth log.
func (e *engine) grow(nt *tree, g *growth) {
	e.j.t = nt
	e.j.st = splitVec{t: nt, main: e.j.st.main.grow(e.token(), nt.narrow), wide: e.j.st.wide.grow(e.token(), nt.wides)}
	// The outputs are indexed by tnode.out, one per named leaf of the
	// tree they were made for (nt may be that very tree, grown in place:
	// compare with the outputs, not with the tree before).
	if n := int(nt.named); e.j.outs != nil && len(e.j.outs) < n {
		if e.ownOuts {
			e.j.outs = append(e.j.outs, make([][]byte, n-len(e.j.outs))...)
		} else {
			outs := make([][]byte, n)
			copy(outs, e.j.outs)
			e.j.outs, e.ownOuts = outs, true
		}
	}
	g.prev = e.j.grown
	e.j.grown = g
}

// beginMap begins the map id (state already running): it reads its over;
// an array that is not one, or too large, fails it, and an empty one
// makes it succeed, once the round that began it is over (lateQ). Else
// the copies are made, and the first limit of them begin.
func (e *engine) beginMap(id int32) {
	tn := e.node(id)
	elems, failure := ast.Elements(e.j.outputOf(tn.x.reads))
	switch {
	case failure == KindNotAnArray:
		e.mut(id).flags |= flagNotArray
	case failure != "":
		e.mut(id).flags |= flagTooLarge
	}
	if failure != "" {
		e.lateQ = append(e.lateQ, late{id, StatusFailed})
		return
	}
	if len(elems) == 0 {
		e.lateQ = append(e.lateQ, late{id, StatusSucceeded})
		return
	}
	e.grow(e.j.t.withCopies(id, elems, &e.grown), &growth{node: id, elems: elems})
	tn = e.node(id)
	kids := tn.kids
	if l := tn.x.limit; l > 0 && int(l) < len(kids) {
		kids = kids[:l]
	}
	e.mut(id).pos = int32(len(kids))
	e.actions = slices.Grow(e.actions, len(kids))
	for _, k := range kids {
		e.begin(k)
	}
}

// mapChild moves the map p on after its copy tc settled with state cs:
// as a par with a limit (pos counts the copies started, done those
// settled), attempt counting the copies that succeeded. A map with a
// need is won once that many have (or all, for fewer elements), unless
// a copy failed first: the running copies are stopped as a won race's
// losers, and those not started are cancelled.
func (e *engine) mapChild(p int32, tp *tnode, cs nstate) {
	ps := e.mut(p)
	ps.done++
	n := int32(len(tp.kids))
	if ps.pos < n {
		// A slot is free: the next copy starts (or, frozen, is
		// cancelled, which frees the slot again).
		ps.pos++
		e.requestStart(tp.kids[ps.pos-1])
		ps = e.mut(p)
	}
	switch cs.status {
	case StatusSucceeded:
		ps.attempt++
		if need := tp.x.need; need > 0 && ps.flags&(flagWon|flagExpired) == 0 && ps.nfail == 0 && int32(ps.attempt) >= min(need, n) {
			ps.flags |= flagWon
			e.stopLosers(p, tp)
			e.cancelStarts(p)
			ps = e.mut(p)
		}
	case StatusFailed:
		if ps.flags&flagWon == 0 {
			e.countFailure(p, ps, cs)
		}
	case StatusCancelled:
		ps.out = StatusCancelled
	}
	if ps.done != n {
		return
	}
	switch {
	case ps.flags&flagWon != 0 || ps.nfail == 0 && ps.out != StatusCancelled:
		e.settle(p, StatusSucceeded, 0, 0)
		if tp.out >= 0 && e.get(p).status == StatusSucceeded {
			e.setOutput(tp.out, e.j.mapOutput(p))
		}
	case ps.nfail > 0:
		e.settle(p, StatusFailed, ps.cause, ps.others)
	default:
		e.settle(p, StatusCancelled, 0, 0)
	}
}

// mapOutput returns the output of the map m, which succeeded: the array
// of its copies' outputs, in index order, when its template is a leaf or
// a wait (null for a copy without one, or with one that is not JSON);
// nil otherwise. O(results).
func (j *Job) mapOutput(m int32) []byte {
	tn := &j.t.nodes[m]
	if k := j.t.nodes[tn.x.tmpl].kind; k != ast.KindAct && k != ast.KindWait {
		return nil
	}
	if len(tn.kids) == 0 {
		return []byte("[]")
	}
	base := tn.kids[0] // copies of a one-node template are consecutive
	outs := make([][]byte, len(tn.kids))
	found := make([]bool, len(tn.kids))
	for c := j.results; c != nil; c = c.prev {
		for i := len(c.entries) - 1; i >= 0; i-- {
			e := &c.entries[i]
			node := e.node
			if node < 0 {
				node = -node - 1
			}
			k := node - base
			if k < 0 || int(k) >= len(outs) || found[k] {
				continue
			}
			found[k] = true
			if e.node >= 0 && e.res.err == "" && j.st.get(node).status == StatusSucceeded {
				outs[k] = e.res.output
			}
		}
	}
	var b strings.Builder
	b.WriteByte('[')
	for i, o := range outs {
		if i > 0 {
			b.WriteByte(',')
		}
		if len(o) == 0 || !json.Valid(o) {
			b.WriteString("null") // none, or not JSON: no element of an array
		} else {
			b.Write(o)
		}
	}
	b.WriteByte(']')
	return []byte(b.String())
}

// loopChild moves the loop p on after its body settled with state cs:
// an iteration that succeeded ends the loop when its until matches, fails
// it with kind loop_limit after max iterations, and else starts the
// next one (nextIteration); a failed or cancelled body fails or cancels
// the loop, as a seq.
func (e *engine) loopChild(p int32, tp *tnode, cs nstate) {
	switch cs.status {
	case StatusSucceeded:
		out := e.j.outputOf(tp.x.reads)
		if len(out) == 0 {
			out = []byte("null")
		}
		switch {
		case equalJSON(out, tp.x.until.Equals):
			e.settle(p, StatusSucceeded, 0, 0)
			if tp.out >= 0 && e.get(p).status == StatusSucceeded {
				e.setOutput(tp.out, e.j.loopOutput(p))
			}
		case e.j.t.iters[tp.loopIx]+1 >= tp.x.max:
			e.settle(p, StatusFailed, p+1, 0)
		default:
			e.nextIteration(p)
			e.requestStart(e.node(p).kids[0])
		}
	case StatusFailed:
		e.settle(p, StatusFailed, cs.cause, cs.others)
	case StatusCancelled:
		e.settle(p, StatusCancelled, 0, 0)
	}
}

// loopOutput returns the output of the loop l, which succeeded: its last
// iteration's, when its body is a leaf or a wait; nil otherwise.
func (j *Job) loopOutput(l int32) []byte {
	body := j.t.nodes[l].kids[0]
	if k := j.t.nodes[body].kind; k != ast.KindAct && k != ast.KindWait {
		return nil
	}
	if r := j.resultOf(body); r != nil && r.err == "" {
		return r.output
	}
	return nil
}

// nextIteration moves the loop l, whose body has just succeeded, to its
// next iteration: the body's nodes (and the copies of maps in it) go
// back to idle, their results and outputs are reset, the signals their
// waits took and the cancels of their nodes are forgotten, and the job
// moves to the tree with the next iteration (tree.advanced).
func (e *engine) nextIteration(l int32) {
	// The nodes reset, kept only when something outside the states may
	// name them (signals taken, node cancels, timers).
	var reset []int32
	keep := e.j.sig != nil && len(e.j.sig.taken) > 0 || len(e.j.cancels) > 0 || len(e.j.timers) > 0
	var walk func(id int32)
	walk = func(id int32) {
		s := e.get(id)
		if s == (nstate{}) {
			return // an idle node: everything under it is idle too
		}
		tn := e.node(id)
		if keep {
			reset = append(reset, id)
		}
		switch tn.kind {
		case ast.KindAct:
			if s.status == StatusSucceeded || s.status == StatusFailed {
				e.j.settled--
			}
			if s.attempt > 0 {
				e.record(-id-1, result{}) // a tombstone
			}
		case ast.KindWait:
			if s.status == StatusSucceeded {
				e.record(-id-1, result{})
			}
		}
		if tn.out >= 0 && e.j.outputOf(id) != nil {
			e.setOutput(tn.out, nil)
		}
		*e.mut(id) = nstate{}
		for _, k := range tn.kids {
			if k >= 0 {
				walk(k)
			}
		}
	}
	walk(e.node(l).kids[0])
	if e.j.sig != nil && len(e.j.sig.taken) > 0 {
		st := e.ownSig()
		st.taken = slices.DeleteFunc(st.taken, func(t takenSig) bool { return slices.Contains(reset, t.node) })
	}
	if len(e.j.cancels) > 0 {
		e.j.cancels = slices.DeleteFunc(slices.Clone(e.j.cancels), func(c nodeCancel) bool { return slices.Contains(reset, c.node) })
		if len(e.j.cancels) == 0 {
			e.j.cancels = nil
		}
	}
	for _, id := range reset {
		if len(e.j.timers) == 0 {
			break
		}
		e.removeTimer(id, timerDeadline)
		e.removeTimer(id, timerRetry)
		e.removeTimer(id, timerSleep)
	}
	for id := range e.dagReq {
		if e.j.under(id, l) {
			delete(e.dagReq, id) // requested in the iteration just finished
		}
	}
	nt := e.j.t.advanced(l)
	e.j.t = nt
	e.j.st.t = nt
	e.j.grown = &growth{prev: e.j.grown, node: l}
}

// growingFailure returns the kind and message of the map or loop c, which
// failed on its own: a map as it started, a loop after max iterations.
func (j Job) growingFailure(c int32) (kind, msg string) {
	tn := &j.t.nodes[c]
	s := j.st.get(c)
	if tn.kind == ast.KindLoop {
		return KindLoopLimit, strconv.Itoa(int(tn.x.max)) + " iterations, and the output of " + tn.x.until.Output + " never equalled " + string(tn.x.until.Equals)
	}
	out := j.outputOf(tn.x.reads)
	shown := "null"
	if len(out) > 0 {
		shown = clip(string(out), maxRaceChildText)
	}
	over := j.t.nodes[tn.x.reads].name
	if s.flags&flagTooLarge != 0 {
		return KindMapTooLarge, "the output of " + over + " has more than " + strconv.Itoa(ast.MaxCopies) + " elements"
	}
	return KindNotAnArray, "the output of " + over + " is not an array: " + shown
}

// ownFailure reports whether node c is a map or a loop that failed on
// its own (its own cause).
func (j Job) ownFailure(c int32) bool {
	k := j.t.nodes[c].kind
	s := j.st.get(c)
	return (k == ast.KindMap || k == ast.KindLoop) && s.status == StatusFailed && s.cause == c+1 && s.flags&flagExpired == 0
}

// mapInput returns the value of the reserved input in (inputItem or
// inputIndex) of the leaf id: its innermost copy's element or index.
func (j *Job) mapInput(id, in int32) []byte {
	for c := id; ; {
		tc := &j.t.nodes[c]
		if tc.parent < 0 {
			return nil
		}
		if p := &j.t.nodes[tc.parent]; p.kind == ast.KindMap {
			if in == inputItem {
				return p.x.elems[tc.edge]
			}
			return strconv.AppendInt(nil, int64(tc.edge), 10)
		}
		c = tc.parent
	}
}

// growthOutput returns what a named map or loop keeps as its output
// once it succeeded (mapOutput, loopOutput).
func (j *Job) growthOutput(id int32) []byte {
	if j.t.nodes[id].kind == ast.KindMap {
		return j.mapOutput(id)
	}
	return j.loopOutput(id)
}

// checkMap checks a map against what it read and its copies: one per
// element, pos of them started (those after pos idle), and its counts a
// par's over them, attempt counting those that succeeded.
func (j Job) checkMap(id int32, tn *tnode, s nstate, res *result) error {
	if res != nil {
		return fmt.Errorf("map has a result")
	}
	if s.status == StatusCancelled && s == (nstate{status: StatusCancelled}) && len(tn.kids) == 0 {
		return nil // cancelled before it began
	}
	if j.st.get(tn.x.reads).status != StatusSucceeded {
		return fmt.Errorf("began before %s succeeded", tn.x.over)
	}
	elems, failure := ast.Elements(j.outputOf(tn.x.reads))
	if len(tn.kids) == 0 {
		switch {
		case s.pos != 0 || s.done != 0 || s.attempt != 0 || s.nfail != 0:
			return fmt.Errorf("map without copies has state %+v", s)
		case (failure == KindNotAnArray) != (s.flags&flagNotArray != 0) || (failure == KindMapTooLarge) != (s.flags&flagTooLarge != 0):
			return fmt.Errorf("flags %d, and the output read says %q", s.flags, failure)
		case failure == "" && len(elems) > 0:
			return fmt.Errorf("map over %d elements has no copies", len(elems))
		case s.flags&flagExpired != 0:
		case s.status == StatusSucceeded && failure == "", s.status == StatusFailed && failure != "" && s.cause == id+1:
		case s.status == StatusRunning:
			// Only within the transition that began it (lateQ).
			return fmt.Errorf("map without copies runs")
		default:
			return fmt.Errorf("%s map over %d elements (failure %q)", s.status, len(elems), failure)
		}
		return nil
	}
	n := int32(len(tn.kids))
	if failure != "" || int(n) != len(elems) || len(tn.x.elems) != len(elems) {
		return fmt.Errorf("%d copies, %d elements kept, the output read has %d (%q)", n, len(tn.x.elems), len(elems), failure)
	}
	done, failed, idle, succeeded, cancelled := j.countKids(tn.kids)
	if s.pos < 1 || s.pos > n || idle != n-s.pos {
		return fmt.Errorf("%d copies started of %d, %d idle", s.pos, n, idle)
	}
	for i, k := range tn.kids {
		if st := j.st.get(k).status; (st == StatusIdle) != (int32(i) >= s.pos) {
			return fmt.Errorf("copy %d is %s, %d started", i, st, s.pos)
		}
	}
	won := s.flags&flagWon != 0
	if s.done != done || int32(s.attempt) != succeeded || !won && s.nfail != failed || (s.out == StatusCancelled) != cancelled || (s.out != 0 && s.out != StatusCancelled) {
		return fmt.Errorf("counts done=%d succeeded=%d nfail=%d out=%s, copies say %d, %d, %d, cancelled=%v", s.done, s.attempt, s.nfail, s.out, done, succeeded, failed, cancelled)
	}
	if l := tn.x.limit; l > 0 && s.pos < n && s.pos-done != l {
		return fmt.Errorf("%d copies running, %d started of %d (limit %d)", s.pos-done, s.pos, n, l)
	}
	if l := tn.x.limit; l == 0 && s.pos != n || l > 0 && s.pos < min(l, n) {
		return fmt.Errorf("%d copies started of %d (limit %d)", s.pos, n, l)
	}
	if won && (tn.x.need == 0 || succeeded < min(tn.x.need, n)) {
		return fmt.Errorf("won with %d copies succeeded (need %d)", succeeded, tn.x.need)
	}
	settled := done == n
	if settled == (s.status == StatusRunning) {
		return fmt.Errorf("%s with %d of %d copies settled", s.status, done, n)
	}
	if s.flags&flagExpired != 0 || !settled {
		return nil
	}
	want := StatusSucceeded
	switch {
	case won:
	case failed > 0:
		want = StatusFailed
	case cancelled:
		want = StatusCancelled
	}
	if s.status != want {
		return fmt.Errorf("%s, copies say %s", s.status, want)
	}
	return nil
}

// checkLoop checks a loop against its body and the iteration it is at.
func (j Job) checkLoop(id int32, tn *tnode, s nstate, res *result) error {
	if res != nil || s.pos != 0 || s.done != 0 || s.nfail != 0 || s.attempt != 0 || s.out != 0 || s.flags&^flagExpired != 0 {
		return fmt.Errorf("loop has foreign state %+v", s)
	}
	it := j.t.iters[tn.loopIx]
	if it < 0 || it >= tn.x.max {
		return fmt.Errorf("at iteration %d of %d", it, tn.x.max)
	}
	body := j.st.get(tn.kids[0])
	if s.flags&flagExpired != 0 && s.status.Settled() {
		return nil // checkExpired checked it
	}
	out := j.outputOf(tn.x.reads)
	if len(out) == 0 {
		out = []byte("null")
	}
	matched := body.status == StatusSucceeded && equalJSON(out, tn.x.until.Equals)
	switch s.status {
	case StatusRunning:
		if body.status != StatusRunning {
			return fmt.Errorf("runs with its body %s", body.status)
		}
	case StatusSucceeded:
		if !matched {
			return fmt.Errorf("succeeded at iteration %d, its body %s, until not matched", it, body.status)
		}
	case StatusFailed:
		if s.cause == id+1 && (body.status != StatusSucceeded || matched || it != tn.x.max-1) {
			return fmt.Errorf("failed by its limit at iteration %d of %d, body %s, matched %v", it, tn.x.max, body.status, matched)
		}
		if s.cause != id+1 && body.status != StatusFailed {
			return fmt.Errorf("failed with its body %s", body.status)
		}
	case StatusCancelled:
		if body.status != StatusCancelled && !(body.status == StatusIdle && it == 0) {
			return fmt.Errorf("cancelled with its body %s", body.status)
		}
	}
	return nil
}

// goodGrowing reports whether the succeeded map or loop id of a decoded
// job has the shape its output is read from (check says the rest).
func (j *Job) goodGrowing(id int32) bool {
	tn := &j.t.nodes[id]
	if tn.kind == ast.KindLoop {
		return len(tn.kids) == 1
	}
	return len(tn.x.elems) == len(tn.kids)
}

// appendGrowth appends the job's growth log g (newest first) to its
// encoding, oldest first: ,"grown":[[MAP,[ELEMENT,...]],[LOOP],...].
func appendGrowth(b []byte, g *growth) []byte {
	var log []*growth
	for ; g != nil; g = g.prev {
		log = append(log, g)
	}
	b = append(b, `,"grown":[`...)
	for i := len(log) - 1; i >= 0; i-- {
		if i < len(log)-1 {
			b = append(b, ',')
		}
		b = append(b, '[')
		b = strconv.AppendInt(b, int64(log[i].node), 10)
		if log[i].elems != nil {
			b = append(b, ",["...)
			for k, e := range log[i].elems {
				if k > 0 {
					b = append(b, ',')
				}
				b = append(b, e...)
			}
			b = append(b, ']')
		}
		b = append(b, ']')
	}
	return append(b, ']')
}

// replayGrowth applies the growth log of an encoded job (oldest first)
// to its compiled tree t, returning the log as a job keeps it and the
// tree it makes. An entry that does not apply (a node that is not a map
// or a loop, not live, a map that has copies already or too many
// elements, a loop at its last iteration) is an error naming it.
func replayGrowth(t *tree, raw [][]json.RawMessage) (*growth, *tree, error) {
	var g *growth
	var ed treeEdit
	defer func() { t.fixRank() }()
	for k, e := range raw {
		var node int32
		if len(e) < 1 || len(e) > 2 || json.Unmarshal(e[0], &node) != nil || node < 0 || int(node) >= len(t.nodes) {
			return nil, nil, fmt.Errorf("[%d] is not [node] or [node, elements] with a node of the tree", k)
		}
		tn := &t.nodes[node]
		if tn.inert {
			return nil, nil, fmt.Errorf("[%d] names node %d, which does not run", k, node)
		}
		switch {
		case tn.kind == ast.KindLoop && len(e) == 1:
			if t.iters[tn.loopIx]+1 >= tn.x.max {
				return nil, nil, fmt.Errorf("[%d]: the loop %d is at its last iteration", k, node)
			}
			t = t.advanced(node)
			g = &growth{prev: g, node: node}
		case tn.kind == ast.KindMap && len(e) == 2:
			var elems []json.RawMessage
			if json.Unmarshal(e[1], &elems) != nil || len(elems) == 0 || len(elems) > ast.MaxCopies || len(tn.kids) > 0 {
				return nil, nil, fmt.Errorf("[%d]: not 1 to %d elements for the map %d, or it has copies already", k, ast.MaxCopies, node)
			}
			for i := range elems {
				elems[i] = compactRaw(elems[i])
			}
			t = t.withCopies(node, elems, &ed)
			g = &growth{prev: g, node: node, elems: elems}
		default:
			return nil, nil, fmt.Errorf("[%d] names node %d, a %s (want [map, elements] or [loop])", k, node, tn.kind)
		}
	}
	return g, t, nil
}

// compactRaw returns v without insignificant white space, as
// ast.Elements gives elements.
func compactRaw(v json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if json.Compact(&b, v) != nil {
		return v
	}
	return b.Bytes()
}

// wonMapAbove reports whether a map above id, reached without climbing
// out of a finally block, met its need (and so stopped id).
func (j Job) wonMapAbove(id int32) bool {
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
		if tp.kind == ast.KindMap && j.st.get(p).flags&flagWon != 0 {
			return true
		}
		c = p
	}
}

// equalJSON is ast.EqualJSON, without decoding when both sides are one
// of the literals true, false and null, as a loop's until mostly is:
// decoding costs more than an iteration's whole step otherwise.
func equalJSON(a, b []byte) bool {
	if literal(a) && literal(b) {
		return bytes.Equal(a, b)
	}
	return ast.EqualJSON(a, b)
}

// literal reports whether v is exactly true, false or null.
func literal(v []byte) bool {
	s := string(v)
	return s == "true" || s == "false" || s == "null"
}
