package web_test

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"golang.org/x/net/html"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/internal/browsertest"
)

// treeNote is what the page says of its drawing: the line above the tree
// ("N boxes for M nodes", the closed groups it links) and #tree's data-boxes,
// data-nodes and data-truncated.
const treeNote = `(() => {
	const t = document.getElementById('tree');
	const a = (n) => t.getAttribute(n) || '';
	const note = document.querySelector('#tree-section p.tree-note');
	return [note.textContent, a('data-boxes'), a('data-nodes'), a('data-truncated')].join(' | ');
})()`

// TestBrowserTreeNoteFollowsGrowth: when a map starts its copies while
// the page is open (a few copies drawn, and more than 100 drawn as a
// closed group), the line above the tree counts the boxes and nodes
// drawn now and links the new closed group, as the server writes it for
// a page loaded afresh; not the counts of the first load.
func TestBrowserTreeNoteFollowsGrowth(t *testing.T) {
	gate := make(chan struct{})
	s := startLive(t, filepath.Join(t.TempDir(), "jobs.db"), "127.0.0.1:0", gate, nil)
	few, many := make([]int, 3), make([]int, 150)
	s.submit(t, "grows", ast.Seq(
		ast.Par(ast.Act("gate", few).Named("xs"), ast.Act("ok", many).Named("ys")),
		ast.Par(
			ast.Map("xs", ast.Act("ok", nil).WithInputs("item")).Named("few"),
			ast.Map("ys", ast.Act("ok", nil).WithInputs("item")).Named("many"),
		),
	))
	p := browsertest.NewPage(t)
	p.Navigate(s.URL + "/jobs/grows")
	p.WaitDrawn()
	first := browsertest.Eval[string](p, treeNote)
	p.Do("mark the document", chromedp.Evaluate[chromedp.Void](`window.batonTestMark = 'same document'`))
	release(t, gate, 1) // the list: both maps start their copies
	if _, err := s.client().Wait(t.Context(), "grows"); err != nil {
		t.Fatal(err)
	}
	p.Wait(`document.getElementById('job').dataset.status === 'succeeded' && !!document.querySelector('#tree g.node.group[data-path="seq[1].par[1]"]') && !!document.querySelector('#tree g.node[data-path="seq[1].par[0].map[2]"]')`)
	want := serverTreeNote(t, s.URL+"/jobs/grows")
	if want == first {
		t.Fatalf("the drawing did not grow: the server says %q before and after", want)
	}
	p.Wait(treeNote + ` === ` + js(want))
	if m := browsertest.Eval[string](p, `window.batonTestMark || 'reloaded'`); m != "same document" {
		t.Errorf("the page was reloaded (%s)", m)
	}
	// The new group's link opens it in place.
	p.Do("open the map's group from the note", chromedp.Click(chromedp.CSS(`#tree-section p.tree-note a.expand`)))
	p.Wait(`!!document.querySelector('#tree g.node[data-path="seq[1].par[1].map[149]"]')`)
	want = serverTreeNote(t, s.URL+"/jobs/grows?expand=seq%5B1%5D.par%5B1%5D")
	p.Wait(treeNote + ` === ` + js(want))
}

// serverTreeNote is treeNote of the page the server sends for url, as
// sent (parsed, never run).
func serverTreeNote(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	doc, err := html.Parse(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var tree, note *html.Node
	for n := range doc.Descendants() {
		switch {
		case n.Type == html.ElementNode && attr(n, "id") == "tree":
			tree = n
		case n.Type == html.ElementNode && n.Data == "p" && attr(n, "class") == "tree-note":
			note = n
		}
	}
	if tree == nil || note == nil {
		t.Fatalf("%s has no #tree or p.tree-note", url)
	}
	var text strings.Builder
	for n := range note.Descendants() {
		if n.Type == html.TextNode {
			text.WriteString(n.Data)
		}
	}
	return strings.Join([]string{text.String(), attr(tree, "data-boxes"), attr(tree, "data-nodes"), attr(tree, "data-truncated")}, " | ")
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}
