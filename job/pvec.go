package job

// pvec is a persistent vector of node states: a 32-way trie whose nodes are
// shared between versions of a job. Reading is O(log32 n); writing copies the
// path from the root to the changed slot (four small arrays for 100,000
// nodes) unless those arrays already belong to the current edit, so one
// Restart copies each touched path once. This is what lets Restart leave its
// input untouched while costing O(results · depth), not O(tree).
//
// An edit is a token allocated per Restart. Nodes carry the token of the
// edit that created them; only that edit may change them in place. Once
// Restart returns, the token is dropped and every node is immutable.

const (
	pvecBits  = 5
	pvecWidth = 1 << pvecBits
	pvecMask  = pvecWidth - 1
)

type edit struct{ _ byte } // non-zero size so each token is distinct

type pnode struct {
	owner *edit
	kids  []*pnode // inner nodes
	vals  []nstate // leaves
}

type pvec struct {
	root  *pnode
	n     int
	shift uint
}

// newPvec builds a vector holding vals, owned by nobody.
func newPvec(vals []nstate) pvec {
	v := pvec{n: len(vals)}
	// Leaves.
	var level []*pnode
	for i := 0; i < len(vals); i += pvecWidth {
		end := min(i+pvecWidth, len(vals))
		leaf := &pnode{vals: make([]nstate, pvecWidth)}
		copy(leaf.vals, vals[i:end])
		level = append(level, leaf)
	}
	if len(level) == 0 {
		level = append(level, &pnode{vals: make([]nstate, pvecWidth)})
	}
	for len(level) > 1 {
		var up []*pnode
		for i := 0; i < len(level); i += pvecWidth {
			end := min(i+pvecWidth, len(level))
			in := &pnode{kids: make([]*pnode, pvecWidth)}
			copy(in.kids, level[i:end])
			up = append(up, in)
		}
		level = up
		v.shift += pvecBits
	}
	v.root = level[0]
	return v
}

func (v *pvec) get(i int32) nstate {
	n := v.root
	for s := v.shift; s > 0; s -= pvecBits {
		n = n.kids[(uint(i)>>s)&pvecMask]
	}
	return n.vals[uint(i)&pvecMask]
}

// ptr returns a pointer to slot i that the edit e may write, copying the
// path from the root as needed. v itself is updated to the new root.
func (v *pvec) ptr(e *edit, i int32) *nstate {
	v.root = own(e, v.root)
	n := v.root
	for s := v.shift; s > 0; s -= pvecBits {
		k := (uint(i) >> s) & pvecMask
		c := own(e, n.kids[k])
		n.kids[k] = c
		n = c
	}
	return &n.vals[uint(i)&pvecMask]
}

func own(e *edit, n *pnode) *pnode {
	if n.owner == e {
		return n
	}
	c := &pnode{owner: e}
	if n.kids != nil {
		c.kids = make([]*pnode, pvecWidth)
		copy(c.kids, n.kids)
	} else {
		c.vals = make([]nstate, pvecWidth)
		copy(c.vals, n.vals)
	}
	return c
}

// each calls f for every slot in order.
func (v *pvec) each(f func(i int32, s *nstate)) {
	var walk func(n *pnode, shift uint, base int)
	walk = func(n *pnode, shift uint, base int) {
		if shift == 0 {
			for k := range n.vals {
				i := base + k
				if i >= v.n {
					return
				}
				f(int32(i), &n.vals[k])
			}
			return
		}
		for k, c := range n.kids {
			b := base + k<<shift
			if c == nil || b >= v.n {
				return
			}
			walk(c, shift-pvecBits, b)
		}
	}
	walk(v.root, v.shift, 0)
}
