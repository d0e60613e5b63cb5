package ast

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Limits checked by Validate. They keep the reducer's recursion bounded and
// action names usable as topic and znode names by every runner.
const (
	MaxDepth      = 128 // nesting depth of the tree, the root being depth 1
	MaxActionName = 200 // bytes in an action name
)

// maxName is the most bytes in a node's name.
const maxName = 100

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
// as an *Error, or nil. It never panics, whatever the node holds. Problems
// are listed in tree order (see ComparePaths), each at its node's path.
//
// Checked, node by node: known kinds; the fields each kind may use; seq,
// par and dag have at least one child, a race at least 2; Replicas is 0
// or 2 to MaxReplicas ("replicas 1 is out of range (2 to 32; leave it
// out for one copy)"); an Affinity's key is 1 to MaxAffinityKey bytes
// of UTF-8 (empty only with ScopeJob), its scope known and its wait not
// negative; Replicas under (or on) a node with a strict Affinity is
// refused ("replicas under a pin"), the two contradicting; a try has a body; action names are
// 1 to MaxActionName bytes of letters, digits, '.', '_' and '-'; payloads
// are valid JSON; depth at most MaxDepth; problems recorded by the DSL (a
// payload that would not marshal, two rescues); retry policies, timeouts,
// deadlines, deliveries and priorities (below).
//
// Names. A name is 1 to 100 bytes of ASCII letters, digits, '_', '-' and
// '.', the first of them a letter or '_': "charge", "_tmp", "step-2.v1".
// An empty Name is no name. Names are unique in the whole workflow, dag
// children included: a second node with a name already taken is reported
// at its path, with the path of the first.
//
// Dags. Every child of a dag is named. After is allowed only on a child of
// a dag, and each name in it must be a sibling in that same dag (a name
// listed twice is harmless: it is kept as written and means the same as
// once). The children must not be after one another in a cycle: each
// cycle is reported at the dag's path, written "a -> b -> a", each name
// being after the one before it; a child after itself is the cycle
// "a -> a".
//
// Inputs. Only an act takes Inputs. Each input is the name of a node of
// the workflow, other than the leaf itself, listed once, and that node
// must be sure to have succeeded before the leaf starts. Which nodes are:
// going up from the leaf, at each enclosing seq the children before the
// one holding the leaf are sure, and at each enclosing dag the siblings
// that the child holding the leaf is after, directly or through others,
// are sure; and the success of a sure node makes sure every child of it
// when it is a seq, par or dag, its finally when it is a try, and its body
// when it is a try without a rescue (never a rescue, which runs only when
// the body failed, nor the body of a try with a rescue, which succeeds when
// its body failed and the rescue succeeded), and so on down. So in
// seq(par(a, b), m) the leaf m may take the inputs a and b; in par(a, b), b
// may not take a. A race is as a par for what is sure before it, but
// nothing inside a race is sure because the race succeeded (only one
// child won), nor anything inside a node with Replicas, which is a race
// of its copies; a node inside a copy may take the output of one inside
// the same copy, by its name as written. A sure node that is not a leaf is a valid input (its
// output is null). Each problem is reported at the leaf's path and says
// why the input is not sure.
//
// Retry, timeout, deadline and delivery. Retry, Timeout and a Delivery
// other than AtLeastOnce are allowed only on an act ("retry on a seq node
// (only an act is retried)"); Deadline on any node. A retry policy has
// Attempts from 1 to 1000 (1 is allowed: the leaf is not retried, and the
// policy may still name its NonRetryable kinds, for the reader); Initial
// and Max are not negative, and Max, unless 0, is at least Initial;
// Multiplier is 0 (which counts as 1) or from 1 to 100 (below 1 the waits
// would shrink); Jitter is from 0 to 1; each NonRetryable kind is 1 to
// 100 bytes of letters, digits, '_', '-' and '.', listed once, and
// neither "deadline" nor "cancelled", which are never failures of an
// attempt. A Timeout or Deadline, unless 0 (no limit), is from 1ms to
// 10000 hours. A Delivery is AtLeastOnce or AtMostOnce.
//
// Priority. A Priority other than 0 is allowed only on an act ("priority
// on a seq node (only an act's actions have a priority)"), and is from
// MinPriority to MaxPriority, -1000 to 1000 ("priority 1001 is out of
// range (-1000 to 1000)").
//
// Validate costs time linear in the size of the tree; with inputs, each
// input costs at most the depth of the tree, plus the dag siblings walked
// to find those an enclosing dag child is after.
func Validate(n Node) error {
	v := validator{}
	v.node(&n, nil, 1)
	if v.named {
		before := len(v.ps)
		v.ps = checkNames(n, v.ps)
		if len(v.ps) > before {
			// The workflow-wide problems come after the node by node
			// ones: put every problem in tree order, keeping the order of
			// those of one node.
			slices.SortStableFunc(v.ps, func(a, b Problem) int { return ComparePaths(a.Path, b.Path) })
		}
	}
	if len(v.ps) == 0 {
		return nil
	}
	return &Error{Problems: v.ps}
}

// validator holds what the node by node checks found.
type validator struct {
	pins  int // strict affinities on the way from the root to the node checked
	ps    []Problem
	named bool // some node has a Name, Inputs or After: the workflow-wide checks (checkNames) are needed
}

// pathRef is the path of a node being validated, as a link to its parent's
// pathRef (nil for the root), so that a path string is built only for a
// node that has a problem, not for every node. It holds no pointer but the
// link, so the compiler can keep every pathRef on the stack.
type pathRef struct {
	parent *pathRef
	kind   Kind // the parent's kind
	i      int  // the index among a seq's, par's or dag's children, or of a try's part in TryParts
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

func (v *validator) add(path *pathRef, format string, args ...any) {
	v.ps = append(v.ps, Problem{Path: path.String(), Msg: fmt.Sprintf(format, args...)})
}

func (v *validator) node(n *Node, path *pathRef, depth int) {
	if n.err == errReported {
		// Decode reported this node's problem already; its name, from
		// a dag entry, is still to check.
		v.naming(n, path)
		return
	}
	if depth > MaxDepth {
		v.add(path, "tree is deeper than %d levels", MaxDepth)
		return
	}
	if n.err != nil {
		v.add(path, "%v", n.err)
	}
	if n.Name != "" || len(n.Inputs) > 0 || len(n.After) > 0 || path != nil && path.kind == KindDag {
		v.naming(n, path)
	}
	if n.timed() && n.Kind > KindAct && int(n.Kind) < len(kindNames) {
		// Before the children's problems, to keep tree order; an act's
		// come after its action's.
		v.timing(n, path)
	}
	if n.Priority != 0 && n.Kind > KindAct && int(n.Kind) < len(kindNames) {
		v.priority(n, path)
	}
	if n.Replicas != 0 && (n.Replicas < 2 || n.Replicas > MaxReplicas) {
		v.add(path, "%s", replicasRange(n.Replicas))
	}
	if n.Affinity != nil {
		v.affinity(n, path)
		if n.Affinity.IsStrict() {
			v.pins++
		}
	}
	if n.Replicas > 0 && v.pins > 0 {
		v.add(path, "replicas under a pin (a strict affinity keeps the actions on one worker, replicas spread them over several)")
	}
	if n.Affinity != nil && n.Affinity.IsStrict() {
		defer func() { v.pins-- }()
	}
	if n.lang3() || n.On != "" || len(n.Cases) > 0 || n.Multi || n.Reason != "" || n.Signal != "" || n.Transient || n.Sleep != 0 {
		v.lang3(n, path)
	}
	switch n.Kind {
	case KindAct:
		if msg := checkActionName(n.Action); msg != "" {
			v.add(path, "%s", msg)
		}
		if len(n.Payload) > 0 && !json.Valid(n.Payload) {
			if n.err == nil {
				v.add(path, "payload of action %q is not valid JSON", n.Action)
			}
		}
		if len(n.Children) > 0 || n.Body != nil || n.Rescue != nil || n.Finally != nil {
			v.add(path, "act node has children")
		}
		if n.timed() {
			v.timing(n, path)
		}
		if n.Priority != 0 {
			v.priority(n, path)
		}
	case KindChoice, KindMap, KindLoop:
		ref := pathRef{parent: path, kind: n.Kind}
		for i := range n.Children {
			ref.i = i
			v.node(&n.Children[i], &ref, depth+1)
		}
	case KindEnd, KindWait, KindSleep:
	case KindSeq, KindPar, KindDag, KindRace:
		switch {
		case len(n.Children) == 0:
			v.add(path, "%s has no children", n.Kind)
		case n.Kind == KindRace && len(n.Children) < 2:
			v.add(path, "race has 1 child (a race needs at least 2; for copies of one node, use replicas)")
		}
		if n.Action != "" || len(n.Payload) > 0 || n.Body != nil || n.Rescue != nil || n.Finally != nil {
			v.add(path, "%s node has fields of another kind (action, payload or try parts)", n.Kind)
		}
		// One pathRef for all the children: one made inside the loop
		// would have to live on the heap.
		ref := pathRef{parent: path, kind: n.Kind}
		for i := range n.Children {
			ref.i = i
			v.node(&n.Children[i], &ref, depth+1)
		}
	case KindTry:
		if n.Body == nil {
			v.add(path, "try has no body")
		}
		if n.Action != "" || len(n.Payload) > 0 || len(n.Children) > 0 {
			v.add(path, "try node has fields of another kind (action, payload or children)")
		}
		ref := pathRef{parent: path, kind: KindTry}
		for i, part := range [...]*Node{n.Body, n.Rescue, n.Finally} {
			if part != nil {
				ref.i = i
				v.node(part, &ref, depth+1)
			}
		}
	default:
		v.add(path, "unknown node kind %d (want act, seq, par, try, dag, race, choice, end, map, loop, wait or sleep)", n.Kind)
	}
}

// naming checks what of a node's Name, Inputs and After can be checked
// without the rest of the tree, and notes that checkNames must run.
func (v *validator) naming(n *Node, path *pathRef) {
	dagChild := path != nil && path.kind == KindDag
	if n.Name == "" && len(n.Inputs) == 0 && len(n.After) == 0 {
		if dagChild && !n.badName {
			v.add(path, "dag child has no name (every child of a dag is named)")
		}
		return
	}
	v.named = true
	switch {
	case n.Name != "":
		if msg := checkName(n.Name); msg != "" {
			v.add(path, "%s", msg)
		}
		if reserved(n.Name) {
			v.add(path, "name %q is reserved (a leaf inside a map reads its copy's element and index under item and index)", n.Name)
		}
	case dagChild && !n.badName:
		v.add(path, "dag child has no name (every child of a dag is named)")
	}
	if len(n.After) > 0 && !dagChild {
		v.add(path, "after on a node that is not a child of a dag")
	}
	if len(n.Inputs) > 0 && n.Kind != KindAct && n.Kind > KindInvalid && int(n.Kind) < len(kindNames) {
		v.add(path, "inputs on a %s node (only an act takes inputs)", n.Kind)
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

// checkName returns what is wrong with the node name name, or "".
func checkName(name string) string {
	if name == "" {
		return "name is empty"
	}
	if len(name) > maxName {
		return fmt.Sprintf("name is %d bytes long (at most %d)", len(name), maxName)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
		if i == 0 && !letter && (c >= '0' && c <= '9' || c == '.' || c == '-') {
			return fmt.Sprintf("name %q starts with %q (a name starts with a letter or '_')", name, c)
		}
		if !letter && !(c >= '0' && c <= '9' || c == '.' || c == '-') {
			return fmt.Sprintf("name %q has %q at byte %d (allowed: letters, digits, '_', '-', '.')", name, c, i)
		}
	}
	return ""
}

// replicasRange is the message for a Replicas outside 2 to MaxReplicas.
func replicasRange(k int) string {
	if k == 1 {
		return "replicas 1 is out of range (2 to 32; leave it out for one copy)"
	}
	return fmt.Sprintf("replicas %d is out of range (2 to %d)", k, MaxReplicas)
}
