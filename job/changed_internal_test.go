package job

import (
	"testing"

	"github.com/batonwf/baton/ast"
)

// TestChangedVisitsDepth: for one result, Changed's diff of the tries
// descends into one trie node per level, whatever the size of the par: a
// par of 100,000 leaves keeps them in a trie four levels deep (and itself
// in a one-node trie of wide nodes), where a full walk would descend into
// some 6,500 trie nodes.
func TestChangedVisitsDepth(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a job of 100,000 leaves")
	}
	for _, n := range []int{10, 100000} {
		kids := make([]ast.Node, n)
		for i := range kids {
			kids[i] = ast.Act("task", nil)
		}
		tr, err := New("big", ast.Par(kids...))
		if err != nil {
			t.Fatal(err)
		}
		old := tr.Job
		a := tr.Actions[n/2]
		tr, err = Restart(old, []Result{a.Succeed(nil)})
		if err != nil {
			t.Fatal(err)
		}
		ids, compared := changedNodes(&old, &tr.Job)
		if len(ids) != 1 || old.t.path(ids[0]) != a.Path() {
			t.Fatalf("par of %d: changed nodes %v, want only %s", n, ids, a.Path())
		}
		// Main trie: one path from the root to a leaf; wide trie: its root.
		if levels := old.st.main.levels() + old.st.wide.levels(); compared > levels {
			t.Errorf("par of %d: compared %d trie nodes, want at most %d (the depth of the tries)", n, compared, levels)
		}
		t.Logf("par of %d: %d trie nodes compared", n, compared)
	}
}

// levels returns the depth of v's trie: 1 for a lone leaf.
func (v *pvec) levels() int {
	if v.shift == 0 {
		return 1
	}
	return 2 + (v.shift-leafBits)/pvecBits
}

// TestNodeOfSlot: nodeOfSlot inverts the slots of the narrow nodes, with
// wide nodes first, last, nested and side by side.
func TestNodeOfSlot(t *testing.T) {
	leaves := func(n int) []ast.Node {
		kids := make([]ast.Node, n)
		for i := range kids {
			kids[i] = ast.Act("a", nil)
		}
		return kids
	}
	trees := []ast.Node{
		ast.Par(leaves(20)...),
		ast.Seq(ast.Act("x", nil), ast.Par(leaves(17)...), ast.Par(leaves(3)...), ast.Seq(leaves(40)...)),
		ast.Par(append(leaves(16), ast.Par(append(leaves(17), ast.Seq(leaves(18)...))...))...),
		ast.Seq(leaves(3)...),
	}
	for i, root := range trees {
		tr, err := compile(root)
		if err != nil {
			t.Fatal(err)
		}
		for id := range tr.nodes {
			tn := &tr.nodes[id]
			if tn.wide {
				if got := tr.wideIDs[tn.slot]; got != int32(id) {
					t.Errorf("tree %d: wideIDs[%d] = %d, want %d", i, tn.slot, got, id)
				}
			} else if got := tr.nodeOfSlot(tn.slot); got != int32(id) {
				t.Errorf("tree %d: nodeOfSlot(%d) = %d, want %d", i, tn.slot, got, id)
			}
		}
	}
}
