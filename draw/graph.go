package draw

import (
	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
)

// Defaults of Options.
const (
	DefaultGroupOver = 100
	DefaultMaxBoxes  = 2000
)

// Options say what Layout opens. The zero Options are the defaults.
type Options struct {
	// GroupOver: a seq or par with more children than this is drawn as a
	// closed group unless Expand names it. 0 means DefaultGroupOver.
	GroupOver int
	// Expand holds the paths of the groups to open (a page adds one per
	// click). A path that names no group changes nothing. Layout only
	// reads it.
	Expand map[string]bool
	// MaxBoxes bounds the boxes drawn, group boxes included. 0 means
	// DefaultMaxBoxes.
	MaxBoxes int
}

// Graph is a job's tree laid out: boxes, the lanes of tries and the edges
// between boxes, in pixels of a drawing Width by Height. It is a plain
// value: the caller owns it and may read it from any goroutine.
type Graph struct {
	Job     job.ID
	Version uint64
	Status  job.Status

	Width, Height int
	// Boxes are the drawn nodes in pre-order (a node before its children,
	// a try's body before its rescue and finally); Boxes[0] is the root.
	Boxes []Box
	// Lanes are the labelled bands of tries' parts, in pre-order of the
	// parts. They hold boxes; they are not boxes.
	Lanes []Lane
	// Edges join boxes, by their indexes in Boxes.
	Edges []Edge
	// Nodes counts the nodes of the tree, drawn or counted in a group.
	Nodes int
	// Truncated reports that some node stayed closed because opening it
	// would have drawn more than MaxBoxes boxes.
	Truncated bool
	// MaxBoxes is the bound the layout kept to.
	MaxBoxes int
}

// Box is one drawn node: its place and what it shows.
type Box struct {
	Path    string // the node's path; "" for the root
	Kind    ast.Kind
	Name    string // the node's name, clipped; "" if none
	Action  string // for an act, clipped
	Payload string // for an act, its JSON clipped to 40 characters; "" if none
	Status  job.Status
	Attempt int    // for an act: dispatches so far
	Error   string // for a failed act, clipped
	// Detail is what the node's kind and options say, clipped: a wait's
	// "signal NAME", a sleep's duration, an end's reason, a choice's
	// "on NAME" and the cases it chose ("on tier → else"), a race's
	// "need N", a par's "limit K", a map's "over NAME" (once started,
	// its copies per state: "3 copies: 1▶ 2✓"), a loop's "iteration I,
	// until NAME = VALUE, max N"; "" if none.
	Detail string
	// Guard is a dag child's guard ("when NAME = VALUE"), clipped; "" if
	// none.
	Guard string
	// Children counts the node's children (a try's parts), drawn or not.
	Children int
	// Group is set when the node is drawn closed: what is under it is
	// counted there, not drawn.
	Group *Group

	X, Y, W, H int
}

// Group is what a closed node holds.
type Group struct {
	Children int // the node's own children
	// Nodes counts the nodes under the closed node (its descendants, not
	// itself).
	Nodes int
	// Counts are the descendants per state, in the order of the states,
	// states with none left out.
	Counts []Count
	// Budget reports that the node was closed by MaxBoxes, not by
	// GroupOver.
	Budget bool
}

// Count is how many nodes are in one state.
type Count struct {
	Status job.Status
	N      int
}

// Lane is the band of one part of a try (its body, rescue or finally) or
// of one case of a choice.
type Lane struct {
	Path string // the part's path ("body", "seq[1].rescue", "choice[1]")
	// Part is ast.PartBody, ast.PartRescue or ast.PartFinally for a try;
	// for a choice, its case: "when VALUE", "when any [VALUE,...]" or
	// "else" (the values as compact JSON), clipped to 40 characters.
	Part       string
	X, Y, W, H int
}

// EdgeKind says what an edge means.
type EdgeKind uint8

// Edge kinds.
const (
	// EdgeChild joins an inner node to a child: every child of a par,
	// race, map or loop, every part of a try and case of a choice
	// (labelled with the part or case), a seq's first child,
	// a dag's children that are after nothing.
	EdgeChild EdgeKind = iota
	// EdgeNext joins a seq's child to the next one.
	EdgeNext
	// EdgeAfter joins a dag's child to a sibling that is after it.
	EdgeAfter
)

var edgeKindNames = [...]string{"child", "next", "after"}

func (k EdgeKind) String() string {
	if int(k) < len(edgeKindNames) {
		return edgeKindNames[k]
	}
	return "EdgeKind(" + itoa(int(k)) + ")"
}

// Edge is a line from one box to another, drawn through Points.
type Edge struct {
	From, To int // indexes in Graph.Boxes
	Kind     EdgeKind
	Label    string // a try's part for its EdgeChild edges; "" otherwise
	Points   []Point
}

// Point is a point of the drawing, in pixels from its top left corner.
type Point struct{ X, Y int }
