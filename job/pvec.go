package job

// pvec is a persistent vector of node states: a trie whose nodes are shared
// between versions of a job. Inner nodes are 32 wide and leaves 16 wide (a
// step copies the leaves it touches: 16-wide ones measured faster per step
// than 32-wide, and 8-wide no faster). Reading is O(log32 n); writing
// copies the path from the root to the changed slot (four small nodes for
// 100,000 slots) unless those nodes already belong to the current edit, so
// one Restart copies each touched path once. This is what lets Restart
// leave its input untouched while costing O(results · depth), not O(tree).
//
// An edit is a token allocated per New or Restart. Nodes carry the token of
// the edit that created them; only that edit may change them in place. Once
// New or Restart returns, the token is dropped and every node is immutable.

const (
	pvecBits  = 5 // inner nodes
	pvecWidth = 1 << pvecBits
	pvecMask  = pvecWidth - 1

	leafBits  = 4 // leaves
	leafWidth = 1 << leafBits
	leafMask  = leafWidth - 1
)

// edit is the token of one New or Restart: the trie nodes it owns are the
// ones it copied or made, which it may write in place. Only its address
// matters.
type edit struct{ _ byte } // non-zero size so each token is distinct

// pnode is the header shared by inner nodes and leaves. Exactly one of kids
// and vals is set, and it points into the node's own allocation (see
// innerNode and leafNode), so that each trie node is one allocation.
type pnode struct {
	owner *edit
	kids  *[pvecWidth]*pnode // inner nodes
	vals  *[leafWidth]nstate // leaves
}

type innerNode struct {
	pnode
	arr [pvecWidth]*pnode
}

type leafNode struct {
	pnode
	arr [leafWidth]nstate
}

func newInner(owner *edit) *pnode {
	n := &innerNode{}
	n.owner, n.kids = owner, &n.arr
	return &n.pnode
}

func newLeaf(owner *edit) *pnode {
	n := &leafNode{}
	n.owner, n.vals = owner, &n.arr
	return &n.pnode
}

type pvec struct {
	root *pnode
	n    int
	// shift is how far to shift an index right to pick the root's child:
	// leafBits + pvecBits·(inner levels − 1), or 0 when the root is a leaf.
	shift int
}

// newPvec builds a vector of n states, copied from vals or, if vals is nil,
// zero. Its nodes belong to owner, which is nil for nobody; New passes its
// own edit so that starting the job writes into the trie it has just built
// instead of copying it.
func newPvec(n int, vals []nstate, owner *edit) pvec {
	v := pvec{n: n}
	switch {
	case n == 0:
		// No slot: no node either (get and ptr are never called, and two
		// empty vectors have no difference).
		return v
	case n <= leafWidth:
		// One leaf, the root: no level to build.
		v.root = newLeaf(owner)
		if vals != nil {
			copy(v.root.vals[:], vals[:n])
		}
		return v
	}
	level := make([]*pnode, 0, (n+leafMask)/leafWidth)
	for i := 0; i < n; i += leafWidth {
		leaf := newLeaf(owner)
		if vals != nil {
			copy(leaf.vals[:], vals[i:min(i+leafWidth, n)])
		}
		level = append(level, leaf)
	}
	if len(level) == 0 {
		level = append(level, newLeaf(owner))
	}
	for bits := leafBits; len(level) > 1; bits += pvecBits {
		up := make([]*pnode, 0, (len(level)+pvecMask)/pvecWidth)
		for i := 0; i < len(level); i += pvecWidth {
			in := newInner(owner)
			copy(in.kids[:], level[i:min(i+pvecWidth, len(level))])
			up = append(up, in)
		}
		level = up
		v.shift = bits
	}
	v.root = level[0]
	return v
}

func (v *pvec) get(i int32) nstate {
	n := v.root
	for s := v.shift; s >= leafBits; s -= pvecBits {
		n = n.kids[(uint(i)>>s)&pvecMask]
	}
	return n.vals[uint(i)&leafMask]
}

// ptr returns a pointer to slot i that the edit e may write, copying the
// path from the root as needed. v itself is updated to the new root.
func (v *pvec) ptr(e *edit, i int32) *nstate {
	v.root = own(e, v.root)
	n := v.root
	for s := v.shift; s >= leafBits; s -= pvecBits {
		k := (uint(i) >> s) & pvecMask
		c := own(e, n.kids[k])
		n.kids[k] = c
		n = c
	}
	return &n.vals[uint(i)&leafMask]
}

// own returns n if e owns it, else a copy of n that e owns.
func own(e *edit, n *pnode) *pnode {
	if n.owner == e {
		return n
	}
	if n.kids != nil {
		c := newInner(e)
		*c.kids = *n.kids
		return c
	}
	c := newLeaf(e)
	*c.vals = *n.vals
	return c
}

// diff calls f, in order, with every slot whose state differs between v
// and w, two vectors of the same length. It descends only where their
// nodes differ (a node shared by both holds the same states, since nodes
// are immutable once their edit ends), so for two versions of one job it
// costs O(slots changed × depth), not O(n). It returns how many pairs of
// distinct nodes it descended into, which is that cost (each costs at
// most one pointer comparison per child).
func (v *pvec) diff(w *pvec, f func(slot int32)) int {
	return diffNodes(v.root, w.root, v.shift, 0, v.n, f)
}

// diffNodes is diff below a and b, nodes at the same place of two
// vectors of length n: their first slot is base, and shift picks their
// children (see pvec.shift).
func diffNodes(a, b *pnode, shift, base, n int, f func(slot int32)) int {
	if a == b {
		return 0
	}
	if a.vals != nil {
		for i := range leafWidth {
			if base+i >= n {
				break
			}
			if a.vals[i] != b.vals[i] {
				f(int32(base + i))
			}
		}
		return 1
	}
	compared := 1
	for k := range pvecWidth {
		kb := base + k<<shift
		if kb >= n {
			break
		}
		compared += diffNodes(a.kids[k], b.kids[k], shift-pvecBits, kb, n, f)
	}
	return compared
}
