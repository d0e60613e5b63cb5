package draw

import (
	"bytes"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/batonwf/baton/ast"
)

// stateWords are the states the style sheet names, in their order.
var stateWords = []string{"idle", "running", "succeeded", "failed", "cancelled", "skipped"}

// Colours of what is not a state. Text is dark on white and on the light
// lanes (AA contrast).
const (
	textColour  = "#1A1A1A"
	mutedColour = "#4D4D4D"
	edgeColour  = "#595959"
	laneFill    = "#F4F4F4"
	laneStroke  = "#B3B3B3"
	bandH       = 20
)

// SVG writes g as a self-contained SVG document: no script, no external
// reference; every string from the job is escaped. Each node is a <g
// class="node"> carrying data-path, data-status and data-kind (and, when
// closed, data-group: its children). Its elements carry their geometry and
// text only: colours, outlines and fonts are StyleSheet's, in the
// document's <style> element. Its one write to w is its only side effect;
// an error is w's.
func (g *Graph) SVG(w io.Writer) error { return g.write(w, false) }

// PageSVG writes g for inline use in an HTML page: the same drawing,
// lanes and edges as SVG, but without the <style> element (a page's
// Content-Security-Policy may refuse inline styles: the page's style sheet
// styles the classes StyleSheet names) and with each box written as HTML.
// A box's <g class="node"> carries the same attributes and holds one
// <foreignObject class="label"> as large as the box, and in it the box: a
// <div class="label"> (the page's style sheet draws its outline by the
// node's data-status) of <p> lines classed head, line, count and state,
// with the same text as SVG's <text> elements, line by line; p.state is
// the band, filled by the style sheet. The box is placed by its
// foreignObject's x and y (the <g> has no transform). A box has no
// <title> and no <rect>, and the edges are no element each: the edges of
// a kind are one <path class="links links-KIND">, their arrowheads one
// <path class="arrows"> (no marker). A job of 1,000 nodes is some 11,000
// elements fewer for a browser to parse and style. A browser lays
// out and paints HTML only where it is seen (the page's style sheet gives
// the div content-visibility: auto), while it lays out every SVG <text>
// of a drawing; that is the point. The markup is well-formed XML (the div
// declares the XHTML namespace) and parses as the same tree in an HTML
// page. A program that renders SVG without HTML should use SVG.
func (g *Graph) PageSVG(w io.Writer) error { return g.write(w, true) }

func (g *Graph) write(w io.Writer, page bool) error {
	var b bytes.Buffer
	s := &svg{b: &b, page: page}
	s.header(g)
	s.lanes(g)
	s.edges(g)
	b.WriteString(`<g class="nodes">` + "\n")
	for i := range g.Boxes {
		s.box(&g.Boxes[i])
	}
	b.WriteString("</g>\n</svg>\n")
	_, err := w.Write(b.Bytes())
	return err
}

type svg struct {
	b    *bytes.Buffer
	page bool // PageSVG: no <style>, the boxes' words as HTML
}

// w writes literal markup.
func (s *svg) w(parts ...string) {
	for _, p := range parts {
		s.b.WriteString(p)
	}
}

// text writes t escaped as element content.
func (s *svg) text(t string) { s.escape(t, false) }

// escape writes t escaped: &, < and > as entities, and in an attribute
// value (quoted with ") the quotes too, and tabs and line breaks as
// character references so they survive; what XML 1.0 cannot hold (other
// control characters, invalid UTF-8, U+FFFE, U+FFFF) as U+FFFD.
func (s *svg) escape(t string, attr bool) {
	for _, r := range t { // invalid UTF-8 comes as U+FFFD
		switch {
		case r == '&':
			s.b.WriteString("&amp;")
		case r == '<':
			s.b.WriteString("&lt;")
		case r == '>':
			s.b.WriteString("&gt;")
		case attr && r == '"':
			s.b.WriteString("&quot;")
		case attr && r == '\'':
			s.b.WriteString("&#39;")
		case attr && (r == '\t' || r == '\n' || r == '\r'):
			s.b.WriteString("&#x" + strconv.FormatInt(int64(r), 16) + ";")
		case r < 0x20 && r != '\t' && r != '\n' && r != '\r' || r == 0xFFFE || r == 0xFFFF:
			s.b.WriteRune(utf8.RuneError)
		default:
			s.b.WriteRune(r)
		}
	}
}

// attr writes ` name="value"`, the value escaped.
func (s *svg) attr(name, value string) {
	s.w(" ", name, `="`)
	s.escape(value, true)
	s.w(`"`)
}

func (s *svg) header(g *Graph) {
	s.w(`<svg xmlns="http://www.w3.org/2000/svg" class="baton-graph"`)
	s.attr("viewBox", "0 0 "+itoa(g.Width)+" "+itoa(g.Height))
	s.attr("width", itoa(g.Width))
	s.attr("height", itoa(g.Height))
	s.w(` font-family="monospace" font-size="11" role="img"`)
	s.attr("data-job", string(g.Job))
	s.attr("data-version", itoa(int(g.Version)))
	s.attr("data-status", g.Status.String())
	s.attr("data-boxes", itoa(len(g.Boxes)))
	s.attr("data-nodes", itoa(g.Nodes))
	if g.Truncated {
		s.w(` data-truncated="true"`)
	}
	s.w(">\n<title>")
	s.text(title(g))
	s.w("</title>\n")
	if !s.page {
		s.w("<style>\n", StyleSheet, "</style>\n")
		s.w("<defs><marker id=\"baton-arrow\" viewBox=\"0 0 8 8\" refX=\"8\" refY=\"4\" markerWidth=\"6\" markerHeight=\"6\" orient=\"auto\"><path d=\"M0,0 L8,4 L0,8 z\" fill=\"", edgeColour, "\"/></marker></defs>\n")
	}
	s.w(`<text class="title" x="`, itoa(margin), `" y="`, itoa(margin+14), `">`)
	s.text(title(g))
	s.w("</text>\n")
	if g.Truncated {
		s.w(`<text class="truncated" x="`, itoa(margin), `" y="`, itoa(margin+31), `">`)
		s.text(truncatedLine(g))
		s.w("</text>\n")
	}
}

func (s *svg) lanes(g *Graph) {
	s.w(`<g class="lanes">` + "\n")
	for _, l := range g.Lanes {
		s.w(`<g class="lane"`)
		s.attr("data-path", l.Path)
		s.attr("data-part", l.Part)
		s.w(`><rect x="`, itoa(l.X), `" y="`, itoa(l.Y), `" width="`, itoa(l.W), `" height="`, itoa(l.H),
			`" rx="6"/><text x="`, itoa(l.X+6), `" y="`, itoa(l.Y+13), `">`)
		s.text(l.Part)
		s.w("</text></g>\n")
	}
	s.w("</g>\n")
}

func (s *svg) edges(g *Graph) {
	s.w(`<g class="edges">` + "\n")
	if s.page {
		s.pageEdges(g)
		s.w("</g>\n")
		return
	}
	for _, e := range g.Edges {
		s.w(`<path class="edge edge-`, e.Kind.String(), `"`)
		s.attr("data-from", g.Boxes[e.From].Path)
		s.attr("data-to", g.Boxes[e.To].Path)
		if e.Label != "" {
			s.attr("data-label", e.Label)
		}
		s.w(` d="`)
		s.points(e.Points)
		s.w(`"/>` + "\n")
	}
	s.w("</g>\n")
}

// points writes a polyline's path data: M, then L to each point.
func (s *svg) points(ps []Point) {
	for i, p := range ps {
		if i == 0 {
			s.w("M")
		} else {
			s.w(" L")
		}
		s.w(itoa(p.X), ",", itoa(p.Y))
	}
}

// pageEdges writes a page's edges: one <path class="links links-KIND">
// a kind, whose subpaths are the kind's edges, and one <path
// class="arrows"> of their arrowheads, as SVG's marker draws them. A job
// of 1,000 nodes has some 1,000 edges: a page parses, styles and lays out
// a few elements instead of one each.
func (s *svg) pageEdges(g *Graph) {
	for k := range edgeKindNames {
		first := true
		for _, e := range g.Edges {
			if int(e.Kind) != k || len(e.Points) < 2 {
				continue
			}
			if first {
				s.w(`<path class="links links-`, EdgeKind(k).String(), `" d="`)
				first = false
			} else {
				s.w(" ")
			}
			s.points(e.Points)
		}
		if !first {
			s.w(`"/>` + "\n")
		}
	}
	first := true
	for _, e := range g.Edges {
		if len(e.Points) < 2 {
			continue
		}
		if first {
			s.w(`<path class="arrows" d="`)
			first = false
		} else {
			s.w(" ")
		}
		s.arrow(e.Points[len(e.Points)-2], e.Points[len(e.Points)-1])
	}
	if !first {
		s.w(`"/>` + "\n")
	}
}

// Arrowheads, as SVG's marker draws them on a 1.5 wide stroke: a
// triangle arrowLen long and 2*arrowHalf wide, its tip on the edge's end.
const (
	arrowLen  = 9
	arrowHalf = 4.5
)

// arrow writes the arrowhead of a segment from a to b: a closed
// triangle whose tip is b.
func (s *svg) arrow(a, b Point) {
	dx, dy := float64(b.X-a.X), float64(b.Y-a.Y)
	n := math.Hypot(dx, dy)
	if n == 0 {
		dx, dy, n = 1, 0, 1
	}
	dx, dy = dx/n, dy/n
	bx, by := float64(b.X)-arrowLen*dx, float64(b.Y)-arrowLen*dy
	s.w("M", ftoa(float64(b.X)), ",", ftoa(float64(b.Y)),
		" L", ftoa(bx-arrowHalf*dy), ",", ftoa(by+arrowHalf*dx),
		" L", ftoa(bx+arrowHalf*dy), ",", ftoa(by-arrowHalf*dx), " z")
}

// ftoa writes f with at most one decimal.
func ftoa(f float64) string {
	return strconv.FormatFloat(math.Round(f*10)/10, 'f', -1, 64)
}

func (s *svg) box(b *Box) {
	word := b.Status.String()
	s.w(`<g class="node`)
	if b.Group != nil {
		s.w(" group")
	}
	s.w(`"`)
	s.attr("data-path", b.Path)
	s.attr("data-status", word)
	s.attr("data-kind", b.Kind.String())
	if b.Group != nil {
		s.attr("data-group", itoa(b.Group.Children))
	}
	if s.page {
		s.w(">")
		s.label(b)
		s.w("</g>\n")
		return
	}
	s.w(` transform="translate(`, itoa(b.X), ",", itoa(b.Y), `)">`)
	s.w("<title>")
	s.text(tooltip(b))
	s.w("</title>")
	// Colours, outlines and fonts come from the style sheet (StyleSheet),
	// by the node's data-status: a box carries its geometry and its text.
	s.w(`<rect class="box" width="`, itoa(b.W), `" height="`, itoa(b.H), `" rx="6"/>`)
	s.w(`<rect class="band" x="1" y="`, itoa(b.H-bandH-1), `" width="`, itoa(b.W-2), `" height="`, itoa(bandH), `"/>`)
	s.texts(b)
	s.w("</g>\n")
}

// texts writes a box's words as SVG <text> elements.
func (s *svg) texts(b *Box) {
	// The first line: kind, then the action or the name, in bold.
	s.w(`<text class="head" x="8" y="18">`, b.Kind.String())
	if name := boxName(b); name != "" {
		s.w(" <tspan>")
		s.text(name)
		s.w("</tspan>")
	}
	s.w("</text>")
	if l := secondLine(b); l != "" {
		s.w(`<text class="line" x="8" y="36">`)
		s.text(l)
		s.w("</text>")
	}
	if b.Group != nil {
		for k, c := range b.Group.Counts {
			s.w(`<text class="count" x="8" y="`, itoa(boxH-bandH-8+countH*(k+1)), `"`)
			s.attr("data-status", c.Status.String())
			s.attr("data-count", itoa(c.N))
			s.w(">")
			s.text(countLine(c))
			s.w("</text>")
		}
	}
	s.w(`<text class="state" x="8" y="`, itoa(b.H-7), `">`)
	s.text(bandLine(b, styleOf(b.Status)))
	s.w("</text>")
}

// label writes a page's box: a <foreignObject> over the whole box
// holding the box itself as HTML, a <div class="label"> (the page's style
// sheet draws its outline) of the same lines as texts, as <p> elements,
// the last of which, p.state, is the band (the style sheet fills it).
func (s *svg) label(b *Box) {
	s.w(`<foreignObject class="label" x="`, itoa(b.X), `" y="`, itoa(b.Y), `" width="`, itoa(b.W), `" height="`, itoa(b.H),
		`"><div xmlns="http://www.w3.org/1999/xhtml" class="label"><p class="head">`, b.Kind.String())
	if name := boxName(b); name != "" {
		s.w(" <b>")
		s.text(name)
		s.w("</b>")
	}
	s.w("</p>")
	if l := secondLine(b); l != "" {
		s.w(`<p class="line">`)
		s.text(l)
		s.w("</p>")
	}
	if b.Group != nil {
		for _, c := range b.Group.Counts {
			s.w(`<p class="count"`)
			s.attr("data-status", c.Status.String())
			s.attr("data-count", itoa(c.N))
			s.w(">")
			s.text(countLine(c))
			s.w("</p>")
		}
	}
	s.w(`<p class="state">`)
	s.text(bandLine(b, styleOf(b.Status)))
	s.w("</p></div></foreignObject>")
}

// boxName is what a box's first line names after its kind: an act's
// action, another node's name.
func boxName(b *Box) string {
	if b.Kind == ast.KindAct {
		return b.Action
	}
	return b.Name
}

// countLine is one line of a group's counts: icon, count, state.
func countLine(c Count) string {
	return styleOf(c.Status).icon + " " + itoa(c.N) + " " + c.Status.String()
}

// secondLine is what a box shows under its first line: a dag child's
// guard, then an act's payload; a wait's, sleep's, end's or open
// choice's detail; an inner node's children or parts and its detail.
func secondLine(b *Box) string {
	l := ""
	switch {
	case b.Kind == ast.KindAct:
		l = b.Payload
		if b.Name != "" {
			l = b.Name + " · " + b.Payload
		}
	case b.Children == 0:
		l = b.Detail
	case b.Kind == ast.KindMap || b.Kind == ast.KindLoop: // its copies, its iteration
		l = b.Detail
	case b.Kind == ast.KindChoice: // its lanes show its cases
		l = b.Detail
		if b.Group != nil {
			l = itoa(b.Children) + " cases, " + itoa(b.Group.Nodes) + " nodes, closed"
		}
	default:
		l = itoa(b.Children) + " children"
		switch {
		case b.Kind == ast.KindTry:
			l = itoa(b.Children) + " parts"
		case b.Children == 1:
			l = "1 child"
		}
		if b.Detail != "" {
			l += ", " + b.Detail
		}
		if b.Group != nil {
			l += ", " + itoa(b.Group.Nodes) + " nodes, closed"
		}
	}
	if b.Guard != "" {
		l = b.Guard + " · " + l
	}
	return clip(l, payloadChars)
}

// bandLine is the state in words: icon, word, attempt, error.
func bandLine(b *Box, st style) string {
	l := st.icon + " " + b.Status.String()
	if b.Attempt > 1 {
		l += " #" + itoa(b.Attempt)
	}
	if b.Error != "" {
		l += ": " + b.Error
	}
	return clip(l, payloadChars)
}

// tooltip is a box's <title>: its path, name, state and error.
func tooltip(b *Box) string {
	var t strings.Builder
	t.WriteString(ast.ShowPath(b.Path))
	if b.Name != "" {
		t.WriteString(" (" + b.Name + ")")
	}
	t.WriteString(": " + b.Status.String())
	if b.Attempt > 1 {
		t.WriteString(", attempt " + itoa(b.Attempt))
	}
	if b.Error != "" {
		t.WriteString(": " + b.Error)
	}
	if b.Group != nil && b.Group.Budget {
		t.WriteString("; closed to stay within the bound on boxes")
	}
	return t.String()
}
