package web_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/internal/browsertest"
)

// TestBrowserMapAndLoop: the page of a job whose map starts 10,000
// copies while it is open draws the map as one closed group that counts
// its copies per state, not 10,000 boxes; a loop's box says its
// iteration and the page draws the next iteration's body when it begins,
// without a reload; the steps say which step started the map, with its
// copies, and which began the loop's next iteration.
func TestBrowserMapAndLoop(t *testing.T) {
	const copies = 10000
	gate := make(chan struct{})
	s := startLive(t, filepath.Join(t.TempDir(), "jobs.db"), "127.0.0.1:0", gate, nil)
	items := make([]int, copies)
	for i := range items {
		items[i] = i
	}
	s.submit(t, "m", ast.Seq(
		ast.Act("gate", items).Named("xs"),
		ast.Par(
			ast.Map("xs", ast.Act("ok", nil).WithInputs("item")).Named("all"),
			ast.Loop(ast.Act("gate", false).Named("done"), "done", true, 5).Named("polls"),
		),
	))
	const mapBox = `document.querySelector('#tree g.node[data-path="seq[1].par[0]"]')`
	const loopBox = `document.querySelector('#tree g.node[data-path="seq[1].par[1]"]')`
	p := browsertest.NewPage(t)
	p.Navigate(s.URL + "/jobs/m")
	p.WaitDrawn()
	if line := browsertest.Eval[string](p, mapBox+`.querySelector('p.line').textContent`); line != "over xs" {
		t.Errorf("the map before it starts says %q", line)
	}
	if line := browsertest.Eval[string](p, loopBox+`.querySelector('p.line').textContent`); !strings.HasPrefix(line, "iteration 1, ") {
		t.Errorf("the loop before it starts says %q", line)
	}

	release(t, gate, 1) // the list: the map starts its copies, the loop its first iteration
	p.Wait(mapBox + `?.classList.contains('group') && ` + mapBox + `.querySelector('p.line').textContent === '10000 copies: 10000✓'`)
	p.Wait(mapBox + `.getAttribute('data-status') === 'succeeded'`)
	if n := browsertest.Eval[int](p, `document.querySelectorAll('#tree g.node').length`); n > 20 {
		t.Errorf("%d boxes drawn for a map of %d copies", n, copies)
	}
	if g := browsertest.Eval[string](p, mapBox+`.getAttribute('data-group')`); g != "10000" {
		t.Errorf("the map's group holds %s children", g)
	}
	release(t, gate, 1) // iteration 1 ends without a match: iteration 2 begins
	p.Wait(loopBox + `.querySelector('p.line').textContent.startsWith('iteration 2, ') && !!document.querySelector('#tree g.node[data-path="seq[1].par[1].loop[1]"]')`)
	if browsertest.Eval[bool](p, `!!document.querySelector('#tree g.node[data-path="seq[1].par[1].loop[0]"]')`) {
		t.Error("the page still draws the first iteration's body")
	}

	p.Navigate(s.URL + "/jobs/m?steps_from=1")
	p.WaitDrawn()
	grew := browsertest.Eval[string](p, `JSON.stringify([...document.querySelectorAll('#steps p.grew')].map((p) => p.textContent))`)
	if !strings.Contains(grew, "map seq[1].par[0] started 10000 copies") || !strings.Contains(grew, "loop seq[1].par[1] began iteration 2") {
		t.Errorf("the steps' growth: %s", grew)
	}
	release(t, gate, 4) // the loop runs out of iterations
}
