package draw

import (
	"fmt"
	"strings"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
)

// node is one node of the job's tree, as Layout reads it. Nodes are kept
// in pre-order, so the nodes under node i are i+1 to i+size-1.
type node struct {
	info info
	kids []int32 // children in order; a try's parts present, in order
	part string  // the try part this node is, or the choice case ("when \"gold\"", "else"); ""
	deps []int32 // child of a dag: positions among its siblings of those it is after, deduplicated
	size int32   // nodes in its subtree, itself included
}

// info is what Layout keeps of a job.NodeInfo.
type info struct {
	Path, Name, Action, Error string
	Payload                   []byte
	Kind                      ast.Kind
	Status                    job.Status
	Attempt                   int
	// Read from the workflow: what the node's kind and options say
	// (detail), and a dag child's guard.
	Detail, Guard string
}

// readTree returns j's nodes in pre-order, with their children, try parts,
// dag edges and subtree sizes. It reads the states with Walk and the dag
// edges from the workflow, which is in the same pre-order; a mismatch is
// an error, never a wrong drawing.
func readTree(j job.Job) ([]node, error) {
	nodes := make([]node, 0, ast.Count(j.Workflow()))
	var stack []int32 // stack[d]: the last node seen at depth d
	j.Walk(func(n job.NodeInfo) bool {
		i := int32(len(nodes))
		nd := node{size: 1, info: info{
			Path: n.Path, Name: n.Name, Action: n.Action, Error: n.Error,
			Payload: n.Payload, Kind: n.Kind, Status: n.Status, Attempt: n.Attempt,
		}}
		stack = append(stack[:n.Depth], i)
		if n.Depth > 0 {
			p := stack[n.Depth-1]
			nodes[p].kids = append(nodes[p].kids, i)
			if nodes[p].info.Kind == ast.KindTry {
				nd.part = n.Path[strings.LastIndexByte(n.Path, '.')+1:]
			}
		}
		nodes = append(nodes, nd)
		return true
	})
	if len(nodes) == 0 {
		return nil, fmt.Errorf("draw: a zero job")
	}
	// Subtree sizes: in pre-order a node's subtree is contiguous, so
	// summing children after they are summed needs one pass backwards.
	for i := len(nodes) - 1; i >= 0; i-- {
		for _, k := range nodes[i].kids {
			nodes[i].size += nodes[k].size
		}
	}
	// Replicas are drawn as the races of copies the job runs.
	root := ast.Expand(j.Workflow())
	next := 0
	if err := linkDags(&root, nodes, &next); err != nil {
		return nil, fmt.Errorf("draw: job %s: %w", j.ID(), err)
	}
	if next != len(nodes) {
		return nil, fmt.Errorf("draw: job %s: the workflow has %d nodes and the state %d", j.ID(), next, len(nodes))
	}
	return nodes, nil
}

// linkDags walks the workflow rooted at n in pre-order beside nodes (next
// is n's index) and records the edges of dags' children.
func linkDags(n *ast.Node, nodes []node, next *int) error {
	i := *next
	if i >= len(nodes) || nodes[i].info.Kind != n.Kind {
		return fmt.Errorf("the workflow and the state differ at node %d", i)
	}
	*next++
	var kids []*ast.Node
	switch n.Kind {
	case ast.KindTry:
		for _, p := range []*ast.Node{n.Body, n.Rescue, n.Finally} {
			if p != nil {
				kids = append(kids, p)
			}
		}
	case ast.KindMap:
		// One copy of its template per element, as many as the state
		// holds: none before the map starts.
		for range nodes[i].kids {
			kids = append(kids, &n.Children[0])
		}
	default: // seq, par, dag, race, choice, loop; none for a leaf
		for k := range n.Children {
			kids = append(kids, &n.Children[k])
		}
	}
	if len(kids) != len(nodes[i].kids) {
		return fmt.Errorf("node %s has %d children in the workflow and %d in the state", ast.ShowPath(nodes[i].info.Path), len(kids), len(nodes[i].kids))
	}
	nodes[i].info.Detail = detail(n)
	if n.When != nil {
		nodes[i].info.Guard = "when " + guard(n.When)
	}
	if n.Kind == ast.KindChoice {
		for k := range kids {
			nodes[nodes[i].kids[k]].part = clip(caseLabel(n, k), payloadChars)
		}
	}
	if n.Kind == ast.KindDag {
		pos := make(map[string]int32, len(n.Children))
		for k, c := range n.Children {
			pos[c.Name] = int32(k)
		}
		for k, c := range n.Children {
			kid := &nodes[nodes[i].kids[k]]
			for _, a := range c.After {
				d, ok := pos[a]
				if !ok {
					return fmt.Errorf("node %s is after %q, no sibling of it", ast.ShowPath(kid.info.Path), a)
				}
				if !containsInt32(kid.deps, d) {
					kid.deps = append(kid.deps, d)
				}
			}
		}
	}
	for _, k := range kids {
		if err := linkDags(k, nodes, next); err != nil {
			return err
		}
	}
	return nil
}

func containsInt32(xs []int32, x int32) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// detail is what a node's kind and options say beyond its children: a
// wait's signal, a sleep's duration, an end's reason, a choice's output,
// a race's need, a par's or dag's limit, a map's and a loop's fields.
func detail(n *ast.Node) string {
	var parts []string
	switch n.Kind {
	case ast.KindWait:
		parts = append(parts, "signal "+n.Signal)
		if n.Transient {
			parts = append(parts, "transient")
		}
	case ast.KindSleep:
		parts = append(parts, n.Sleep.String())
	case ast.KindEnd:
		parts = append(parts, n.Reason)
	case ast.KindChoice:
		on := "on " + n.On
		if n.Multi {
			on += ", multi"
		}
		parts = append(parts, on)
	case ast.KindMap:
		parts = append(parts, "over "+n.Over)
	case ast.KindLoop:
		if n.Until != nil {
			parts = append(parts, "until "+guard(n.Until))
		}
		parts = append(parts, "max "+itoa(n.Max))
	}
	if n.Need > 0 {
		parts = append(parts, "need "+itoa(n.Need))
	}
	if n.Limit > 0 {
		parts = append(parts, "limit "+itoa(n.Limit))
	}
	return strings.Join(parts, ", ")
}

// guard writes a dag guard or a loop's until: output = value.
func guard(g *ast.Guard) string { return g.Output + " = " + string(g.Equals) }

// caseLabel names child k of the choice n: its case's value (or values)
// or "else".
func caseLabel(n *ast.Node, k int) string {
	if k >= len(n.Cases) {
		return "else"
	}
	c := n.Cases[k]
	if !c.Any && len(c.Values) == 1 {
		return "when " + string(c.Values[0])
	}
	vs := make([]string, len(c.Values))
	for i, v := range c.Values {
		vs[i] = string(v)
	}
	return "when any [" + strings.Join(vs, ",") + "]"
}
