package server_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	"github.com/batonwf/baton/runner/inmem"
	"github.com/batonwf/baton/server"
	"github.com/batonwf/baton/store/bolt"
)

// TestJobPageDecodes: the page of a job's latest version on store/bolt
// decodes at most its origin (for the history), the latest version coming
// from the store's cache; loaded again, it decodes nothing.
func TestJobPageDecodes(t *testing.T) {
	acts := make([]ast.Node, 300)
	for k := range acts {
		acts[k] = ast.Act("work", map[string]any{"n": k, "fail": k == 7})
	}
	h, st := benchPageServer(t, "decodes", ast.Par(ast.Seq(acts[:100]...), ast.Par(acts[100:]...)))
	for i, want := range []uint64{1, 0, 0} {
		before := st.Stats().Decodes
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", "/jobs/decodes", nil))
		if w.Code != http.StatusOK {
			t.Fatalf("GET /jobs/decodes: %d %s", w.Code, w.Body)
		}
		if n := st.Stats().Decodes - before; n > want {
			t.Errorf("load %d of the job page decoded %d jobs; want at most %d", i+1, n, want)
		}
	}
}

// benchPageServer runs root as job id to its end on store/bolt with the
// inmem runner (as 'baton serve' does, and as go run ./bench -page
// does) and returns a server of its pages.
func benchPageServer(b testing.TB, id job.ID, root ast.Node) (http.Handler, *bolt.Store) {
	b.Helper()
	st, err := bolt.Open(filepath.Join(b.TempDir(), "page.db"), &bolt.Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	reg := runner.NewRegistry()
	type in struct {
		Fail bool `json:"fail"`
	}
	if err := runner.Handle(reg, "work", func(_ context.Context, p in) (struct{}, error) {
		if p.Fail {
			return struct{}{}, errors.New("failed on purpose")
		}
		return struct{}{}, nil
	}); err != nil {
		b.Fatal(err)
	}
	r, err := inmem.New(inmem.Options{WorkerOptions: runner.WorkerOptions{Registry: reg, Workers: 8, DrainTimeout: -1}, Store: st})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	b.Cleanup(func() {
		cancel()
		<-done
	})
	if err := r.Submit(ctx, id, root); err != nil {
		b.Fatal(err)
	}
	if _, err := r.Wait(ctx, id); err != nil {
		b.Fatal(err)
	}
	h, err := server.New(server.Options{Store: st, Runner: server.Local{Runner: r, Registry: reg, Capacity: 8}})
	if err != nil {
		b.Fatal(err)
	}
	return h, st
}

func benchPage(b *testing.B, h http.Handler, path string) {
	b.ReportAllocs()
	for b.Loop() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", path, nil))
		if w.Code != http.StatusOK {
			b.Fatalf("GET %s: %d %s", path, w.Code, w.Body)
		}
		b.SetBytes(int64(w.Body.Len()))
	}
}

// BenchmarkJobPageBolt serves the job page of go run ./bench -page's
// jobs: a settled par of 10 seqs of 99 actions (some failed), and a
// settled par of 100,000 actions, both on store/bolt.
func BenchmarkJobPageBolt(b *testing.B) {
	b.Run("1000", func(b *testing.B) {
		seqs := make([]ast.Node, 10)
		for i := range seqs {
			acts := make([]ast.Node, 99)
			for k := range acts {
				acts[k] = ast.Act("work", map[string]any{"seq": i, "step": k, "fail": i%3 == 1 && k == 66})
			}
			seqs[i] = ast.Seq(acts...)
		}
		h, _ := benchPageServer(b, "page-1000", ast.Par(seqs...))
		b.ResetTimer()
		benchPage(b, h, "/jobs/page-1000")
	})
	b.Run("100000", func(b *testing.B) {
		acts := make([]ast.Node, 100_000)
		for k := range acts {
			acts[k] = ast.Act("work", map[string]any{"n": k, "fail": k%97 == 5})
		}
		h, _ := benchPageServer(b, "page-big", ast.Par(acts...))
		b.ResetTimer()
		benchPage(b, h, "/jobs/page-big")
	})
}
