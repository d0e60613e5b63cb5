package server_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/batonwf/baton/api"
	"github.com/batonwf/baton/client"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	"github.com/batonwf/baton/server"
	"github.com/batonwf/baton/store"
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

func TestPagesSmoke(t *testing.T) {
	e := newPageEnv(t, nil)
	fail, _ := os.ReadFile("../examples/fail.json")
	e.settle(t, "f", string(fail))
	for _, p := range []string{"/", "/jobs/f", "/jobs/f?version=3&node=seq[1]", "/new", "/workers", "/login", "/jobs/f/tree.svg"} {
		resp, body := e.get(t, p, nil)
		t.Logf("%s: %d %v\n%s", p, resp.StatusCode, resp.Header, body)
	}
	_ = cookiejar.New
	_ = strings.Contains
}
