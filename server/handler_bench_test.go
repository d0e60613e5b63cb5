package server_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	"github.com/batonwf/baton/runner/inmem"
	"github.com/batonwf/baton/server"
	"github.com/batonwf/baton/store"
)

// benchToken is the write token of the benchmarks' server.
const benchToken = "bench-write-token-0123456789abcdef"

// benchServer returns the server of the benchmarks: on the memory store
// with runner/inmem running the jobs, a write token and a JSON log line
// per request to a file through a LogWriter, as 'baton serve' has them;
// the handler is called in this process (no connection).
func benchServer(b *testing.B) (http.Handler, store.Store) {
	st := store.NewMemory()
	b.Cleanup(func() { st.Close() })
	reg := runner.NewRegistry()
	if err := runner.Handle(reg, "noop", func(context.Context, struct{}) (struct{}, error) { return struct{}{}, nil }); err != nil {
		b.Fatal(err)
	}
	r, err := inmem.New(inmem.Options{WorkerOptions: runner.WorkerOptions{Registry: reg, Workers: 4, DrainTimeout: -1}, Store: st})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	b.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			b.Errorf("runner: %v", err)
		}
	})
	logs, err := os.Create(filepath.Join(b.TempDir(), "requests.log"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { logs.Close() })
	lw := server.NewLogWriter(logs)
	b.Cleanup(func() { lw.Close() })
	tokens, err := server.ParseTokens([]byte("write " + benchToken + "\n"))
	if err != nil {
		b.Fatal(err)
	}
	h, err := server.New(server.Options{Store: st, Runner: server.Local{Runner: r, Registry: reg, Capacity: 4},
		Tokens: tokens, Logger: slog.New(slog.NewJSONHandler(lw, nil))})
	if err != nil {
		b.Fatal(err)
	}
	return h, st
}

// BenchmarkSubmit measures what the server adds to a submit: POST
// /api/v1/jobs of a one-action job, from 8 goroutines, the jobs run by
// the runner meanwhile. Profile it with -cpuprofile.
func BenchmarkSubmit(b *testing.B) {
	h, _ := benchServer(b)
	body := []byte(`{"version": 1, "root": {"act": "noop"}}`)
	var next atomic.Int64
	b.ReportAllocs()
	b.SetParallelism(4) // 8 callers on 2 cores, as bench -serve has them
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := next.Add(1)
			req := httptest.NewRequest(http.MethodPost, fmt.Sprintf("/api/v1/jobs?id=b-%d", i), bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+benchToken)
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			if w.Code != http.StatusCreated {
				b.Errorf("submit %d: %d %s", i, w.Code, w.Body)
				return
			}
		}
	})
}

// BenchmarkStatus measures a status read: GET /api/v1/jobs/{id}?nodes=false
// of a job of 10 actions, from 8 goroutines.
func BenchmarkStatus(b *testing.B) {
	h, st := benchServer(b)
	acts := make([]ast.Node, 10)
	for i := range acts {
		acts[i] = ast.Act("noop", nil)
	}
	tr, err := job.New("status", ast.Par(acts...))
	if err != nil {
		b.Fatal(err)
	}
	if err := st.Create(context.Background(), tr.Job); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetParallelism(4)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req := httptest.NewRequest(http.MethodGet, "/api/v1/jobs/status?nodes=false", nil)
			req.Header.Set("Authorization", "Bearer "+benchToken)
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			if w.Code != http.StatusOK {
				b.Errorf("status: %d %s", w.Code, w.Body)
				return
			}
		}
	})
}
