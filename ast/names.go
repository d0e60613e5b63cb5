package ast

import (
	"fmt"
	"strings"
)

// The workflow-wide checks of Validate: names unique, After resolved among
// a dag's children and free of cycles, inputs known and sure to have
// succeeded. They run only for a tree where some node has a Name, Inputs
// or After, on a flat pre-order copy of the tree's shape.

// gnode is one node of the flat view.
type gnode struct {
	n      *Node
	parent int32 // -1 for the root
	edge   int32 // the index among the parent's children, or the try part (TryParts)
	depth  int32 // 1 for the root
}

// dagInfo is what the checks know of one dag.
type dagInfo struct {
	kids  []int32   // the children's ids
	after [][]int32 // for each child, the positions of the siblings it is after, as resolved

	// The siblings some child is after, directly or not, as found last:
	// reached[p] == stamp for each of them. reachedFrom is that child, or -1.
	reached     []uint32
	stamp       uint32
	reachedFrom int32
	queue       []int32
}

type checker struct {
	nodes []gnode
	names map[string]int32   // the first node with each name
	dags  map[int32]*dagInfo // by the dag's id
	ps    []Problem
}

// checkNames appends to ps the workflow-wide problems of the tree rooted
// at root (which has been checked node by node) and returns it. It takes
// root by value so that only a call that needs it copies the root to the
// heap.
func checkNames(root Node, ps []Problem) []Problem {
	c := checker{dags: map[int32]*dagInfo{}, ps: ps}
	c.add(&root, -1, 0, 1)
	named := 0
	for id := range c.nodes {
		if c.nodes[id].n.Name != "" {
			named++
		}
	}
	c.names = make(map[string]int32, named)
	for id := range c.nodes {
		name := c.nodes[id].n.Name
		if name == "" {
			continue
		}
		if first, ok := c.names[name]; ok {
			c.problem(int32(id), "name %q is already the name of %s", name, ShowPath(c.path(first)))
			continue
		}
		c.names[name] = int32(id)
	}
	// In pre-order, a dag is resolved before the leaves under it ask
	// which of its children are after which.
	var seen map[string]int
	for id := range c.nodes {
		n := c.nodes[id].n
		if n.Kind == KindDag {
			if d := c.dags[int32(id)]; d != nil {
				c.resolveDag(int32(id), d)
			}
		}
		if n.Kind == KindAct && len(n.Inputs) > 0 {
			if len(n.Inputs) > 16 {
				seen = make(map[string]int, len(n.Inputs))
			} else {
				seen = nil
			}
			c.inputs(int32(id), seen)
		}
		if n.Kind == KindChoice && n.On != "" {
			c.reads(int32(id), "on", n.On, "the choice starts")
		}
		if n.When != nil && n.When.Output != "" {
			c.reads(int32(id), "when", n.When.Output, "this dag child is ready")
		}
		if n.Kind == KindMap && n.Over != "" {
			c.reads(int32(id), "over", n.Over, "the map starts")
		}
		if n.Kind == KindLoop && n.Until != nil && n.Until.Output != "" {
			c.until(int32(id))
		}
	}
	return c.ps
}

// add appends n and its subtree, going where the node by node checks go,
// and returns n's id, or -1 for a node deeper than MaxDepth.
func (c *checker) add(n *Node, parent, edge, depth int32) int32 {
	if depth > MaxDepth {
		return -1
	}
	id := int32(len(c.nodes))
	c.nodes = append(c.nodes, gnode{n: n, parent: parent, edge: edge, depth: depth})
	if n.err == errReported {
		return id
	}
	switch n.Kind {
	case KindSeq, KindPar, KindRace, KindChoice, KindMap, KindLoop:
		for i := range n.Children {
			c.add(&n.Children[i], id, int32(i), depth+1)
		}
	case KindDag:
		kids := make([]int32, len(n.Children))
		whole := true
		for i := range n.Children {
			kids[i] = c.add(&n.Children[i], id, int32(i), depth+1)
			whole = whole && kids[i] >= 0
		}
		if whole {
			c.dags[id] = &dagInfo{kids: kids, reachedFrom: -1}
		}
	case KindTry:
		for i, p := range [...]*Node{n.Body, n.Rescue, n.Finally} {
			if p != nil {
				c.add(p, id, int32(i), depth+1)
			}
		}
	}
	return id
}

func (c *checker) parent(id int32) int32 { return c.nodes[id].parent }

// path returns the path of node id.
func (c *checker) path(id int32) string {
	var up []int32
	for x := id; c.nodes[x].parent >= 0; x = c.nodes[x].parent {
		up = append(up, x)
	}
	var b []byte
	for i := len(up) - 1; i >= 0; i-- {
		g := &c.nodes[up[i]]
		b = AppendEdge(b, c.nodes[g.parent].n.Kind, int(g.edge))
	}
	return string(b)
}

func (c *checker) problem(id int32, format string, args ...any) {
	c.ps = append(c.ps, Problem{Path: c.path(id), Msg: fmt.Sprintf(format, args...)})
}

// resolveDag turns the After of the dag's children into sibling
// positions, reporting the names that are not siblings, then reports the
// cycles.
func (c *checker) resolveDag(id int32, d *dagInfo) {
	sibling := make(map[string]int32, len(d.kids))
	for pos, k := range d.kids {
		if name := c.nodes[k].n.Name; name != "" {
			if _, ok := sibling[name]; !ok {
				sibling[name] = int32(pos)
			}
		}
	}
	d.after = make([][]int32, len(d.kids))
	for pos, k := range d.kids {
		for _, a := range c.nodes[k].n.After {
			if q, ok := sibling[a]; ok {
				d.after[pos] = append(d.after[pos], q)
				continue
			}
			if other, ok := c.names[a]; ok {
				c.problem(k, "after %q: the node with this name (%s) is not a sibling in this dag", a, ShowPath(c.path(other)))
			} else {
				c.problem(k, "after %q: no node has this name", a)
			}
		}
	}
	c.cycles(id, d)
}

// maxCycleShown is the most names a cycle is written with.
const maxCycleShown = 20

// cycles reports, at the dag, one cycle in each strongly connected
// component of its After graph that has one (more than one child, or a
// child after itself), in the order of their first children: the shortest
// cycle through that first child.
func (c *checker) cycles(id int32, d *dagInfo) {
	k := len(d.kids)
	// Tarjan's algorithm, without recursion: a dag may have many children.
	index := make([]int32, k) // 0: not visited yet; else the visit order, from 1
	low := make([]int32, k)
	comp := make([]int32, k) // the component of each child, from 1, once known
	onStack := make([]bool, k)
	var stack []int32
	type frame struct {
		v    int32
		next int
	}
	var calls []frame
	var firsts []int32 // the first child of each component with a cycle
	order, comps := int32(0), int32(0)
	for s := range k {
		if index[s] != 0 {
			continue
		}
		order++
		index[s], low[s] = order, order
		stack = append(stack, int32(s))
		onStack[s] = true
		calls = append(calls, frame{v: int32(s)})
		for len(calls) > 0 {
			f := &calls[len(calls)-1]
			v := f.v
			if f.next < len(d.after[v]) {
				w := d.after[v][f.next]
				f.next++
				switch {
				case index[w] == 0:
					order++
					index[w], low[w] = order, order
					stack = append(stack, w)
					onStack[w] = true
					calls = append(calls, frame{v: w})
				case onStack[w]:
					low[v] = min(low[v], index[w])
				}
				continue
			}
			calls = calls[:len(calls)-1]
			if len(calls) > 0 {
				p := calls[len(calls)-1].v
				low[p] = min(low[p], low[v])
			}
			if low[v] != index[v] {
				continue
			}
			comps++
			first, size := v, 0
			for {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				onStack[w] = false
				comp[w] = comps
				first = min(first, w)
				size++
				if w == v {
					break
				}
			}
			if size > 1 || hasPos(d.after[v], v) {
				firsts = append(firsts, first)
			}
		}
	}
	if len(firsts) == 0 {
		return
	}
	insertionSort(firsts)
	prev := make([]int32, k)
	for i := range prev {
		prev[i] = -1
	}
	for _, s := range firsts {
		cycle := shortestCycle(d, s, comp, prev)
		names := make([]string, 0, min(len(cycle), maxCycleShown)+1)
		for i, p := range cycle {
			if i == maxCycleShown-1 && len(cycle) > maxCycleShown {
				names = append(names, fmt.Sprintf("... (%d more)", len(cycle)-i))
				break
			}
			names = append(names, c.bare(d.kids[p]))
		}
		names = append(names, c.bare(d.kids[s]))
		c.problem(id, "cycle in after: %s (each is after the one before it)", strings.Join(names, " -> "))
	}
}

// hasPos reports whether the positions list holds p.
func hasPos(list []int32, p int32) bool {
	for _, q := range list {
		if q == p {
			return true
		}
	}
	return false
}

func insertionSort(s []int32) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// shortestCycle returns the shortest cycle through the child s in its
// component, as the positions of its children, s first, each after the one
// before it (and s after the last). prev is all -1, and left so.
func shortestCycle(d *dagInfo, s int32, comp, prev []int32) []int32 {
	queue := []int32{s}
	prev[s] = s
	defer func() {
		for _, q := range queue {
			prev[q] = -1
		}
	}()
	// Search along After, from s to the siblings it is after, and so on:
	// prev[w] is after w. The first u found that is after s closes the
	// shortest cycle, written forwards s, u, prev[u], ..., s.
	for i := 0; i < len(queue); i++ {
		u := queue[i]
		for _, w := range d.after[u] {
			if w == s {
				var cycle []int32
				cycle = append(cycle, s)
				for x := u; x != s; x = prev[x] {
					cycle = append(cycle, x)
				}
				return cycle
			}
			if comp[w] == comp[s] && prev[w] < 0 {
				prev[w] = u
				queue = append(queue, w)
			}
		}
	}
	return []int32{s} // not reached: s is in a cycle
}

// label names node id in a message: its name, quoted, or its path.
func (c *checker) label(id int32) string {
	if name := c.nodes[id].n.Name; name != "" {
		return fmt.Sprintf("%q", name)
	}
	return "the node at " + ShowPath(c.path(id))
}

// bare names node id in a cycle: its name as it is when it is a valid
// name, else as label does.
func (c *checker) bare(id int32) string {
	if name := c.nodes[id].n.Name; name != "" && checkName(name) == "" {
		return name
	}
	return c.label(id)
}

// inputs checks the inputs of the leaf l. seen, when not nil, is an empty
// map to find repeated names in a long list.
func (c *checker) inputs(l int32, seen map[string]int) {
	n := c.nodes[l].n
	for i, name := range n.Inputs {
		times := 0
		if seen != nil {
			seen[name]++
			times = seen[name] - 1
		} else {
			for _, earlier := range n.Inputs[:i] {
				if earlier == name {
					times++
				}
			}
		}
		if times > 0 {
			if times == 1 {
				c.problem(l, "input %q is listed twice", name)
			}
			continue
		}
		if reserved(name) {
			if !c.inMap(l) {
				c.problem(l, "input %q is only for a leaf inside a map (the element or index of its copy)", name)
			}
			continue
		}
		t, ok := c.names[name]
		switch {
		case !ok:
			c.problem(l, "input %q: no node has this name", name)
		case t == l:
			c.problem(l, "input %q is the name of this leaf itself", name)
		default:
			if why := c.notSure(l, t); why != "" {
				c.problem(l, "input %q (%s) %s: not sure to have succeeded before this leaf starts", name, ShowPath(c.path(t)), why)
			}
		}
	}
}

// notSure returns why node t is not sure to have succeeded before the leaf
// l starts, or "" when it is.
func (c *checker) notSure(l, t int32) string {
	// The lowest common ancestor of l and t, and its children holding each.
	a, b := l, t
	ca, cb := int32(-1), int32(-1)
	for c.nodes[a].depth > c.nodes[b].depth {
		ca, a = a, c.parent(a)
	}
	for c.nodes[b].depth > c.nodes[a].depth {
		cb, b = b, c.parent(b)
	}
	for a != b {
		ca, cb = a, b
		a, b = c.parent(a), c.parent(b)
	}
	switch {
	case cb < 0:
		return "encloses this leaf"
	case ca < 0:
		return "is inside this leaf" // not for a leaf, whose children are not checked
	}
	lca := c.nodes[a].n
	at := ShowPath(c.path(a))
	direct := ca == l && cb == t
	switch lca.Kind {
	case KindPar:
		if direct {
			return "is a sibling in a par"
		}
		return "runs beside this leaf in the par at " + at
	case KindRace:
		return "runs beside this leaf in the race at " + at
	case KindChoice:
		return "is in another case of the choice at " + at
	case KindTry:
		return fmt.Sprintf("is in the %s of the try at %s, and this leaf in its %s", TryParts[c.nodes[cb].edge], at, TryParts[c.nodes[ca].edge])
	case KindSeq:
		if c.nodes[cb].edge > c.nodes[ca].edge {
			if direct {
				return "is a later sibling in a seq"
			}
			return "comes after this leaf in the seq at " + at
		}
	case KindDag:
		d := c.dags[a]
		if d == nil || !d.reaches(c.nodes[ca].edge, c.nodes[cb].edge) {
			who := "this leaf"
			if ca != l {
				who = c.label(ca) + " (holding this leaf)"
			}
			if cb == t {
				return fmt.Sprintf("is a sibling in a dag that %s is not after, directly or through others", who)
			}
			return fmt.Sprintf("is under the dag child %s, which %s is not after, directly or through others", c.label(cb), who)
		}
	default:
		return "is in a node of unknown kind" // not for a valid tree
	}
	// cb is sure: t is when each node from cb down to t is implied by its
	// parent's success. Report the outermost one that is not.
	return c.notImplied(t, cb)
}

// notImplied returns why the success of top (an ancestor of t, or t)
// does not imply that t succeeded, or "" when it does.
func (c *checker) notImplied(t, cb int32) string {
	broken := int32(-1)
	for x := t; x != cb; x = c.parent(x) {
		p := c.nodes[c.parent(x)].n
		if p.Kind == KindTry && (c.nodes[x].edge == 1 || c.nodes[x].edge == 0 && p.Rescue != nil) || p.Kind == KindRace || p.Replicas > 0 || p.Kind == KindChoice || p.Kind == KindMap || p.Kind == KindLoop || c.nodes[x].n.When != nil {
			broken = x
		}
	}
	if c.nodes[cb].n.When != nil {
		broken = cb
	}
	if broken < 0 {
		return ""
	}
	if g := c.nodes[broken].n; g.When != nil {
		return "is under the dag child " + c.label(broken) + ", which has a guard (when) and may be skipped"
	}
	switch p := c.nodes[c.parent(broken)].n; {
	case p.Kind == KindMap:
		return "is inside the map at " + ShowPath(c.path(c.parent(broken))) + ", whose nodes exist once per copy"
	case p.Kind == KindLoop:
		return "is inside the loop at " + ShowPath(c.path(c.parent(broken))) + ", whose nodes exist once per iteration"
	case p.Kind == KindChoice:
		return "is inside the choice at " + ShowPath(c.path(c.parent(broken))) + ", whose success says nothing of any one case"
	case p.Kind == KindRace:
		return "is inside the race at " + ShowPath(c.path(c.parent(broken))) + ", whose success says nothing of any one child"
	case p.Replicas > 0:
		return "is inside the node with replicas at " + ShowPath(c.path(c.parent(broken))) + ", a race of its copies, whose success says nothing of any one copy"
	}
	try := ShowPath(c.path(c.parent(broken)))
	if c.nodes[broken].edge == 1 {
		return "is in the rescue of the try at " + try + ", which runs only when its body fails"
	}
	return "is in the body of the try at " + try + ", which has a rescue (the try can succeed through its rescue with it failed)"
}

// reads checks the name a choice's on, or a dag child's guard, reads
// (key) at node id: a leaf sure to have succeeded when (at) it is read.
func (c *checker) reads(id int32, key, name, at string) {
	t, ok := c.names[name]
	switch {
	case reserved(name):
		c.problem(id, "%s %q: item and index are inputs of a leaf inside a map, not names of nodes", key, name)
	case !ok:
		c.problem(id, "%s %q: no node has this name", key, name)
	case c.nodes[t].n.Kind != KindAct && c.nodes[t].n.Kind != KindWait:
		c.problem(id, "%s %q (%s) is a %s, not a leaf (only a leaf has an output)", key, name, ShowPath(c.path(t)), c.nodes[t].n.Kind)
	default:
		if why := c.notSure(id, t); why != "" {
			why = strings.Replace(why, "this leaf", "this node", 1)
			c.problem(id, "%s %q (%s) %s: not sure to have succeeded when %s", key, name, ShowPath(c.path(t)), why, at)
		}
	}
}

// reaches reports whether the child at position from is after the child
// at position to, directly or through others.
func (d *dagInfo) reaches(from, to int32) bool {
	if d.after == nil {
		return false
	}
	if d.reachedFrom != from {
		if d.reached == nil {
			d.reached = make([]uint32, len(d.kids))
		}
		d.stamp++
		d.reachedFrom = from
		q := append(d.queue[:0], from)
		for i := 0; i < len(q); i++ {
			for _, w := range d.after[q[i]] {
				if d.reached[w] != d.stamp {
					d.reached[w] = d.stamp
					q = append(q, w)
				}
			}
		}
		d.queue = q
	}
	return d.reached[to] == d.stamp
}
