package web_test

import (
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/internal/browsertest"
	"github.com/batonwf/baton/job"
)

// The tree's words are HTML labels that the browser renders only near
// the view: on the page of a par of 10 seqs of 99 actions (the drawing
// of the page-load benchmark, 1,001 boxes, some 30,000 px wide) every box
// has its label with its state in words and no SVG text, a label in view
// is rendered, one far off is skipped (content-visibility), and it is
// rendered once scrolled to. This is what keeps chromium from laying out
// some 3,000 SVG texts at each load.
func TestBrowserTreeLabelsRenderNearTheView(t *testing.T) {
	s := startContract(t)
	const id = "labels"
	seqs := make([]ast.Node, 10)
	for i := range seqs {
		acts := make([]ast.Node, 99)
		for k := range acts {
			acts[k] = ast.Act("log", map[string]int{"seq": i, "step": k})
		}
		seqs[i] = ast.Seq(acts...)
	}
	tr, err := job.New(id, ast.Par(seqs...))
	if err != nil {
		t.Fatal(err)
	}
	// Stored, not run: the page reads the store.
	if err := s.st.Create(t.Context(), tr.Job); err != nil {
		t.Fatal(err)
	}
	p := browsertest.NewPage(t)
	p.Navigate(s.jobURL(id, ""))
	p.WaitDrawn()
	got := browsertest.Eval[map[string]any](p, `(() => {
		const nodes = [...document.querySelectorAll('#tree g.node[data-path]')];
		const worded = nodes.filter((g) => {
			const st = g.querySelectorAll(':scope > foreignObject.label > div.label > p.state');
			return st.length === 1 && st[0].textContent.includes(g.getAttribute('data-status'));
		});
		return {nodes: nodes.length, worded: worded.length, svgTexts: document.querySelectorAll('#tree g.node text').length,
			cv: getComputedStyle(document.querySelector('#tree div.label')).contentVisibility};
	})()`)
	if got["nodes"] != float64(1001) || got["worded"] != float64(1001) || got["svgTexts"] != float64(0) || got["cv"] != "auto" {
		t.Fatalf("%v; want 1001 nodes, each with one HTML label saying its state, no SVG text, content-visibility auto", got)
	}
	const far = `par[9].seq[98]`
	seen := func(path string) string {
		return `document.querySelector('#tree g.node[data-path="` + path + `"] p.state').checkVisibility({contentVisibilityAuto: true})`
	}
	p.Wait(seen("") + ` && !` + seen(far))
	p.Do("scroll to "+far, chromedp.Evaluate[chromedp.Void](`document.querySelector('#tree g.node[data-path="`+far+`"]').scrollIntoView()`))
	p.Wait(seen(far))
}
