package draw_test

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/batonwf/baton/draw"
	"github.com/batonwf/baton/job"
)

// checkGraph returns what is wrong with g, the layout of j under o, and
// with its SVG svg: the contracts of the package doc, checked on every
// golden and random drawing, so that rewriting a golden file cannot
// bless a broken one.
func checkGraph(j job.Job, o draw.Options, g *draw.Graph, svg []byte) error {
	maxBoxes := o.MaxBoxes
	if maxBoxes == 0 {
		maxBoxes = draw.DefaultMaxBoxes
	}
	if len(g.Boxes) == 0 || len(g.Boxes) > maxBoxes {
		return fmt.Errorf("%d boxes, want 1 to %d", len(g.Boxes), maxBoxes)
	}
	if g.Boxes[0].Path != "" {
		return fmt.Errorf("the first box is %q, not the root", g.Boxes[0].Path)
	}
	// Boxes inside the drawing, pairwise apart.
	for i, a := range g.Boxes {
		if a.X < 0 || a.Y < 0 || a.W <= 0 || a.H <= 0 || a.X+a.W > g.Width || a.Y+a.H > g.Height {
			return fmt.Errorf("box %q at %d,%d %dx%d is outside the drawing %dx%d", a.Path, a.X, a.Y, a.W, a.H, g.Width, g.Height)
		}
		for _, b := range g.Boxes[i+1:] {
			if a.X < b.X+b.W && b.X < a.X+a.W && a.Y < b.Y+b.H && b.Y < a.Y+a.H {
				return fmt.Errorf("boxes %q (%d,%d %dx%d) and %q (%d,%d %dx%d) overlap", a.Path, a.X, a.Y, a.W, a.H, b.Path, b.X, b.Y, b.W, b.H)
			}
		}
	}
	// Every node exactly once: a box of its own, or counted by the one
	// closed box nearest above it, with the right state.
	byPath := map[string]*draw.Box{}
	for i := range g.Boxes {
		b := &g.Boxes[i]
		if byPath[b.Path] != nil {
			return fmt.Errorf("node %q has two boxes", b.Path)
		}
		byPath[b.Path] = b
	}
	counted := map[string]map[job.Status]int{}
	nodes := 0
	var walkErr error
	j.Walk(func(n job.NodeInfo) bool {
		nodes++
		if b := byPath[n.Path]; b != nil {
			if b.Status != n.Status || b.Kind != n.Kind {
				walkErr = fmt.Errorf("box %q is %s %s, the node %s %s", n.Path, b.Kind, b.Status, n.Kind, n.Status)
			}
			return walkErr == nil
		}
		p := n.Path
		for {
			p = parentPath(p)
			if b := byPath[p]; b != nil {
				if b.Group == nil {
					walkErr = fmt.Errorf("node %q is not drawn and its nearest drawn ancestor %q is open", n.Path, p)
					return false
				}
				if counted[p] == nil {
					counted[p] = map[job.Status]int{}
				}
				counted[p][n.Status]++
				return true
			}
			if p == "" {
				walkErr = fmt.Errorf("node %q is neither drawn nor under a drawn node", n.Path)
				return false
			}
		}
	})
	if walkErr != nil {
		return walkErr
	}
	if nodes != g.Nodes {
		return fmt.Errorf("the graph says %d nodes, the job has %d", g.Nodes, nodes)
	}
	for _, b := range g.Boxes {
		if b.Group == nil {
			continue
		}
		sum := 0
		for _, c := range b.Group.Counts {
			if c.N <= 0 || counted[b.Path][c.Status] != c.N {
				return fmt.Errorf("group %q counts %d %s, the job has %d", b.Path, c.N, c.Status, counted[b.Path][c.Status])
			}
			sum += c.N
		}
		if sum != b.Group.Nodes {
			return fmt.Errorf("group %q counts %d nodes in its states and %d in all", b.Path, sum, b.Group.Nodes)
		}
		if b.Group.Budget && !g.Truncated {
			return fmt.Errorf("group %q was closed by the bound, and the graph is not truncated", b.Path)
		}
	}
	// Every edge joins two drawn boxes: it starts on the edge of one and
	// ends on the edge of the other.
	for _, e := range g.Edges {
		if e.From < 0 || e.From >= len(g.Boxes) || e.To < 0 || e.To >= len(g.Boxes) || e.From == e.To || len(e.Points) < 2 {
			return fmt.Errorf("edge %+v", e)
		}
		if a, p := g.Boxes[e.From], e.Points[0]; !onBorder(a, p) {
			return fmt.Errorf("edge %s %q -> %q starts at %v, off its box", e.Kind, a.Path, g.Boxes[e.To].Path, p)
		}
		if b, p := g.Boxes[e.To], e.Points[len(e.Points)-1]; !onBorder(b, p) {
			return fmt.Errorf("edge %s %q -> %q ends at %v, off its box", e.Kind, g.Boxes[e.From].Path, b.Path, p)
		}
	}
	return checkSVG(g, svg)
}

// parentPath cuts the last edge off the non-empty path p.
func parentPath(p string) string {
	if i := strings.LastIndexByte(p, '.'); i >= 0 {
		return p[:i]
	}
	return ""
}

func onBorder(b draw.Box, p draw.Point) bool {
	in := p.X >= b.X && p.X <= b.X+b.W && p.Y >= b.Y && p.Y <= b.Y+b.H
	return in && (p.X == b.X || p.X == b.X+b.W || p.Y == b.Y || p.Y == b.Y+b.H)
}

// checkSVG parses svg as XML: no script, no event handler, no external
// reference, and one node element per box, in order, carrying its path
// and state.
func checkSVG(g *draw.Graph, svg []byte) error {
	d := xml.NewDecoder(bytes.NewReader(svg))
	var nodes []xml.StartElement
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("the SVG does not parse: %v", err)
		}
		se, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		switch strings.ToLower(se.Name.Local) {
		case "script", "foreignobject", "image", "a", "use", "iframe":
			return fmt.Errorf("the SVG has a <%s> element", se.Name.Local)
		}
		for _, a := range se.Attr {
			name := strings.ToLower(a.Name.Local)
			if strings.HasPrefix(name, "on") || name == "href" || name == "src" {
				return fmt.Errorf("the SVG has an attribute %s=%q", a.Name.Local, a.Value)
			}
			if strings.Contains(a.Value, "url(") && a.Value != "url(#baton-arrow)" {
				return fmt.Errorf("the SVG refers to %q", a.Value)
			}
		}
		if attr(se, "class") == "node" || attr(se, "class") == "node group" {
			nodes = append(nodes, se)
		}
	}
	if len(nodes) != len(g.Boxes) {
		return fmt.Errorf("the SVG has %d nodes, the graph %d boxes", len(nodes), len(g.Boxes))
	}
	for i, se := range nodes {
		b := g.Boxes[i]
		if attr(se, "data-path") != b.Path || attr(se, "data-status") != b.Status.String() {
			return fmt.Errorf("SVG node %d has data-path %q data-status %q, the box %q %s", i, attr(se, "data-path"), attr(se, "data-status"), b.Path, b.Status)
		}
	}
	return nil
}

func attr(se xml.StartElement, name string) string {
	for _, a := range se.Attr {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

// checkPageSVG checks page, g's PageSVG, against svg, its SVG: the same
// document but for the <style> element, which page lacks, and each box's
// words, which page writes as HTML (one foreignObject.label a box holding
// a div in the XHTML namespace of p elements) with the same text, line by
// line, as svg's <text> elements, and no <rect>, <title> or <text> of its
// own. Nothing else is allowed in: no script, event handler or reference.
func checkPageSVG(g *draw.Graph, svg, page []byte) error {
	if bytes.Contains(page, []byte("<style")) {
		return fmt.Errorf("the page SVG has a <style> element")
	}
	std, err := boxWords(svg, false)
	if err != nil {
		return fmt.Errorf("SVG: %v", err)
	}
	html, err := boxWords(page, true)
	if err != nil {
		return fmt.Errorf("page SVG: %v", err)
	}
	if len(std) != len(g.Boxes) || len(html) != len(g.Boxes) {
		return fmt.Errorf("%d boxes, %d nodes in the SVG, %d in the page SVG", len(g.Boxes), len(std), len(html))
	}
	for i := range std {
		if strings.Join(std[i], "\n") != strings.Join(html[i], "\n") {
			return fmt.Errorf("box %q: the SVG says %q, the page SVG %q", g.Boxes[i].Path, std[i], html[i])
		}
	}
	return pageShape(g, page)
}

// pageShape checks what makes page, g's PageSVG, cheap for a browser:
// each box placed by its label's x and y (its <g> has no transform) and
// the edges a few paths (one a kind and one of arrowheads), not one
// element each.
func pageShape(g *draw.Graph, page []byte) error {
	d := xml.NewDecoder(bytes.NewReader(page))
	labels, paths := 0, 0
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("page SVG does not parse: %v", err)
		}
		t, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		switch {
		case t.Name.Local == "g" && strings.HasPrefix(attr(t, "class"), "node") && attr(t, "transform") != "":
			return fmt.Errorf("node %q has a transform", attr(t, "data-path"))
		case t.Name.Local == "foreignObject":
			b := g.Boxes[labels]
			if x, y := attr(t, "x"), attr(t, "y"); x != strconv.Itoa(b.X) || y != strconv.Itoa(b.Y) {
				return fmt.Errorf("box %q at %d,%d: its label is at %s,%s", b.Path, b.X, b.Y, x, y)
			}
			labels++
		case t.Name.Local == "path":
			paths++
		}
	}
	if paths > 4 {
		return fmt.Errorf("%d paths for %d edges; want at most one a kind and one of arrowheads", paths, len(g.Edges))
	}
	return nil
}

// boxWords returns each node's lines ("class: text") in svg: its <text>
// elements, or with page its label's <p> elements.
func boxWords(svg []byte, page bool) ([][]string, error) {
	const xhtml = "http://www.w3.org/1999/xhtml"
	d := xml.NewDecoder(bytes.NewReader(svg))
	var out [][]string
	var stack []xml.StartElement
	nodeDepth, lineDepth := -1, -1
	var line strings.Builder
	labels := 0
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("does not parse: %v", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			name := t.Name.Local
			for _, a := range t.Attr {
				n := strings.ToLower(a.Name.Local)
				if strings.HasPrefix(n, "on") || n == "href" || n == "src" || strings.Contains(a.Value, "url(") && a.Value != "url(#baton-arrow)" {
					return nil, fmt.Errorf("attribute %s=%q", a.Name.Local, a.Value)
				}
			}
			html := t.Name.Space == xhtml
			switch {
			case name == "script" || name == "image" || name == "use" || name == "a" || name == "iframe" || name == "style" && page:
				return nil, fmt.Errorf("a <%s> element", name)
			case name == "foreignObject" && (!page || nodeDepth < 0 || attr(t, "class") != "label"):
				return nil, fmt.Errorf("a <foreignObject> out of a node's label")
			case html && (!page || !(name == "div" && attr(t, "class") == "label" || name == "p" || name == "b")):
				return nil, fmt.Errorf("an HTML <%s> element", name)
			case page && nodeDepth >= 0 && (name == "rect" || name == "title" || name == "text"):
				return nil, fmt.Errorf("a <%s> in a page's box: its outline, band and words are its label's", name)
			case page && name == "foreignObject":
				labels++
			}
			if c := attr(t, "class"); c == "node" || c == "node group" {
				nodeDepth = len(stack)
				out = append(out, nil)
			}
			if c := attr(t, "class"); nodeDepth >= 0 && lineDepth < 0 && (c == "head" || c == "line" || c == "count" || c == "state") {
				if html != page || name != map[bool]string{false: "text", true: "p"}[page] {
					return nil, fmt.Errorf("node %d's %s line is a <%s> in %q", len(out)-1, c, name, t.Name.Space)
				}
				lineDepth = len(stack)
				line.Reset()
				line.WriteString(c + ": ")
			}
			stack = append(stack, t)
		case xml.CharData:
			if lineDepth >= 0 {
				line.Write(t)
			}
		case xml.EndElement:
			stack = stack[:len(stack)-1]
			if len(stack) == lineDepth {
				out[len(out)-1] = append(out[len(out)-1], line.String())
				lineDepth = -1
			}
			if len(stack) == nodeDepth {
				nodeDepth = -1
			}
		}
	}
	if page && labels != len(out) {
		return nil, fmt.Errorf("%d labels for %d nodes", labels, len(out))
	}
	return out, nil
}
