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
