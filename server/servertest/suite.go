package servertest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/batonwf/baton/api"
	"github.com/batonwf/baton/client"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/server"
	"github.com/batonwf/baton/store"
)

func testSubmit(t *testing.T, cfg Config) {
	e := NewEnv(t, cfg, nil)
	ctx := ctxOf(t)
	a := e.Do(t, "POST", "/api/v1/jobs?id=hello", nil, okFlow)
	if a.Status != http.StatusCreated || a.Header.Get("Location") != "/api/v1/jobs/hello" {
		t.Fatalf("submit: %d, Location %q: %s", a.Status, a.Header.Get("Location"), a.Body)
	}
	var sum api.Summary
	if err := json.Unmarshal(a.Body, &sum); err != nil || sum.ID != "hello" || sum.Version < 1 || sum.Total != 2 {
		t.Fatalf("submit answered %s (%v)", a.Body, err)
	}
	j := e.Settled(t, "hello")
	if j.Status != "succeeded" || j.Settled != 2 || len(j.Nodes) != 3 || j.Nodes[0].Path != "" || j.Nodes[1].Path != "seq[0]" || j.Nodes[2].Output != "2" {
		t.Fatalf("job: %+v", j)
	}
	if j.Outstanding == nil || *j.Outstanding != 0 || j.Updated == nil {
		t.Errorf("summary lacks outstanding or updated: %+v", j.Summary)
	}
	if n, err := e.Reader.Job(ctx, "hello", client.JobQuery{NoNodes: true}); err != nil || n.Nodes != nil || n.Status != "succeeded" {
		t.Errorf("nodes=false: %+v, %v", n, err)
	}
	n, err := e.Reader.Node(ctx, "hello", "seq[1]")
	if err != nil || n.Action != "ok" || n.Output != "2" || n.Payload != "2" || n.Status != "succeeded" || n.Attempt != 1 {
		t.Errorf("node seq[1]: %+v, %v", n, err)
	}
	// The server names a job it is not given a name for.
	sum, created, err := e.Client.Submit(ctx, "", []byte(failFlow))
	if err != nil || !created || !strings.HasPrefix(sum.ID, "job-") {
		t.Fatalf("submit without id: %+v, %v, %v", sum, created, err)
	}
	f := e.Settled(t, job.ID(sum.ID))
	if f.Status != "failed" || f.Failure == nil || f.Failure.Path != "seq[1]" || f.Failure.Action != "fail" || f.Failure.Message != "boom" {
		t.Errorf("failed job: %+v", f.Summary)
	}
	// Clipping: 300 bytes of output are 200 in the list, all in the node.
	e.Submit(t, "big", bigFlow)
	b := e.Settled(t, "big")
	if !b.Nodes[0].Clipped || len(b.Nodes[0].Output) != api.ClipBytes {
		t.Errorf("big output in the job: clipped %v, %d bytes", b.Nodes[0].Clipped, len(b.Nodes[0].Output))
	}
	if n, err := e.Reader.Node(ctx, "big", ""); err != nil || n.Clipped || len(n.Output) != 300 {
		t.Errorf("big node: clipped %v, %d bytes, %v", n.Clipped, len(n.Output), err)
	}
	// The drawings.
	for format, want := range map[string]string{"dot": "digraph", "mermaid": "flowchart TD", "svg": "<svg"} {
		g, err := e.Reader.Graph(ctx, "hello", format)
		if err != nil || !strings.Contains(g, want) {
			t.Errorf("graph %s: %v\n%s", format, err, g)
		}
	}
	// The history: the creation, then each step with its results, each
	// naming the worker that ran it.
	h, err := e.Reader.History(ctx, "hello", 0, 0, 0)
	if err != nil || len(h.Steps) < 2 || !h.Steps[0].Created || h.Steps[0].Version != 1 || h.Latest != j.Version || h.Status != "succeeded" {
		t.Fatalf("history: %+v, %v", h, err)
	}
	results := 0
	for _, st := range h.Steps[1:] {
		for _, r := range st.Results {
			if !r.OK || r.Action != "ok" {
				t.Errorf("result %+v", r)
			}
			if r.Worker == "" {
				t.Errorf("result %s names no worker: %+v", r.ActionID, r)
			}
			results++
		}
	}
	if results != 2 {
		t.Errorf("history has %d results, want 2: %+v", results, h)
	}
	if strings.Contains(e.Logs(), `"payload"`) || !strings.Contains(e.Logs(), "route=\"POST /api/v1/jobs\"") || !strings.Contains(e.Logs(), "job_id=hello") {
		t.Errorf("log lines lack the route or job, or hold a body:\n%s", e.Logs())
	}
}

func testResubmit(t *testing.T, cfg Config) {
	e := NewEnv(t, cfg, nil)
	e.Submit(t, "r", okFlow)
	e.Settled(t, "r")
	e.Unchanged(t, func() {
		// The same ID and workflow: a safe retry, nothing new.
		a := e.Do(t, "POST", "/api/v1/jobs?id=r", nil, okFlow)
		if a.Status != http.StatusOK || !strings.Contains(string(a.Body), `"id":"r"`) {
			t.Errorf("retry: %d %s", a.Status, a.Body)
		}
		// The same workflow spelled otherwise is the same workflow.
		a = e.Do(t, "POST", "/api/v1/jobs?id=r", nil, strings.ReplaceAll(okFlow, ",", " ,\n"))
		if a.Status != http.StatusOK {
			t.Errorf("retry, respaced: %d %s", a.Status, a.Body)
		}
		// Another workflow: a conflict.
		p := e.Do(t, "POST", "/api/v1/jobs?id=r", nil, okFlow2).Problem(t, 409, server.CodeJobExists)
		if p.JobID != "r" {
			t.Errorf("job_exists names job %q", p.JobID)
		}
	})
}

func testCancel(t *testing.T, cfg Config) {
	e := NewEnv(t, cfg, nil)
	ctx := ctxOf(t)
	e.Submit(t, "c", blockFlow)
	e.Running(t, "c", "body")
	// Running is dispatched: wait for the handler itself, or a cancel
	// saved before a worker took the action stops it before it runs
	// (seen on Kafka under load), and no context is ever cancelled.
	for ctx := ctxOf(t); e.acts.started.Load() == 0; {
		select {
		case <-ctx.Done():
			t.Fatal("the block action never started")
		case <-time.After(10 * time.Millisecond):
		}
	}
	a := e.Do(t, "POST", "/api/v1/jobs/c/cancel", nil, `{"reason":"not needed"}`)
	if a.Status != http.StatusAccepted || !strings.Contains(string(a.Body), `"reason":"not needed"`) {
		t.Fatalf("cancel: %d %s", a.Status, a.Body)
	}
	// Again, with no body at all (curl -X POST): 202, the first reason kept.
	if a := e.Do(t, "POST", "/api/v1/jobs/c/cancel", nil, ""); a.Status != http.StatusAccepted || !strings.Contains(string(a.Body), `"reason":"not needed"`) {
		t.Errorf("cancel without a body: %d %s", a.Status, a.Body)
	}
	if sum, err := e.Client.Cancel(ctx, "c", "second"); err != nil || sum.Cancel == nil || sum.Cancel.Reason != "not needed" {
		t.Errorf("second cancel: %+v, %v", sum, err)
	}
	j := e.Settled(t, "c")
	// The action that ran had its context cancelled.
	for ctx := ctxOf(t); e.acts.stopped.Load() == 0; {
		select {
		case <-ctx.Done():
			t.Fatal("the running action's context was never cancelled")
		case <-time.After(10 * time.Millisecond):
		}
	}
	if j.Status != "cancelled" || j.Cancel == nil || j.Cancel.Reason != "not needed" {
		t.Fatalf("cancelled job: %+v", j.Summary)
	}
	for _, n := range j.Nodes {
		if n.Path == "finally" && n.Status != "succeeded" {
			t.Errorf("the finally block did not run: %+v", n)
		}
	}
	h, err := e.Reader.History(ctx, "c", 0, 0, 0)
	found := false
	for _, st := range h.Steps {
		found = found || (st.Cancel != nil && st.Cancel.Reason == "not needed")
	}
	if err != nil || !found {
		t.Errorf("the history has no cancel with its reason: %+v, %v", h, err)
	}
	// A job that ended cancelled takes a cancel again; one that ended
	// otherwise does not.
	if sum, err := e.Client.Cancel(ctx, "c", "late"); err != nil || sum.Cancel.Reason != "not needed" {
		t.Errorf("cancel after the end: %+v, %v", sum, err)
	}
	e.Submit(t, "done", okFlow)
	e.Settled(t, "done")
	e.Unchanged(t, func() {
		e.Do(t, "POST", "/api/v1/jobs/done/cancel", nil, `{"reason":"late"}`).Problem(t, 409, server.CodeJobFinished)
		e.Do(t, "POST", "/api/v1/jobs/nope/cancel", nil, `{"reason":"x"}`).Problem(t, 404, server.CodeJobNotFound)
	})
}

func testDelete(t *testing.T, cfg Config) {
	e := NewEnv(t, cfg, nil)
	ctx := ctxOf(t)
	e.Submit(t, "d", blockFlow)
	e.Running(t, "d", "body")
	e.Unchanged(t, func() {
		e.Do(t, "DELETE", "/api/v1/jobs/d", nil, "").Problem(t, 409, server.CodeJobRunning)
	})
	if _, err := e.Client.Cancel(ctx, "d", "to delete it"); err != nil {
		t.Fatal(err)
	}
	e.Settled(t, "d")
	if a := e.Do(t, "DELETE", "/api/v1/jobs/d", nil, ""); a.Status != http.StatusNoContent || len(a.Body) != 0 {
		t.Fatalf("delete: %d %s", a.Status, a.Body)
	}
	if _, err := e.Reader.Job(ctx, "d", client.JobQuery{}); client.Code(err) != "job_not_found" {
		t.Errorf("after delete: %v", err)
	}
	e.Do(t, "DELETE", "/api/v1/jobs/d", nil, "").Problem(t, 404, server.CodeJobNotFound)
}

func testVersions(t *testing.T, cfg Config) {
	e := NewEnv(t, cfg, nil)
	ctx := ctxOf(t)
	e.Submit(t, "v", failFlow)
	last := e.Settled(t, "v")
	h, err := store.LoadHistory(ctx, e.Store, "v")
	if err != nil {
		t.Fatal(err)
	}
	for v := uint64(1); v <= last.Version; v++ {
		want, err := h.At(v)
		if err != nil {
			t.Fatal(err)
		}
		got, err := e.Reader.Job(ctx, "v", client.JobQuery{Version: v})
		if err != nil {
			t.Fatalf("version %d: %v", v, err)
		}
		wb, _ := json.Marshal(api.JobOf(want, true))
		gb, _ := json.Marshal(got)
		if string(wb) != string(gb) {
			t.Errorf("version %d:\n got %s\nwant %s", v, gb, wb)
		}
	}
	e.Do(t, "GET", fmt.Sprintf("/api/v1/jobs/v?version=%d", last.Version+1), nil, "").Problem(t, 404, server.CodeVersionNotFound)
	e.Do(t, "GET", "/api/v1/jobs/v?version=0", nil, "").Problem(t, 400, server.CodeBadQuery)
	e.Do(t, "GET", "/api/v1/jobs/v/node?path=seq[9]", nil, "").Problem(t, 404, server.CodeNodeNotFound)
}

func testList(t *testing.T, cfg Config) {
	e := NewEnv(t, cfg, nil)
	ctx := ctxOf(t)
	const n = 25
	for i := range n {
		flow := okFlow
		if i%5 == 0 {
			flow = failFlow
		}
		e.Submit(t, job.ID(fmt.Sprintf("l-%02d", i)), flow)
	}
	e.Submit(t, "other", okFlow)
	for i := range n {
		e.Settled(t, job.ID(fmt.Sprintf("l-%02d", i)))
	}
	// Page by page, while more jobs are submitted: each listed once, in order.
	seen := map[string]int{}
	var after job.ID
	var order []string
	for pages := 0; ; pages++ {
		page, err := e.Reader.List(ctx, client.ListQuery{Prefix: "l-", Limit: 7, After: after})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Jobs) > 7 {
			t.Fatalf("page of %d jobs, limit 7", len(page.Jobs))
		}
		for _, s := range page.Jobs {
			seen[s.ID]++
			order = append(order, s.ID)
		}
		if pages == 1 {
			e.Submit(t, "l-99", okFlow)
		}
		if page.Next == "" {
			break
		}
		after = job.ID(page.Next)
	}
	if len(seen) != n+1 || len(order) != n+1 {
		t.Errorf("listed %d jobs (%d distinct), want %d: %v", len(order), len(seen), n+1, order)
	}
	for i := 1; i < len(order); i++ {
		if order[i] <= order[i-1] {
			t.Errorf("not sorted: %v", order)
		}
	}
	failed, err := e.Reader.List(ctx, client.ListQuery{Status: "failed"})
	if err != nil || len(failed.Jobs) != 5 || failed.Next != "" {
		t.Errorf("status=failed: %+v, %v", failed, err)
	}
	for _, s := range failed.Jobs {
		if s.Status != "failed" || s.Total != 2 {
			t.Errorf("listed %+v", s)
		}
	}
	two, err := e.Reader.List(ctx, client.ListQuery{Status: "failed", Limit: 2})
	if err != nil || len(two.Jobs) != 2 || two.Next != two.Jobs[1].ID {
		t.Errorf("status=failed, limit 2: %+v, %v", two, err)
	}
	all, err := e.Reader.List(ctx, client.ListQuery{})
	if err != nil || len(all.Jobs) != n+2 {
		t.Errorf("all jobs: %d, %v", len(all.Jobs), err)
	}
	if a := e.Do(t, "GET", "/api/v1/jobs", nil, ""); strings.Contains(string(a.Body), `"nodes"`) {
		t.Errorf("a listing carries trees: %s", a.Body)
	}
}

func testLongPoll(t *testing.T, cfg Config) {
	e := NewEnv(t, cfg, nil)
	ctx := ctxOf(t)
	e.Submit(t, "p", blockFlow)
	j := e.Running(t, "p", "body")
	done := make(chan api.History, 1)
	errs := make(chan error, 1)
	go func() {
		h, err := e.Reader.History(ctx, "p", j.Version, 0, 20*time.Second)
		if err != nil {
			errs <- err
			return
		}
		done <- h
	}()
	if _, err := e.Client.Cancel(ctx, "p", "wake the poll"); err != nil {
		t.Fatal(err)
	}
	select {
	case h := <-done:
		if len(h.Steps) == 0 || h.Steps[0].Version != j.Version+1 {
			t.Errorf("long poll from v%d: %+v", j.Version, h)
		}
	case err := <-errs:
		t.Fatal(err)
	case <-ctx.Done():
		t.Fatal("the long poll never returned")
	}
	// A settled job: a poll past its end waits out its time and returns
	// no step.
	e.Settled(t, "p")
	h, err := e.Reader.History(ctx, "p", 1000, 0, 50*time.Millisecond)
	if err != nil || len(h.Steps) != 0 {
		t.Errorf("poll past the end: %+v, %v", h, err)
	}
}

func testValidate(t *testing.T, cfg Config) {
	e := NewEnv(t, cfg, nil)
	ctx := ctxOf(t)
	e.Unchanged(t, func() {
		v, err := e.Reader.Validate(ctx, []byte(`{"version":1,"root":{"seq":[{"act":"ok"}, {"act":"nobody"}]}}`))
		if err != nil || len(v.Nodes) != 3 || !v.Known || len(v.Unknown) != 1 || v.Unknown[0] != "nobody" {
			t.Errorf("validate: %+v, %v", v, err)
		}
		if b, _ := json.Marshal(v.Workflow); !strings.Contains(string(b), `"seq"`) {
			t.Errorf("normalized workflow: %s", b)
		}
		p := e.Do(t, "POST", "/api/v1/workflows/validate", nil, `{"version":1,"root":{"seq":[{"bad":1},{"act":"ok","zzz":2}]}}`).
			Problem(t, 422, server.CodeInvalidWorkflow)
		if len(p.Problems) != 2 || p.Problems[0].Path != "seq[0]" || p.Problems[1].Path != "seq[1]" {
			t.Errorf("problems: %+v", p.Problems)
		}
	})
	a, err := e.Reader.Actions(ctx)
	if err != nil || !a.Known || strings.Join(a.Actions, ",") != "big,block,fail,gate,ok" {
		t.Errorf("actions: %+v, %v", a, err)
	}
	w, err := e.Reader.Workers(ctx)
	if err != nil || w.Workers == nil {
		t.Fatalf("workers: %+v, %v", w, err)
	}
	if w.Known {
		ok := false
		for _, wk := range w.Workers {
			ok = ok || (wk.Name != "" && slices.Contains(wk.Actions, "block"))
		}
		if !ok {
			t.Errorf("no worker lists the suite's actions: %+v", w)
		}
	}
}

func testTooManyJobs(t *testing.T, cfg Config) {
	e := NewEnv(t, cfg, func(o *server.Options) { o.MaxUnfinished = 2 })
	e.Submit(t, "m1", blockFlow)
	e.Submit(t, "m2", blockFlow)
	e.Unchanged(t, func() {
		a := e.Do(t, "POST", "/api/v1/jobs?id=m3", nil, okFlow)
		a.Problem(t, 429, server.CodeTooManyJobs)
		if a.Header.Get("Retry-After") == "" {
			t.Error("429 without Retry-After")
		}
		if !strings.Contains(string(a.Body), "2 jobs are unfinished") {
			t.Errorf("429's detail does not count the jobs: %s", a.Body)
		}
		// A retry of a job that exists is no new job.
		if a := e.Do(t, "POST", "/api/v1/jobs?id=m1", nil, blockFlow); a.Status != http.StatusOK {
			t.Errorf("retry at the limit: %d %s", a.Status, a.Body)
		}
	})
	for _, id := range []job.ID{"m1", "m2"} {
		if _, err := e.Client.Cancel(ctxOf(t), id, "end"); err != nil {
			t.Fatal(err)
		}
	}

	// One job: the detail says so in the singular.
	one := NewEnv(t, cfg, func(o *server.Options) { o.MaxUnfinished = 1 })
	one.Submit(t, "s1", blockFlow)
	one.Unchanged(t, func() {
		a := one.Do(t, "POST", "/api/v1/jobs?id=s2", nil, okFlow)
		a.Problem(t, 429, server.CodeTooManyJobs)
		if !strings.Contains(string(a.Body), "1 job is unfinished") {
			t.Errorf("429's detail for one job: %s", a.Body)
		}
	})
	if _, err := one.Client.Cancel(ctxOf(t), "s1", "end"); err != nil {
		t.Fatal(err)
	}
}

func testRoutes(t *testing.T, cfg Config) {
	e := NewEnv(t, cfg, nil)
	e.Do(t, "GET", "/api/v1/nothing", nil, "").Problem(t, 404, server.CodeNotFound)
	e.Do(t, "GET", "/nothing", nil, "").Problem(t, 404, server.CodeNotFound)
	a := e.Do(t, "PUT", "/api/v1/jobs/x", nil, "")
	a.Problem(t, 405, server.CodeMethodNotAllowed)
	if allow := a.Header.Get("Allow"); !strings.Contains(allow, "GET") || !strings.Contains(allow, "DELETE") {
		t.Errorf("Allow: %q", allow)
	}
	for _, path := range []string{"/healthz", "/readyz", "/"} {
		a := e.Do(t, "GET", path, map[string]string{"Authorization": ""}, "")
		if a.Status != 200 {
			t.Errorf("GET %s: %d %s", path, a.Status, a.Body)
		}
	}
	if a := e.Do(t, "GET", "/", nil, ""); !strings.Contains(string(a.Body), "/api/v1/jobs") || a.Header.Get("Content-Security-Policy") == "" {
		t.Errorf("the page at /: %v %s", a.Header, a.Body)
	}
	if a := e.Do(t, "GET", "/api/v1/jobs", nil, ""); a.Header.Get("Cache-Control") != "no-store" || a.Header.Get("Content-Type") != "application/json" {
		t.Errorf("API headers: %v", a.Header)
	}
	// The request ID given is the one answered and logged.
	p := e.Do(t, "GET", "/api/v1/jobs/nope", map[string]string{"X-Request-Id": "req-42"}, "").Problem(t, 404, server.CodeJobNotFound)
	if p.RequestID != "req-42" || p.JobID != "nope" || !strings.Contains(e.Logs(), "request_id=req-42") {
		t.Errorf("request ID: %+v\n%s", p, e.Logs())
	}
}

func testAuth(t *testing.T, cfg Config) {
	e := NewEnv(t, cfg, nil)
	none := map[string]string{"Authorization": ""}
	e.Unchanged(t, func() {
		a := e.Do(t, "GET", "/api/v1/jobs", none, "")
		a.Problem(t, 401, server.CodeUnauthorized)
		if !strings.HasPrefix(a.Header.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("401 without WWW-Authenticate: %v", a.Header)
		}
		for _, tok := range []string{"wrong-token-0123456789", WriteToken[:len(WriteToken)-1], WriteToken + "x", "x" + ReadToken} {
			e.Do(t, "GET", "/api/v1/jobs", map[string]string{"Authorization": "Bearer " + tok}, "").Problem(t, 401, server.CodeUnauthorized)
		}
		e.Do(t, "GET", "/api/v1/jobs", map[string]string{"Authorization": "Basic " + WriteToken}, "").Problem(t, 401, server.CodeUnauthorized)
		e.Do(t, "GET", "/api/v1/jobs?access_token="+WriteToken, none, "").Problem(t, 401, server.CodeUnauthorized)
		e.Do(t, "POST", "/api/v1/jobs?id=a", map[string]string{"Authorization": "Bearer " + ReadToken}, okFlow).Problem(t, 403, server.CodeForbidden)
		if _, err := e.Reader.List(ctxOf(t), client.ListQuery{}); err != nil {
			t.Errorf("a read token cannot list: %v", err)
		}
		// 20 failures a minute, then 429 even with a good token.
		for range server.AuthFailures - 7 {
			e.Do(t, "GET", "/api/v1/jobs", none, "").Problem(t, 401, server.CodeUnauthorized)
		}
		a = e.Do(t, "GET", "/api/v1/jobs", nil, "")
		a.Problem(t, 429, server.CodeTooManyAuthFailures)
		if a.Header.Get("Retry-After") == "" {
			t.Error("429 without Retry-After")
		}
	})
	if n := strings.Count(e.Logs(), "blocked for failed authentications"); n != 1 {
		t.Errorf("%d log lines for the block, want 1:\n%s", n, e.Logs())
	}
	// The health routes need no token, even now.
	if a := e.Do(t, "GET", "/healthz", none, ""); a.Status != 200 {
		t.Errorf("healthz: %d", a.Status)
	}
}
