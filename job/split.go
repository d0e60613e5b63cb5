package job

// splitVec holds the node states in two tries, each indexed by tnode.slot:
// one, in pre-order, for every node but the wide ones, and one for the seq
// and par nodes with more than wideKids children. A wide node is
// updated whenever any child settles, from all over the big trie; in its
// own small trie that costs one short path, instead of a second full-depth
// path in every step (a par of 100,000 actions keeps its state in a
// one-leaf trie). Narrow nodes stay next to their children, so a bushy
// tree still touches few leaves per result.
type splitVec struct {
	t    *tree
	main pvec
	wide pvec
}

// newSplitVec builds the states of t's nodes, copied from vals (indexed by
// node) or, if vals is nil, zero, owned by owner (see newPvec).
func newSplitVec(t *tree, vals []nstate, owner *edit) splitVec {
	v := splitVec{t: t}
	var ms, ws []nstate
	if vals != nil {
		ms, ws = make([]nstate, t.narrow), make([]nstate, t.wides)
		for i, s := range vals {
			if tn := &t.nodes[i]; tn.wide {
				ws[tn.slot] = s
			} else {
				ms[tn.slot] = s
			}
		}
	}
	v.main = newPvec(t.narrow, ms, owner)
	v.wide = newPvec(t.wides, ws, owner)
	return v
}

func (v *splitVec) get(id int32) nstate {
	tn := &v.t.nodes[id]
	if tn.wide {
		return v.wide.get(tn.slot)
	}
	return v.main.get(tn.slot)
}

func (v *splitVec) ptr(e *edit, id int32) *nstate {
	tn := &v.t.nodes[id]
	if tn.wide {
		return v.wide.ptr(e, tn.slot)
	}
	return v.main.ptr(e, tn.slot)
}

// each calls f for every node in order.
func (v *splitVec) each(f func(i int32, s *nstate)) {
	var s nstate
	for i := range v.t.nodes {
		s = v.get(int32(i))
		f(int32(i), &s)
	}
}
