package server_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	"github.com/batonwf/baton/runner/inmem"
	"github.com/batonwf/baton/server"
	"github.com/batonwf/baton/store"
)

// TestSubmitMakesTheJobOnce: a submit's answer is the job the runner
// created (runner/inmem's SubmitJob), not one the server makes again with
// job.New. Counted in bytes allocated (runtime.MemStats.TotalAlloc), so
// it cannot flake: for a par of 1,000 leaves job.New allocates about
// 430 KB, and a submit through the server must allocate less than half of
// that beyond what decoding the body (ast.Decode) and the runner's own
// Submit allocate. The runners are not run, so no action runs meanwhile.
func TestSubmitMakesTheJobOnce(t *testing.T) {
	if raceEnabled {
		t.Skip("allocations differ under the race detector; scripts/test.sh runs this test without it")
	}
	leaves := make([]ast.Node, 1000)
	for i := range leaves {
		leaves[i] = ast.Act("noop", nil)
	}
	root := ast.Par(leaves...)
	doc, err := ast.Encode(root)
	if err != nil {
		t.Fatal(err)
	}
	const n = 5
	ctx := t.Context()
	newBytes := allocated(n, func(i int) {
		if _, err := job.New(job.ID(fmt.Sprintf("n-%d", i)), root); err != nil {
			t.Fatal(err)
		}
	})
	decodeBytes := allocated(n, func(int) {
		if _, err := ast.Decode(doc); err != nil {
			t.Fatal(err)
		}
	})

	direct, _ := idleRunner(t)
	_ = direct.Submit(ctx, "warm", root)
	directBytes := allocated(n, func(i int) {
		if err := direct.Submit(ctx, job.ID(fmt.Sprintf("d-%d", i)), root); err != nil {
			t.Fatal(err)
		}
	})

	r, reg := idleRunner(t)
	h, err := server.New(server.Options{Store: r.Store(), Runner: server.Local{Runner: r, Registry: reg}})
	if err != nil {
		t.Fatal(err)
	}
	submit := func(id string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, "/api/v1/jobs?id="+id, bytes.NewReader(doc))
		req.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w
	}
	if w := submit("warm"); w.Code != http.StatusCreated {
		t.Fatalf("submit: %d %s", w.Code, w.Body)
	}
	reqs := make([]*http.Request, n)
	for i := range reqs {
		reqs[i] = httptest.NewRequest(http.MethodPost, fmt.Sprintf("/api/v1/jobs?id=s-%d", i), bytes.NewReader(doc))
		reqs[i].Header.Set("Content-Type", "application/json")
	}
	codes := make([]int, n)
	serverBytes := allocated(n, func(i int) {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, reqs[i])
		codes[i] = w.Code
	})
	for i, c := range codes {
		if c != http.StatusCreated {
			t.Fatalf("submit %d: %d", i, c)
		}
	}
	extra := int64(serverBytes) - int64(directBytes) - int64(decodeBytes)
	t.Logf("per submit of 1,000 leaves: server %d B, runner's Submit %d B, ast.Decode %d B, job.New %d B: the server adds %d B",
		serverBytes, directBytes, decodeBytes, newBytes, extra)
	if extra >= int64(newBytes)/2 {
		t.Errorf("a submit through the server allocates %d B beyond decoding the body and the runner's Submit; job.New allocates %d B: the server makes the job again", extra, newBytes)
	}
}

// allocated returns the bytes f allocates per call, over n calls.
func allocated(n int, f func(i int)) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range n {
		f(i)
	}
	runtime.ReadMemStats(&after)
	return (after.TotalAlloc - before.TotalAlloc) / uint64(n)
}

// idleRunner returns a runner/inmem runner on a memory store with the
// no-op action registered, never run: submits queue their actions and
// nothing else happens.
func idleRunner(t *testing.T) (*inmem.Runner, *runner.Registry) {
	t.Helper()
	st := store.NewMemory()
	t.Cleanup(func() { st.Close() })
	reg := runner.NewRegistry()
	if err := runner.Handle(reg, "noop", func(context.Context, struct{}) (struct{}, error) { return struct{}{}, nil }); err != nil {
		t.Fatal(err)
	}
	r, err := inmem.New(inmem.Options{WorkerOptions: runner.WorkerOptions{Registry: reg}, Store: st})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r, reg
}
