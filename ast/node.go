package ast

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// Kind is the kind of a node.
type Kind uint8

// The node kinds. The zero Kind is invalid, so a zero Node is caught by
// Validate.
const (
	KindInvalid Kind = iota
	KindAct
	KindSeq
	KindPar
	KindTry
	KindDag
	KindRace
	KindChoice
	KindEnd
	KindMap
	KindLoop
	KindWait
	KindSleep
)

var kindNames = [...]string{"invalid", "act", "seq", "par", "try", "dag", "race", "choice", "end", "map", "loop", "wait", "sleep"}

// String returns the kind's JSON key: "act", "seq", "par", "try", "dag",
// "race", "choice", "end", "map", "loop", "wait" or "sleep".
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Node is one node of a workflow tree. Build nodes with Act, Seq, Par, Try,
// Dag and Race rather than by hand; a hand-built node is checked by Validate.
//
// Which fields are used depends on Kind:
//   - KindAct: Action, Payload and Inputs; Retry, Timeout, Delivery and
//     Priority.
//   - KindSeq, KindPar, KindDag, KindRace: Children.
//   - KindTry: Body, and optionally Rescue and Finally.
//   - KindChoice: On, Cases and Multi; Children holds the cases' nodes,
//     then the else's, if any (see Choice).
//   - KindEnd: Reason.
//   - KindMap: Over, Limit and Need; Children holds the template, one
//     node (see Map).
//   - KindLoop: Until and Max; Children holds the body, one node (see
//     Loop).
//   - KindWait: Signal and Transient (see Wait).
//   - KindSleep: Sleep (see Sleep).
//
// Any node may have a Deadline, and Replicas: a node with Replicas N
// (2 to MaxReplicas) runs as a race of N copies of itself (see
// WithReplicas).
//
// Any node may have a Name, unique in the workflow; a named leaf's output
// is kept under its name, and later leaves take it with Inputs. The
// children of a KindDag node are all named, and each lists in After the
// siblings it waits for.
//
// Nodes are values; the tree they form must not be modified once it has been
// handed to the reducer (job.New keeps its own compiled copy, but payload
// bytes are shared).
type Node struct {
	Kind     Kind
	Action   string          // the handler name, for KindAct
	Payload  json.RawMessage // compact JSON or nil, for KindAct
	Children []Node          // for KindSeq, KindPar, KindDag and KindRace
	Body     *Node           // for KindTry
	Rescue   *Node           // for KindTry, optional
	Finally  *Node           // for KindTry, optional

	Name   string   // the node's name, unique in the workflow; optional except under a dag
	Inputs []string // for KindAct: the named nodes whose outputs its actions carry
	After  []string // for a child of a KindDag: the names of the siblings it waits for

	// Retry, for KindAct: how a failed attempt is tried again (nil: never).
	Retry *Retry
	// Timeout, for KindAct: the time each attempt may take (0: no limit).
	// An attempt that overruns fails with kind "timeout".
	Timeout time.Duration
	// Deadline, on any node: the time the node may take from when it
	// starts (0: no limit). If it runs out first, the node fails with kind
	// "deadline": nothing new starts under it (finally blocks of tries
	// already entered excepted) and its actions in flight are stopped.
	Deadline time.Duration
	// Delivery, for KindAct: AtLeastOnce (the zero value) or AtMostOnce.
	Delivery Delivery
	// Priority, for KindAct: the priority of its actions, from MinPriority
	// to MaxPriority, 0 by default. A runner that orders its queue runs
	// higher priorities first; the reducer itself gives it no meaning.
	Priority int
	// Replicas, on any node: 0 (one copy, the node itself), or 2 to
	// MaxReplicas: the node runs as a race of that many copies of itself
	// (see WithReplicas). Workflow format version 2.
	Replicas int
	// Affinity, on any node: where the actions of the leaves under it
	// would rather run, unless a node nearer to them has its own (see
	// Affinity). Workflow format version 2.
	Affinity *Affinity

	// On, for KindChoice: the name of the leaf whose output the cases
	// are compared with. Workflow format version 3, as everything below.
	On string
	// Cases, for KindChoice: the cases' values, in order. Children[i] is
	// the node case i runs; Children[len(Cases)], when there is one more
	// child than cases, is the else.
	Cases []Case
	// Multi, for KindChoice: run every case matching any element of the
	// output (an array), together, as a par.
	Multi bool
	// When, for a child of a KindDag: the guard that decides, once the
	// child is ready, whether it runs or is skipped.
	When *Guard
	// Need, for KindRace (KindMap): how many children (copies) must
	// succeed for the race (map) to succeed (0 counts as 1 for a race,
	// as all for a map).
	Need int
	// Limit, for KindPar and KindMap: the most children (copies)
	// running at once (0: no limit). Validate refuses one on a dag, which does not have it yet.
	Limit int
	// Reason, for KindEnd: why the workflow ends there.
	Reason string
	// Over, for KindMap: the name of the leaf whose output (an array) the
	// map runs one copy of its template for each element of.
	Over string
	// Until, for KindLoop: the leaf of the body whose output ends the
	// loop once it equals the value, read as an iteration succeeds.
	Until *Guard
	// Max, for KindLoop: the most iterations, 1 to MaxIterations.
	Max int
	// Signal, for KindWait: the name of the signal it waits for.
	Signal string
	// Transient, for KindWait: take only a signal that arrives while the
	// wait runs, never one kept from before it started.
	Transient bool
	// Sleep, for KindSleep: how long the sleep lasts from when it starts.
	Sleep time.Duration

	// err records a problem found while building the node with the DSL
	// (a payload that does not marshal); Validate reports it.
	err error
	// badName records that Decode reported the node's "name" as malformed
	// (and left Name empty): Validate does not report it again as missing.
	badName bool
}

// Retry is a leaf's retry policy. A failed attempt with attempts left
// waits and runs again as the next attempt; the wait after attempt k is
// Initial * Multiplier^(k-1), capped at Max (0: no cap), then moved by up
// to ±Jitter of itself, drawn deterministically from the job, the leaf and
// the attempt. A failure whose kind is listed in NonRetryable, or that the
// handler marked final, is not retried. Validate holds each field to its
// range (see there); Attempts of 1 is allowed, and means no retry.
type Retry struct {
	Attempts     int           // total attempts, the first included: 1 to 1000
	Initial      time.Duration // wait before the second attempt
	Multiplier   float64       // each wait is the previous times this; 0 counts as 1
	Max          time.Duration // cap on a wait before jitter; 0: none
	Jitter       float64       // 0 to 1: the fraction by which a wait may move
	NonRetryable []string      // failure kinds never retried (not "deadline" nor "cancelled", never an attempt's)
}

// Delivery says what a runner does with an attempt it cannot tell ran or
// not (its process crashed, its worker was lost).
type Delivery uint8

const (
	// AtLeastOnce runs the attempt again, under the same action ID.
	AtLeastOnce Delivery = iota
	// AtMostOnce fails the attempt with kind "lost" instead; the leaf's
	// retry policy then decides, explicitly.
	AtMostOnce
)

// String returns the delivery as written in JSON.
func (d Delivery) String() string {
	switch d {
	case AtLeastOnce:
		return "at-least-once"
	case AtMostOnce:
		return "at-most-once"
	}
	return fmt.Sprintf("Delivery(%d)", uint8(d))
}

// WithRetry returns the leaf n retried by policy r.
func (n Node) WithRetry(r Retry) Node {
	n.Retry = &r
	return n
}

// WithTimeout returns the leaf n whose attempts may each take d.
func (n Node) WithTimeout(d time.Duration) Node {
	n.Timeout = d
	return n
}

// WithDeadline returns n, which must settle within d of starting.
func (n Node) WithDeadline(d time.Duration) Node {
	n.Deadline = d
	return n
}

// AtMostOnce returns the leaf n delivered at most once (see Delivery).
func (n Node) AtMostOnce() Node {
	n.Delivery = AtMostOnce
	return n
}

// WithPriority returns the leaf n whose actions have priority p, from
// MinPriority to MaxPriority: a runner that orders its queue takes higher
// priorities first (see Node.Priority).
func (n Node) WithPriority(p int) Node {
	n.Priority = p
	return n
}

// Act returns a leaf that performs the action called name with payload.
//
// The payload may be any Go value: it is marshalled with encoding/json. A
// json.RawMessage or []byte payload is taken as JSON text and must be valid
// JSON. A nil payload means no payload. A payload that cannot be marshalled
// is not a panic: Validate (and so job.New) reports it with the node's path.
func Act(name string, payload any) Node {
	n := Node{Kind: KindAct, Action: name}
	var raw []byte
	switch p := payload.(type) {
	case nil:
		return n
	case json.RawMessage:
		raw = p
	case []byte:
		raw = p
	default:
		b, err := json.Marshal(p)
		if err != nil {
			n.err = fmt.Errorf("payload does not marshal to JSON: %w", err)
			return n
		}
		raw = b
	}
	if len(raw) == 0 {
		return n
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		n.err = fmt.Errorf("payload is not valid JSON: %w", err)
		n.Payload = append(json.RawMessage(nil), raw...)
		return n
	}
	if buf.String() != "null" {
		n.Payload = buf.Bytes()
	}
	return n
}

// Race returns a race: all children start at once, as in a par, and the
// first to succeed wins; the others are stopped (finally blocks already
// entered run to their end). It fails when every child has failed. It
// needs at least 2 children. Workflow format version 2.
func Race(children ...Node) Node {
	return Node{Kind: KindRace, Children: children}
}

// MaxReplicas is the most copies WithReplicas may ask for.
const MaxReplicas = 32

// WithReplicas returns n run as a race of k copies of itself (k from 2 to
// MaxReplicas): the first copy to succeed wins and the others are
// stopped. n's own Name, After and Deadline belong to the race; every
// copy has the rest (the action, payload, retry, timeout, delivery,
// priority, inputs, and the nodes under n). Names given inside n are
// made unique per copy by the reducer (see package job). Workflow format
// version 2.
func (n Node) WithReplicas(k int) Node {
	n.Replicas = k
	return n
}

// Seq returns a sequence: children run one after another and the first
// failure stops it.
func Seq(children ...Node) Node {
	return Node{Kind: KindSeq, Children: children}
}

// Par returns a parallel node: all children start at once.
func Par(children ...Node) Node {
	return Node{Kind: KindPar, Children: children}
}

// TryOption adds a rescue or a finally to a Try.
type TryOption struct {
	rescue, finally *Node
}

// Rescue is the part of a Try that runs when its body fails. Several nodes
// are run as a sequence.
func Rescue(nodes ...Node) TryOption {
	n := group(nodes)
	return TryOption{rescue: &n}
}

// Finally is the part of a Try that runs after the body (and rescue),
// whatever happened. Several nodes are run as a sequence.
func Finally(nodes ...Node) TryOption {
	n := group(nodes)
	return TryOption{finally: &n}
}

func group(nodes []Node) Node {
	if len(nodes) == 1 {
		return nodes[0]
	}
	return Seq(nodes...)
}

// Dag returns a node whose children start as soon as the siblings they
// are after (WithAfter) have succeeded: the ones after nothing start with
// the dag. Every child must be named (Named). Once a child fails, nothing
// new starts (finally blocks excepted), as in a par, and the dag fails
// when what it started has settled.
func Dag(children ...Node) Node {
	return Node{Kind: KindDag, Children: children}
}

// Named returns n with the name name: unique in the workflow, it names a
// leaf's output for the Inputs of later leaves, and a dag's child for the
// After of its siblings.
func (n Node) Named(name string) Node {
	n.Name = name
	return n
}

// WithInputs returns the leaf n taking the outputs of the named nodes:
// its actions carry them, by name. Each must be sure to have succeeded
// before n starts (an earlier child of an enclosing seq, a dag sibling n
// is after, or a node their success implies); Validate says which is not.
func (n Node) WithInputs(names ...string) Node {
	n.Inputs = append(n.Inputs[:len(n.Inputs):len(n.Inputs)], names...)
	return n
}

// WithAfter returns the dag child n waiting for its siblings called names.
func (n Node) WithAfter(names ...string) Node {
	n.After = append(n.After[:len(n.After):len(n.After)], names...)
	return n
}

// Try returns a try node: body runs first; if it fails and there is a
// rescue, the rescue runs; the finally, if any, runs last whatever happened.
// Giving two rescues or two finallies is reported by Validate.
func Try(body Node, opts ...TryOption) Node {
	n := Node{Kind: KindTry, Body: &body}
	for _, o := range opts {
		switch {
		case o.rescue != nil:
			if n.Rescue != nil {
				n.err = fmt.Errorf("try has more than one rescue")
			}
			n.Rescue = o.rescue
		case o.finally != nil:
			if n.Finally != nil {
				n.err = fmt.Errorf("try has more than one finally")
			}
			n.Finally = o.finally
		}
	}
	return n
}

// Equal reports whether a and b are the same tree: same kinds, actions,
// payload bytes, names, inputs, dependencies, retry policies (by value),
// timeouts, deadlines, deliveries, priorities, replicas, the choice's,
// guard's, need's, limit's and end's fields, and shape.
func Equal(a, b Node) bool {
	if a.Kind != b.Kind || a.Action != b.Action || !bytes.Equal(a.Payload, b.Payload) ||
		len(a.Children) != len(b.Children) || a.Name != b.Name || !slices.Equal(a.Inputs, b.Inputs) || !slices.Equal(a.After, b.After) ||
		a.Timeout != b.Timeout || a.Deadline != b.Deadline || a.Delivery != b.Delivery || a.Priority != b.Priority || a.Replicas != b.Replicas ||
		!equalRetry(a.Retry, b.Retry) || !equalAffinity(a.Affinity, b.Affinity) || !equalLang3(&a, &b) {
		return false
	}
	for i := range a.Children {
		if !Equal(a.Children[i], b.Children[i]) {
			return false
		}
	}
	return equalPtr(a.Body, b.Body) && equalPtr(a.Rescue, b.Rescue) && equalPtr(a.Finally, b.Finally)
}

// equalRetry compares two policies by value, NonRetryable in order (nil
// and empty being the same).
func equalRetry(a, b *Retry) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Attempts == b.Attempts && a.Initial == b.Initial && a.Multiplier == b.Multiplier &&
		a.Max == b.Max && a.Jitter == b.Jitter && slices.Equal(a.NonRetryable, b.NonRetryable)
}

func equalPtr(a, b *Node) bool {
	if a == nil || b == nil {
		return a == b
	}
	return Equal(*a, *b)
}

// Count returns the number of nodes in the tree rooted at n.
func Count(n Node) int {
	c := 1
	for i := range n.Children {
		c += Count(n.Children[i])
	}
	for _, p := range [...]*Node{n.Body, n.Rescue, n.Finally} {
		if p != nil {
			c += Count(*p)
		}
	}
	return c
}

// Walk calls f for every node of the tree rooted at n, in pre-order (a
// node before its children, a try's body before its rescue and finally),
// with the node's path. It stops early when f returns false. f must not
// modify the tree.
func Walk(n Node, f func(path string, n *Node) bool) {
	walk(&n, "", f)
}

func walk(n *Node, path string, f func(string, *Node) bool) bool {
	if !f(path, n) {
		return false
	}
	for i := range n.Children {
		if !walk(&n.Children[i], ChildPath(path, n.Kind, i), f) {
			return false
		}
	}
	for _, part := range [...]struct {
		name string
		n    *Node
	}{{PartBody, n.Body}, {PartRescue, n.Rescue}, {PartFinally, n.Finally}} {
		if part.n != nil && !walk(part.n, PartPath(path, part.name), f) {
			return false
		}
	}
	return true
}
