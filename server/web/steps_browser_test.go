package web_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/client"
	"github.com/batonwf/baton/internal/browsertest"
	"github.com/batonwf/baton/server/web"
)

// stepsSummary is what the page's steps list says, step by step: the
// version, the status, the hidden flag and every result's path and
// status, in order.
const stepsSummary = `JSON.stringify([...document.querySelectorAll('#steps > li[data-version]')].map((li) => [
	li.dataset.version, li.dataset.status, li.hidden,
	[...li.querySelectorAll(':scope > ul.results > li')].map((r) => [r.dataset.resultPath || '', r.dataset.status || '', r.textContent])]))`

// TestBrowserLazySteps: the page as first sent leaves its steps out
// (#steps[data-lazy], a link to the page that lists them); once drawn,
// the script lists the newest web.StepsShown steps of a job of more,
// exactly as the server lists them on the linked page, and a #step-V
// deep link marks that step as the version shown.
func TestBrowserLazySteps(t *testing.T) {
	s := startLive(t, filepath.Join(t.TempDir(), "jobs.db"), "127.0.0.1:0", nil, nil)
	acts := make([]ast.Node, web.StepsShown+20)
	for i := range acts {
		acts[i] = ast.Act("ok", i)
	}
	s.submit(t, "lazy", ast.Seq(acts...))
	c := s.client()
	for {
		j, err := c.Job(t.Context(), "lazy", client.JobQuery{})
		if err != nil {
			t.Fatal(err)
		}
		if j.Status != "running" {
			break
		}
		select {
		case <-t.Context().Done():
			t.Fatal("the job did not settle")
		case <-time.After(20 * time.Millisecond):
		}
	}
	all := historyVersions(t, c, "lazy")
	newest := all[len(all)-web.StepsShown:]
	mark := newest[len(newest)-3]
	p := browsertest.NewPage(t)
	p.Navigate(s.URL + "/jobs/lazy#step-" + jsonOf(mark))
	p.WaitDrawn()
	p.Wait(`!document.getElementById('steps').hasAttribute('data-lazy') && !document.getElementById('steps-lazy')`)
	if got := browsertest.Eval[string](p, `JSON.stringify(`+stepVersions+`)`); got != jsonOf(newest) {
		t.Errorf("the script listed steps %s; want the newest %d, %s", got, web.StepsShown, jsonOf(newest))
	}
	p.Wait(`document.querySelector('#steps > li[aria-current="step"]')?.id === 'step-` + jsonOf(mark) + `'`)
	lazy := browsertest.Eval[string](p, stepsSummary)
	// The page the link goes to lists the same steps itself.
	p.Navigate(s.URL + "/jobs/lazy?steps_from=" + jsonOf(newest[0]))
	p.WaitDrawn()
	if p.Wait(`!document.getElementById('steps').hasAttribute('data-lazy')`); browsertest.Eval[string](p, stepsSummary) != lazy {
		t.Errorf("the script's steps differ from the server's:\n script %s\n server %s", lazy, browsertest.Eval[string](p, stepsSummary))
	}
}
