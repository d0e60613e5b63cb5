package render

import (
	"fmt"
	"html"
	"strings"

	"github.com/batonwf/baton/job"
)

// SVG sizes: one row per node, indented by depth.
const (
	svgRow    = 44  // height of a row
	svgBox    = 36  // height of a node's box
	svgIndent = 24  // indent per level
	svgWidth  = 360 // width of a box
	svgMargin = 8
)

// SVG renders j as a standalone SVG image: the nodes of Dot, one row each
// in pre-order, indented by depth, filled by status, each joined to its
// parent by a line; the part of a try labels the line. It needs no
// layout engine, so the server draws it itself.
func SVG(j job.Job) string {
	nodes := graphNodes(j)
	depth := 0
	row := map[int]int{} // Index -> row
	for i, n := range nodes {
		row[n.Index] = i
		depth = max(depth, n.Depth)
	}
	w := 2*svgMargin + depth*svgIndent + svgWidth
	h := 2*svgMargin + svgRow*(len(nodes)+1)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="Helvetica, sans-serif" font-size="12">`+"\n", w, h, w, h)
	fmt.Fprintf(&b, "<title>%s</title>\n", html.EscapeString(fmt.Sprintf("job %s v%d: %s", j.ID(), j.Version(), j.Status())))
	fmt.Fprintf(&b, `<text x="%d" y="%d" font-weight="bold">%s</text>`+"\n", svgMargin, svgMargin+14,
		html.EscapeString(fmt.Sprintf("job %s v%d: %s", j.ID(), j.Version(), j.Status())))
	top := svgMargin + svgRow
	for _, n := range nodes {
		if n.parent < 0 {
			continue
		}
		px := svgMargin + (n.Depth-1)*svgIndent + svgIndent/2
		py := top + row[n.parent]*svgRow + svgBox
		x := svgMargin + n.Depth*svgIndent
		y := top + row[n.Index]*svgRow + svgBox/2
		fmt.Fprintf(&b, `<path d="M%d %d V%d H%d" fill="none" stroke="#999999"/>`+"\n", px, py, y, x)
		if n.edge != "" {
			fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="9" fill="#555555">%s</text>`+"\n", px+2, y-3, n.edge)
		}
	}
	for _, n := range nodes {
		s := statusStyles[n.Status]
		x := svgMargin + n.Depth*svgIndent
		y := top + row[n.Index]*svgRow
		dash := ""
		if n.Status == job.StatusCancelled || n.Status == job.StatusIdle {
			dash = ` stroke-dasharray="4 2"`
		}
		fmt.Fprintf(&b, `<g data-path="%s" data-status="%s">`, html.EscapeString(n.Path), n.Status)
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" rx="6" fill="%s" stroke="%s"%s/>`,
			x, y, svgWidth, svgBox, s.fill, s.stroke, dash)
		lines := labelLines(n.NodeInfo)
		fmt.Fprintf(&b, `<text x="%d" y="%d">%s</text>`, x+8, y+15, html.EscapeString(strings.Join(lines[:len(lines)-1], "  ")))
		fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="10">%s</text>`, x+8, y+29, html.EscapeString(lines[len(lines)-1]))
		b.WriteString("</g>\n")
	}
	b.WriteString("</svg>\n")
	return b.String()
}
