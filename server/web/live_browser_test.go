package web_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

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

// The browser tests of the job page's live behaviour: baton.js following
// a running job (server-sent events, the long-poll fallback, a restart of
// the server), keeping what the visitor set while it patches, time travel
// and opening groups. Run them with
//
//	BATON_REQUIRE_INTEGRATION=1 go test -race -count=1 -run Browser ./server/web/

// liveServer is 'baton serve' as a test makes it: a bolt file, a runner
// of the actions "ok" (its payload as output) and "gate" (succeeds once
// the test sends on gate), a hub the runner notifies at each step, and
// the server with its pages on a real listener (its options changed by
// mod). stop and a new
// startLive on the same file and address are a restart.
type liveServer struct {
	URL     string
	addr    string
	st      *bolt.Store
	r       *inmem.Runner
	srv     *http.Server
	closing chan struct{}
	cancel  context.CancelFunc
	done    chan error
	stopped bool
}

// startLive serves the bolt file at path on addr ("127.0.0.1:0" for a
// new port); gate lets one gate action through per send. wrap, when not
// nil, wraps the server's handler.
func startLive(t *testing.T, path, addr string, gate chan struct{}, wrap func(http.Handler) http.Handler, mod ...func(*server.Options)) *liveServer {
	t.Helper()
	st, err := bolt.Open(path, &bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	reg := runner.NewRegistry()
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(reg.Register("ok", func(_ context.Context, a job.Action) ([]byte, error) { return a.Payload, nil }))
	must(reg.Register("fail", func(context.Context, job.Action) ([]byte, error) { return nil, errors.New("boom: <i>broken</i>") }))
	must(reg.Register("gate", func(ctx context.Context, a job.Action) ([]byte, error) {
		select {
		case <-gate:
			return a.Payload, nil
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	}))
	hub, err := live.New(live.Options{Store: st, Notified: true, Changed: job.Changed})
	if err != nil {
		t.Fatal(err)
	}
	step := func(j job.Job, _ int) { hub.Notify(j.ID()) }
	r, err := inmem.New(inmem.Options{
		WorkerOptions: runner.WorkerOptions{Registry: reg, Workers: 4, DrainTimeout: -1, Hooks: &runner.Hooks{Step: step}},
		Store:         st,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	closing := make(chan struct{})
	o := server.Options{Store: st, Runner: server.Local{Runner: r, Registry: reg, Capacity: 4}, Hub: hub, Closing: closing}
	for _, f := range mod {
		f(&o)
	}
	h, err := server.New(o)
	if err != nil {
		t.Fatal(err)
	}
	if wrap != nil {
		h = wrap(h)
	}
	var ln net.Listener
	for i := 0; ; i++ { // the address of a server just stopped may linger a moment
		ln, err = net.Listen("tcp", addr)
		if err == nil || i == 100 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	s := &liveServer{URL: "http://" + ln.Addr().String(), addr: ln.Addr().String(), st: st, r: r, srv: srv, closing: closing, cancel: cancel, done: done}
	t.Cleanup(s.stop)
	return s
}

// stop stops the server as 'baton serve' does on SIGTERM: streams told
// (shutdown), connections closed, the runner stopped, the file closed.
func (s *liveServer) stop() {
	if s.stopped {
		return
	}
	s.stopped = true
	close(s.closing)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.srv.Shutdown(ctx); err != nil {
		_ = s.srv.Close()
	}
	s.cancel()
	<-s.done
	_ = s.r.Close()
	_ = s.st.Close()
}

func (s *liveServer) submit(t *testing.T, id job.ID, root ast.Node) {
	t.Helper()
	if err := s.r.Submit(t.Context(), id, root); err != nil {
		t.Fatal(err)
	}
}

func (s *liveServer) client() *client.Client { return client.New(s.URL, client.Options{}) }

// release lets n gate actions through, one at a time.
func release(t *testing.T, gate chan struct{}, n int) {
	t.Helper()
	for range n {
		select {
		case gate <- struct{}{}:
		case <-t.Context().Done():
			t.Fatal("no gate action took the release")
		}
	}
}

// js writes s as a JavaScript string literal.
func js(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// nodeIs is a JavaScript condition: the tree's node at path is drawn
// with status.
func nodeIs(path, status string) string {
	return `(() => { const g = [...document.querySelectorAll('#tree g.node')].find((g) => g.getAttribute('data-path') === ` + js(path) + `); return !!g && g.getAttribute('data-status') === ` + js(status) + `; })()`
}

func gates(n int) ast.Node {
	kids := make([]ast.Node, n)
	for i := range kids {
		kids[i] = ast.Act("gate", i)
	}
	return ast.Seq(kids...)
}

// apiStatuses returns the API's state of every node of job id.
func apiStatuses(t *testing.T, c *client.Client, id job.ID, version uint64) map[string]string {
	t.Helper()
	j, err := c.Job(t.Context(), id, client.JobQuery{Version: version})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, n := range j.Nodes {
		out[n.Path] = n.Status
	}
	return out
}

// treeStatuses returns the drawn nodes' states.
func treeStatuses(p *browsertest.Page) map[string]string {
	return browsertest.Eval[map[string]string](p, `Object.fromEntries([...document.querySelectorAll('#tree g.node[data-path]')].map((g) => [g.getAttribute('data-path'), g.getAttribute('data-status')]))`)
}

// stepVersions is the versions the page's steps list shows, in order.
const stepVersions = `[...document.querySelectorAll('#steps > li[data-version]')].map((li) => Number(li.dataset.version))`

func historyVersions(t *testing.T, c *client.Client, id job.ID) []uint64 {
	t.Helper()
	h, err := c.History(t.Context(), id, 0, 1000, 0)
	if err != nil {
		t.Fatal(err)
	}
	var vs []uint64
	for _, s := range h.Steps {
		vs = append(vs, s.Version)
	}
	return vs
}

func jsonOf(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// TestBrowserLiveNodeRunningThenSucceeded: the page shows a held node
// running, then succeeded once the test releases it, without a reload,
// its header and steps following.
func TestBrowserLiveNodeRunningThenSucceeded(t *testing.T) {
	gate := make(chan struct{})
	s := startLive(t, filepath.Join(t.TempDir(), "jobs.db"), "127.0.0.1:0", gate, nil)
	s.submit(t, "held", ast.Seq(ast.Act("gate", 1), ast.Act("ok", 2)))
	p := browsertest.NewPage(t)
	p.Navigate(s.URL + "/jobs/held")
	p.WaitDrawn()
	p.Wait(nodeIs("seq[0]", "running"))
	p.Wait(`document.getElementById('job').dataset.live === 'true'`)
	p.Wait(`document.querySelector('#timeline rect.bar[data-path="seq[0]"]')?.dataset.status === 'running'`)
	p.Screenshot("running", "")
	p.Do("mark the document", chromedp.Evaluate[chromedp.Void](`window.batonTestMark = 'same document'`))
	release(t, gate, 1)
	p.Wait(nodeIs("seq[0]", "succeeded"))
	p.Wait(nodeIs("seq[1]", "succeeded"))
	p.Wait(`document.getElementById('job').dataset.status === 'succeeded'`)
	// The timeline follows: the attempt's bar ends with its result.
	p.Wait(`document.querySelector('#timeline rect.bar[data-path="seq[0]"]')?.dataset.status === 'succeeded' && document.querySelectorAll('#timeline rect.bar').length === 2`)
	p.Screenshot("succeeded", "")
	if m := browsertest.Eval[string](p, `window.batonTestMark || 'reloaded'`); m != "same document" {
		t.Errorf("the page was reloaded (%s)", m)
	}
	want := apiStatuses(t, s.client(), "held", 0)
	p.Wait(`JSON.stringify(` + stepVersions + `) === ` + js(jsonOf(historyVersions(t, s.client(), "held"))))
	if got := treeStatuses(p); !maps(got, want) {
		t.Errorf("tree %v, API %v", got, want)
	}
	for _, c := range []string{
		`document.getElementById('job').dataset.live === 'false'`,
		`document.querySelector('#job-state').dataset.status === 'succeeded'`,
		`document.getElementById('banner').hidden`,
	} {
		if !browsertest.Eval[bool](p, c) {
			t.Errorf("not so: %s", c)
		}
	}
}

func maps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// viewState is what the visitor set on a job page: the selection, the
// open panel, the zoom and the scroll positions, the URL.
const viewState = `(() => {
	const tree = document.getElementById('tree'), panel = document.getElementById('panel');
	const sel = document.querySelector('#tree g.node.selected');
	return JSON.stringify({
		selected: sel ? sel.getAttribute('data-path') : null,
		panel: panel && !panel.hidden ? panel.getAttribute('data-node') : null,
		zoom: tree.dataset.zoom || '',
		width: document.querySelector('#tree svg').getAttribute('width'),
		treeScroll: [tree.scrollLeft, tree.scrollTop],
		windowScroll: [Math.round(window.scrollX), Math.round(window.scrollY)],
		search: location.search,
	});
})()`

// TestBrowserLiveKeepsViewState: a node selected, its panel open, the tree
// zoomed and scrolled; 50 actions finish one by one, each drawn as it
// comes; the selection, the panel, the zoom and the scroll are as they
// were, and the panel shows the node's new state.
func TestBrowserLiveKeepsViewState(t *testing.T) {
	gate := make(chan struct{})
	s := startLive(t, filepath.Join(t.TempDir(), "jobs.db"), "127.0.0.1:0", gate, nil)
	s.submit(t, "fifty", gates(55))
	p := browsertest.NewPage(t)
	p.Do("window size", chromedp.EmulateViewport(1000, 700))
	p.Navigate(s.URL + "/jobs/fifty")
	p.WaitDrawn()
	p.Wait(nodeIs("seq[0]", "running"))

	p.Do("select seq[30]", chromedp.Click(chromedp.CSS(`#tree g.node[data-path="seq[30]"] div.label`)))
	p.Wait(`document.querySelector('#tree g.node.selected')?.getAttribute('data-path') === 'seq[30]'`)
	p.Wait(`!document.getElementById('panel').hidden && document.getElementById('panel').dataset.node === 'seq[30]'`)
	p.Do("zoom in", chromedp.Click(chromedp.ID("zoom-in")), chromedp.Click(chromedp.ID("zoom-in")))
	p.Do("scroll", chromedp.Evaluate[chromedp.Void](`(() => {
		const tree = document.getElementById('tree');
		tree.scrollLeft = 120; tree.scrollTop = 10;
		window.scrollTo({ left: 0, top: 40, behavior: 'instant' });
	})()`))
	p.Do("mark the document", chromedp.Evaluate[chromedp.Void](`window.batonTestMark = 'same document'`))
	before := browsertest.Eval[string](p, viewState)
	var b struct {
		Zoom, Search             string
		TreeScroll, WindowScroll []int
	}
	if err := json.Unmarshal([]byte(before), &b); err != nil || b.Zoom == "" || b.Zoom == "1" || !strings.Contains(b.Search, "node=seq") ||
		len(b.TreeScroll) != 2 || b.TreeScroll[0] != 120 || !slices.Equal(b.WindowScroll, []int{0, 40}) {
		t.Fatalf("the view was not set up: %s (%v); page %v", before, err,
			browsertest.Eval[[]int](p, `[document.documentElement.scrollHeight, innerHeight, document.getElementById('tree').scrollHeight, document.getElementById('tree').clientHeight]`))
	}
	p.Screenshot("before", "")

	for i := range 50 {
		release(t, gate, 1)
		p.Wait(nodeIs(fmt.Sprintf("seq[%d]", i), "succeeded"))
	}
	p.Wait(nodeIs("seq[50]", "running"))
	after := browsertest.Eval[string](p, viewState)
	p.Screenshot("after", "")
	if after != before {
		t.Errorf("the view changed under 50 updates:\nbefore %s\nafter  %s", before, after)
	}
	if m := browsertest.Eval[string](p, `window.batonTestMark || 'reloaded'`); m != "same document" {
		t.Errorf("the page was reloaded (%s)", m)
	}
	p.Wait(`document.querySelector('#panel .state')?.dataset.status === 'succeeded'`)
	if v := browsertest.Eval[string](p, `document.body.dataset.version`); v == "" || v == "1" {
		t.Errorf("body's data-version %q after 50 steps", v)
	}
	release(t, gate, 5)
}

// TestBrowserRestartCatchesUp: the server (and its runner) stop mid-job
// and start again on the same bolt file and address: the page says it is
// reconnecting, then catches up: its steps are the history's, its tree
// the API's.
func TestBrowserRestartCatchesUp(t *testing.T) {
	gate := make(chan struct{})
	path := filepath.Join(t.TempDir(), "jobs.db")
	s := startLive(t, path, "127.0.0.1:0", gate, nil)
	s.submit(t, "restart", gates(4))
	p := browsertest.NewPage(t)
	p.Navigate(s.URL + "/jobs/restart")
	p.WaitDrawn()
	p.Wait(nodeIs("seq[0]", "running"))
	release(t, gate, 1)
	p.Wait(nodeIs("seq[0]", "succeeded"))
	p.Do("mark the document", chromedp.Evaluate[chromedp.Void](`window.batonTestMark = 'same document'`))

	s.stop()
	p.Wait(`!document.getElementById('banner').hidden && /reconnecting/.test(document.getElementById('banner').textContent)`)
	p.Screenshot("reconnecting", "")

	s = startLive(t, path, s.addr, gate, nil)
	release(t, gate, 3)
	p.Wait(`document.getElementById('job').dataset.status === 'succeeded'`)
	c := s.client()
	want := historyVersions(t, c, "restart")
	p.Wait(`JSON.stringify(` + stepVersions + `) === ` + js(jsonOf(want)))
	p.Wait(`document.getElementById('banner').hidden`)
	p.Screenshot("caught-up", "")
	if got, api := treeStatuses(p), apiStatuses(t, c, "restart", 0); !maps(got, api) {
		t.Errorf("tree %v, API %v", got, api)
	}
	if m := browsertest.Eval[string](p, `window.batonTestMark || 'reloaded'`); m != "same document" {
		t.Errorf("the page was reloaded (%s)", m)
	}
}

// TestBrowserLongPollFallback: behind a proxy that cuts every event
// stream at once, the page falls back to long polls of the history and
// keeps up.
func TestBrowserLongPollFallback(t *testing.T) {
	gate := make(chan struct{})
	cut := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, "/events") {
				w.Header().Set("Content-Type", "text/event-stream")
				w.WriteHeader(http.StatusOK)
				return
			}
			h.ServeHTTP(w, r)
		})
	}
	s := startLive(t, filepath.Join(t.TempDir(), "jobs.db"), "127.0.0.1:0", gate, cut)
	s.submit(t, "polled", gates(3))
	p := browsertest.NewPage(t)
	p.Navigate(s.URL + "/jobs/polled")
	p.WaitDrawn()
	p.Wait(nodeIs("seq[0]", "running"))
	// The page polls once two streams have failed.
	for deadline := time.Now().Add(time.Minute); !slices.ContainsFunc(p.Requests(), func(u string) bool { return strings.Contains(u, "/history?") && strings.Contains(u, "wait=25s") }); {
		if time.Now().After(deadline) {
			t.Fatalf("no long poll among the requests: %q", p.Requests())
		}
		time.Sleep(20 * time.Millisecond)
	}
	release(t, gate, 3)
	p.Wait(`document.getElementById('job').dataset.status === 'succeeded'`)
	c := s.client()
	p.Wait(`JSON.stringify(` + stepVersions + `) === ` + js(jsonOf(historyVersions(t, c, "polled"))))
	if got, api := treeStatuses(p), apiStatuses(t, c, "polled", 0); !maps(got, api) {
		t.Errorf("tree %v, API %v", got, api)
	}
}

// TestBrowserTimeTravel: choosing a step shows the tree at its version
// (the API's states at that version), ?version=V in the URL; the way back
// shows the job now.
func TestBrowserTimeTravel(t *testing.T) {
	gate := make(chan struct{})
	s := startLive(t, filepath.Join(t.TempDir(), "jobs.db"), "127.0.0.1:0", gate, nil)
	s.submit(t, "travel", ast.Seq(ast.Act("ok", 1), ast.Act("ok", 2), ast.Act("gate", 3)))
	p := browsertest.NewPage(t)
	p.Navigate(s.URL + "/jobs/travel")
	p.WaitDrawn()
	p.Wait(nodeIs("seq[2]", "running"))
	p.Wait(`!!document.querySelector('#step-2 a.v')`)
	c := s.client()
	p.Do("choose step 2", chromedp.Click(chromedp.CSS(`#step-2 a.v`)))
	p.Wait(`document.getElementById('job').dataset.version === '2' && new URL(location.href).searchParams.get('version') === '2'`)
	want := apiStatuses(t, c, "travel", 2)
	p.Wait(`JSON.stringify(Object.entries(` + treeStatusesJS + `).sort()) === ` + js(sortedEntries(want)))
	if live := browsertest.Eval[string](p, `document.getElementById('job').dataset.live`); live != "false" {
		t.Errorf("a past version shown as live: data-live %q", live)
	}
	p.Screenshot("v2", "")
	// The job moves on meanwhile; the past version stays shown.
	release(t, gate, 1)
	p.Wait(`!!document.getElementById('step-4')`)
	if got := treeStatuses(p); !maps(got, want) {
		t.Errorf("the past version changed under a live step: %v, want %v", got, want)
	}
	p.Do("back to live", chromedp.Click(chromedp.ID("latest-link")))
	p.Wait(`!new URL(location.href).searchParams.has('version')`)
	now := apiStatuses(t, c, "travel", 0)
	p.Wait(`JSON.stringify(Object.entries(` + treeStatusesJS + `).sort()) === ` + js(sortedEntries(now)))
}

const treeStatusesJS = `Object.fromEntries([...document.querySelectorAll('#tree g.node[data-path]')].map((g) => [g.getAttribute('data-path'), g.getAttribute('data-status')]))`

func sortedEntries(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([][2]string, len(keys))
	for i, k := range keys {
		out[i] = [2]string{k, m[k]}
	}
	return jsonOf(out)
}

// TestBrowserBigGroupExpands: a job of 100,000 actions (a par of 100
// seqs of 1,000) opens with its seqs closed as groups, at most 2,000
// boxes; a click on one opens it in place (its 1,000 actions drawn, the
// bound kept, expand= in the URL).
func TestBrowserBigGroupExpands(t *testing.T) {
	st := store.NewMemory()
	t.Cleanup(func() { st.Close() })
	seqs := make([]ast.Node, 100)
	for i := range seqs {
		acts := make([]ast.Node, 1000)
		for k := range acts {
			acts[k] = ast.Act("ok", k)
		}
		seqs[i] = ast.Seq(acts...)
	}
	tr, err := job.New("big", ast.Par(seqs...))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Create(t.Context(), tr.Job); err != nil {
		t.Fatal(err)
	}
	h, err := server.New(server.Options{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })

	p := browsertest.NewPage(t)
	p.Navigate("http://" + ln.Addr().String() + "/jobs/big")
	p.WaitDrawn()
	boxes := `document.querySelectorAll('#tree g.node').length`
	if n := browsertest.Eval[int](p, boxes); n > 2000 || n < 101 {
		t.Fatalf("%d boxes drawn", n)
	}
	if n := browsertest.Eval[int](p, `document.querySelectorAll('#tree g.node.group').length`); n != 100 {
		t.Fatalf("%d groups, want the 100 seqs closed", n)
	}
	p.Screenshot("closed", "")
	p.Do("open par[7]", chromedp.Click(chromedp.CSS(`#tree g.node.group[data-path="par[7]"] div.label`)))
	p.Wait(`!!document.querySelector('#tree g.node[data-path="par[7].seq[999]"]')`)
	p.Screenshot("opened", "")
	if n := browsertest.Eval[int](p, boxes); n > 2000 || n < 1100 {
		t.Errorf("%d boxes drawn once par[7] is open", n)
	}
	for _, c := range []string{
		`!document.querySelector('#tree g.node[data-path="par[7]"]').classList.contains('group')`,
		`document.querySelectorAll('#tree g.node.group').length === 99`,
		`new URL(location.href).searchParams.get('expand') === 'par[7]'`,
		`document.querySelector('#tree g.node.selected')?.getAttribute('data-path') === 'par[7]'`,
	} {
		if !browsertest.Eval[bool](p, c) {
			t.Errorf("not so: %s", c)
		}
	}
}

// TestBrowserListLive: the job list follows /api/v1/events without a
// reload: a row's state, a new job's row, the counts; a running job's
// duration ticks.
func TestBrowserListLive(t *testing.T) {
	gate := make(chan struct{})
	s := startLive(t, filepath.Join(t.TempDir(), "jobs.db"), "127.0.0.1:0", gate, nil)
	s.submit(t, "a-held", gates(1))
	s.submit(t, "b-quick", ast.Act("ok", 1))
	p := browsertest.NewPage(t)
	p.Navigate(s.URL + "/")
	p.WaitDrawn()
	row := func(id string) string { return `document.querySelector('#jobs tr[data-job="` + id + `"]')` }
	p.Wait(row("a-held") + `?.dataset.status === 'running'`)
	p.Wait(row("b-quick") + `?.dataset.status === 'succeeded'`)
	p.Do("mark the document", chromedp.Evaluate[chromedp.Void](`window.batonTestMark = 'same document'`))
	tick := browsertest.Eval[string](p, row("a-held")+`.querySelector('time[data-start]').textContent`)
	p.Wait(row("a-held") + `.querySelector('time[data-start]').textContent !== ` + js(tick))

	s.submit(t, "c-new", gates(1))
	p.Wait(row("c-new") + `?.dataset.status === 'running'`)
	release(t, gate, 2)
	p.Wait(row("a-held") + `?.dataset.status === 'succeeded' && ` + row("c-new") + `?.dataset.status === 'succeeded'`)
	p.Wait(row("a-held") + `.querySelector('.state .word').textContent === 'succeeded'`)
	p.Wait(`document.querySelector('#counts a.count[data-status="succeeded"] .n')?.textContent === '3'`)
	p.Screenshot("settled", "")
	if m := browsertest.Eval[string](p, `window.batonTestMark || 'reloaded'`); m != "same document" {
		t.Errorf("the page was reloaded (%s)", m)
	}
	// A settled job's duration stops.
	d := browsertest.Eval[string](p, row("a-held")+`.querySelector('td.duration').textContent`)
	time.Sleep(1500 * time.Millisecond)
	if d2 := browsertest.Eval[string](p, row("a-held")+`.querySelector('td.duration').textContent`); d2 != d {
		t.Errorf("a settled job's duration still ticks: %q, then %q", d, d2)
	}
}

// TestBrowserNewValidatesAsYouType: /new checks the workflow as it is
// typed (problems at their paths, actions no worker runs), draws a valid
// one, and submits it under the ID given, landing on its page.
func TestBrowserNewValidatesAsYouType(t *testing.T) {
	gate := make(chan struct{})
	s := startLive(t, filepath.Join(t.TempDir(), "jobs.db"), "127.0.0.1:0", gate, nil)
	p := browsertest.NewPage(t)
	p.Navigate(s.URL + "/new")
	p.WaitDrawn()
	typeIn := func(text string) {
		p.Do("type", chromedp.Evaluate[chromedp.Void](`(() => {
			const a = document.getElementById('workflow');
			a.value = `+js(text)+`;
			a.dispatchEvent(new Event('input', { bubbles: true }));
		})()`))
	}
	problems := `[...document.querySelectorAll('#problems li')].map((li) => li.textContent).join('\n')`

	typeIn(`{"version":1,"root":{"seq":[{"act":"ok"},{"bogus":1}]}}`)
	p.Wait(`document.querySelectorAll('#problems li').length > 0`)
	if got := browsertest.Eval[string](p, problems); !strings.Contains(got, "seq[1]") {
		t.Errorf("the problem is not at its path: %q", got)
	}
	typeIn(`{"version":1,"root":{"seq":[{"act":"ok"},{"act":"nope"}]}}`)
	p.Wait(`/no worker runs/.test(` + problems + `) && document.querySelector('#problems li[data-problem-path="seq[1]"]') !== null`)

	typeIn(`{"version":1,"root":{"seq":[{"act":"ok","payload":1},{"act":"gate","payload":2}]}}`)
	p.Wait(`document.querySelectorAll('#problems li').length === 0 && !!document.querySelector('#preview [data-path="seq[1]"]')`)
	p.Screenshot("valid", "")
	p.Do("submit", chromedp.Evaluate[chromedp.Void](`document.getElementById('job-id').value = 'from-page'`), chromedp.Click(chromedp.ID("submit")))
	waitAcross(t, p, `location.pathname === '/jobs/from-page' && window.batonDrawn === true`)
	p.Wait(nodeIs("seq[1]", "running"))
	release(t, gate, 1)
	p.Wait(`document.getElementById('job').dataset.status === 'succeeded'`)
}

// waitAcross polls expr in the page until it is true, across the
// navigation it waits for (Page.Wait ends at one).
func waitAcross(t *testing.T, p *browsertest.Page, expr string) {
	t.Helper()
	ctx, cancel := p.Bound()
	defer cancel()
	for {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](expr))
		if err == nil && ok {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("waiting for %s: %v (last error %v)", expr, ctx.Err(), err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// TestBrowserLoginExpiredSaysSo: once the session's token is no longer
// the server's, the page says so in words (with a way to log in again)
// and keeps what it shows; once it is again, the page goes on.
func TestBrowserLoginExpiredSaysSo(t *testing.T) {
	const token = "write-token-for-the-page-0123456789"
	parse := func(text string) *server.Tokens {
		tk, err := server.ParseTokens([]byte(text))
		if err != nil {
			t.Fatal(err)
		}
		return tk
	}
	tokens := parse("write " + token + "\n")
	gate := make(chan struct{})
	s := startLive(t, filepath.Join(t.TempDir(), "jobs.db"), "127.0.0.1:0", gate, nil, func(o *server.Options) { o.Tokens = tokens })
	s.submit(t, "guarded", gates(2))
	p := browsertest.NewPage(t)
	p.Navigate(s.URL + "/jobs/guarded")
	waitAcross(t, p, `location.pathname === '/login' && !!document.getElementById('token')`)
	p.Do("log in", chromedp.SendKeys(chromedp.ID("token"), token), chromedp.Submit(chromedp.ID("token")))
	waitAcross(t, p, `location.pathname === '/jobs/guarded' && window.batonDrawn === true`)
	p.Wait(nodeIs("seq[0]", "running"))

	tokens.Replace(parse("write another-token-0123456789abcdef\n"))
	p.Do("select seq[1]", chromedp.Click(chromedp.CSS(`#tree g.node[data-path="seq[1]"] div.label`)))
	p.Wait(`!document.getElementById('banner').hidden && /expired/.test(document.getElementById('banner').textContent) && /^\/login\?next=/.test(document.querySelector('#banner a')?.getAttribute('href'))`)
	p.Screenshot("expired", "")
	if !browsertest.Eval[bool](p, nodeIs("seq[0]", "running")) || browsertest.Eval[int](p, `document.querySelectorAll('#tree g.node').length`) != 3 {
		t.Errorf("the page did not keep what it showed")
	}

	tokens.Replace(parse("write " + token + "\n"))
	release(t, gate, 1)
	p.Wait(nodeIs("seq[0]", "succeeded"))
	p.Wait(`document.getElementById('banner').hidden`)
	release(t, gate, 1)
	p.Wait(`document.getElementById('job').dataset.status === 'succeeded'`)
}

// TestBrowserGroupCountsFollow: a group box counts the states of the
// nodes under it; as they change, its counts follow (without a reload);
// the root's group opens on click (expand=, in the URL, the root's path
// being empty).
func TestBrowserGroupCountsFollow(t *testing.T) {
	gate := make(chan struct{})
	s := startLive(t, filepath.Join(t.TempDir(), "jobs.db"), "127.0.0.1:0", gate, nil)
	s.submit(t, "grouped", gates(150))
	p := browsertest.NewPage(t)
	p.Navigate(s.URL + "/jobs/grouped")
	p.WaitDrawn()
	count := func(status string) string {
		return `Number(document.querySelector('#tree g.node.group[data-path=""] .count[data-status="` + status + `"]')?.getAttribute('data-count') || 0)`
	}
	p.Wait(count("running") + ` === 1 && ` + count("idle") + ` === 149`)
	p.Do("mark the document", chromedp.Evaluate[chromedp.Void](`window.batonTestMark = 'same document'`))
	release(t, gate, 3)
	p.Wait(count("succeeded") + ` === 3 && ` + count("running") + ` === 1 && ` + count("idle") + ` === 146`)
	p.Screenshot("counts", "")
	p.Do("open the root", chromedp.Click(chromedp.CSS(`#tree g.node.group[data-path=""] div.label`)))
	p.Wait(`!!document.querySelector('#tree g.node[data-path="seq[149]"]')`)
	p.Wait(nodeIs("seq[2]", "succeeded") + ` && ` + nodeIs("seq[3]", "running"))
	if got := browsertest.Eval[string](p, `new URL(location.href).searchParams.get('expand')`); got != "," {
		t.Errorf("expand=%q in the URL, want the root alone (\",\")", got)
	}
	release(t, gate, 1)
	p.Wait(nodeIs("seq[3]", "succeeded") + ` && ` + nodeIs("seq[4]", "running"))
	if m := browsertest.Eval[string](p, `window.batonTestMark || 'reloaded'`); m != "same document" {
		t.Errorf("the page was reloaded (%s)", m)
	}
	close(gate) // lets the other 145 through
}

// TestBrowserKeyboard: the tree is used from the keyboard: arrows move
// between nodes (siblings, parent, first child), Enter selects (the
// panel opens, ?node= in the URL), + and - zoom, Escape closes.
func TestBrowserKeyboard(t *testing.T) {
	gate := make(chan struct{})
	s := startLive(t, filepath.Join(t.TempDir(), "jobs.db"), "127.0.0.1:0", gate, nil)
	s.submit(t, "keys", ast.Seq(ast.Act("ok", 1), ast.Act("ok", 2), ast.Act("ok", 3)))
	p := browsertest.NewPage(t)
	p.Navigate(s.URL + "/jobs/keys")
	p.WaitDrawn()
	focused := `document.activeElement?.getAttribute('data-path')`
	p.Do("focus seq[0]", chromedp.Evaluate[chromedp.Void](`[...document.querySelectorAll('#tree g.node')].find((g) => g.getAttribute('data-path') === 'seq[0]').focus()`))
	p.Wait(focused + ` === 'seq[0]'`)
	p.Do("right", chromedp.KeyEvent(kb.ArrowRight))
	p.Wait(focused + ` === 'seq[1]'`)
	p.Do("enter", chromedp.KeyEvent(kb.Enter))
	p.Wait(`document.getElementById('panel').dataset.node === 'seq[1]' && !document.getElementById('panel').hidden && new URL(location.href).searchParams.get('node') === 'seq[1]'`)
	p.Do("up", chromedp.KeyEvent(kb.ArrowUp))
	p.Wait(focused + ` === ''`)
	p.Do("down", chromedp.KeyEvent(kb.ArrowDown))
	p.Wait(focused + ` === 'seq[0]'`)
	p.Do("zoom in", chromedp.KeyEvent("+"))
	p.Wait(`document.getElementById('tree').dataset.zoom === '1.25'`)
	p.Do("zoom out", chromedp.KeyEvent("-"))
	p.Wait(`document.getElementById('tree').dataset.zoom === '1'`)
	p.Do("escape", chromedp.KeyEvent(kb.Escape))
	p.Wait(`document.getElementById('panel').hidden && !new URL(location.href).searchParams.has('node')`)
}

// TestBrowserTimelineKeys: the timeline is one tab stop, not one per
// bar (a job of 1,000 attempts had 1,000): its first bar takes the focus,
// the arrows move it along the bars (the bar focused is the one tab
// stop), Home and End go to the ends, and Enter selects the bar's node.
func TestBrowserTimelineKeys(t *testing.T) {
	s := startLive(t, filepath.Join(t.TempDir(), "jobs.db"), "127.0.0.1:0", nil, nil)
	s.submit(t, "bars", ast.Seq(ast.Act("ok", 1), ast.Act("ok", 2), ast.Act("ok", 3)))
	if _, err := s.client().Wait(t.Context(), "bars"); err != nil {
		t.Fatal(err)
	}
	p := browsertest.NewPage(t)
	p.Navigate(s.URL + "/jobs/bars")
	p.WaitDrawn()
	stops := `[...document.querySelectorAll('#timeline rect.bar')].filter((b) => b.getAttribute('tabindex') === '0').map((b) => b.getAttribute('data-path')).join(',')`
	if got := browsertest.Eval[string](p, stops); got != "seq[0]" {
		t.Fatalf("the timeline's tab stops are %q, want the first bar alone", got)
	}
	focused := `document.activeElement?.closest?.('#timeline') ? document.activeElement.getAttribute('data-path') : 'elsewhere'`
	p.Do("focus the first bar", chromedp.Evaluate[chromedp.Void](`document.querySelector('#timeline rect.bar').focus()`))
	p.Wait(focused + ` === 'seq[0]'`)
	p.Do("right", chromedp.KeyEvent(kb.ArrowRight))
	p.Wait(focused + ` === 'seq[1]' && (` + stops + `) === 'seq[1]'`)
	p.Do("end", chromedp.KeyEvent(kb.End))
	p.Wait(focused + ` === 'seq[2]'`)
	p.Do("left", chromedp.KeyEvent(kb.ArrowLeft))
	p.Wait(focused + ` === 'seq[1]'`)
	p.Do("home", chromedp.KeyEvent(kb.Home))
	p.Wait(focused + ` === 'seq[0]' && (` + stops + `) === 'seq[0]'`)
	p.Do("enter", chromedp.KeyEvent(kb.Enter))
	p.Wait(`document.getElementById('panel').dataset.node === 'seq[0]' && !document.getElementById('panel').hidden`)
}

// TestBrowserShowAll: a value clipped in the panel is fetched whole on
// "show all", in place (the page stays).
func TestBrowserShowAll(t *testing.T) {
	gate := make(chan struct{})
	s := startLive(t, filepath.Join(t.TempDir(), "jobs.db"), "127.0.0.1:0", gate, nil)
	s.submit(t, "long", ast.Seq(ast.Act("ok", strings.Repeat("x", 3000)+"END")))
	if _, err := s.client().Wait(t.Context(), "long"); err != nil {
		t.Fatal(err)
	}
	p := browsertest.NewPage(t)
	p.Navigate(s.URL + "/jobs/long?node=seq%5B0%5D")
	p.WaitDrawn()
	p.Wait(`!!document.querySelector('#panel #show-all')`)
	if browsertest.Eval[bool](p, `document.querySelector('#panel pre.payload').textContent.includes('END')`) {
		t.Fatal("the payload is not clipped in the panel: the test shows nothing")
	}
	p.Do("mark the document", chromedp.Evaluate[chromedp.Void](`window.batonTestMark = 'same document'`))
	p.Do("show all", chromedp.Click(chromedp.ID("show-all")))
	p.Wait(`document.querySelector('#panel pre.payload')?.textContent.endsWith('END"')`)
	if m := browsertest.Eval[string](p, `(window.batonTestMark || 'navigated') + ' ' + location.pathname`); m != "same document /jobs/long" {
		t.Errorf("show all left the page: %s", m)
	}
}

// TestBrowserCancel: the cancel form cancels through the API in place:
// the job ends cancelled, its reason in the header, without a reload.
func TestBrowserCancel(t *testing.T) {
	gate := make(chan struct{})
	s := startLive(t, filepath.Join(t.TempDir(), "jobs.db"), "127.0.0.1:0", gate, nil)
	s.submit(t, "doomed", gates(2))
	p := browsertest.NewPage(t)
	p.Navigate(s.URL + "/jobs/doomed")
	p.WaitDrawn()
	p.Wait(nodeIs("seq[0]", "running"))
	p.Do("mark the document", chromedp.Evaluate[chromedp.Void](`window.batonTestMark = 'same document'`))
	p.Do("cancel", chromedp.SendKeys(chromedp.ID("cancel-reason-input"), "<b>no longer needed</b>"), chromedp.Click(chromedp.ID("cancel")))
	p.Wait(`document.getElementById('job').dataset.status === 'cancelled'`)
	p.Wait(`getComputedStyle(document.getElementById('cancel-reason')).display !== 'none' && document.querySelector('#cancel-reason .reason')?.textContent === '<b>no longer needed</b>'`)
	p.Wait(nodeIs("seq[0]", "cancelled"))
	p.Wait(`!document.getElementById('cancel-form') && !document.getElementById('cancel')`)
	if m := browsertest.Eval[string](p, `window.batonTestMark || 'reloaded'`); m != "same document" {
		t.Errorf("the page was reloaded (%s)", m)
	}
	if sum, err := s.client().Job(t.Context(), "doomed", client.JobQuery{NoNodes: true}); err != nil || sum.Cancel == nil || sum.Cancel.Reason != "<b>no longer needed</b>" {
		t.Errorf("the API's job: %+v, %v", sum.Summary, err)
	}
}

// TestBrowserStepFilters: the steps filter as typed (the server's rules,
// kept in the URL), and steps that come live are filtered too.
func TestBrowserStepFilters(t *testing.T) {
	gate := make(chan struct{})
	s := startLive(t, filepath.Join(t.TempDir(), "jobs.db"), "127.0.0.1:0", gate, nil)
	s.submit(t, "filtered", ast.Seq(ast.Act("ok", 1), ast.Act("gate", 2), ast.Act("ok", 3)))
	p := browsertest.NewPage(t)
	p.Navigate(s.URL + "/jobs/filtered")
	p.WaitDrawn()
	p.Wait(nodeIs("seq[1]", "running"))
	shown := `JSON.stringify([...document.querySelectorAll('#steps > li[data-version]')].filter((li) => !li.hidden).map((li) => Number(li.dataset.version)))`
	p.Wait(shown + ` === '[1,2]'`)
	p.Do("filter", chromedp.SendKeys(chromedp.ID("steps-action"), "gate"))
	p.Wait(shown + ` === '[]' && new URL(location.href).searchParams.get('steps_action') === 'gate'`)
	release(t, gate, 1)
	p.Wait(`document.getElementById('job').dataset.status === 'succeeded' && !!document.getElementById('step-4')`)
	// v3 applied the gate's result; v4 the last ok's.
	p.Wait(shown + ` === '[3]'`)
	p.Do("clear", chromedp.Evaluate[chromedp.Void](`(() => { const i = document.getElementById('steps-action'); i.value = ''; i.dispatchEvent(new Event('input', { bubbles: true })); })()`))
	p.Do("failed only", chromedp.SetValue(chromedp.ID("steps-status"), "failed"))
	p.Do("change", chromedp.Evaluate[chromedp.Void](`document.getElementById('steps-status').dispatchEvent(new Event('change', { bubbles: true }))`))
	p.Wait(shown + ` === '[]' && !new URL(location.href).searchParams.has('steps_action')`)
}

// TestBrowserPanAndZoom: a drag pans the tree (and selects nothing); the
// wheel zooms it around the pointer; the buttons zoom and reset.
func TestBrowserPanAndZoom(t *testing.T) {
	gate := make(chan struct{})
	s := startLive(t, filepath.Join(t.TempDir(), "jobs.db"), "127.0.0.1:0", gate, nil)
	kids := make([]ast.Node, 60)
	for i := range kids {
		kids[i] = ast.Act("ok", i)
	}
	s.submit(t, "wide", ast.Seq(kids...))
	if _, err := s.client().Wait(t.Context(), "wide"); err != nil {
		t.Fatal(err)
	}
	p := browsertest.NewPage(t)
	p.Navigate(s.URL + "/jobs/wide")
	p.WaitDrawn()
	type box struct{ X, Y, W, H float64 }
	r := browsertest.Eval[box](p, `(() => { const r = document.getElementById('tree').getBoundingClientRect(); return {X: r.x, Y: r.y, W: r.width, H: r.height}; })()`)
	x, y := r.X+r.W/2, r.Y+r.H/2
	p.Do("drag", chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, x, y),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMousePressed, x, y, chromedp.ButtonLeft, chromedp.ClickCount(1)),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, x-100, y, chromedp.ButtonLeft),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, x-200, y, chromedp.ButtonLeft),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseReleased, x-200, y, chromedp.ButtonLeft, chromedp.ClickCount(1)))
	p.Wait(`document.getElementById('tree').scrollLeft >= 150`)
	if sel := browsertest.Eval[bool](p, `!!document.querySelector('#tree g.node.selected') || new URL(location.href).searchParams.has('node')`); sel {
		t.Error("a drag selected a node")
	}
	p.Do("wheel", chromedp.MouseEvent(input.DispatchMouseEventTypeMouseWheel, x, y, func(e *input.DispatchMouseEventParams) { e.DeltaX, e.DeltaY = 0.01, -300 }))
	p.Wait(`Number(document.getElementById('tree').dataset.zoom) > 1.2`)
	p.Do("zoom out", chromedp.Click(chromedp.ID("zoom-out")))
	p.Do("actual size", chromedp.Click(chromedp.ID("zoom-reset")))
	p.Wait(`document.getElementById('tree').dataset.zoom === '1' && document.querySelector('#tree svg').getAttribute('width') === String(document.querySelector('#tree svg').viewBox.baseVal.width)`)
}

// TestBrowserFailureShownLive: when a job fails, its header says why in
// the same change that shows it failed (steps tell no failure; the root
// node's is the job's), as text.
func TestBrowserFailureShownLive(t *testing.T) {
	gate := make(chan struct{})
	s := startLive(t, filepath.Join(t.TempDir(), "jobs.db"), "127.0.0.1:0", gate, nil)
	s.submit(t, "failing", ast.Try(ast.Seq(ast.Act("gate", 1), ast.Act("fail", 2)), ast.Finally(ast.Act("gate", 3))))
	p := browsertest.NewPage(t)
	p.Navigate(s.URL + "/jobs/failing")
	p.WaitDrawn()
	p.Wait(nodeIs("body.seq[0]", "running"))
	// Record, when #job first says failed, whether the header says why.
	p.Do("observe", chromedp.Evaluate[chromedp.Void](`(() => {
		const job = document.getElementById('job');
		window.batonSaid = null;
		new MutationObserver(() => {
			if (job.dataset.status !== 'failed' || window.batonSaid !== null) return;
			const f = document.getElementById('failure');
			window.batonSaid = getComputedStyle(f).display !== 'none' ? f.querySelector('.message')?.textContent ?? '' : 'hidden';
		}).observe(job, { attributes: true, attributeFilter: ['data-status'] });
	})()`))
	release(t, gate, 1)
	p.Wait(nodeIs("body.seq[1]", "failed") + ` && ` + nodeIs("finally", "running"))
	release(t, gate, 1)
	p.Wait(`window.batonSaid !== null`)
	p.Screenshot("failed", "")
	if said := browsertest.Eval[string](p, `window.batonSaid`); said != "boom: <i>broken</i>" {
		t.Errorf("the header said %q as the job failed", said)
	}
}
