package web

import (
	"bytes"
	"html/template"
	"slices"
	"strings"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/draw"
	"github.com/batonwf/baton/job"
)

// Tree is a job's tree drawn for a page: package draw's SVG, with the
// groups named in Expand opened.
type Tree struct {
	// SVG is the drawing, for inline use in a page: draw's SVG without its
	// <style> element (a page's CSP refuses inline styles; baton.css
	// styles the drawing by data-status instead).
	SVG template.HTML
	// Boxes counts the boxes drawn; Nodes the tree's nodes.
	Boxes, Nodes int
	// Truncated says some node stayed closed to keep within MaxBoxes.
	Truncated bool
	// Expand lists the opened groups' paths, sorted; the page keeps them
	// in its URL (expand=PATH,PATH).
	Expand []string
	// Groups are the closed groups (at most MaxGroupLinks of them), for
	// links that open them without the script.
	Groups []GroupLink
}

// MaxGroupLinks bounds Tree.Groups.
const MaxGroupLinks = 50

// GroupLink opens a closed group.
type GroupLink struct {
	Path string
	Show string // the path as the CLI shows it ("(root)" for "")
	URL  string // set by JobViewOf
}

// ExpandParam is the expand query parameter for paths.
func ExpandParam(paths []string) string { return strings.Join(paths, ",") }

// ParseExpand reads an expand query parameter: paths separated by
// commas. A node path holds no comma: ast paths are names and indexes
// joined by dots.
func ParseExpand(s string) []string {
	if s == "" {
		return nil
	}
	out := strings.Split(s, ",")
	slices.Sort(out)
	return slices.Compact(out)
}

// DrawTree lays j out with the groups at expand opened and returns its
// standalone SVG (with its <style>, as 'baton inspect' writes it) and
// the inline Tree.
func DrawTree(j job.Job, expand []string) ([]byte, Tree, error) {
	opts := draw.Options{}
	if len(expand) > 0 {
		opts.Expand = map[string]bool{}
		for _, p := range expand {
			opts.Expand[p] = true
		}
	}
	g, err := draw.Layout(j, opts)
	if err != nil {
		return nil, Tree{}, err
	}
	var b bytes.Buffer
	if err := g.SVG(&b); err != nil {
		return nil, Tree{}, err
	}
	svg := b.Bytes()
	t := Tree{SVG: template.HTML(inline(svg)), Boxes: len(g.Boxes), Nodes: g.Nodes, Truncated: g.Truncated, Expand: expand}
	for _, b := range g.Boxes {
		if b.Group != nil && len(t.Groups) < MaxGroupLinks {
			t.Groups = append(t.Groups, GroupLink{Path: b.Path, Show: ast.ShowPath(b.Path)})
		}
	}
	return svg, t, nil
}

// inline returns draw's SVG without its one <style> element. The element
// comes before any text of the job's (the title's text is escaped, so it
// holds no '<'), so the first "<style>" is it.
func inline(svg []byte) string {
	s := string(svg)
	i := strings.Index(s, "<style>")
	j := strings.Index(s, "</style>")
	if i < 0 || j < i {
		return s
	}
	end := j + len("</style>")
	if end < len(s) && s[end] == '\n' {
		end++
	}
	return s[:i] + s[end:]
}
