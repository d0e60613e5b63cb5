package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batonwf/baton/api"
	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/client"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	"github.com/batonwf/baton/server"
	"github.com/batonwf/baton/store"

	"golang.org/x/net/html"
)

// pageActions are the actions of examples/fail.json and the hostile
// tests: log and sleep succeed with their payload, fail fails with its
// payload as the message, echo succeeds with its payload.
func pageActions() *runner.Registry {
	reg := runner.NewRegistry()
	must := func(err error) {
		if err != nil {
			panic(err)
		}
	}
	ok := func(_ context.Context, a job.Action) ([]byte, error) { return a.Payload, nil }
	must(reg.Register("log", ok))
	must(reg.Register("echo", ok))
	must(reg.Register("sleep", func(ctx context.Context, a job.Action) ([]byte, error) {
		select {
		case <-time.After(10 * time.Millisecond):
			return a.Payload, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}))
	must(reg.Register("fail", func(_ context.Context, a job.Action) ([]byte, error) { return nil, errors.New(string(a.Payload)) }))
	must(reg.Register("block", func(ctx context.Context, _ job.Action) ([]byte, error) {
		<-ctx.Done()
		return nil, context.Cause(ctx)
	}))
	return reg
}

// pageEnv is a server of the pages on a memory store with an inmem
// runner, its answers checked against the API's document (the pages
// pass through).
type pageEnv struct {
	st     store.Store
	url    string
	client *client.Client
	srv    *httptest.Server
}

func newPageEnv(t *testing.T, mod func(*server.Options)) *pageEnv {
	t.Helper()
	st := store.NewMemory()
	t.Cleanup(func() { st.Close() })
	r := runLocal(t, st, pageActions())
	o := server.Options{Store: st, Runner: r}
	if mod != nil {
		mod(&o)
	}
	h, err := server.New(o)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(checkAPI(t, h))
	t.Cleanup(ts.Close)
	return &pageEnv{st: st, url: ts.URL, srv: ts, client: client.New(ts.URL, client.Options{HTTPClient: ts.Client(), Token: pageWriteToken})}
}

const (
	pageWriteToken = "page-write-token-0123456789"
	pageReadToken  = "page-read-token-0123456789"
)

// get fetches path with headers (no redirects followed).
func (e *pageEnv) get(t *testing.T, path string, headers map[string]string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest("GET", e.url+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	return e.do(t, req)
}

func (e *pageEnv) do(t *testing.T, req *http.Request) (*http.Response, string) {
	t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

// settle submits workflow as job id and waits until it has settled.
func (e *pageEnv) settle(t *testing.T, id job.ID, workflow string) api.Job {
	t.Helper()
	ctx := t.Context()
	if _, _, err := e.client.Submit(ctx, id, []byte(workflow)); err != nil {
		t.Fatal(err)
	}
	for {
		j, err := e.client.Job(ctx, id, client.JobQuery{})
		if err != nil {
			t.Fatal(err)
		}
		if j.Status != "running" {
			return j
		}
		select {
		case <-ctx.Done():
			t.Fatalf("job %s did not settle: %+v", id, j.Summary)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// pageHeaders checks the headers every page answer has.
func pageHeaders(t *testing.T, what string, resp *http.Response) {
	t.Helper()
	h := resp.Header
	if h.Get("Content-Security-Policy") != "default-src 'self'; frame-ancestors 'none'" || h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Referrer-Policy") != "no-referrer" {
		t.Errorf("%s: security headers: %v", what, h)
	}
}

// TestPages: every page answers 200 with its headers, the layout's links
// to the one style sheet and the one script (deferred), no inline
// script or style, and its main element.
func TestPages(t *testing.T) {
	e := newPageEnv(t, nil)
	fail, err := os.ReadFile("../examples/fail.json")
	if err != nil {
		t.Fatal(err)
	}
	e.settle(t, "f", string(fail))
	for _, c := range []struct{ path, main, ctype string }{
		{"/", "list", "text/html; charset=utf-8"},
		{"/?status=failed&prefix=f", "list", "text/html; charset=utf-8"},
		{"/jobs/f", "job", "text/html; charset=utf-8"},
		{"/jobs/f?version=2&node=seq%5B0%5D", "job", "text/html; charset=utf-8"},
		{"/jobs/f?node=", "job", "text/html; charset=utf-8"},
		{"/new", "new-page", "text/html; charset=utf-8"},
		{"/workers", "workers-page", "text/html; charset=utf-8"},
		{"/login", "login", "text/html; charset=utf-8"},
		{"/jobs/f/tree.svg", "", "image/svg+xml"},
		{"/jobs/f/signals?version=2", "kept-signals", "text/html; charset=utf-8"},
		{"/static/baton.css", "", "text/css; charset=utf-8"},
		{"/static/baton.js", "", "text/javascript; charset=utf-8"},
	} {
		resp, body := e.get(t, c.path, nil)
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != c.ctype {
			t.Errorf("GET %s: %d %s", c.path, resp.StatusCode, resp.Header.Get("Content-Type"))
			continue
		}
		pageHeaders(t, c.path, resp)
		if c.main == "" {
			continue
		}
		d := parseHTML(t, body)
		if d.byID(c.main) == nil || d.byID(c.main).Data != "main" {
			t.Errorf("GET %s: no <main id=%q>", c.path, c.main)
		}
		links := d.all(func(n *html.Node) bool { return n.Data == "link" && attrOf(n, "rel") == "stylesheet" })
		scripts := d.tagged("script")
		if len(links) != 1 || attrOf(links[0], "href") != "/static/baton.css" {
			t.Errorf("GET %s: style sheets %v", c.path, links)
		}
		if len(scripts) != 1 || attrOf(scripts[0], "src") != "/static/baton.js" {
			t.Errorf("GET %s: scripts %d", c.path, len(scripts))
		} else if _, deferred := attr(scripts[0], "defer"); !deferred || scripts[0].FirstChild != nil {
			t.Errorf("GET %s: the script is not deferred, or inline", c.path)
		}
		if bad := d.hostileMarkup(); bad != "" {
			t.Errorf("GET %s: %s (the CSP refuses inline script and style)", c.path, bad)
		}
		if b := d.byID("banner"); b == nil || attrOf(b, "role") != "status" {
			t.Errorf("GET %s: no status banner", c.path)
		} else if _, hidden := attr(b, "hidden"); !hidden {
			t.Errorf("GET %s: the banner is shown", c.path)
		}
	}
	for _, c := range []struct {
		path   string
		status int
	}{
		{"/jobs/nope", 404},
		{"/jobs/f?version=99", 404},
		{"/jobs/f?version=0", 400},
		{"/jobs/f?version=x", 400},
		{"/jobs/nope/tree.svg", 404},
		{"/jobs/nope/signals", 404},
		{"/jobs/f/signals?version=99", 404},
		{"/?status=idle", 400},
		{"/static/nope.css", 404},
		{"/static/baton.go", 404},
	} {
		resp, body := e.get(t, c.path, nil)
		if resp.StatusCode != c.status {
			t.Errorf("GET %s: %d, want %d", c.path, resp.StatusCode, c.status)
		}
		pageHeaders(t, c.path, resp)
		if strings.HasPrefix(c.path, "/jobs/") {
			if d := parseHTML(t, body); d.byID("error") == nil || attrOf(d.byID("error"), "data-status-code") != fmt.Sprint(c.status) {
				t.Errorf("GET %s: not an error page: %s", c.path, body)
			}
		}
	}
}

// rescuedFlow has a rescued failure in a par, and a par beside it.
const rescuedFlow = `{"version":1,"root":{"seq":[
 {"try":{"par":[{"act":"echo","payload":1},{"act":"fail","payload":"disk full"}]},"rescue":{"act":"log","payload":"rescued"}},
 {"par":[{"act":"echo","payload":"a"},{"act":"echo","payload":"b"}]}
]}}`

// treeStatuses returns the data-status of every drawn node of a job
// page's tree (#tree g.node[data-path]), by path.
func treeStatuses(t *testing.T, d htmlDoc) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, n := range within(d.byID("tree"), func(n *html.Node) bool { return n.Data == "g" && hasClass(n, "node") }) {
		p, ok := attr(n, "data-path")
		if !ok {
			t.Errorf("a node of the tree without data-path: %v", n.Attr)
		}
		if _, dup := out[p]; dup {
			t.Errorf("path %q drawn twice", p)
		}
		out[p] = attrOf(n, "data-status")
	}
	return out
}

// TestJobPageContract: the job page's data-* contract, for a failed job
// (examples/fail.json) and one with a rescued failure in a par: every
// node of the API is drawn with the API's status, at the latest version
// and at every past one (?version=V, which the API has from History.At);
// #job carries the job's ID, version and status; each step is an
// <li id=step-V data-version=V>; each attempt a bar with data-path and
// data-version; ?node=PATH selects the node and fills the panel.
func TestJobPageContract(t *testing.T) {
	e := newPageEnv(t, nil)
	fail, err := os.ReadFile("../examples/fail.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		id       job.ID
		workflow string
		status   string
	}{{"fail", string(fail), "failed"}, {"rescued", rescuedFlow, "succeeded"}} {
		t.Run(string(c.id), func(t *testing.T) {
			final := e.settle(t, c.id, c.workflow)
			if final.Status != c.status {
				t.Fatalf("job %s: %s, want %s", c.id, final.Status, c.status)
			}
			for v := uint64(1); v <= final.Version; v++ {
				want, err := e.client.Job(t.Context(), c.id, client.JobQuery{Version: v})
				if err != nil {
					t.Fatal(err)
				}
				path := "/jobs/" + string(c.id)
				if v < final.Version {
					path += fmt.Sprintf("?version=%d", v)
				}
				resp, body := e.get(t, path, nil)
				if resp.StatusCode != 200 {
					t.Fatalf("GET %s: %d", path, resp.StatusCode)
				}
				d := parseHTML(t, body)
				main := d.byID("job")
				if attrOf(main, "data-job") != string(c.id) || attrOf(main, "data-version") != fmt.Sprint(v) || attrOf(main, "data-status") != want.Status || attrOf(main, "data-live") != "false" {
					t.Errorf("GET %s: #job %v, want version %d status %s", path, main.Attr, v, want.Status)
				}
				got := treeStatuses(t, d)
				if len(got) != len(want.Nodes) {
					t.Errorf("GET %s: %d nodes drawn, the API has %d", path, len(got), len(want.Nodes))
				}
				for _, n := range want.Nodes {
					if got[n.Path] != n.Status {
						t.Errorf("GET %s: node %q drawn %q, the API says %q", path, n.Path, got[n.Path], n.Status)
					}
				}
				// The fragment the script swaps in draws the same.
				svgPath := fmt.Sprintf("/jobs/%s/tree.svg?version=%d", c.id, v)
				resp, svg := e.get(t, svgPath, nil)
				if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "image/svg+xml" {
					t.Errorf("GET %s: %d %s", svgPath, resp.StatusCode, resp.Header.Get("Content-Type"))
				}
				frag := treeStatuses(t, parseHTML(t, `<div id="tree">`+svg+`</div>`))
				for _, n := range want.Nodes {
					if frag[n.Path] != n.Status {
						t.Errorf("GET %s: node %q drawn %q, the API says %q", svgPath, n.Path, frag[n.Path], n.Status)
					}
				}
				// The page leaves its steps to the script (data-lazy),
				// saying which, and links to the page that lists them.
				list := d.byID("steps")
				if attrOf(list, "data-lazy") != "true" || attrOf(list, "data-from") != "1" || attrOf(list, "data-to") != fmt.Sprint(v) {
					t.Errorf("GET %s: #steps %v, want data-lazy, v1 to v%d", path, list.Attr, v)
				}
				if n := within(list, func(n *html.Node) bool { return n.Data == "li" }); len(n) != 0 {
					t.Errorf("GET %s: %d steps listed; want them left to the script", path, len(n))
				}
				links := within(d.byID("steps-lazy"), func(n *html.Node) bool { return n.Data == "a" })
				if len(links) != 1 {
					t.Fatalf("GET %s: no link to the steps", path)
				}
				stepsPath := html.UnescapeString(attrOf(links[0], "href"))
				if i := strings.Index(stepsPath, "#"); i >= 0 {
					stepsPath = stepsPath[:i]
				}
				if resp, body = e.get(t, stepsPath, nil); resp.StatusCode != 200 {
					t.Fatalf("GET %s: %d", stepsPath, resp.StatusCode)
				}
				d = parseHTML(t, body)
				path = stepsPath
				steps := within(d.byID("steps"), func(n *html.Node) bool { return n.Data == "li" && attrOf(n, "data-version") != "" })
				if len(steps) != int(v) {
					t.Errorf("GET %s: %d steps listed, want %d", path, len(steps), v)
				}
				for i, s := range steps {
					if attrOf(s, "id") != fmt.Sprintf("step-%d", i+1) || attrOf(s, "data-version") != fmt.Sprint(i+1) {
						t.Errorf("GET %s: step %d is %v", path, i, s.Attr)
					}
				}
				if cur := d.all(func(n *html.Node) bool { return attrOf(n, "aria-current") == "step" }); len(cur) != 1 || attrOf(cur[0], "data-version") != fmt.Sprint(v) {
					t.Errorf("GET %s: the current step is not v%d", path, v)
				}
			}
			// Bars: one per attempt, each from its dispatch to its result.
			_, body := e.get(t, "/jobs/"+string(c.id), nil)
			d := parseHTML(t, body)
			bars := within(d.byID("timeline"), func(n *html.Node) bool { return n.Data == "rect" && hasClass(n, "bar") })
			acts := 0
			for _, n := range final.Nodes {
				if n.Kind == "act" && n.Status != "idle" {
					acts++
				}
			}
			if len(bars) != acts {
				t.Errorf("%d bars, %d actions ran", len(bars), acts)
			}
			for _, b := range bars {
				from, err1 := strconv.Atoi(attrOf(b, "data-version"))
				to, err2 := strconv.Atoi(attrOf(b, "data-applied"))
				if attrOf(b, "data-path") == "" || err1 != nil || err2 != nil || to <= from {
					t.Errorf("bar %v", b.Attr)
				}
			}
			if ax := attrOf(d.byID("timeline"), "data-axis"); ax != "time" {
				t.Errorf("the timeline's axis: %q", ax)
			}
			// ?node=PATH: the failed action selected, the panel filled.
			var failed api.Node
			for _, n := range final.Nodes {
				if n.Kind == "act" && n.Status == "failed" {
					failed = n
				}
			}
			q := url.Values{"node": {failed.Path}}
			_, body = e.get(t, "/jobs/"+string(c.id)+"?"+q.Encode(), nil)
			d = parseHTML(t, body)
			panel := d.byID("panel")
			if _, hidden := attr(panel, "hidden"); hidden || attrOf(panel, "data-node") != failed.Path || !strings.Contains(text(panel), failed.Error) {
				t.Errorf("?node=%s: the panel %v: %q", failed.Path, panel.Attr, text(panel))
			}
			// Its attempts say on which worker each ran, as the history does.
			h, err := e.client.History(t.Context(), c.id, 0, 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, st := range h.Steps {
				for _, r := range st.Results {
					if r.Path == failed.Path && !r.Timer && (r.Worker == "" || !strings.Contains(text(panel), "on "+r.Worker)) {
						t.Errorf("?node=%s: the panel does not say attempt %s ran on %q: %q", failed.Path, r.ActionID, r.Worker, text(panel))
					}
				}
			}
			sel := within(d.byID("tree"), func(n *html.Node) bool { return hasClass(n, "selected") })
			if len(sel) != 1 || attrOf(sel[0], "data-path") != failed.Path {
				t.Errorf("?node=%s: selected %d nodes", failed.Path, len(sel))
			}
			if attrOf(d.byID("job"), "data-node") != failed.Path {
				t.Errorf("?node=%s: #job's data-node %q", failed.Path, attrOf(d.byID("job"), "data-node"))
			}
		})
	}
}

// postForm posts form to path with headers, following no redirect.
func (e *pageEnv) postForm(t *testing.T, path string, form url.Values, headers map[string]string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest("POST", e.url+path, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	return e.do(t, req)
}

// waitRunning submits workflow as job id and waits until the node at
// path runs.
func (e *pageEnv) waitRunning(t *testing.T, id job.ID, workflow, path string) {
	t.Helper()
	if _, _, err := e.client.Submit(t.Context(), id, []byte(workflow)); err != nil {
		t.Fatal(err)
	}
	for {
		j, err := e.client.Job(t.Context(), id, client.JobQuery{})
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range j.Nodes {
			if n.Path == path && n.Status == "running" {
				return
			}
		}
		select {
		case <-t.Context().Done():
			t.Fatalf("job %s: %s never ran", id, path)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

const hostile = `<img src=x onerror=alert(1)></script><script>alert(2)</script>`

// TestPagesHostile: strings from a job (its ID, payloads, outputs,
// errors, a cancel's reason) and from a workflow being checked are text
// on every page, never markup: no element, attribute or script comes of
// them, and the text reads as it was given.
func TestPagesHostile(t *testing.T) {
	e := newPageEnv(t, nil)
	id := job.ID(`h"'><i>&amp;x`)
	lit, _ := json.Marshal(hostile)
	flow := `{"version":1,"root":{"par":[{"act":"echo","payload":` + string(lit) + `},{"act":"fail","payload":` + string(lit) + `},{"act":"block"}]}}`
	e.waitRunning(t, id, flow, "par[2]")
	for {
		j, err := e.client.Job(t.Context(), id, client.JobQuery{})
		if err != nil {
			t.Fatal(err)
		}
		if j.Nodes[1].Status == "succeeded" && j.Nodes[2].Status == "failed" {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	jobPath := "/jobs/" + url.PathEscape(string(id))
	resp, body := e.postForm(t, jobPath+"/cancel", url.Values{"reason": {hostile}}, nil)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != jobPath {
		t.Fatalf("the cancel form: %d %v %s", resp.StatusCode, resp.Header, body)
	}
	for {
		j, err := e.client.Job(t.Context(), id, client.JobQuery{})
		if err != nil {
			t.Fatal(err)
		}
		if j.Status == "cancelled" {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	output := string(lit) // echo's output is its payload, JSON
	for _, c := range []struct {
		path  string
		texts []string // what must read literally
	}{
		{"/", []string{string(id)}},
		{"/?prefix=" + url.QueryEscape(string(id)), []string{string(id)}},
		{jobPath, []string{string(id), hostile}},
		{jobPath + "?steps_from=1", []string{string(id), hostile, output}},
		{jobPath + "?node=par%5B0%5D", []string{output}},
		{jobPath + "?node=par%5B1%5D", []string{hostile, output}},
		{jobPath + "?version=2&node=" + url.QueryEscape(hostile), []string{hostile}},
		{jobPath + "?steps_path=" + url.QueryEscape(hostile) + "&steps_action=" + url.QueryEscape(hostile), []string{hostile}},
	} {
		resp, body := e.get(t, c.path, nil)
		if resp.StatusCode != 200 {
			t.Errorf("GET %s: %d", c.path, resp.StatusCode)
			continue
		}
		d := parseHTML(t, body)
		if bad := d.hostileMarkup(); bad != "" {
			t.Errorf("GET %s: %s came of a job's string", c.path, bad)
		}
		all := text(d.root)
		for _, s := range c.texts {
			if !strings.Contains(all, s) {
				t.Errorf("GET %s: the text %q does not read literally", c.path, s)
			}
		}
	}
	// The tree's SVG (the fragment the script swaps in).
	_, svg := e.get(t, jobPath+"/tree.svg", nil)
	if strings.Contains(svg, "<img") || strings.Contains(svg, "<script") || strings.Contains(svg, "<i>") {
		t.Errorf("tree.svg holds markup of the job's strings:\n%s", svg)
	}
	// A workflow checked on /new: the text area and the problems.
	bad := `{"version":1,"root":{"act":"ok","` + hostile + `":1}}`
	resp, body = e.postForm(t, "/new", url.Values{"workflow": {bad}, "do": {"check"}}, nil)
	if resp.StatusCode != http.StatusUnprocessableEntity {
		t.Errorf("POST /new with a bad workflow: %d", resp.StatusCode)
	}
	d := parseHTML(t, body)
	if m := d.hostileMarkup(); m != "" {
		t.Errorf("POST /new: %s came of the workflow", m)
	}
	if got := text(d.byID("workflow")); got != bad {
		t.Errorf("POST /new: the workflow reads %q", got)
	}
	if ps := text(d.byID("problems")); !strings.Contains(ps, hostile) {
		t.Errorf("POST /new: the problems %q do not name the field literally", ps)
	}
}

// TestBigJobPage: a job of 100,000 actions opens with its groups closed
// and at most 2,000 boxes drawn, every node counted once; the tree.svg
// fragment opens a group, still within the bound.
func TestBigJobPage(t *testing.T) {
	seqs := make([]ast.Node, 1000)
	for i := range seqs {
		acts := make([]ast.Node, 100)
		for k := range acts {
			acts[k] = ast.Act("echo", k)
		}
		seqs[i] = ast.Seq(acts...)
	}
	tr, err := job.New("big", ast.Par(seqs...))
	if err != nil {
		t.Fatal(err)
	}
	st := store.NewMemory()
	t.Cleanup(func() { st.Close() })
	if err := st.Create(t.Context(), tr.Job); err != nil {
		t.Fatal(err)
	}
	h, err := server.New(server.Options{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(checkAPI(t, h))
	t.Cleanup(ts.Close)
	e := &pageEnv{st: st, url: ts.URL, srv: ts}
	boxes := func(what, body string) (int, []*html.Node) {
		d := parseHTML(t, body)
		nodes := d.all(func(n *html.Node) bool { return n.Data == "g" && hasClass(n, "node") })
		var groups []*html.Node
		for _, n := range nodes {
			if hasClass(n, "group") {
				groups = append(groups, n)
			}
		}
		if len(nodes) > 2000 {
			t.Errorf("%s: %d boxes drawn", what, len(nodes))
		}
		return len(nodes), groups
	}
	resp, body := e.get(t, "/jobs/big", nil)
	if resp.StatusCode != 200 {
		t.Fatalf("GET /jobs/big: %d", resp.StatusCode)
	}
	n, groups := boxes("/jobs/big", body)
	if n != 1 || len(groups) != 1 || attrOf(groups[0], "data-group") != "1000" {
		t.Errorf("/jobs/big: %d boxes, groups %d", n, len(groups))
	}
	d := parseHTML(t, body)
	if attrOf(d.byID("tree"), "data-nodes") != "101001" {
		t.Errorf("the tree counts %s nodes", attrOf(d.byID("tree"), "data-nodes"))
	}
	// Open the root (its path is "": the parameter is ","): 1,000 seqs of
	// 100 actions would be 101,001 boxes; the bound keeps it to 2,000.
	for _, path := range []string{"/jobs/big?expand=%2C", "/jobs/big/tree.svg?expand=%2C"} {
		resp, body := e.get(t, path, nil)
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s: %d", path, resp.StatusCode)
		}
		if strings.HasSuffix(path, ".svg") {
			body = "<!doctype html><body>" + body
		}
		n, groups := boxes(path, body)
		if n < 1000 || len(groups) == 0 {
			t.Errorf("%s: %d boxes, %d groups", path, n, len(groups))
		}
	}
}

// TestPagesScopes: a read token sees the pages without the cancel form
// or the submit button; a write token has both; the pages answer a
// bearer token as the API does.
func TestPagesScopes(t *testing.T) {
	e := newPageEnv(t, func(o *server.Options) { o.Tokens = pageTokens(t) })
	if _, _, err := e.client.Submit(t.Context(), "s", []byte(`{"version":1,"root":{"act":"block"}}`)); err != nil {
		t.Fatal(err)
	}
	read := map[string]string{"Authorization": "Bearer " + pageReadToken}
	write := map[string]string{"Authorization": "Bearer " + pageWriteToken}
	for _, c := range []struct {
		headers map[string]string
		write   bool
	}{{read, false}, {write, true}} {
		_, body := e.get(t, "/jobs/s", c.headers)
		d := parseHTML(t, body)
		if (d.byID("cancel-form") != nil) != c.write || (d.byID("cancel") != nil) != c.write {
			t.Errorf("write %v: the cancel form shown %v", c.write, d.byID("cancel-form") != nil)
		}
		if form := d.byID("cancel-form"); form != nil && (attrOf(form, "method") != "post" || attrOf(form, "action") != "/jobs/s/cancel") {
			t.Errorf("the cancel form: %v", form.Attr)
		}
		_, body = e.get(t, "/new", c.headers)
		if d := parseHTML(t, body); (d.byID("submit") != nil) != c.write || d.byID("workflow") == nil || d.byID("problems") == nil || d.byID("preview") == nil || d.byID("job-id") == nil {
			t.Errorf("write %v: /new: %s", c.write, body)
		}
		if resp, _ := e.get(t, "/workers", c.headers); resp.StatusCode != 200 {
			t.Errorf("/workers: %d", resp.StatusCode)
		}
	}
	if resp, _ := e.get(t, "/jobs/s", map[string]string{"Authorization": "Bearer wrong-token-0123456789"}); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("a page with an unknown token: %d", resp.StatusCode)
	}
	if resp, _ := e.postForm(t, "/jobs/s/cancel", url.Values{"reason": {"r"}}, read); resp.StatusCode != http.StatusForbidden {
		t.Errorf("the cancel form with a read token: %d", resp.StatusCode)
	}
	if resp, _ := e.postForm(t, "/new", url.Values{"workflow": {`{"version":1,"root":{"act":"echo"}}`}, "do": {"submit"}, "id": {"n"}}, read); resp.StatusCode != http.StatusForbidden {
		t.Errorf("a submit with a read token: %d", resp.StatusCode)
	}
	if resp, _ := e.postForm(t, "/jobs/s/cancel", url.Values{"reason": {"r"}}, write); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("the cancel form with a write token: %d", resp.StatusCode)
	}
	// Settled now (cancelled): no cancel form for anyone.
	for {
		j, err := e.client.Job(t.Context(), "s", client.JobQuery{NoNodes: true})
		if err != nil {
			t.Fatal(err)
		}
		if j.Status == "cancelled" {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	_, body := e.get(t, "/jobs/s", write)
	if d := parseHTML(t, body); d.byID("cancel-form") != nil || attrOf(d.byID("job"), "data-live") != "false" || !strings.Contains(text(d.byID("cancel-reason")), "r") {
		t.Errorf("a cancelled job's page: %s", body)
	}
}

// TestListPage: the list's rows carry data-job and data-status as the
// API's listing does; counts per status link to the filtered list;
// filters stay in the URL; pages of 100 link to the next.
func TestListPage(t *testing.T) {
	e := newPageEnv(t, nil)
	ids := []job.ID{}
	for i := range 230 {
		id := job.ID(fmt.Sprintf("j%03d", i))
		flow := `{"version":1,"root":{"act":"echo"}}`
		if i%10 == 0 {
			flow = `{"version":1,"root":{"act":"fail","payload":"no"}}`
		}
		if _, _, err := e.client.Submit(t.Context(), id, []byte(flow)); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	for _, id := range ids {
		for {
			j, err := e.client.Job(t.Context(), id, client.JobQuery{NoNodes: true})
			if err != nil {
				t.Fatal(err)
			}
			if j.Status != "running" {
				break
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
	rows := func(path string) ([]*html.Node, htmlDoc) {
		resp, body := e.get(t, path, nil)
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s: %d", path, resp.StatusCode)
		}
		d := parseHTML(t, body)
		return within(d.byID("jobs"), func(n *html.Node) bool { return n.Data == "tr" && attrOf(n, "data-job") != "" }), d
	}
	var seen []string
	next := "/"
	for pages := 0; next != ""; pages++ {
		if pages > 3 {
			t.Fatal("more pages than 230 jobs make")
		}
		rs, d := rows(next)
		for _, r := range rs {
			seen = append(seen, attrOf(r, "data-job"))
			want := "succeeded"
			if n, _ := strconv.Atoi(attrOf(r, "data-job")[1:]); n%10 == 0 {
				want = "failed"
				if !strings.Contains(text(r), "no") {
					t.Errorf("row %s: no failure shown: %q", attrOf(r, "data-job"), text(r))
				}
			}
			if attrOf(r, "data-status") != want {
				t.Errorf("row %s: %s, want %s", attrOf(r, "data-job"), attrOf(r, "data-status"), want)
			}
		}
		if len(rs) > 100 {
			t.Errorf("page %d has %d rows", pages, len(rs))
		}
		next = attrOf(d.byID("next-page"), "href")
	}
	if len(seen) != 230 || !slices.IsSorted(seen) || slices.Compact(slices.Clone(seen)) == nil || len(slices.Compact(slices.Clone(seen))) != 230 {
		t.Errorf("listed %d jobs, sorted %v", len(seen), slices.IsSorted(seen))
	}
	_, d := rows("/")
	counts := map[string]string{}
	for _, a := range within(d.byID("counts"), func(n *html.Node) bool { return n.Data == "a" && hasClass(n, "count") }) {
		counts[attrOf(a, "data-status")] = attrOf(a, "href")
		n := within(a, func(n *html.Node) bool { return hasClass(n, "n") })
		want := map[string]string{"failed": "23", "succeeded": "207"}[attrOf(a, "data-status")]
		if want == "" {
			want = "0"
		}
		if len(n) != 1 || attrOf(n[0], "data-count") != want {
			t.Errorf("count of %s: %v, want %s", attrOf(a, "data-status"), n, want)
		}
	}
	if counts["failed"] != "/?status=failed" {
		t.Errorf("the failed count links to %q", counts["failed"])
	}
	rs, d := rows("/?status=failed&prefix=j1")
	if len(rs) != 10 || attrOf(d.byID("filter-prefix"), "value") != "j1" || d.byID("next-page") != nil {
		t.Errorf("filtered: %d rows", len(rs))
	}
	for _, r := range rs {
		if attrOf(r, "data-status") != "failed" || !strings.HasPrefix(attrOf(r, "data-job"), "j1") {
			t.Errorf("filtered row %v", r.Attr)
		}
	}
}

// TestNewPage: /new checks a workflow without the script (problems at
// their paths, or a preview of the tree) and submits it (to the job's
// page), or says why not.
func TestNewPage(t *testing.T) {
	e := newPageEnv(t, nil)
	resp, body := e.postForm(t, "/new", url.Values{"workflow": {`{"version":1,"root":{"seq":[{"act":""},{"par":5}]}}`}, "do": {"check"}}, nil)
	d := parseHTML(t, body)
	ps := within(d.byID("problems"), func(n *html.Node) bool { return n.Data == "li" })
	if resp.StatusCode != 422 || len(ps) != 2 || attrOf(ps[0], "data-problem-path") != "seq[0]" || attrOf(ps[1], "data-problem-path") != "seq[1]" {
		t.Errorf("an invalid workflow: %d %d problems: %s", resp.StatusCode, len(ps), text(d.byID("problems")))
	}
	good := `{"version":1,"root":{"seq":[{"act":"echo","payload":1},{"act":"nobody"}]}}`
	resp, body = e.postForm(t, "/new", url.Values{"workflow": {good}, "do": {"check"}}, nil)
	d = parseHTML(t, body)
	drawn := within(d.byID("preview"), func(n *html.Node) bool { return n.Data == "g" && hasClass(n, "node") })
	if resp.StatusCode != 200 || len(drawn) != 3 || !strings.Contains(text(d.byID("unknown-actions")), "nobody") {
		t.Errorf("a valid workflow: %d, %d boxes, unknown %q", resp.StatusCode, len(drawn), text(d.byID("unknown-actions")))
	}
	// Submitting one with an action no worker runs: refused, nothing made.
	resp, _ = e.postForm(t, "/new", url.Values{"workflow": {good}, "do": {"submit"}, "id": {"n1"}}, nil)
	if _, err := e.st.Load(t.Context(), "n1"); resp.StatusCode != 422 || err == nil {
		t.Errorf("a submit of an unknown action: %d, stored %v", resp.StatusCode, err == nil)
	}
	resp, _ = e.postForm(t, "/new", url.Values{"workflow": {`{"version":1,"root":{"act":"echo","payload":1}}`}, "do": {"submit"}, "id": {"n2"}}, nil)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/jobs/n2" {
		t.Fatalf("a submit: %d %v", resp.StatusCode, resp.Header)
	}
	if _, err := e.st.Load(t.Context(), "n2"); err != nil {
		t.Errorf("the submitted job: %v", err)
	}
	// The same again is a retry; another workflow under that ID a conflict.
	if resp, _ := e.postForm(t, "/new", url.Values{"workflow": {`{"version":1,"root":{"act":"echo","payload":1}}`}, "do": {"submit"}, "id": {"n2"}}, nil); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("a retry: %d", resp.StatusCode)
	}
	resp, body = e.postForm(t, "/new", url.Values{"workflow": {`{"version":1,"root":{"act":"echo","payload":2}}`}, "do": {"submit"}, "id": {"n2"}}, nil)
	if resp.StatusCode != http.StatusConflict || !strings.Contains(text(parseHTML(t, body).byID("check-result")), "n2") {
		t.Errorf("a conflict: %d", resp.StatusCode)
	}
	resp, _ = e.postForm(t, "/new", url.Values{"workflow": {`{"version":1,"root":{"act":"echo"}}`}, "do": {"submit"}, "id": {"a b"}}, nil)
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a bad ID: %d", resp.StatusCode)
	}
	// Without an ID the server names the job.
	resp, _ = e.postForm(t, "/new", url.Values{"workflow": {`{"version":1,"root":{"act":"echo"}}`}, "do": {"submit"}}, nil)
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), "/jobs/job-") {
		t.Errorf("a submit without an ID: %d %v", resp.StatusCode, resp.Header)
	}
}

// TestWorkersPage: the workers' table and the actions, as the API lists
// them.
func TestWorkersPage(t *testing.T) {
	e := newPageEnv(t, nil)
	_, body := e.get(t, "/workers", nil)
	d := parseHTML(t, body)
	rows := within(d.byID("workers"), func(n *html.Node) bool { return n.Data == "tr" && attrOf(n, "data-worker") != "" })
	if len(rows) != 1 || attrOf(rows[0], "data-worker") != "local" {
		t.Errorf("workers: %s", body)
	}
	acts := within(d.byID("actions"), func(n *html.Node) bool { return n.Data == "li" })
	if len(acts) != 5 {
		t.Errorf("%d actions listed", len(acts))
	}
}

// TestUnstampedTimeline: a job whose results carry no time stamps (as
// format 1 wrote them) has its timeline drawn in version order, and the
// page says so; the bars still go from dispatch to result.
func TestUnstampedTimeline(t *testing.T) {
	st := store.NewMemory()
	t.Cleanup(func() { st.Close() })
	tr, err := job.New("old", ast.Seq(ast.Act("a", 1), ast.Act("b", 2)))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Create(t.Context(), tr.Job); err != nil {
		t.Fatal(err)
	}
	j, acts := tr.Job, tr.Actions
	for len(acts) > 0 {
		next, err := job.Restart(j, []job.Result{{JobID: "old", ActionID: acts[0].ID, Output: []byte("1")}})
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Save(t.Context(), next.Job, next.Step); err != nil {
			t.Fatal(err)
		}
		j, acts = next.Job, next.Actions
	}
	h, err := server.New(server.Options{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(checkAPI(t, h))
	t.Cleanup(ts.Close)
	e := &pageEnv{st: st, url: ts.URL, srv: ts}
	_, body := e.get(t, "/jobs/old", nil)
	d := parseHTML(t, body)
	tl := d.byID("timeline")
	bars := within(tl, func(n *html.Node) bool { return hasClass(n, "bar") })
	if attrOf(tl, "data-axis") != "version" || !strings.Contains(text(tl), "version order") || len(bars) != 2 {
		t.Fatalf("the timeline of an unstamped job: %s", text(tl))
	}
	if attrOf(bars[0], "data-version") != "1" || attrOf(bars[0], "data-applied") != "2" || attrOf(bars[1], "data-version") != "2" || attrOf(bars[1], "data-applied") != "3" {
		t.Errorf("bars %v %v", bars[0].Attr, bars[1].Attr)
	}
}

// TestPagesDoc: docs/pages.md names every page, and the palette it
// gives is baton.css's, as custom properties on :root.
func TestPagesDoc(t *testing.T) {
	b, err := os.ReadFile("../docs/pages.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for _, p := range server.Pages() {
		path := strings.TrimSuffix(p.Pattern, "{$}")
		if strings.HasPrefix(path, "/static/") {
			path = "/static/"
		}
		if !strings.Contains(doc, path) {
			t.Errorf("docs/pages.md does not name %s", path)
		}
	}
	css, err := os.ReadFile("web/static/baton.css")
	if err != nil {
		t.Fatal(err)
	}
	root := string(css)[strings.Index(string(css), ":root {"):]
	root = root[:strings.Index(root, "}")]
	for _, c := range []struct{ name, colour string }{
		{"succeeded", "#009E73"}, {"failed", "#D55E00"}, {"running", "#0072B2"}, {"cancelled", "#8C8C8C"}, {"idle", "#FFFFFF"},
	} {
		prop := "--baton-" + c.name
		if !strings.Contains(root, prop+": "+c.colour+";") {
			t.Errorf("baton.css's :root lacks %s: %s", prop, c.colour)
		}
		if !strings.Contains(doc, "`"+prop+"` | `"+c.colour+"`") {
			t.Errorf("docs/pages.md's palette lacks %s %s", prop, c.colour)
		}
		if c.name != "idle" && !strings.Contains(string(css), ".baton-graph .node[data-status="+c.name+"] .state { background: var("+prop+")") {
			t.Errorf("baton.css does not colour a %s node's band from its data-status", c.name)
		}
	}
}
