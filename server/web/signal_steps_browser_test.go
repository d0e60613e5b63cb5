package web_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/internal/browsertest"
)

// takenSummary is what the steps list says of the signals kept before a
// step that a wait took in it.
const takenSummary = `JSON.stringify([...document.querySelectorAll('#steps > li[data-version] > p.taken')].map((p) => p.textContent))`

// TestBrowserSignalSteps: the script lists a signal (its name, ID and
// the wait that took it, or kept), a node's cancel (the node and the
// reason) and a kept signal taken later exactly as the server lists
// them, and none as a timer: the steps that come live, while the page is
// open, as those it reads at once.
func TestBrowserSignalSteps(t *testing.T) {
	s := startLive(t, filepath.Join(t.TempDir(), "jobs.db"), "127.0.0.1:0", nil, nil)
	s.submit(t, "s", ast.Seq(
		ast.Par(
			ast.Wait("approval").Named("answer"),
			ast.Try(ast.Wait("hold").Named("gate"), ast.Rescue(ast.Act("ok", "rescued"))),
		),
		ast.Wait("later").Named("late"),
	))
	c := s.client()
	ctx := t.Context()
	p := browsertest.NewPage(t)
	p.Navigate(s.URL + "/jobs/s")
	p.WaitDrawn()
	p.Wait(`!document.getElementById('steps').hasAttribute('data-lazy') && document.querySelectorAll('#steps > li[data-version]').length === 1`)
	if _, err := c.Signal(ctx, "s", "later", "l1", json.RawMessage(`"early"`)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Signal(ctx, "s", "approval", "a1", json.RawMessage(`{"ok":true}`)); err != nil {
		t.Fatal(err)
	}
	for len(historyVersions(t, c, "s")) < 3 {
		select {
		case <-ctx.Done():
			t.Fatal("the signals never applied")
		case <-time.After(10 * time.Millisecond):
		}
	}
	if _, err := c.CancelNode(ctx, "s", "gate", "no <i>answer</i>"); err != nil {
		t.Fatal(err)
	}
	if sum, err := c.Wait(ctx, "s"); err != nil || sum.Status != "succeeded" {
		t.Fatalf("the job: %+v, %v", sum, err)
	}

	// The live steps, read again from the history route for what a step
	// event does not say.
	p.Wait(`document.querySelectorAll('#steps > li[data-version]').length === 5 && !!document.querySelector('#steps p.taken') && document.querySelector('#steps > li#step-3 ul.results').textContent.includes('taken by the wait')`)
	script, scriptTaken := browsertest.Eval[string](p, stepsSummary), browsertest.Eval[string](p, takenSummary)
	for _, want := range []string{
		`signal later (id l1) kept for a wait to come → \"early\"`,
		`signal approval (id a1) taken by the wait at seq[0].par[0] → {\"ok\":true}`,
		`node gate at seq[0].par[1].body cancelled: no <i>answer</i>`,
		`["seq[0].par[1].body","cancelled","@cancel/gate`,
		`["seq[0].par[0]","signal","@signal/approval/a1`,
	} {
		if !strings.Contains(script, want) {
			t.Errorf("the script's steps lack %s:\n%s", want, script)
		}
	}
	if strings.Contains(script, "timer") || scriptTaken != `["Signals kept before, taken now: signal later (id l1) by the wait at seq[1]"]` {
		t.Errorf("the script's steps:\n%s\n%s", script, scriptTaken)
	}
	p.Navigate(s.URL + "/jobs/s?steps_from=1")
	p.WaitDrawn()
	if server, serverTaken := browsertest.Eval[string](p, stepsSummary), browsertest.Eval[string](p, takenSummary); server != script || serverTaken != scriptTaken {
		t.Errorf("the script's steps differ from the server's:\n script %s %s\n server %s %s", script, scriptTaken, server, serverTaken)
	}
}
