package server_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/batonwf/baton/api"
	"github.com/batonwf/baton/client"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	"github.com/batonwf/baton/runner/inmem"
	"github.com/batonwf/baton/server"
	"github.com/batonwf/baton/server/servertest"
	"github.com/batonwf/baton/store"
)

// faulty is a store whose reads of some jobs fail as a damaged or
// unreachable store's would, and whose Load panics for one ID: faults at
// the store seam the server reads through.
type faulty struct {
	store.Store
	down    atomic.Bool
	damaged atomic.Value // job.ID
	panicky job.ID
}

func (f *faulty) fault(id job.ID) error {
	switch {
	case f.down.Load():
		return errors.New("dial tcp 127.0.0.1:2181: connection refused")
	case id == f.damaged.Load():
		return fmt.Errorf("job %s: %w: bad checksum", id, job.ErrCorrupt)
	case id == f.panicky && id != "":
		panic("the store broke")
	}
	return nil
}

func (f *faulty) Load(ctx context.Context, id job.ID) (job.Job, error) {
	if err := f.fault(id); err != nil {
		return job.Job{}, err
	}
	return f.Store.Load(ctx, id)
}

func (f *faulty) Stat(ctx context.Context, id job.ID) (store.Info, error) {
	if err := f.fault(id); err != nil {
		return store.Info{}, err
	}
	return store.Stat(ctx, f.Store, id)
}

func (f *faulty) History(ctx context.Context, id job.ID) (store.History, error) {
	if err := f.fault(id); err != nil {
		return store.History{}, err
	}
	return store.LoadHistory(ctx, f.Store, id)
}

func (f *faulty) List(ctx context.Context, q store.Query) ([]store.Info, error) {
	if f.down.Load() {
		return nil, errors.New("dial tcp 127.0.0.1:2181: connection refused")
	}
	// As runner/zk lists a damaged job: its ID alone, kept by Unfinished.
	all, err := store.List(ctx, f.Store, store.Query{Prefix: q.Prefix, After: q.After})
	var infos []store.Info
	for _, in := range all {
		if in.ID == f.damaged.Load() {
			in = store.Info{ID: in.ID, Damaged: f.fault(in.ID)}
		}
		if q.Match(in) && (q.Limit == 0 || len(infos) < q.Limit) {
			infos = append(infos, in)
		}
	}
	return infos, err
}

func (f *faulty) Delete(ctx context.Context, id job.ID) error { return store.Delete(ctx, f.Store, id) }

func newFaulty(t *testing.T) (*faulty, *servertest.Env) {
	f := &faulty{panicky: "panic"}
	f.damaged.Store(job.ID("none"))
	e := servertest.NewEnv(t, checked(func(t *testing.T, reg *runner.Registry) (store.Store, any) {
		f.Store = store.NewMemory()
		return f, runLocal(t, f.Store, reg)
	}), nil)
	return f, e
}

const flow = `{"version":1,"root":{"act":"ok","payload":1}}`

func TestDamagedJob(t *testing.T) {
	f, e := newFaulty(t)
	for _, id := range []job.ID{"a", "broken", "c"} {
		e.Submit(t, id, flow)
		e.Settled(t, id)
	}
	f.damaged.Store(job.ID("broken"))
	p := e.Do(t, "GET", "/api/v1/jobs/broken", nil, "").Problem(t, 500, server.CodeJobDamaged)
	if p.JobID != "broken" {
		t.Errorf("job_id %q", p.JobID)
	}
	l, err := e.Reader.List(t.Context(), client.ListQuery{})
	if err != nil || len(l.Jobs) != 3 || l.Jobs[1].Status != api.StatusDamaged || l.Jobs[1].Damaged == "" || l.Jobs[0].Status != "succeeded" || l.Jobs[2].Status != "succeeded" {
		t.Errorf("list: %+v, %v", l, err)
	}
	if d, err := e.Reader.List(t.Context(), client.ListQuery{Status: "damaged"}); err != nil || len(d.Jobs) != 1 {
		t.Errorf("status=damaged: %+v, %v", d, err)
	}
	if _, err := e.Reader.Job(t.Context(), "c", client.JobQuery{}); err != nil {
		t.Errorf("the other jobs are served: %v", err)
	}
}

func TestStoreUnavailable(t *testing.T) {
	f, e := newFaulty(t)
	e.Submit(t, "a", flow)
	e.Settled(t, "a")
	f.down.Store(true)
	e.Do(t, "GET", "/api/v1/jobs/a", nil, "").Problem(t, 503, server.CodeStoreUnavailable)
	e.Do(t, "GET", "/api/v1/jobs", nil, "").Problem(t, 503, server.CodeStoreUnavailable)
	if a := e.Do(t, "GET", "/readyz", nil, ""); a.Status != 503 || string(a.Body) != `{"status":"unavailable"}`+"\n" {
		t.Errorf("readyz while the store is down: %d %s", a.Status, a.Body)
	}
	f.down.Store(false) // recovery without a restart
	if a := e.Do(t, "GET", "/readyz", nil, ""); a.Status != 200 {
		t.Errorf("readyz after: %d %s", a.Status, a.Body)
	}
	if _, err := e.Reader.Job(t.Context(), "a", client.JobQuery{}); err != nil {
		t.Errorf("after: %v", err)
	}
}

func TestPanic(t *testing.T) {
	_, e := newFaulty(t)
	p := e.Do(t, "GET", "/api/v1/jobs/panic", map[string]string{"X-Request-Id": "req-panic"}, "").Problem(t, 500, server.CodeInternal)
	if p.RequestID != "req-panic" || strings.Contains(p.Detail, "goroutine") || strings.Contains(p.Detail, "the store broke") {
		t.Errorf("problem: %+v", p)
	}
	logs := e.Logs()
	if !strings.Contains(logs, "the store broke") || !strings.Contains(logs, "goroutine") || !strings.Contains(logs, "request_id=req-panic") {
		t.Errorf("the log lacks the panic and its stack:\n%s", logs)
	}
	if a := e.Do(t, "GET", "/healthz", nil, ""); a.Status != 200 {
		t.Errorf("after the panic: %d", a.Status)
	}
}

// TestReadOnly: a server given only a store serves reads, and its write
// routes answer 405 with the methods it has.
func TestReadOnly(t *testing.T) {
	st := store.NewMemory()
	tr, err := job.New("j", mustDecode(t, flow))
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
	ts := httptest.NewServer(checkAPI(t, h))
	defer ts.Close()
	c := client.New(ts.URL, client.Options{})
	if j, err := c.Job(t.Context(), "j", client.JobQuery{}); err != nil || j.Status != "running" {
		t.Errorf("job: %+v, %v", j, err)
	}
	_, _, err = c.Submit(t.Context(), "k", []byte(flow))
	if client.Code(err) != "method_not_allowed" {
		t.Errorf("submit to a read-only server: %v", err)
	}
	if _, err := c.Cancel(t.Context(), "j", ""); client.Code(err) != "not_found" {
		t.Errorf("cancel on a read-only server: %v", err)
	}
	w, err := c.Workers(t.Context())
	if err != nil || w.Known {
		t.Errorf("workers: %+v, %v", w, err)
	}
	if _, err := server.New(server.Options{}); err == nil {
		t.Error("New without a store")
	}
}

// TestShuttingDown: once Closing is closed, writes are refused with 503
// and nothing is stored; reads go on.
func TestShuttingDown(t *testing.T) {
	closing := make(chan struct{})
	e := servertest.NewEnv(t, checked(func(t *testing.T, reg *runner.Registry) (store.Store, any) {
		st := store.NewMemory()
		return st, runLocal(t, st, reg)
	}), func(o *server.Options) { o.Closing = closing })
	e.Submit(t, "a", flow)
	// Its action's step must not land while the store is watched.
	e.WaitFor(t, "a", "its end", func(j api.Job) bool { return j.Status == "succeeded" })
	close(closing)
	e.Unchanged(t, func() {
		e.Do(t, "POST", "/api/v1/jobs?id=b", nil, flow).Problem(t, 503, server.CodeShuttingDown)
	})
	if a := e.Do(t, "GET", "/readyz", nil, ""); a.Status != 503 {
		t.Errorf("readyz while closing: %d", a.Status)
	}
	if _, err := e.Reader.Job(t.Context(), "a", client.JobQuery{}); err != nil {
		t.Errorf("reads while closing: %v", err)
	}
}

func TestTokens(t *testing.T) {
	for _, c := range []struct{ text, err string }{
		{"read 0123456789abcdef\n", ""},
		{"# a comment\n\nwrite 0123456789abcdef0\nread  fedcba9876543210\n", ""},
		{"read short\n", "line 1: the token is 5 bytes; at least 16"},
		{"admin 0123456789abcdef\n", "line 1: want 'read TOKEN' or 'write TOKEN'"},
		{"read 0123456789abcdef extra\n", "line 1"},
		{"# nothing\n", "no token"},
	} {
		_, err := server.ParseTokens([]byte(c.text))
		if (err == nil) != (c.err == "") || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("ParseTokens(%q) = %v, want %q", c.text, err, c.err)
		}
		if err != nil && strings.Contains(err.Error(), "short") {
			t.Errorf("the error shows the token: %v", err)
		}
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "tokens")
	if err := os.WriteFile(path, []byte("read 0123456789abcdef\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	if _, err := server.LoadTokens(path); err == nil || !strings.Contains(err.Error(), "group or others") {
		t.Errorf("a group-readable token file: %v", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := server.LoadTokens(path); err != nil {
		t.Errorf("LoadTokens: %v", err)
	}
}

// TestConcurrentSubmits: many submits of one ID at once make one job; each
// answer is 201 (one) or 200.
func TestConcurrentSubmits(t *testing.T) {
	e := servertest.NewEnv(t, checked(func(t *testing.T, reg *runner.Registry) (store.Store, any) {
		st := store.NewMemory()
		return st, runLocal(t, st, reg)
	}), nil)
	var mu sync.Mutex
	codes := map[int]int{}
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a := e.Do(t, "POST", "/api/v1/jobs?id=same", nil, flow)
			mu.Lock()
			codes[a.Status]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	if codes[201] != 1 || codes[200] != 19 {
		t.Errorf("answers: %v", codes)
	}
}

// TestLogLine: one line per request with its fields, and no token.
func TestLogLine(t *testing.T) {
	var buf bytes.Buffer
	tokens, _ := server.ParseTokens([]byte("write " + servertest.WriteToken))
	h, err := server.New(server.Options{Store: store.NewMemory(), Tokens: tokens, Logger: slog.New(slog.NewTextHandler(&buf, nil))})
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest("GET", "/api/v1/jobs/x/history?from=0", nil)
	req.Header.Set("Authorization", "Bearer "+servertest.WriteToken)
	w := httptest.NewRecorder()
	checkAPI(t, h).ServeHTTP(w, req)
	line := buf.String()
	for _, want := range []string{"method=GET", `route="GET /api/v1/jobs/{id}/history"`, "status=404", "duration=", "bytes=", "request_id=", "job_id=x", "remote="} {
		if !strings.Contains(line, want) {
			t.Errorf("log line lacks %s: %s", want, line)
		}
	}
	if strings.Count(line, "\n") != 1 || strings.Contains(line, servertest.WriteToken) {
		t.Errorf("log: %s", line)
	}
	if w.Code != http.StatusNotFound {
		t.Errorf("status %d", w.Code)
	}
}

// TestTokensReplace: what SIGHUP does in 'baton serve': from the next
// request on, the old tokens are refused and the new ones taken.
func TestTokensReplace(t *testing.T) {
	oldT, _ := server.ParseTokens([]byte("write old-token-0123456789"))
	newT, _ := server.ParseTokens([]byte("read new-token-0123456789"))
	h, err := server.New(server.Options{Store: store.NewMemory(), Tokens: oldT})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(checkAPI(t, h))
	defer ts.Close()
	list := func(tok string) string {
		_, err := client.New(ts.URL, client.Options{Token: tok}).List(t.Context(), client.ListQuery{})
		return client.Code(err)
	}
	if list("old-token-0123456789") != "" || list("new-token-0123456789") != "unauthorized" {
		t.Fatal("before Replace")
	}
	oldT.Replace(newT)
	if list("old-token-0123456789") != "unauthorized" || list("new-token-0123456789") != "" {
		t.Error("after Replace")
	}
}

// full is a store whose writes fail as on a full disk.
type full struct{ store.Store }

func (f full) Create(context.Context, job.Job) error {
	return fmt.Errorf("write jobs.db: %w", syscall.ENOSPC)
}

// TestDiskFull: a submit the store cannot write is 503 store_unavailable,
// and nothing is stored.
func TestDiskFull(t *testing.T) {
	mem := store.NewMemory()
	e := servertest.NewEnv(t, checked(func(t *testing.T, reg *runner.Registry) (store.Store, any) {
		r, err := inmem.New(inmem.Options{WorkerOptions: runner.WorkerOptions{Registry: reg, DrainTimeout: -1}, Store: full{mem}})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- r.Run(ctx) }()
		t.Cleanup(func() { cancel(); <-done })
		return mem, server.Local{Runner: r, Registry: reg}
	}), nil)
	e.Unchanged(t, func() {
		p := e.Do(t, "POST", "/api/v1/jobs?id=a", nil, flow).Problem(t, 503, server.CodeStoreUnavailable)
		if p.JobID != "a" || !strings.Contains(p.Detail, "no space left") {
			t.Errorf("problem: %+v", p)
		}
	})
}
