package api

import (
	"strconv"
	"strings"
	"time"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
)

// Chosen is what a choice read and chose (Node.Choice).
type Chosen struct {
	// On is the name of the leaf whose output the choice reads.
	On string `json:"on"`
	// Read is that output, clipped, as the choice read it when it
	// started ("null" for a leaf that gave none); "" for a choice not
	// started.
	Read    string `json:"read,omitempty"`
	Clipped bool   `json:"clipped,omitempty"`
	// Cases are the indexes of the cases the choice chose, in order;
	// Else says it chose its else. Neither, for a choice that started:
	// it chose nothing (and failed, kind no_case or not_an_array).
	Cases []int `json:"cases,omitempty"`
	Else  bool  `json:"else,omitempty"`
}

// Signals are the signals a job keeps and those its waits took.
type Signals struct {
	// Kept are the signals kept for a wait to come, oldest first.
	Kept []KeptSignal `json:"kept,omitempty"`
	// Taken says which wait took which signal, in the order taken.
	Taken []TakenSignal `json:"taken,omitempty"`
}

// KeptSignal is a signal a job keeps for a wait that has not started.
type KeptSignal struct {
	Name string `json:"name"`
	ID   string `json:"id"`
	// Payload is the signal's payload, clipped ("null" for none).
	Payload string `json:"payload"`
	Clipped bool   `json:"clipped,omitempty"`
	// At is when the runner received it; absent if it carried no time.
	At *time.Time `json:"at,omitempty"`
}

// SignalsOf returns the signals j keeps and those its waits took,
// payloads clipped to limit bytes; nil when there are none.
func SignalsOf(j job.Job, limit int) *Signals {
	kept, taken := j.Signals()
	if len(kept) == 0 && len(taken) == 0 {
		return nil
	}
	out := &Signals{}
	for _, k := range kept {
		p := string(k.Payload)
		if p == "" {
			p = "null"
		}
		s := KeptSignal{Name: k.Name, ID: k.ID}
		s.Payload, s.Clipped = Clip(p, limit)
		if t, ok := utc(k.At); ok {
			s.At = t
		}
		out.Kept = append(out.Kept, s)
	}
	for _, t := range taken {
		out.Taken = append(out.Taken, TakenSignal{Name: t.Name, ID: t.ID, Path: t.Path})
	}
	return out
}

var (
	kindChoice = ast.KindChoice.String()
	kindWait   = ast.KindWait.String()
)

// namedOutput is the output of the node called name, at path, that
// succeeded.
type namedOutput struct {
	name, path string
	out        []byte
}

// readChoices sets Signal on the waits of nodes, a whole tree's in
// pre-order (NodesOf), and Choice on its choices: the leaf each reads
// (resolved as the reducer resolves it: in the same map copy or loop
// iteration first, see nearest), what it read (from named, the outputs
// of the named nodes that succeeded) and which of its children it did
// not skip. The workflow is read only when there is a wait or a choice,
// and named indexed only when there is a choice that started.
func readChoices(j job.Job, nodes []Node, named []namedOutput, limit int) {
	var root ast.Node
	var outs map[string][]namedOutput
	read := false
	for i := range nodes {
		n := &nodes[i]
		if n.Kind != kindChoice && n.Kind != kindWait {
			continue
		}
		if !read {
			root, read = ast.Expand(j.Workflow()), true
		}
		x := nodeAt(&root, n.Path)
		if x == nil || x.Kind.String() != n.Kind {
			continue
		}
		if n.Kind == kindWait {
			n.Signal = x.Signal
			continue
		}
		c := &Chosen{On: x.On}
		n.Choice = c
		if n.Status == job.StatusIdle.String() || n.Status == job.StatusSkipped.String() {
			continue
		}
		if outs == nil {
			outs = make(map[string][]namedOutput)
			for _, o := range named {
				outs[o.name] = append(outs[o.name], o)
			}
		}
		if o, ok := nearest(outs[x.On], n.Path); ok {
			r := string(o)
			if r == "" {
				r = "null"
			}
			c.Read, c.Clipped = Clip(r, limit)
		}
		for k := i + 1; k < len(nodes) && nodes[k].Depth > n.Depth; k++ {
			ch := &nodes[k]
			if ch.Depth != n.Depth+1 || ch.Status == job.StatusSkipped.String() || ch.Status == job.StatusIdle.String() {
				continue
			}
			switch ix := lastIndex(ch.Path, kindChoice); {
			case ix < 0:
			case ix < len(x.Cases):
				c.Cases = append(c.Cases, ix)
			default:
				c.Else = true
			}
		}
	}
}

// nearest returns the output, among outs (those of the nodes of one
// name), of the node whose path shares the most edges with path: the
// node of the same map copy or loop iteration as the node at path, else
// of the enclosing ones, as the reducer resolves names.
func nearest(outs []namedOutput, path string) ([]byte, bool) {
	best, bestN := -1, -1
	for i, o := range outs {
		if n := sharedEdges(o.path, path); n > bestN {
			best, bestN = i, n
		}
	}
	if best < 0 {
		return nil, false
	}
	return outs[best].out, true
}

// sharedEdges counts the leading edges paths a and b share.
func sharedEdges(a, b string) int {
	n := 0
	for a != "" && b != "" {
		ea, ra, _ := strings.Cut(a, ".")
		eb, rb, _ := strings.Cut(b, ".")
		if ea != eb {
			break
		}
		n++
		a, b = ra, rb
	}
	return n
}

// nodeAt returns the node of the tree rooted at root (as ast.Expand
// gives it) at the reducer's path p, nil if there is none: a map copy's
// and a loop iteration's node is the map's or the loop's template.
func nodeAt(root *ast.Node, p string) *ast.Node {
	n := root
	for p != "" {
		e, _, rest, ok := ast.CutEdge(p)
		if !ok {
			return nil
		}
		switch e.Kind {
		case ast.KindTry:
			n = [...]*ast.Node{n.Body, n.Rescue, n.Finally}[e.Index]
		case ast.KindMap, ast.KindLoop:
			if len(n.Children) != 1 {
				return nil
			}
			n = &n.Children[0]
		default:
			if e.Index >= len(n.Children) {
				return nil
			}
			n = &n.Children[e.Index]
		}
		if n == nil {
			return nil
		}
		p = rest
	}
	return n
}

// lastIndex returns the index of the last edge of path, when it is an
// edge of kind ("...kind[I]"), else -1.
func lastIndex(path, kind string) int {
	rest, ok := strings.CutSuffix(path, "]")
	i := strings.LastIndex(rest, kind+"[")
	if !ok || i < 0 || (i > 0 && rest[i-1] != '.') {
		return -1
	}
	k, err := strconv.Atoi(rest[i+len(kind)+1:])
	if err != nil || k < 0 {
		return -1
	}
	return k
}
