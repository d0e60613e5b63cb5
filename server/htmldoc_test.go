package server_test

import (
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// htmlDoc is a page parsed as a browser parses it (golang.org/x/net/html,
// the HTML5 algorithm), for the tests to read elements, attributes and
// text as the browser would see them.
type htmlDoc struct{ root *html.Node }

func parseHTML(t *testing.T, body string) htmlDoc {
	t.Helper()
	n, err := html.Parse(strings.NewReader(body))
	if err != nil {
		t.Fatalf("parse the page: %v", err)
	}
	return htmlDoc{n}
}

// all returns the elements for which keep is true, in document order.
func (d htmlDoc) all(keep func(*html.Node) bool) []*html.Node {
	var out []*html.Node
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && keep(n) {
			out = append(out, n)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(d.root)
	return out
}

// byID returns the element with id, or nil.
func (d htmlDoc) byID(id string) *html.Node {
	els := d.all(func(n *html.Node) bool { a, ok := attr(n, "id"); return ok && a == id })
	if len(els) == 0 {
		return nil
	}
	return els[0]
}

// tagged returns the elements named tag.
func (d htmlDoc) tagged(tag string) []*html.Node {
	return d.all(func(n *html.Node) bool { return n.Data == tag })
}

// within returns the elements under n (n excluded) for which keep is true.
func within(n *html.Node, keep func(*html.Node) bool) []*html.Node {
	if n == nil {
		return nil
	}
	var out []*html.Node
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		out = append(out, htmlDoc{c}.all(keep)...)
	}
	return out
}

func attr(n *html.Node, name string) (string, bool) {
	if n == nil {
		return "", false
	}
	for _, a := range n.Attr {
		if a.Key == name && a.Namespace == "" {
			return a.Val, true
		}
	}
	return "", false
}

func attrOf(n *html.Node, name string) string { v, _ := attr(n, name); return v }

func hasClass(n *html.Node, class string) bool {
	for _, c := range strings.Fields(attrOf(n, "class")) {
		if c == class {
			return true
		}
	}
	return false
}

// text is the text under n, as textContent gives it.
func text(n *html.Node) string {
	if n == nil {
		return ""
	}
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}

// hostileMarkup finds what a hostile string would have made of a page if
// it had been written as markup: an element named img or script that
// the page's templates never write, an attribute starting with "on", a
// javascript: URL. It returns a description of the first, or "".
func (d htmlDoc) hostileMarkup() string {
	for _, n := range d.all(func(*html.Node) bool { return true }) {
		switch n.Data {
		case "img", "iframe", "object", "embed", "i":
			return "a <" + n.Data + "> element"
		case "script":
			if src, _ := attr(n, "src"); src != "/static/baton.js" || n.FirstChild != nil {
				return "a <script> element other than baton.js"
			}
		case "style":
			return "a <style> element"
		}
		for _, a := range n.Attr {
			if strings.HasPrefix(strings.ToLower(a.Key), "on") {
				return "an attribute " + a.Key + " on <" + n.Data + ">"
			}
			if a.Key == "style" {
				return "a style attribute on <" + n.Data + ">"
			}
			if (a.Key == "href" || a.Key == "src" || a.Key == "action") && strings.HasPrefix(strings.ToLower(strings.TrimSpace(a.Val)), "javascript:") {
				return "a javascript: URL"
			}
		}
	}
	return ""
}
