package ast

import "strconv"

// The path grammar. A node's path names the edges from the root down to
// it, joined by '.': "par[1].seq[0]", "body", "seq[2].finally". An edge to
// a child of a seq, par, dag or race is the parent's kind and the child's index in
// brackets (canonical decimal: no sign, no leading zero); an edge to a
// part of a try is the part's name. The root's path is "", written "root"
// in messages and action IDs. A node with Replicas runs as a race of its
// copies, so the reducer's path of copy i of the node at P is
// "P.race[i]", and the nodes under that copy are below it; Validate and
// Walk, which see the tree as written, never give such a path. This file is the grammar's only home: the
// reducer (job) builds and reads paths with AppendEdge and CutEdge.

// RootPath is how the root's path (the empty string) is written in
// messages and action IDs.
const RootPath = "root"

// The parts of a Try, as they appear in paths.
const (
	PartBody    = "body"
	PartRescue  = "rescue"
	PartFinally = "finally"
)

// TryParts lists a try's parts in their order: TryParts[i] is part i.
var TryParts = [...]string{PartBody, PartRescue, PartFinally}

// ChildPath returns the path of the i-th child of the seq, par, dag or race node at
// parent.
func ChildPath(parent string, kind Kind, i int) string {
	return string(AppendEdge([]byte(parent), kind, i))
}

// PartPath returns the path of a try's part ("body", "rescue" or
// "finally") for the try at parent.
func PartPath(parent, part string) string {
	if parent == "" {
		return part
	}
	return parent + "." + part
}

// AppendEdge appends to the path b the edge to the child i of a node of
// kind parent: "seq[2]", or, under a try, the name of part i (TryParts).
func AppendEdge(b []byte, parent Kind, i int) []byte {
	if len(b) > 0 {
		b = append(b, '.')
	}
	if parent == KindTry {
		return append(b, TryParts[i]...)
	}
	b = append(b, parent.String()...)
	b = append(b, '[')
	b = strconv.AppendInt(b, int64(i), 10)
	return append(b, ']')
}

// ShowPath returns p as written in messages: "root" for the empty path.
func ShowPath(p string) string {
	if p == "" {
		return RootPath
	}
	return p
}

// Edge is one edge of a path, as CutEdge reads it: to child Index of a
// node of kind Kind (seq, par, dag or race), or, with Kind KindTry, to part Index of
// a try (TryParts[Index]).
type Edge struct {
	Kind  Kind
	Index int
}

// String returns the edge as written in a path.
func (e Edge) String() string { return string(AppendEdge(nil, e.Kind, e.Index)) }

// CutEdge reads the first edge of the non-empty path p and returns it with
// the rest of the path ("" after the last edge). It reports false, and the
// edge as written, when the edge is malformed: not a try part nor
// "seq[i]" or "par[i]" with a canonical index, or empty (a path starting or
// ending with '.', or with ".."). It does not allocate.
func CutEdge(p string) (e Edge, written, rest string, ok bool) {
	written, rest = p, ""
	for i := 0; i < len(p); i++ {
		if p[i] == '.' {
			written, rest = p[:i], p[i+1:]
			if rest == "" {
				return Edge{}, written, rest, false // a path ending with '.'
			}
			break
		}
	}
	for k, part := range TryParts {
		if written == part {
			return Edge{KindTry, k}, written, rest, true
		}
	}
	for _, kind := range [...]Kind{KindSeq, KindPar, KindDag, KindRace, KindChoice, KindMap, KindLoop} {
		name := kind.String()
		if len(written) < len(name)+3 || written[:len(name)] != name || written[len(name)] != '[' || written[len(written)-1] != ']' {
			continue
		}
		if n, ok := atoi(written[len(name)+1 : len(written)-1]); ok {
			return Edge{kind, n}, written, rest, true
		}
	}
	return Edge{}, written, rest, false
}

// atoi parses a canonical non-negative decimal (no sign, no leading zero)
// of at most 9 digits.
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

// ComparePaths orders paths as their nodes come in pre-order (a node before
// its children, children by index, a try's body before its rescue before
// its finally). Malformed edges sort after well-formed ones, by their
// text. It returns -1, 0 or +1.
func ComparePaths(a, b string) int {
	for {
		switch {
		case a == b:
			return 0
		case a == "":
			return -1
		case b == "":
			return 1
		}
		ea, wa, ra, oka := CutEdge(a)
		eb, wb, rb, okb := CutEdge(b)
		if wa != wb {
			switch {
			case oka && !okb:
				return -1
			case !oka && okb:
				return 1
			case oka && okb && ea.Index != eb.Index:
				if ea.Index < eb.Index {
					return -1
				}
				return 1
			case wa < wb:
				return -1
			}
			return 1
		}
		a, b = ra, rb
	}
}
