package ast

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Limits checked by Validate. They keep the reducer's recursion bounded and
// action names usable as topic and znode names by every runner.
const (
	MaxDepth      = 128 // nesting depth of the tree, the root being depth 1
	MaxActionName = 200 // bytes in an action name
)

// errReported marks a node that Decode could not read and has reported;
// Validate skips it so every problem is listed once.
var errReported = errors.New("reported")

// Problem is one thing wrong with a tree, at a node.
type Problem struct {
	Path string // the node's path; "" is the root
	Msg  string
}

func (p Problem) String() string { return ShowPath(p.Path) + ": " + p.Msg }

// Error lists every problem found in a workflow. Validate and Decode return
// it as an error; use errors.As to reach the problems.
type Error struct {
	Problems []Problem
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("workflow: ")
	if len(e.Problems) == 1 {
		b.WriteString(e.Problems[0].String())
		return b.String()
	}
	fmt.Fprintf(&b, "%d problems:", len(e.Problems))
	for _, p := range e.Problems {
		b.WriteString("\n\t")
		b.WriteString(p.String())
	}
	return b.String()
}

// Validate checks the tree rooted at n and returns every problem it finds,
// as an *Error, or nil. It never panics, whatever the node holds.
//
// Checked: known kinds; the fields each kind may use; seq and par have at
// least one child; a try has a body; action names are 1 to MaxActionName
// bytes of letters, digits, '.', '_' and '-'; payloads are valid JSON;
// depth at most MaxDepth; problems recorded by the DSL (a payload that
// would not marshal, two rescues).
func Validate(n Node) error {
	var ps []Problem
	validate(&n, nil, 1, &ps)
	if len(ps) == 0 {
		return nil
	}
	return &Error{Problems: ps}
}

// pathRef is the path of a node being validated, as a link to its parent's
// pathRef (nil for the root), so that a path string is built only for a
// node that has a problem, not for every node. It holds no pointer but the
// link, so the compiler can keep every pathRef on the stack.
type pathRef struct {
	parent *pathRef
	kind   Kind // the parent's kind
	i      int  // the index among a seq's or par's children, or of a try's part in TryParts
}

func (p *pathRef) String() string {
	switch {
	case p == nil:
		return ""
	case p.kind == KindTry:
		return PartPath(p.parent.String(), TryParts[p.i])
	default:
		return ChildPath(p.parent.String(), p.kind, p.i)
	}
}

func validate(n *Node, path *pathRef, depth int, ps *[]Problem) {
	add := func(format string, args ...any) {
		*ps = append(*ps, Problem{Path: path.String(), Msg: fmt.Sprintf(format, args...)})
	}
	if n.err == errReported {
		return // Decode reported this node's problem already
	}
	if depth > MaxDepth {
		add("tree is deeper than %d levels", MaxDepth)
		return
	}
	if n.err != nil {
		add("%v", n.err)
	}
	if n.Name != "" || len(n.Inputs) > 0 || len(n.After) > 0 || n.Kind == KindDag {
		add("names, inputs and dags are not supported by this baton yet")
		return
	}
	switch n.Kind {
	case KindAct:
		if msg := checkActionName(n.Action); msg != "" {
			add("%s", msg)
		}
		if len(n.Payload) > 0 && !json.Valid(n.Payload) {
			if n.err == nil {
				add("payload of action %q is not valid JSON", n.Action)
			}
		}
		if len(n.Children) > 0 || n.Body != nil || n.Rescue != nil || n.Finally != nil {
			add("act node has children")
		}
	case KindSeq, KindPar:
		if len(n.Children) == 0 {
			add("%s has no children", n.Kind)
		}
		if n.Action != "" || len(n.Payload) > 0 || n.Body != nil || n.Rescue != nil || n.Finally != nil {
			add("%s node has fields of another kind (action, payload or try parts)", n.Kind)
		}
		// One pathRef for all the children: one made inside the loop
		// would have to live on the heap.
		ref := pathRef{parent: path, kind: n.Kind}
		for i := range n.Children {
			ref.i = i
			validate(&n.Children[i], &ref, depth+1, ps)
		}
	case KindTry:
		if n.Body == nil {
			add("try has no body")
		}
		if n.Action != "" || len(n.Payload) > 0 || len(n.Children) > 0 {
			add("try node has fields of another kind (action, payload or children)")
		}
		ref := pathRef{parent: path, kind: KindTry}
		for i, part := range [...]*Node{n.Body, n.Rescue, n.Finally} {
			if part != nil {
				ref.i = i
				validate(part, &ref, depth+1, ps)
			}
		}
	default:
		add("unknown node kind %d (want act, seq, par or try)", n.Kind)
	}
}

// checkActionName returns what is wrong with name, or "".
func checkActionName(name string) string {
	if name == "" {
		return "action name is empty"
	}
	if len(name) > MaxActionName {
		return fmt.Sprintf("action name is %d bytes long (at most %d)", len(name), MaxActionName)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
		if !ok {
			return fmt.Sprintf("action name %q has %q at byte %d (allowed: letters, digits, '.', '_', '-')", name, c, i)
		}
	}
	return ""
}
