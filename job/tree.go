package job

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/batonwf/baton/ast"
)

// tree is a compiled workflow: the AST flattened into an array in pre-order.
// It is immutable once built and shared by every version of a job.
type tree struct {
	root   ast.Node
	nodes  []tnode
	leaves int
	narrow int // nodes in splitVec.main
	wides  int // nodes in splitVec.wide
	// wideIDs are the wide nodes, in pre-order: wideIDs[slot] is the node
	// in that slot of splitVec.wide (see nodeOfSlot for the main trie).
	wideIDs []int32
	// names maps each node's name to the node; named counts the named
	// leaves, whose outputs a job keeps by tnode.out (see outputs).
	names map[string]int32
	named int
	// graph reports whether the workflow uses names, inputs or dags: a
	// job of it is encoded in format 3 at least.
	graph bool
	// timed reports whether it uses retries, timeouts, deadlines or
	// at-most-once delivery: format 4 at least.
	timed bool
	// prioritised reports whether a leaf has a priority other than 0:
	// format 5.
	prioritised bool
	// raced reports whether it has a race or a node with replicas:
	// format 8.
	raced bool
	// lang3 reports whether it uses a node or key of workflow version 3
	// (choice, end, guards, need, limit): format 9.
	lang3 bool
	// pinNames holds, for each pin of the workflow (pinID), the sorted
	// action names of the leaves under the nodes that name it; nil when
	// the workflow has no affinity.
	pinNames map[string][]string
	// waits maps each signal name to the waits for it, in tree order;
	// waitsOrSleeps reports whether the tree has a wait or a sleep.
	waits         map[string][]int32
	waitsOrSleeps bool
	// kidsBuf is where takeKids takes the nodes' kids from while the
	// tree is built.
	kidsBuf []int32
	// grows reports whether the workflow has a map or a loop, whose
	// runs change the tree (see maploop.go): format 10.
	grows      bool
	inTemplate int // while compiling: the depth of map templates around
	inLoop     int // while compiling: the depth of loops around
	// iters holds each loop's iteration (tnode.loopIx): the edge to its
	// body in paths. A loop's next iteration makes a tree with a copy of
	// it, not of the nodes.
	iters []int32
	// rank is, once a map has added copies, each node's place in
	// pre-order (order); nil while node IDs are in pre-order.
	rank []int32
	// rankStale is set on a tree that a Restart (or Decode's replay) is
	// still growing: copies were added since rank was computed. Only
	// the edit that grows the tree sees it set; it computes rank when
	// it needs an order, and always before the tree is shared (fixRank).
	rankStale bool
}

// Try parts, as indexes into tnode.kids of a try.
const (
	partBody = iota
	partRescue
	partFinally
)

type tnode struct {
	slot int32 // index in splitVec.wide if wide, else in splitVec.main
	wide bool
	// inert marks a node that never runs: a map's template, and the
	// copies a loop's next iteration detached (see maploop.go).
	inert bool
	// looped marks a node under a loop: a leaf's action IDs carry the
	// iteration, so they are made at dispatch (no id1).
	looped bool
	kind   ast.Kind
	parent int32   // -1 for the root
	edge   int32   // index among the parent's children, or the try part
	kids   []int32 // seq/par children; for a try [body, rescue, finally], -1 when absent
	act    *ast.Node
	id1    string // act: the action ID of attempt 1, made once here

	name     string        // the node's name, or ""
	retry    *ast.Retry    // act: its retry policy, or nil
	deadline time.Duration // the node's deadline, 0 for none
	out      int32         // named act: index of its output in a job's outputs; -1 otherwise
	inputs   []int32       // act: the nodes its Inputs name, in their order
	deps     []int32       // child of a dag: the edges (indexes in the dag's kids) of the siblings it is after
	rdeps    []int32       // child of a dag: the edges of the siblings after it
	// copies is, for the race a node with replicas became (ast.Expand),
	// its number of copies; 0 elsewhere.
	copies int32
	// loopIx is, for a loop, where its iteration is in tree.iters.
	loopIx int32
	// affinity is the node's own placement hint, or nil.
	affinity *ast.Affinity
	// x holds what only the nodes of workflow version 3 use; nil for
	// the others, so that a tree of the older nodes costs no more.
	x *tnodeX
}

// tnodeX is what a choice, a guarded dag child, an end, a race with a
// need or a par with a limit adds to its tnode.
type tnodeX struct {
	// reads is, for a choice, the leaf its On names.
	reads int32
	// choice is, for a choice, its node as written (cases, multi).
	choice *ast.Node
	// guard is, for a dag child with a guard (when), the guard, and
	// guardOn the leaf it reads.
	guard   *ast.Guard
	guardOn int32
	// endReason is, for an end node, its reason.
	endReason string
	// need is, for a race with a need above 1, how many children must
	// succeed.
	need int32
	// limit is, for a par, the most children running at once (0: no
	// limit, or one at least as large as its children).
	limit int32
	// signal and transient are a wait's; sleep is a sleep's duration.
	signal    string
	transient bool
	sleep     time.Duration
	// reads is also, for a map, the leaf its Over names, and for a loop
	// the leaf its until reads; until is the loop's guard and max its
	// most iterations.
	until *ast.Guard
	max   int32
	// tmpl and tsize are, for a map, its template's root and its number
	// of nodes (a template is compiled, inert, in one block of IDs);
	// elems are the elements of its copies once it started, in order.
	tmpl, tsize int32
	elems       []json.RawMessage
	over        string // a map's Over
}

// needN is how many children of the race tn must succeed (1 by default).
func (tn *tnode) needN() int32 {
	if tn.x == nil || tn.x.need < 1 {
		return 1
	}
	return tn.x.need
}

// limitN is the limit of the par tn, 0 for none.
func (tn *tnode) limitN() int32 {
	if tn.x == nil {
		return 0
	}
	return tn.x.limit
}

// guardOf is the guard of the dag child tn, or nil.
func (tn *tnode) guardOf() *ast.Guard {
	if tn.x == nil {
		return nil
	}
	return tn.x.guard
}

func compile(root ast.Node) (*tree, error) {
	if err := ast.Validate(root); err != nil {
		return nil, err
	}
	n := ast.Count(root)
	t := &tree{root: root, nodes: make([]tnode, 0, n)}
	ids := newFirstIDs(n)
	// The reducer runs the tree with its replicas expanded into races;
	// without replicas, that is the tree as written (its copy in t, so
	// that no second copy of the root escapes).
	run := &t.root
	if ast.HasReplicas(run) {
		e := ast.Expand(root)
		run = &e
	}
	t.add(run, -1, 0, make([]byte, 0, 64), ids)
	ids.assign(t)
	t.link()
	t.linkPins()
	return t, nil
}

// firstIDs collects the action IDs of attempt 1 of a tree's leaves, in
// pre-order, in one buffer: the leaves' tnode.id1 are substrings of one
// string (assign), which costs a few allocations per tree instead of one
// per leaf. (An ID given out keeps that string alive, which the tree
// does anyway while the job lives.)
type firstIDs struct {
	buf  strings.Builder
	ends []int // where each leaf's ID ends in buf
}

// newFirstIDs returns a firstIDs with room for a tree of n nodes with
// paths of the usual length.
func newFirstIDs(n int) *firstIDs {
	f := &firstIDs{ends: make([]int, 0, n)}
	f.buf.Grow(12 * n)
	return f
}

// add appends the ID of attempt 1 of the leaf at path (as written by
// path, "" for the root): ActionID(path, 1).
func (f *firstIDs) add(path []byte) {
	if len(path) == 0 {
		f.buf.WriteString(ast.RootPath)
	} else {
		f.buf.Write(path)
	}
	f.buf.WriteString("#1")
	f.ends = append(f.ends, f.buf.Len())
}

// assign sets the id1 of t's leaves, which add saw in pre-order, the
// order of t.nodes.
func (f *firstIDs) assign(t *tree) {
	all := f.buf.String()
	k, start := 0, 0
	for i := range t.nodes {
		if tn := &t.nodes[i]; tn.kind == ast.KindAct && !tn.inert && !tn.looped {
			tn.id1 = all[start:f.ends[k]]
			start = f.ends[k]
			k++
		}
	}
}

// link resolves the leaves' inputs to nodes, once every name is known.
// Validate has checked that every name resolves (ast.Expand renamed those
// inside copies, and the inputs naming them, alike).
func (t *tree) link() {
	for i := range t.nodes {
		tn := &t.nodes[i]
		if tn.kind == ast.KindChoice {
			tn.x.reads = t.names[tn.x.choice.On]
		}
		if tn.kind == ast.KindMap || tn.kind == ast.KindLoop {
			t.linkGrowing(tn)
		}
		if tn.guardOf() != nil {
			tn.x.guardOn = t.names[tn.x.guard.Output]
		}
		if tn.kind == ast.KindAct && len(tn.act.Inputs) > 0 {
			tn.inputs = make([]int32, len(tn.act.Inputs))
			for k, name := range tn.act.Inputs {
				tn.inputs[k] = inputNode(t.names, name)
			}
		}
	}
}

// add appends n and its subtree in pre-order, n being at path (as written
// by path, "" for the root), and returns n's index. The children's paths
// are built in path's spare capacity, which each child reuses in turn.
func (t *tree) add(n *ast.Node, parent, edge int32, path []byte, ids *firstIDs) int32 {
	id := int32(len(t.nodes))
	t.nodes = append(t.nodes, tnode{kind: n.Kind, parent: parent, edge: edge, out: -1, name: n.Name, deadline: n.Deadline, affinity: n.Affinity, inert: t.inTemplate > 0, looped: t.inLoop > 0})
	if n.Kind == ast.KindChoice || n.Kind == ast.KindEnd || n.Kind == ast.KindWait || n.Kind == ast.KindSleep || n.Kind == ast.KindMap || n.Kind == ast.KindLoop || n.When != nil || n.Need != 0 || n.Limit != 0 {
		t.lang3 = true
		t.nodes[id].x = &tnodeX{reads: -1, guardOn: -1, guard: n.When, endReason: n.Reason, signal: n.Signal, transient: n.Transient, sleep: n.Sleep}
	}
	if n.Affinity != nil {
		t.raced = true // format 8 holds version 2 of the workflow
	}
	if n.Kind == ast.KindRace {
		t.raced = true
		t.nodes[id].copies = int32(n.Replicas)
		if n.Need > 1 {
			t.nodes[id].x.need = int32(n.Need)
		}
	}
	if n.Kind == ast.KindPar && n.Limit > 0 && n.Limit < len(n.Children) {
		t.nodes[id].x.limit = int32(n.Limit)
	}
	if n.Name != "" || len(n.Inputs) > 0 || n.Kind == ast.KindDag {
		t.graph = true
	}
	if n.Retry != nil || n.Timeout != 0 || n.Deadline != 0 || n.Delivery != ast.AtLeastOnce {
		t.timed = true
	}
	if n.Priority != 0 {
		t.prioritised = true
	}
	t.addName(id, n.Name)
	// A seq or par with more than wideKids children is updated
	// from many leaves' paths: keep it in the small trie of such nodes.
	// Every other node stays in pre-order beside its neighbours.
	if wide(n.Kind, len(n.Children)) || n.Kind == ast.KindMap {
		t.nodes[id].wide = true
		t.nodes[id].slot = int32(t.wides)
		t.wides++
		t.wideIDs = append(t.wideIDs, id)
	} else {
		t.nodes[id].slot = int32(t.narrow)
		t.narrow++
	}
	switch n.Kind {
	case ast.KindEnd:
	case ast.KindWait:
		if t.waits == nil {
			t.waits = map[string][]int32{}
		}
		t.waits[n.Signal] = append(t.waits[n.Signal], id)
		t.waitsOrSleeps = true
	case ast.KindSleep:
		t.waitsOrSleeps = true
	case ast.KindAct:
		t.nodes[id].act = n
		t.nodes[id].retry = n.Retry
		if !t.nodes[id].inert {
			if !t.nodes[id].looped {
				ids.add(path) // t.nodes[id].id1, set by ids.assign
			}
			t.leaves++
		}
	case ast.KindMap, ast.KindLoop:
		t.addGrowing(n, id, path, ids)
	case ast.KindSeq, ast.KindPar, ast.KindDag, ast.KindRace, ast.KindChoice:
		if n.Kind == ast.KindChoice {
			t.nodes[id].x.choice = n
		}
		kids := t.takeKids(len(n.Children))
		for i := range n.Children {
			kids[i] = t.add(&n.Children[i], id, int32(i), ast.AppendEdge(path, n.Kind, i), ids)
		}
		t.nodes[id].kids = kids
		if n.Kind == ast.KindDag {
			t.linkDag(n, kids)
		}
	case ast.KindTry:
		kids := t.takeKids(3)
		kids[0], kids[1], kids[2] = -1, -1, -1
		for part, p := range [...]*ast.Node{n.Body, n.Rescue, n.Finally} {
			if p != nil {
				kids[part] = t.add(p, id, int32(part), ast.AppendEdge(path, n.Kind, part), ids)
			}
		}
		t.nodes[id].kids = kids
	}
	return id
}

// takeKids returns room for the k children of a node, taken from one
// array shared by the nodes of the tree (a few allocations per tree, not
// one per inner node). Each node's slice is capped at its own length.
func (t *tree) takeKids(k int) []int32 {
	if cap(t.kidsBuf)-len(t.kidsBuf) < k {
		t.kidsBuf = make([]int32, 0, max(k, cap(t.nodes)+2))
	}
	n := len(t.kidsBuf)
	t.kidsBuf = t.kidsBuf[:n+k]
	return t.kidsBuf[n : n+k : n+k]
}

// addName records that node id is called name ("" for none). A named
// leaf, and a named race (whose output is its winner's), keep an output.
func (t *tree) addName(id int32, name string) {
	if name == "" {
		return
	}
	if t.names == nil {
		t.names = map[string]int32{}
	}
	t.names[name] = id
	if k := t.nodes[id].kind; k == ast.KindAct || k == ast.KindRace || k == ast.KindWait || k == ast.KindMap || k == ast.KindLoop {
		t.nodes[id].out = int32(t.named)
		t.named++
	}
}

// linkDag records, for the children kids of the dag n, the siblings each
// is after (deps) and the siblings after each (rdeps), as edges.
func (t *tree) linkDag(n *ast.Node, kids []int32) {
	edge := make(map[string]int32, len(n.Children))
	for k := range n.Children {
		edge[n.Children[k].Name] = int32(k)
	}
	for k := range n.Children {
		c := &t.nodes[kids[k]]
		for _, name := range n.Children[k].After {
			d, ok := edge[name]
			if ok && !slices.Contains(c.deps, d) {
				c.deps = append(c.deps, d)
				r := &t.nodes[kids[d]]
				r.rdeps = append(r.rdeps, int32(k))
			}
		}
	}
}

// path returns the path of node id, "" for the root.
func (t *tree) path(id int32) string {
	if t.nodes[id].parent < 0 {
		return ""
	}
	return string(t.appendPath(make([]byte, 0, 64), id))
}

// appendPath appends the path of node id to b (nothing for the root).
// The edge below a loop is its iteration (tree.iters).
func (t *tree) appendPath(b []byte, id int32) []byte {
	n := &t.nodes[id]
	if n.parent < 0 {
		return b
	}
	b = t.appendPath(b, n.parent)
	p := &t.nodes[n.parent]
	if p.kind == ast.KindLoop {
		return ast.AppendEdge(b, ast.KindLoop, int(t.iters[p.loopIx]))
	}
	return ast.AppendEdge(b, p.kind, int(n.edge))
}

// lookup finds the node at path p (as written by path; "" or "root" for the
// root). It returns -1 and a reason when p names no node, and -2 and a
// reason when it names a node in an iteration of a loop that is over.
func (t *tree) lookup(p string) (int32, string) {
	n := int32(0)
	if p == "" || p == ast.RootPath {
		return 0, ""
	}
	for p != "" {
		e, written, rest, ok := ast.CutEdge(p)
		tn := &t.nodes[n]
		switch {
		case !ok && written == "":
			return -1, "empty step in the path"
		case !ok && rest == "" && len(written) < len(p):
			return -1, "path ends with '.'"
		case tn.kind == ast.KindAct:
			return -1, "step " + strconv.Quote(written) + " below an action"
		case tn.kind == ast.KindTry && (!ok || e.Kind != ast.KindTry):
			return -1, "step " + strconv.Quote(written) + " under a try (want body, rescue or finally)"
		case tn.kind != ast.KindTry && !ok && strings.HasPrefix(written, tn.kind.String()+"[") && strings.HasSuffix(written, "]"):
			return -1, "step " + strconv.Quote(written) + ": no such child"
		case tn.kind != ast.KindTry && (!ok || e.Kind != tn.kind):
			k := tn.kind.String()
			return -1, "step " + strconv.Quote(written) + " under a " + k + " (want " + k + "[i])"
		case tn.kind == ast.KindLoop && e.Index != int(t.iters[tn.loopIx]):
			if it := int(t.iters[tn.loopIx]); e.Index < it {
				return -2, "iteration " + strconv.Itoa(e.Index) + " of the loop at " + ast.ShowPath(t.path(n)) + ", which runs iteration " + strconv.Itoa(it)
			}
			return -1, "step " + strconv.Quote(written) + ": the loop has not reached that iteration"
		case tn.kind == ast.KindLoop:
			e.Index = 0
		case e.Index >= len(tn.kids):
			return -1, "step " + strconv.Quote(written) + ": no such child"
		case tn.kids[e.Index] < 0:
			return -1, "try has no " + written
		}
		n, p = tn.kids[e.Index], rest
	}
	return n, ""
}

// wideKids is the most children of a seq, par, dag, race or choice kept
// in the main trie (see tree.add).
const wideKids = 16

// wide reports whether a node of kind k with n children is kept in the
// small trie of wide nodes.
func wide(k ast.Kind, n int) bool {
	return (k == ast.KindSeq || k == ast.KindPar || k == ast.KindDag || k == ast.KindRace || k == ast.KindChoice) && n > wideKids
}
