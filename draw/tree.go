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
	part string  // the try part this node is, or ""
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
	case ast.KindSeq, ast.KindPar, ast.KindDag, ast.KindRace:
		for k := range n.Children {
			kids = append(kids, &n.Children[k])
		}
	case ast.KindTry:
		for _, p := range []*ast.Node{n.Body, n.Rescue, n.Finally} {
			if p != nil {
				kids = append(kids, p)
			}
		}
	}
	if len(kids) != len(nodes[i].kids) {
		return fmt.Errorf("node %s has %d children in the workflow and %d in the state", ast.ShowPath(nodes[i].info.Path), len(kids), len(nodes[i].kids))
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
