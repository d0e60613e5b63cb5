package job

// pvec is a persistent vector of node states: a trie whose nodes are shared
// between versions of a job. Inner nodes are 16 wide and leaves 8 wide; a
// vector of at most 16 slots (a small workflow, or the wide nodes of most)
// is one leaf of its own size, 8 or 16 wide. Reading is O(log16 n);
// writing copies the path from the root to the changed slot (five small
// nodes for 100,000 slots) unless those nodes already belong to the
// current edit, so one Restart copies each touched path once. This is
// what lets Restart leave its input untouched while costing
// O(results · depth), not O(tree). The nodes are small because every step
// copies some: a path of a job of 1,000 actions is about 600 bytes (it was
// about 1,000 with 32-wide inner nodes and 16-wide leaves), which the
// garbage collector then collects.
//
// An edit is a token allocated per New or Restart. Nodes carry the token of
// the edit that created them; only that edit may change them in place. Once
// New or Restart returns, the token is dropped and every node is immutable.

const (
	pvecBits  = 4 // inner nodes
	pvecWidth = 1 << pvecBits
	pvecMask  = pvecWidth - 1

	leafBits  = 3 // leaves
	leafWidth = 1 << leafBits
	leafMask  = leafWidth - 1

	// smallWidth is the most slots of a vector kept in one leaf of 16
	// (one of leafWidth when it has no more than that).
	smallWidth = 16
)

// edit is the token of one New or Restart: the trie nodes it owns are the
// ones it copied or made, which it may write in place. Only its address
// matters.
type edit struct{ _ byte } // non-zero size so each token is distinct

// pnode is the header shared by inner nodes and leaves. Exactly one of
// kids, vals and small is set, and it points into the node's own
// allocation (see innerNode, leafNode and smallNode), so that each trie
// node is one allocation.
type pnode struct {
	owner *edit
	kids  *[pvecWidth]*pnode  // inner nodes
	vals  *[leafWidth]nstate  // leaves
	small *[smallWidth]nstate // the lone leaf of a vector of 9 to 16 slots
}

type innerNode struct {
	pnode
	arr [pvecWidth]*pnode
}

type leafNode struct {
	pnode
	arr [leafWidth]nstate
}

type smallNode struct {
	pnode
	arr [smallWidth]nstate
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

func newSmall(owner *edit) *pnode {
	n := &smallNode{}
	n.owner, n.small = owner, &n.arr
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
	case n <= smallWidth:
		v.root = newSmall(owner)
		if vals != nil {
			copy(v.root.small[:], vals[:n])
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
	if n.small != nil {
		return n.small[uint(i)%smallWidth]
	}
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
	if n.small != nil {
		return &n.small[uint(i)%smallWidth]
	}
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
	switch {
	case n.kids != nil:
		c := newInner(e)
		*c.kids = *n.kids
		return c
	case n.small != nil:
		c := newSmall(e)
		*c.small = *n.small
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
	if a.small != nil {
		for i := range smallWidth {
			if base+i >= n {
				break
			}
			if a.small[i] != b.small[i] {
				f(int32(base + i))
			}
		}
		return 1
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

// grow returns v with n slots (n at least v.n), the new ones zero. The
// nodes of v are shared but for the right edge, which the edit e owns
// in the result (copied if need be), and the levels added above a root
// too small for n: O(new slots + depth), not O(n). A vector of at most
// smallWidth slots, whose lone leaf is laid out apart, is built anew.
func (v pvec) grow(e *edit, n int) pvec {
	if n <= v.n {
		return v
	}
	if v.n <= smallWidth {
		vals := make([]nstate, n)
		for i := range v.n {
			vals[i] = v.get(int32(i))
		}
		return newPvec(n, vals, e)
	}
	// Add levels while the root cannot hold n slots: a root at shift s
	// holds 1 << (s + pvecBits).
	for n > 1<<(v.shift+pvecBits) {
		r := newInner(e)
		r.kids[0] = v.root
		v.root = r
		v.shift += pvecBits
	}
	v.root = own(e, v.root)
	// Make the missing nodes, a leaf at a time.
	for i := (v.n - 1) &^ leafMask; i < n; i += leafWidth {
		p := v.root
		for s := v.shift; s > leafBits; s -= pvecBits {
			k := (uint(i) >> s) & pvecMask
			c := p.kids[k]
			if c == nil {
				c = newInner(e)
			} else {
				c = own(e, c)
			}
			p.kids[k] = c
			p = c
		}
		k := (uint(i) >> leafBits) & pvecMask
		if p.kids[k] == nil {
			p.kids[k] = newLeaf(e)
		}
	}
	v.n = n
	return v
}
