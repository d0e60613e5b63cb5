package draw

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
)

// Sizes of the drawing, in pixels. Text is monospace (about 0.6 em a
// character), so these widths hold the clipped labels.
const (
	boxW      = 280 // every box
	boxH      = 64  // an open node's or a leaf's box
	countH    = 15  // one line of a group's counts
	margin    = 16
	titleH    = 40 // the job's line and, when truncated, a second one
	indent    = 32 // children stand this far right of their parent
	gapX      = 40 // between a seq's children, a dag's columns
	gapY      = 16 // below a box, between stacked children and lanes
	laneLabel = 18 // a lane's label row
	lanePad   = 8  // a lane's padding around its part
	titleChar = 8  // a title character's width, a little generous
)

// Layout lays j's tree out (see the package doc). It is pure: the result
// depends only on j and o. It fails on a zero job, on negative options,
// or if j's workflow and state disagree (a job Decode accepted never
// does).
func Layout(j job.Job, o Options) (*Graph, error) {
	if o.GroupOver < 0 || o.MaxBoxes < 0 {
		return nil, fmt.Errorf("draw: negative options: GroupOver %d, MaxBoxes %d", o.GroupOver, o.MaxBoxes)
	}
	if o.GroupOver == 0 {
		o.GroupOver = DefaultGroupOver
	}
	if o.MaxBoxes == 0 {
		o.MaxBoxes = DefaultMaxBoxes
	}
	nodes, err := readTree(j)
	if err != nil {
		return nil, err
	}
	l := &layout{
		nodes:  nodes,
		open:   make([]bool, len(nodes)),
		budget: make([]bool, len(nodes)),
		count:  map[int32][]Count{},
		w:      make([]int32, len(nodes)),
		h:      make([]int32, len(nodes)),
		layer:  make([]int32, len(nodes)),
		box:    make([]int32, len(nodes)),
		g:      &Graph{Job: j.ID(), Version: j.Version(), Status: j.Status(), Nodes: len(nodes)},
	}
	l.choose(o)
	l.measure(0)
	l.place(0, margin, margin+titleH)
	l.route()
	l.g.Width = 2*margin + int(l.w[0])
	l.g.Height = 2*margin + titleH + int(l.h[0])
	l.g.MaxBoxes = o.MaxBoxes
	for _, line := range []string{title(l.g), truncatedLine(l.g)} {
		l.g.Width = max(l.g.Width, 2*margin+titleChar*utf8.RuneCountInString(line))
	}
	return l.g, nil
}

// layout is the work of one Layout call, indexed by node.
type layout struct {
	nodes  []node
	open   []bool            // drawn with its children
	budget []bool            // closed by MaxBoxes
	count  map[int32][]Count // a closed node's counts, once tallied
	w, h   []int32           // the size of a drawn node's subtree
	layer  []int32           // a dag child's column
	box    []int32           // a drawn node's index in g.Boxes
	edges  []pending
	g      *Graph
}

// pending is an edge between nodes, routed once every box is placed.
type pending struct {
	from, to int32
	kind     EdgeKind
	label    string
}

// choose decides which nodes are drawn open: from the root down, level
// by level in tree order, every inner node whose children keep the boxes
// within MaxBoxes, except seqs and pars with more than GroupOver children
// that Expand does not name.
func (l *layout) choose(o Options) {
	boxes := 1
	queue := []int32{0}
	for len(queue) > 0 {
		i := queue[0]
		queue = queue[1:]
		n := &l.nodes[i]
		if len(n.kids) == 0 {
			continue
		}
		if k := n.info.Kind; (k == ast.KindSeq || k == ast.KindPar || k == ast.KindRace || k == ast.KindMap) && len(n.kids) > o.GroupOver && !o.Expand[n.info.Path] {
			continue
		}
		if boxes+len(n.kids) > o.MaxBoxes {
			l.budget[i] = true
			l.g.Truncated = true
			continue
		}
		boxes += len(n.kids)
		l.open[i] = true
		queue = append(queue, n.kids...)
	}
}

// measure works out the size of the subtree drawn at node i.
func (l *layout) measure(i int32) {
	n := &l.nodes[i]
	if !l.open[i] {
		l.w[i], l.h[i] = boxW, boxH
		if len(n.kids) > 0 {
			l.h[i] += countH * int32(len(l.counts(i)))
		}
		return
	}
	for _, k := range n.kids {
		l.measure(k)
	}
	var aw, ah int32 // the children's area
	switch n.info.Kind {
	case ast.KindSeq:
		for x, k := range n.kids {
			if x > 0 {
				aw += gapX
			}
			aw += l.w[k]
			ah = max(ah, l.h[k])
		}
	case ast.KindPar, ast.KindRace, ast.KindTry, ast.KindChoice, ast.KindMap, ast.KindLoop:
		pad := int32(0)
		if laned(n.info.Kind) {
			pad = 1
		}
		for y, k := range n.kids {
			if y > 0 {
				ah += gapY
			}
			aw = max(aw, l.w[k]+pad*2*lanePad)
			ah += l.h[k] + pad*(laneLabel+lanePad)
		}
	case ast.KindDag:
		cw, ch := l.columns(i)
		for c := range cw {
			if c > 0 {
				aw += gapX
			}
			aw += cw[c]
			ah = max(ah, ch[c])
		}
	}
	l.w[i] = max(boxW, indent+aw)
	l.h[i] = boxH + gapY + ah
}

// columns gives the dag i's children their columns (the longest chain of
// siblings each is after) and returns the columns' widths and heights.
func (l *layout) columns(i int32) (w, h []int32) {
	kids := l.nodes[i].kids
	done := make([]bool, len(kids))
	var depth func(k int) int32
	depth = func(k int) int32 {
		c := &l.nodes[kids[k]]
		if done[k] {
			return l.layer[kids[k]]
		}
		d := int32(0)
		for _, a := range c.deps {
			d = max(d, depth(int(a))+1)
		}
		l.layer[kids[k]], done[k] = d, true
		return d
	}
	for k, kid := range kids {
		c := depth(k)
		for int(c) >= len(w) {
			w, h = append(w, 0), append(h, -gapY)
		}
		w[c] = max(w[c], l.w[kid])
		h[c] += gapY + l.h[kid]
	}
	return w, h
}

// place puts the subtree drawn at node i with its top left corner at x,
// y, appending boxes and lanes in pre-order.
func (l *layout) place(i, x, y int32) {
	n := &l.nodes[i]
	l.box[i] = int32(len(l.g.Boxes))
	l.g.Boxes = append(l.g.Boxes, l.makeBox(i, x, y))
	if !l.open[i] {
		return
	}
	cx, cy := x+indent, y+boxH+gapY
	switch n.info.Kind {
	case ast.KindSeq:
		for c, k := range n.kids {
			l.place(k, cx, cy)
			if c == 0 {
				l.edges = append(l.edges, pending{from: i, to: k, kind: EdgeChild})
			} else {
				l.edges = append(l.edges, pending{from: n.kids[c-1], to: k, kind: EdgeNext})
			}
			cx += l.w[k] + gapX
		}
	case ast.KindPar, ast.KindRace, ast.KindMap, ast.KindLoop:
		for _, k := range n.kids {
			l.place(k, cx, cy)
			l.edges = append(l.edges, pending{from: i, to: k, kind: EdgeChild})
			cy += l.h[k] + gapY
		}
	case ast.KindTry, ast.KindChoice:
		for _, k := range n.kids {
			part := l.nodes[k].part
			lane := Lane{Path: l.nodes[k].info.Path, Part: part, X: int(cx), Y: int(cy), W: int(l.w[k] + 2*lanePad), H: int(laneLabel + l.h[k] + lanePad)}
			l.g.Lanes = append(l.g.Lanes, lane)
			l.place(k, cx+lanePad, cy+laneLabel)
			l.edges = append(l.edges, pending{from: i, to: k, kind: EdgeChild, label: part})
			cy += int32(lane.H) + gapY
		}
	case ast.KindDag:
		cw, _ := l.columns(i)
		colX := make([]int32, len(cw))
		colY := make([]int32, len(cw))
		for c := range cw {
			colX[c], colY[c] = cx, cy
			cx += cw[c] + gapX
		}
		for _, k := range n.kids {
			c := l.layer[k]
			l.place(k, colX[c], colY[c])
			colY[c] += l.h[k] + gapY
			if len(l.nodes[k].deps) == 0 {
				l.edges = append(l.edges, pending{from: i, to: k, kind: EdgeChild})
			}
			for _, d := range l.nodes[k].deps {
				l.edges = append(l.edges, pending{from: n.kids[d], to: k, kind: EdgeAfter})
			}
		}
	}
}

// laned reports whether a node's children are drawn in labelled lanes:
// a try's parts, a choice's cases.
func laned(k ast.Kind) bool { return k == ast.KindTry || k == ast.KindChoice }

// makeBox returns node i's box at x, y.
func (l *layout) makeBox(i, x, y int32) Box {
	n := &l.nodes[i]
	h := l.h[i] // a closed node's box is its whole subtree
	if l.open[i] {
		h = boxH
	}
	b := Box{
		Path:     n.info.Path,
		Kind:     n.info.Kind,
		Name:     clip(n.info.Name, labelChars),
		Status:   n.info.Status,
		Detail:   clip(l.detail(i), payloadChars),
		Guard:    clip(n.info.Guard, payloadChars),
		Children: len(n.kids),
		X:        int(x), Y: int(y), W: boxW, H: int(h),
	}
	if n.info.Kind == ast.KindAct {
		b.Action = clip(n.info.Action, labelChars)
		b.Payload = clip(string(n.info.Payload), payloadChars)
		b.Attempt = n.info.Attempt
		if n.info.Status == job.StatusFailed {
			b.Error = clip(n.info.Error, errorChars)
		}
	}
	if !l.open[i] && len(n.kids) > 0 {
		b.Group = &Group{Children: len(n.kids), Nodes: int(n.size) - 1, Counts: l.counts(i), Budget: l.budget[i]}
	}
	return b
}

// detail is node i's Box.Detail: its kind's and options' words and, for
// a choice that has chosen, the cases it chose (those neither idle nor
// skipped).
func (l *layout) detail(i int32) string {
	n := &l.nodes[i]
	d := n.info.Detail
	switch {
	case n.info.Kind == ast.KindMap && len(n.kids) > 0:
		return l.copies(i)
	case n.info.Kind == ast.KindLoop && len(n.kids) == 1:
		return "iteration " + itoa(iteration(l.nodes[n.kids[0]].info.Path)) + ", " + d
	}
	if n.info.Kind != ast.KindChoice || n.info.Status == job.StatusIdle {
		return d
	}
	var chose []string
	for _, k := range n.kids {
		if s := l.nodes[k].info.Status; s != job.StatusIdle && s != job.StatusSkipped {
			chose = append(chose, l.nodes[k].part)
		}
	}
	if len(chose) == 0 {
		return d
	}
	return d + " → " + strings.Join(chose, "; ")
}

// copies says how many copies the started map i has, and how many are
// in each state, by icon: "3 copies: 1▶ 2✓".
func (l *layout) copies(i int32) string {
	kids := l.nodes[i].kids
	var by [256]int
	for _, k := range kids {
		by[l.nodes[k].info.Status]++
	}
	s := itoa(len(kids)) + " copies"
	if len(kids) == 1 {
		s = "1 copy"
	}
	sep := ": "
	for _, st := range []job.Status{job.StatusRunning, job.StatusSucceeded, job.StatusFailed, job.StatusCancelled, job.StatusSkipped, job.StatusIdle} {
		if by[st] > 0 {
			s += sep + itoa(by[st]) + styleOf(st).icon
			sep = " "
		}
	}
	return s
}

// iteration returns the iteration, from 1, of the loop body at path
// ("...loop[I]").
func iteration(path string) int {
	i := strings.LastIndexByte(path, '[')
	if i < 0 {
		return 1
	}
	k, err := strconv.Atoi(strings.TrimSuffix(path[i+1:], "]"))
	if err != nil {
		return 1
	}
	return k + 1
}

// counts tallies the states of the nodes under node i, which are the
// nodes after it in pre-order up to its subtree's size.
func (l *layout) counts(i int32) []Count {
	if c, ok := l.count[i]; ok {
		return c
	}
	var by [256]int
	for _, n := range l.nodes[i+1 : i+l.nodes[i].size] {
		by[n.info.Status]++
	}
	var out []Count
	for s, c := range by {
		if c > 0 {
			out = append(out, Count{Status: job.Status(s), N: c})
		}
	}
	l.count[i] = out
	return out
}

// route turns the pending edges into edges between boxes with points:
// from a parent down its trunk (in the indent, left of its children) and
// across to the child; from a seq's child across to the next; from a
// dag's child across to the column before its sibling, then down or up,
// then across.
func (l *layout) route() {
	l.g.Edges = make([]Edge, 0, len(l.edges))
	for _, p := range l.edges {
		a, b := l.g.Boxes[l.box[p.from]], l.g.Boxes[l.box[p.to]]
		by := b.Y + boxH/2
		var pts []Point
		switch p.kind {
		case EdgeChild:
			tx := a.X + indent/2
			pts = []Point{{tx, a.Y + a.H}, {tx, by}, {b.X, by}}
		case EdgeNext:
			pts = []Point{{a.X + a.W, a.Y + boxH/2}, {b.X, by}}
		case EdgeAfter:
			ay, mx := a.Y+boxH/2, b.X-gapX/2
			if ay == by {
				pts = []Point{{a.X + a.W, ay}, {b.X, by}}
			} else {
				pts = []Point{{a.X + a.W, ay}, {mx, ay}, {mx, by}, {b.X, by}}
			}
		}
		l.g.Edges = append(l.g.Edges, Edge{From: int(l.box[p.from]), To: int(l.box[p.to]), Kind: p.kind, Label: p.label, Points: pts})
	}
}

// title is the drawing's first line.
func title(g *Graph) string {
	return "job " + clip(string(g.Job), idChars) + " v" + itoa(int(g.Version)) + ": " + g.Status.String()
}

// truncatedLine is the drawing's second line: "" unless truncated.
func truncatedLine(g *Graph) string {
	if !g.Truncated {
		return ""
	}
	return "Some nodes are drawn closed: opening them would draw more than " + itoa(g.MaxBoxes) + " boxes."
}
