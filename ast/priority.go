package ast

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// Priority: its range, its check (for Validate) and its JSON form (for
// Encode and Decode).

// The range of a leaf's Priority, both ends allowed.
const (
	MinPriority = -1000
	MaxPriority = 1000
)

// priorityRange is how messages write the range.
const priorityRange = "(-1000 to 1000)"

// misplacedPriority is the message for a priority on a node of kind k,
// the same for Validate and Decode.
func misplacedPriority(k Kind) string {
	return "priority on a " + k.String() + " node (only an act's actions have a priority)"
}

// priority checks the node's Priority, which is not 0; the caller has
// checked that n is of a known kind.
func (v *validator) priority(n *Node, path *pathRef) {
	switch {
	case n.Kind != KindAct:
		v.add(path, "%s", misplacedPriority(n.Kind))
	case n.Priority < MinPriority || n.Priority > MaxPriority:
		v.add(path, "priority %d is out of range %s", n.Priority, priorityRange)
	}
}

// writePriority writes the key "priority" of n, which comes last, when n
// is an act with a priority other than 0.
func writePriority(b *bytes.Buffer, n *Node) {
	if n.Kind != KindAct || n.Priority == 0 {
		return
	}
	var buf [24]byte
	b.WriteString(`,"priority":`)
	b.Write(strconv.AppendInt(buf[:0], int64(n.Priority), 10))
}

// decodePriority reads a "priority" value: a whole number, or null for
// 0. It reports anything else, and a number too large to be held, and
// then returns 0; Validate reports the others out of range.
func decodePriority(raw json.RawMessage, add func(string, ...any)) int {
	f, ok := decodeNumber(raw, "priority", priorityRange, add)
	switch {
	case !ok:
		return 0
	case f < -1e9 || f > 1e9:
		add("priority %s is out of range %s", showNumber(raw), priorityRange)
		return 0
	case f != float64(int64(f)):
		add("priority must be a whole number, got %s", showNumber(raw))
		return 0
	}
	return int(f)
}

// decodeReplicas reads a "replicas" value: a whole number, or null for
// none. It reports anything else, and a number too large to be held, and
// then returns 0; Validate reports the others out of range.
func decodeReplicas(raw json.RawMessage, add func(string, ...any)) int {
	f, ok := decodeNumber(raw, "replicas", "(2 to 32)", add)
	switch {
	case !ok:
		return 0
	case f < -1e9 || f > 1e9:
		add("replicas %s is out of range (2 to %d)", showNumber(raw), MaxReplicas)
		return 0
	case f != float64(int64(f)):
		add("replicas must be a whole number, got %s", showNumber(raw))
		return 0
	}
	return int(f)
}
