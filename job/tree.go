package job

import (
	"strconv"

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
}

// Try parts, as indexes into tnode.kids of a try.
const (
	partBody = iota
	partRescue
	partFinally
)

type tnode struct {
	slot   int32 // index in splitVec.wide if wide, else in splitVec.main
	wide   bool
	kind   ast.Kind
	parent int32   // -1 for the root
	edge   int32   // index among the parent's children, or the try part
	kids   []int32 // seq/par children; for a try [body, rescue, finally], -1 when absent
	act    *ast.Node
	id1    string // act: the action ID of attempt 1, made once here
}

func compile(root ast.Node) (*tree, error) {
	if err := ast.Validate(root); err != nil {
		return nil, err
	}
	t := &tree{root: root, nodes: make([]tnode, 0, ast.Count(root))}
	t.add(&t.root, -1, 0, make([]byte, 0, 64))
	return t, nil
}

// add appends n and its subtree in pre-order, n being at path (as written
// by path, "" for the root), and returns n's index. The children's paths
// are built in path's spare capacity, which each child reuses in turn.
func (t *tree) add(n *ast.Node, parent, edge int32, path []byte) int32 {
	id := int32(len(t.nodes))
	t.nodes = append(t.nodes, tnode{kind: n.Kind, parent: parent, edge: edge})
	// A seq or par whose children fill more than a trie leaf is updated
	// from many leaves' paths: keep it in the small trie of such nodes.
	// Every other node stays in pre-order beside its neighbours.
	if wide(n) {
		t.nodes[id].wide = true
		t.nodes[id].slot = int32(t.wides)
		t.wides++
	} else {
		t.nodes[id].slot = int32(t.narrow)
		t.narrow++
	}
	switch n.Kind {
	case ast.KindAct:
		t.nodes[id].act = n
		t.nodes[id].id1 = firstActionID(path)
		t.leaves++
	case ast.KindSeq, ast.KindPar:
		kids := make([]int32, len(n.Children))
		for i := range n.Children {
			kids[i] = t.add(&n.Children[i], id, int32(i), appendEdge(path, n.Kind, int32(i)))
		}
		t.nodes[id].kids = kids
	case ast.KindTry:
		kids := []int32{-1, -1, -1}
		for part, p := range [...]*ast.Node{n.Body, n.Rescue, n.Finally} {
			if p != nil {
				kids[part] = t.add(p, id, int32(part), appendEdge(path, n.Kind, int32(part)))
			}
		}
		t.nodes[id].kids = kids
	}
	return id
}

// firstActionID returns ActionID(string(path), 1) with one allocation.
func firstActionID(path []byte) string {
	if len(path) == 0 {
		return ast.RootPath + "#1"
	}
	return string(append(path, "#1"...))
}

var partNames = [...]string{ast.PartBody, ast.PartRescue, ast.PartFinally}

// appendEdge appends to the path b the step to the child at edge of a node
// of kind parent: "seq[2]", or a try's part name.
func appendEdge(b []byte, parent ast.Kind, edge int32) []byte {
	if len(b) > 0 {
		b = append(b, '.')
	}
	if parent == ast.KindTry {
		return append(b, partNames[edge]...)
	}
	b = append(b, parent.String()...)
	b = append(b, '[')
	b = strconv.AppendInt(b, int64(edge), 10)
	return append(b, ']')
}

// path returns the path of node id, "" for the root.
func (t *tree) path(id int32) string {
	if t.nodes[id].parent < 0 {
		return ""
	}
	var edges []int32
	for n := id; t.nodes[n].parent >= 0; n = t.nodes[n].parent {
		edges = append(edges, n)
	}
	var b []byte
	for i := len(edges) - 1; i >= 0; i-- {
		n := &t.nodes[edges[i]]
		b = appendEdge(b, t.nodes[n.parent].kind, n.edge)
	}
	return string(b)
}

// lookup finds the node at path p (as written by path; "" or "root" for the
// root). It returns -1 and a reason when p names no node.
func (t *tree) lookup(p string) (int32, string) {
	n := int32(0)
	if p == "" || p == ast.RootPath {
		return 0, ""
	}
	for len(p) > 0 {
		var edge string
		if i := indexByte(p, '.'); i >= 0 {
			edge, p = p[:i], p[i+1:]
			if p == "" {
				return -1, "path ends with '.'"
			}
		} else {
			edge, p = p, ""
		}
		tn := &t.nodes[n]
		switch tn.kind {
		case ast.KindTry:
			part := -1
			for k, name := range partNames {
				if edge == name {
					part = k
				}
			}
			if part < 0 {
				return -1, "step " + strconv.Quote(edge) + " under a try (want body, rescue or finally)"
			}
			if tn.kids[part] < 0 {
				return -1, "try has no " + edge
			}
			n = tn.kids[part]
		case ast.KindSeq, ast.KindPar:
			k := tn.kind.String()
			if len(edge) < len(k)+3 || edge[:len(k)] != k || edge[len(k)] != '[' || edge[len(edge)-1] != ']' {
				return -1, "step " + strconv.Quote(edge) + " under a " + k + " (want " + k + "[i])"
			}
			i, ok := atoi(edge[len(k)+1 : len(edge)-1])
			if !ok || i >= len(tn.kids) {
				return -1, "step " + strconv.Quote(edge) + ": no such child"
			}
			n = tn.kids[i]
		default:
			return -1, "step " + strconv.Quote(edge) + " below an action"
		}
	}
	return n, ""
}

func indexByte(s string, c byte) int {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return i
		}
	}
	return -1
}

// atoi parses a canonical non-negative decimal (no sign, no leading zero).
func atoi(s string) (int, bool) {
	if s == "" || len(s) > 9 || (len(s) > 1 && s[0] == '0') {
		return 0, false
	}
	v := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	return v, true
}

func wide(n *ast.Node) bool {
	return (n.Kind == ast.KindSeq || n.Kind == ast.KindPar) && len(n.Children) > leafWidth
}
