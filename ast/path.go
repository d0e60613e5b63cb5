package ast

import "strconv"

// RootPath is how the root's path (the empty string) is written in
// messages and action IDs.
const RootPath = "root"

// The parts of a Try, as they appear in paths.
const (
	PartBody    = "body"
	PartRescue  = "rescue"
	PartFinally = "finally"
)

// ChildPath returns the path of the i-th child of the seq or par node at
// parent.
func ChildPath(parent string, kind Kind, i int) string {
	return join(parent, kind.String()+"["+strconv.Itoa(i)+"]")
}

// PartPath returns the path of a try's part ("body", "rescue" or
// "finally") for the try at parent.
func PartPath(parent, part string) string {
	return join(parent, part)
}

// ShowPath returns p as written in messages: "root" for the empty path.
func ShowPath(p string) string {
	if p == "" {
		return RootPath
	}
	return p
}

func join(parent, edge string) string {
	if parent == "" {
		return edge
	}
	return parent + "." + edge
}

// ComparePaths orders paths as their nodes come in pre-order (a node before
// its children, children by index, a try's body before its rescue before
// its finally). It returns -1, 0 or +1.
func ComparePaths(a, b string) int {
	for {
		if a == b {
			return 0
		}
		if a == "" {
			return -1
		}
		if b == "" {
			return 1
		}
		ea, ra := cut(a)
		eb, rb := cut(b)
		if ea != eb {
			ka, kb := edgeKey(ea), edgeKey(eb)
			switch {
			case ka < kb:
				return -1
			case ka > kb:
				return 1
			}
			if ea < eb {
				return -1
			}
			return 1
		}
		a, b = ra, rb
	}
}

func cut(p string) (edge, rest string) {
	for i := 0; i < len(p); i++ {
		if p[i] == '.' {
			return p[:i], p[i+1:]
		}
	}
	return p, ""
}

// edgeKey ranks an edge among its siblings: the child index, or the try
// part's place.
func edgeKey(e string) int {
	switch e {
	case PartBody:
		return 0
	case PartRescue:
		return 1
	case PartFinally:
		return 2
	}
	open := -1
	for i := 0; i < len(e); i++ {
		if e[i] == '[' {
			open = i
		}
	}
	if open < 0 || e[len(e)-1] != ']' {
		return -1
	}
	n, err := strconv.Atoi(e[open+1 : len(e)-1])
	if err != nil {
		return -1
	}
	return n
}
