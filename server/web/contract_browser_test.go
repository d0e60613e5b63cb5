package web_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image/color"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/client"
	"github.com/batonwf/baton/internal/browsertest"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	"github.com/batonwf/baton/runner/inmem"
	"github.com/batonwf/baton/server"
	"github.com/batonwf/baton/server/live"
	"github.com/batonwf/baton/store"
	"github.com/batonwf/baton/store/bolt"
)

// The browser tests of the pages' static contract (docs/pages.md): what
// the server renders, as chromium draws it. Every [data-path] of the
// tree shows the API's state; the palette's colours fill the node boxes
// in proportion to the states; boxes lie apart inside the drawing; a past
// version shows that version's states; ?node= selects; hostile strings are
// text; a job of 100,000 actions opens collapsed. Run them with
//
//	BATON_REQUIRE_INTEGRATION=1 go test -race -count=1 -run BrowserContract ./server/web/

// contractServer is 'baton serve' on a bolt file, as a test makes it: a
// runner of the actions of examples/fail.json (log, sleep, fail) and of
// the hostile job (echo: its payload as output), a hub the runner
// notifies, the server and its pages on a real listener. sleep ends once
// the test closes gate (closed from the start unless a test holds it).
type contractServer struct {
	URL  string
	st   *bolt.Store
	c    *client.Client
	gate chan struct{}
}

func startContract(t *testing.T) *contractServer {
	t.Helper()
	s := &contractServer{gate: make(chan struct{})}
	st, err := bolt.Open(filepath.Join(t.TempDir(), "contract.db"), &bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	s.st = st
	reg := runner.NewRegistry()
	echo := func(_ context.Context, a job.Action) ([]byte, error) { return a.Payload, nil }
	for name, h := range map[string]runner.Handler{
		"log":  echo,
		"echo": echo,
		"sleep": func(ctx context.Context, a job.Action) ([]byte, error) {
			select {
			case <-s.gate:
				return a.Payload, nil
			case <-ctx.Done():
				return nil, context.Cause(ctx)
			}
		},
		"fail": func(_ context.Context, a job.Action) ([]byte, error) {
			var msg string
			if json.Unmarshal(a.Payload, &msg) != nil {
				msg = string(a.Payload)
			}
			return nil, errors.New(msg)
		},
	} {
		if err := reg.Register(name, h); err != nil {
			t.Fatal(err)
		}
	}
	hub, err := live.New(live.Options{Store: st, Notified: true, Changed: job.Changed})
	if err != nil {
		t.Fatal(err)
	}
	r, err := inmem.New(inmem.Options{
		WorkerOptions: runner.WorkerOptions{Registry: reg, Workers: 4, DrainTimeout: -1,
			Hooks: &runner.Hooks{Step: func(j job.Job, _ int) { hub.Notify(j.ID()) }}},
		Store: st,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- r.Run(ctx) }()
	closing := make(chan struct{})
	h, err := server.New(server.Options{Store: st, Runner: server.Local{Runner: r, Registry: reg, Capacity: 4}, Hub: hub, Closing: closing})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	s.URL = "http://" + ln.Addr().String()
	s.c = client.New(s.URL, client.Options{})
	t.Cleanup(func() {
		close(closing)
		sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer scancel()
		_ = srv.Shutdown(sctx)
		cancel()
		if err := r.Close(); err != nil {
			t.Errorf("runner: %v", err)
		}
		<-ran
		if err := st.Close(); err != nil {
			t.Errorf("store: %v", err)
		}
	})
	return s
}

// submit submits workflow (JSON) as job id.
func (s *contractServer) submit(t *testing.T, id job.ID, workflow []byte) {
	t.Helper()
	if _, _, err := s.c.Submit(t.Context(), id, workflow); err != nil {
		t.Fatalf("submit %s: %v", id, err)
	}
}

// states returns the API's state of every node of job id at version
// (0: the newest).
func (s *contractServer) states(t *testing.T, id job.ID, version uint64) (map[string]string, string) {
	t.Helper()
	j, err := s.c.Job(t.Context(), id, client.JobQuery{Version: version})
	if err != nil {
		t.Fatalf("GET job %s: %v", id, err)
	}
	m := map[string]string{}
	for _, n := range j.Nodes {
		m[n.Path] = n.Status
	}
	return m, j.Status
}

// until polls the API until cond holds for job id's states, failing at
// the test's deadline.
func (s *contractServer) until(t *testing.T, id job.ID, what string, cond func(states map[string]string, status string) bool) map[string]string {
	t.Helper()
	for {
		m, st := s.states(t, id, 0)
		if cond(m, st) {
			return m
		}
		select {
		case <-t.Context().Done():
			t.Fatalf("job %s never %s: %v", id, what, m)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// pathOf returns the path of job id's first node of action.
func (s *contractServer) pathOf(t *testing.T, id job.ID, action string) string {
	t.Helper()
	j, err := s.c.Job(t.Context(), id, client.JobQuery{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range j.Nodes {
		if n.Action == action {
			return n.Path
		}
	}
	t.Fatalf("job %s has no node of action %s", id, action)
	return ""
}

func failJSON(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile("../../examples/fail.json")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// jobURL is the job page of id with query (may be "").
func (s *contractServer) jobURL(id job.ID, query string) string {
	u := s.URL + "/jobs/" + url.PathEscape(string(id))
	if query != "" {
		u += "?" + query
	}
	return u
}

// sameStates fails t when the page's tree and the API disagree.
func sameStates(t *testing.T, page, want map[string]string) {
	t.Helper()
	if len(page) != len(want) {
		t.Errorf("the tree shows %d nodes, the API has %d:\n page %v\n  api %v", len(page), len(want), page, want)
	}
	for path, s := range want {
		if page[path] != s {
			t.Errorf("node %q: the tree shows %q, the API %q", path, page[path], s)
		}
	}
}

// checkBoxes fails t when two node boxes of the tree overlap, or one lies
// outside the drawing; it returns the boxes.
func checkBoxes(t *testing.T, p *browsertest.Page) []browsertest.Rect {
	t.Helper()
	// Measured together: the page may add a line above the tree (the
	// failure, once the job fails) between two measures.
	both := p.RectsTogether("#tree svg.baton-graph", "#tree g.node > foreignObject.label")
	drawing, boxes := both[0], both[1]
	if len(drawing) != 1 {
		t.Fatalf("%d drawings in #tree; want one svg.baton-graph", len(drawing))
	}
	if len(boxes) == 0 {
		t.Fatal("no node box (g.node > foreignObject.label) in #tree")
	}
	for _, b := range boxes {
		if !b.Inside(drawing[0], 0.5) {
			t.Errorf("box %v is outside the drawing %v", b, drawing[0])
		}
	}
	if o := browsertest.Overlapping(boxes, 0.5); len(o) > 0 {
		t.Errorf("%d pairs of node boxes overlap: %s", len(o), strings.Join(o, "; "))
	}
	return boxes
}

// The palette (docs/pages.md): the colours a state band is filled with.
var palette = map[string]string{
	"succeeded": "#009E73",
	"failed":    "#D55E00",
	"running":   "#0072B2",
	"cancelled": "#8C8C8C",
}

// checkPalette takes a screenshot of the tree and fails t unless each
// state's colour fills about the visible area of the state bands of the
// nodes in that state (the band less its word and icon: pixels counted
// inside filled areas, browsertest.CountSolid), and a state no node is in
// shows no filled area of its colour.
func checkPalette(t *testing.T, p *browsertest.Page, name string, states map[string]string) {
	t.Helper()
	// Wait for the bands' colour transitions (baton.css eases a change).
	p.Wait(`document.getAnimations().length === 0`)
	view := p.Rects("#tree")[0]
	area := map[string]float64{}
	for _, b := range p.Rects("#tree g.node p.state") {
		w := min(b.X+b.W, view.X+view.W) - max(b.X, view.X)
		h := min(b.Y+b.H, view.Y+view.H) - max(b.Y, view.Y)
		if w > 0 && h > 0 {
			area[states[b.Path]] += w * h
		}
	}
	img, path := p.Screenshot(name, "#tree")
	var words, colours []string
	for w, c := range palette {
		words, colours = append(words, w), append(colours, c)
	}
	cs := make([]color.RGBA, len(colours))
	for i, h := range colours {
		cs[i] = browsertest.Hex(h)
	}
	counts := browsertest.CountSolid(img, 8, cs...)
	for i, w := range words {
		got, want := float64(counts[i]), area[w]
		switch {
		case want == 0 && got > 0:
			t.Errorf("%s: %d pixels filled with %s's colour %s, but no node is %s (%s)", name, counts[i], w, colours[i], w, path)
		case want > 0 && (got < 0.5*want || got > want):
			t.Errorf("%s: %d pixels filled with %s's colour %s; the visible %s bands cover %.0f (want 50%% to 100%% of it) (%s)", name, counts[i], w, colours[i], w, want, path)
		}
	}
	t.Logf("%s: pixels filled %v for %v; visible band areas %v", name, counts, words, area)
}

// A known job (examples/fail.json: a try whose par fails, a finally, an
// action never reached) on the job page while it runs and once it has
// settled: the tree's states are the API's, the palette covers the bands
// of each state, the running colour is gone once nothing runs, and the
// boxes lie apart inside the drawing.
func TestBrowserContractKnownJob(t *testing.T) {
	s := startContract(t)
	const id = "fail-1"
	s.submit(t, id, failJSON(t))
	running := s.until(t, id, "had its sleep running", func(m map[string]string, _ string) bool {
		n := 0
		for _, st := range m {
			if st == "succeeded" {
				n++
			}
		}
		return n >= 2 && strings.Count(fmt.Sprint(m), "running") >= 3
	})
	p := browsertest.NewPage(t)
	p.Navigate(s.jobURL(id, ""))
	p.WaitDrawn()
	sameStates(t, p.Statuses("#tree"), running)
	boxes := checkBoxes(t, p)
	if n := browsertest.Eval[int](p, `Number(document.getElementById('tree').dataset.boxes)`); n != len(boxes) {
		t.Errorf("#tree data-boxes=%d; %d boxes drawn", n, len(boxes))
	}
	checkPalette(t, p, "running", running)

	close(s.gate) // the sleep ends; the job fails and settles
	settled := s.until(t, id, "settled", func(_ map[string]string, st string) bool { return st != "running" })
	want, _ := json.Marshal(settled)
	p.Wait(`(() => { const want = ` + string(want) + `; const got = {};
		for (const g of document.querySelectorAll('#tree [data-path][data-status]')) got[g.getAttribute('data-path')] = g.getAttribute('data-status');
		return Object.keys(want).every(k => got[k] === want[k]) && document.getElementById('job').dataset.status === 'failed'; })()`)
	// The header has its failure line by now: nothing moves the tree again.
	sameStates(t, p.Statuses("#tree"), settled)
	checkBoxes(t, p)
	checkPalette(t, p, "settled", settled)
	if st := browsertest.Eval[string](p, `document.getElementById('job').dataset.status`); st != "failed" {
		t.Errorf("#job data-status=%q once settled; want failed", st)
	}
}

// ?version=3 draws exactly the states of History.At(3), not live;
// ?node=PATH selects that node and opens it in the panel.
func TestBrowserContractVersionAndNode(t *testing.T) {
	s := startContract(t)
	close(s.gate)
	const id = "fail-2"
	s.submit(t, id, failJSON(t))
	final := s.until(t, id, "settled", func(_ map[string]string, st string) bool { return st != "running" })
	h, err := store.LoadHistory(t.Context(), s.st, id)
	if err != nil {
		t.Fatal(err)
	}
	at3, err := h.At(3)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	at3.Walk(func(n job.NodeInfo) bool {
		want[n.Path] = n.Status.String()
		return true
	})
	if fmt.Sprint(want) == fmt.Sprint(final) {
		t.Fatalf("version 3 has the final states %v: the test would not tell versions apart", final)
	}
	p := browsertest.NewPage(t)
	p.Navigate(s.jobURL(id, "version=3"))
	p.WaitDrawn()
	sameStates(t, p.Statuses("#tree"), want)
	main := browsertest.Eval[map[string]string](p, `({version: document.getElementById('job').dataset.version, live: document.getElementById('job').dataset.live})`)
	if main["version"] != "3" || main["live"] != "false" {
		t.Errorf("#job shows version %q live %q; want 3 and false", main["version"], main["live"])
	}
	checkBoxes(t, p)

	failed := s.pathOf(t, id, "fail")
	p.Navigate(s.jobURL(id, "node="+url.QueryEscape(failed)))
	p.WaitDrawn()
	sel := browsertest.Eval[map[string]any](p, `(() => {
		const panel = document.getElementById('panel'), g = document.querySelectorAll('#tree g.node.selected');
		return {hidden: panel.hidden, node: panel.dataset.node || '', selected: [...g].map(e => e.getAttribute('data-path')),
			error: (panel.querySelector('pre.error') || {}).textContent || ''};
	})()`)
	if sel["hidden"] != false || sel["node"] != failed || fmt.Sprint(sel["selected"]) != fmt.Sprint([]any{failed}) {
		t.Errorf("?node=%s: panel hidden %v for node %q, selected %v; want the panel open on it and it alone selected", failed, sel["hidden"], sel["node"], sel["selected"])
	}
	if !strings.Contains(fmt.Sprint(sel["error"]), "health check failed") {
		t.Errorf("?node=%s: the panel's error is %q; want the action's failure", failed, sel["error"])
	}
}

// hostile is markup that would run script if a page took it as HTML, in
// every field a workflow, a handler or a submitter controls.
const hostile = `<img src=x onerror=alert(1)></script><script>alert(2)</script>`

// A job whose ID, payloads, output and error hold markup: no dialog opens,
// no request for "x" is made, and the page shows the strings as text. A
// job ID may hold no '/' or space (job.ID.Check), so it carries the rest;
// action names are letters, digits, '.', '_' and '-' only.
func TestBrowserContractHostile(t *testing.T) {
	s := startContract(t)
	close(s.gate)
	const id = `"'><img>&amp;<script>alert(3)<b>x`
	// Written out: encoding/json would escape the markup as \u003c.
	wf := []byte(`{"version":1,"root":{"par":[{"act":"echo","payload":"` + hostile + `"},{"act":"fail","payload":"` + hostile + `"}]}}`)
	s.submit(t, id, wf)
	s.until(t, id, "settled", func(_ map[string]string, st string) bool { return st != "running" })
	echo, fail := s.pathOf(t, id, "echo"), s.pathOf(t, id, "fail")

	p := browsertest.NewPage(t)
	for _, u := range []string{s.URL + "/", s.jobURL(id, ""), s.jobURL(id, "node="+url.QueryEscape(echo)), s.jobURL(id, "node="+url.QueryEscape(fail))} {
		p.Navigate(u)
		if u != s.URL+"/" {
			p.WaitDrawn()
		} else {
			p.Wait(`document.readyState === 'complete'`)
		}
		injected := browsertest.Eval[int](p, `document.querySelectorAll('img, script:not([src]), [onerror]').length`)
		if injected != 0 {
			t.Errorf("%s: %d img, inline script or onerror elements; want none", u, injected)
		}
		text := browsertest.Eval[string](p, `document.body.textContent`)
		if !strings.Contains(text, id) {
			t.Errorf("%s: the page's text lacks the job ID %q", u, id)
		}
	}
	texts := browsertest.Eval[map[string]string](p, `(() => {
		const t = (sel) => { const e = document.querySelector(sel); return e ? e.textContent : ''; };
		return {title: t('#job-title .id'), failure: t('#failure .message'), error: t('#panel pre.error'), svgTitle: t('#tree svg title')};
	})()`)
	if texts["title"] != id {
		t.Errorf("the header shows the ID %q; want %q", texts["title"], id)
	}
	for _, k := range []string{"failure", "error"} {
		if !strings.Contains(texts[k], hostile) {
			t.Errorf("%s shows %q; want the error %q as text", k, texts[k], hostile)
		}
	}
	if !strings.Contains(texts["svgTitle"], id) {
		t.Errorf("the drawing's title %q lacks the ID", texts["svgTitle"])
	}
	p.Navigate(s.jobURL(id, "node="+url.QueryEscape(echo)))
	p.WaitDrawn()
	panel := browsertest.Eval[map[string]string](p, `({payload: (document.querySelector('#panel pre.payload') || {}).textContent || '', output: (document.querySelector('#panel pre.output') || {}).textContent || ''})`)
	for _, k := range []string{"payload", "output"} {
		if !strings.Contains(panel[k], `<img src=x onerror=alert(1)>`) {
			t.Errorf("the panel's %s shows %q; want the markup as text", k, panel[k])
		}
	}
	for _, r := range p.Requests() {
		if u, err := url.Parse(r); err == nil && (strings.HasSuffix(u.Path, "/x") || u.Path == "x") {
			t.Errorf("the page requested %s: markup was taken as an image", r)
		}
	}
	if d := p.Dialogs(); len(d) > 0 {
		t.Errorf("dialogs opened: %v", d)
	}
}

// A job of 100,000 actions opens with its groups closed: at most 2,000
// boxes, the root a group counting its children, boxes apart.
func TestBrowserContractBigJob(t *testing.T) {
	s := startContract(t)
	const id = "big"
	acts := make([]ast.Node, 100_000)
	for i := range acts {
		acts[i] = ast.Act("log", i)
	}
	tr, err := job.New(id, ast.Par(acts...))
	if err != nil {
		t.Fatal(err)
	}
	// Stored, not run: the page reads the store (the runner does not know
	// the job, so its actions stay dispatched).
	if err := s.st.Create(t.Context(), tr.Job); err != nil {
		t.Fatal(err)
	}
	p := browsertest.NewPage(t)
	p.Navigate(s.jobURL(id, ""))
	p.WaitDrawn()
	tree := browsertest.Eval[map[string]any](p, `(() => {
		const root = document.querySelector('#tree g.node[data-path=""]');
		return {boxes: document.querySelectorAll('#tree g.node').length, groups: document.querySelectorAll('#tree g.node[data-group]').length,
			root: root ? root.getAttribute('data-group') : null};
	})()`)
	if n := tree["boxes"].(float64); n < 1 || n > 2000 {
		t.Errorf("%v boxes drawn; want 1 to 2,000", n)
	}
	if tree["groups"].(float64) < 1 || tree["root"] != "100000" {
		t.Errorf("groups %v, the root's data-group %v; want the root closed over its 100000 children", tree["groups"], tree["root"])
	}
	checkBoxes(t, p)
}
