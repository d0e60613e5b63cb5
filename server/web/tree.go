package web

import (
	"bytes"
	"html/template"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/draw"
	"github.com/batonwf/baton/job"
)

// Tree is a job's tree drawn for a page: package draw's SVG, with the
// groups named in Expand opened.
type Tree struct {
	// SVG is the drawing, for inline use in a page: draw's PageSVG, with
	// no <style> element (a page's CSP refuses inline styles; baton.css
	// styles the drawing by data-status instead) and the boxes' words as
	// HTML labels.
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

// ExpandParam is the expand query parameter of the groups at paths:
// their paths joined by commas (a node path holds no comma). The root's
// path is "", so the root alone is written ",".
func ExpandParam(paths []string) string {
	p := strings.Join(paths, ",")
	if p == "" && len(paths) > 0 {
		return ","
	}
	return p
}

// ParseExpand reads an expand query parameter (ExpandParam): the paths,
// sorted, each once. "" is none; an empty path among others, or ",", is
// the root.
func ParseExpand(s string) []string {
	if s == "" {
		return nil
	}
	out := strings.Split(s, ",")
	slices.Sort(out)
	return slices.Compact(out)
}

// DrawTree lays j out with the groups at expand opened and returns the
// inline Tree: package draw's PageSVG (no <style>, the boxes' words as
// HTML that the browser lays out only where it is seen).
func DrawTree(j job.Job, expand []string) (Tree, error) {
	opts := draw.Options{}
	if len(expand) > 0 {
		opts.Expand = map[string]bool{}
		for _, p := range expand {
			opts.Expand[p] = true
		}
	}
	g, err := draw.Layout(j, opts)
	if err != nil {
		return Tree{}, err
	}
	var b bytes.Buffer
	if err := g.PageSVG(&b); err != nil {
		return Tree{}, err
	}
	t := Tree{SVG: template.HTML(b.String()), Boxes: len(g.Boxes), Nodes: g.Nodes, Truncated: g.Truncated, Expand: expand}
	for _, b := range g.Boxes {
		if b.Group != nil && len(t.Groups) < MaxGroupLinks {
			t.Groups = append(t.Groups, GroupLink{Path: b.Path, Show: ast.ShowPath(b.Path)})
		}
	}
	return t, nil
}

// Select returns t with the node at path marked selected (class
// "selected" on its <g>), as the page's script marks a click; t is
// unchanged when no box has that path (a node inside a closed group).
func (t Tree) Select(path string) Tree {
	key := ` data-path="` + escapeAttr(path) + `"`
	s := string(t.SVG)
	for _, class := range []string{`class="node"`, `class="node group"`} {
		if i := strings.Index(s, class+key); i >= 0 {
			j := i + len(class) - 1
			t.SVG = template.HTML(s[:j] + ` selected` + s[j:])
			return t
		}
	}
	return t
}

// escapeAttr escapes an attribute's value as package draw does: &, <,
// >, quotes, tabs and line breaks as references; other control
// characters as U+FFFD.
func escapeAttr(v string) string {
	var b strings.Builder
	for _, r := range v {
		switch {
		case r == '&':
			b.WriteString("&amp;")
		case r == '<':
			b.WriteString("&lt;")
		case r == '>':
			b.WriteString("&gt;")
		case r == '"':
			b.WriteString("&quot;")
		case r == '\'':
			b.WriteString("&#39;")
		case r == '\t' || r == '\n' || r == '\r':
			b.WriteString("&#x" + strconv.FormatInt(int64(r), 16) + ";")
		case r < 0x20 || r == 0xFFFE || r == 0xFFFF:
			b.WriteRune(utf8.RuneError)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
