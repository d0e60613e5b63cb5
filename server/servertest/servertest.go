package servertest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batonwf/baton/api"
	"github.com/batonwf/baton/client"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	"github.com/batonwf/baton/server"
	"github.com/batonwf/baton/store"
)

// Open returns a store and a runner of reg's actions on it, running (its
// Run called), both closed by t.Cleanup. The runner is given to the
// server as Options.Runner: it should be a server.Submitter and a
// server.Canceller, and an ActionLister telling reg's names.
type Open func(t *testing.T, reg *runner.Registry) (st store.Store, r any)

// Config is what the suite runs on.
type Config struct {
	// Open makes each server's store and runner; required.
	Open Open
	// Wrap, when not nil, wraps the handler of every server the suite
	// starts, with the test that starts it: a middleware that records or
	// checks every request and answer (package server's tests check each
	// against the OpenAPI document). It must pass requests and answers
	// through unchanged.
	Wrap func(t *testing.T, h http.Handler) http.Handler
}

// The tokens of the suite's server.
const (
	WriteToken = "write-token-0123456789abcdef"
	ReadToken  = "read-token-0123456789abcdef"
)

// Workflows the suite submits.
const (
	okFlow    = `{"version":1,"root":{"seq":[{"act":"ok","payload":1},{"act":"ok","payload":2}]}}`
	okFlow2   = `{"version":1,"root":{"seq":[{"act":"ok","payload":1},{"act":"ok","payload":3}]}}`
	failFlow  = `{"version":1,"root":{"seq":[{"act":"ok","payload":1},{"act":"fail"}]}}`
	blockFlow = `{"version":1,"root":{"try":{"act":"block"},"finally":{"act":"ok","payload":"fin"}}}`
	bigFlow   = `{"version":1,"root":{"act":"big","payload":"` + "p" + `"}}`
)

// Env is a server under test: its store, its URL and clients.
type Env struct {
	Store store.Store
	URL   string
	// Client has the write token, Reader the read token.
	Client, Reader *client.Client
	logs           *logBuffer
	acts           *actions
}

// NewEnv serves the API on a store and runner from cfg.Open, with the
// suite's tokens and mod's changes to the options (mod may be nil), its
// handler wrapped by cfg.Wrap.
func NewEnv(t *testing.T, cfg Config, mod func(*server.Options)) *Env {
	t.Helper()
	acts := newActions()
	st, r := cfg.Open(t, acts.reg)
	tokens, err := server.ParseTokens([]byte("# the suite's\nwrite " + WriteToken + "\nread " + ReadToken + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	logs := &logBuffer{}
	o := server.Options{Store: st, Runner: r, Tokens: tokens, Logger: slog.New(slog.NewTextHandler(logs, nil)), PollInterval: 20 * time.Millisecond}
	if mod != nil {
		mod(&o)
	}
	h, err := server.New(o)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Wrap != nil {
		h = cfg.Wrap(t, h)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	t.Cleanup(func() {
		for _, tok := range []string{WriteToken, ReadToken} {
			if strings.Contains(logs.String(), tok) {
				t.Errorf("a token is in the server's log:\n%s", logs)
			}
		}
	})
	return &Env{
		Store: st, URL: ts.URL, logs: logs, acts: acts,
		Client: client.New(ts.URL, client.Options{HTTPClient: ts.Client(), Token: WriteToken}),
		Reader: client.New(ts.URL, client.Options{HTTPClient: ts.Client(), Token: ReadToken}),
	}
}

// Logs returns what the server logged.
func (e *Env) Logs() string { return e.logs.String() }

type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Answer is a raw HTTP answer.
type Answer struct {
	Status int
	Header http.Header
	Body   []byte
}

// Do sends a raw request with the write token (unless headers set
// Authorization, "" to send none).
func (e *Env) Do(t *testing.T, method, path string, headers map[string]string, body string) Answer {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctxOf(t), method, e.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+WriteToken)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range headers {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read: %v", method, path, err)
	}
	return Answer{resp.StatusCode, resp.Header, b}
}

// Problem checks that a is a problem with status and code, in the shape
// of RFC 9457 with baton's fields, and returns it.
func (a Answer) Problem(t *testing.T, status int, code server.Code) api.Problem {
	t.Helper()
	var p api.Problem
	if ct := a.Header.Get("Content-Type"); ct != "application/problem+json" {
		t.Errorf("Content-Type %q, want application/problem+json; body %s", ct, a.Body)
	}
	if err := json.Unmarshal(a.Body, &p); err != nil {
		t.Fatalf("answer %d is not JSON: %v\n%s", a.Status, err, a.Body)
	}
	if a.Status != status || p.Code != string(code) {
		t.Fatalf("answer %d %s, want %d %s: %s", a.Status, p.Code, status, code, a.Body)
	}
	if p.Status != status || p.Type != "urn:baton:problem:"+string(code) || p.Title == "" || p.Detail == "" || p.RequestID == "" {
		t.Errorf("problem lacks a field: %s", a.Body)
	}
	if strings.Contains(p.Detail, "\n") {
		t.Errorf("detail is more than one line: %q", p.Detail)
	}
	if a.Header.Get("X-Content-Type-Options") != "nosniff" || a.Header.Get("Referrer-Policy") != "no-referrer" {
		t.Errorf("security headers missing: %v", a.Header)
	}
	return p
}

// ctxOf is a context that ends with the test's deadline.
func ctxOf(t *testing.T) context.Context {
	ctx := t.Context()
	if d, ok := t.Deadline(); ok {
		c, cancel := context.WithDeadline(ctx, d.Add(-5*time.Second))
		t.Cleanup(cancel)
		return c
	}
	return ctx
}

// Contents is what the store holds: every job's ID and version, to check
// that a refused request changed nothing.
func (e *Env) Contents(t *testing.T) string {
	t.Helper()
	infos, err := store.List(ctxOf(t), e.Store, store.Query{})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, in := range infos {
		fmt.Fprintf(&b, "%s@%d ", in.ID, in.Version)
	}
	return b.String()
}

// Unchanged runs f and checks that the store holds the same afterwards.
func (e *Env) Unchanged(t *testing.T, f func()) {
	t.Helper()
	before := e.Contents(t)
	f()
	if after := e.Contents(t); after != before {
		t.Errorf("the store changed:\nbefore %s\nafter  %s", before, after)
	}
}

// Submit submits workflow as id and fails the test on an error.
func (e *Env) Submit(t *testing.T, id job.ID, workflow string) api.Summary {
	t.Helper()
	sum, created, err := e.Client.Submit(ctxOf(t), id, []byte(workflow))
	if err != nil || !created {
		t.Fatalf("submit %s: created %v, %v", id, created, err)
	}
	return sum
}

// WaitFor polls job id until cond holds, failing the test at its deadline.
func (e *Env) WaitFor(t *testing.T, id job.ID, what string, cond func(api.Job) bool) api.Job {
	t.Helper()
	ctx := ctxOf(t)
	for {
		j, err := e.Reader.Job(ctx, id, client.JobQuery{})
		if err == nil && cond(j) {
			return j
		}
		select {
		case <-ctx.Done():
			t.Fatalf("job %s: gave up waiting for %s: last %+v, %v", id, what, j.Summary, err)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// Settled waits for job id to finish.
func (e *Env) Settled(t *testing.T, id job.ID) api.Job {
	t.Helper()
	return e.WaitFor(t, id, "its end", func(j api.Job) bool { return j.Status != "running" })
}

// Running waits until the job's node at path runs.
func (e *Env) Running(t *testing.T, id job.ID, path string) api.Job {
	t.Helper()
	return e.WaitFor(t, id, path+" to run", func(j api.Job) bool {
		i := slices.IndexFunc(j.Nodes, func(n api.Node) bool { return n.Path == path })
		return i >= 0 && j.Nodes[i].Status == "running"
	})
}

// Run runs the suite on the stores and runners cfg.Open makes.
func Run(t *testing.T, cfg Config) {
	t.Run("Submit", func(t *testing.T) { testSubmit(t, cfg) })
	t.Run("Resubmit", func(t *testing.T) { testResubmit(t, cfg) })
	t.Run("Cancel", func(t *testing.T) { testCancel(t, cfg) })
	t.Run("Signal", func(t *testing.T) { testSignal(t, cfg) })
	t.Run("CancelNode", func(t *testing.T) { testCancelNode(t, cfg) })
	t.Run("Times", func(t *testing.T) { testTimes(t, cfg) })
	t.Run("Delete", func(t *testing.T) { testDelete(t, cfg) })
	t.Run("Versions", func(t *testing.T) { testVersions(t, cfg) })
	t.Run("List", func(t *testing.T) { testList(t, cfg) })
	t.Run("LongPoll", func(t *testing.T) { testLongPoll(t, cfg) })
	t.Run("Validate", func(t *testing.T) { testValidate(t, cfg) })
	t.Run("TooManyJobs", func(t *testing.T) { testTooManyJobs(t, cfg) })
	t.Run("Routes", func(t *testing.T) { testRoutes(t, cfg) })
	t.Run("Auth", func(t *testing.T) { testAuth(t, cfg) })
	t.Run("BadInput", func(t *testing.T) { testBadInput(t, cfg) })
	t.Run("StreamMidJob", func(t *testing.T) { testStreamMidJob(t, cfg) })
	t.Run("StreamResume", func(t *testing.T) { testStreamResume(t, cfg) })
	t.Run("TooManyStreams", func(t *testing.T) { testTooManyStreams(t, cfg) })
	t.Run("ListStream", func(t *testing.T) { testListStream(t, cfg) })
	t.Run("StreamShutdown", func(t *testing.T) { testStreamShutdown(t, cfg) })
}
