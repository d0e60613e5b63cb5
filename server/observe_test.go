package server_test

import (
	"errors"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/batonwf/baton/runner"
	"github.com/batonwf/baton/server"
	"github.com/batonwf/baton/server/live"
	"github.com/batonwf/baton/server/servertest"
	"github.com/batonwf/baton/store"
)

// count is a server.Gauge and a server.Counter.
type count struct{ n atomic.Int64 }

func (c *count) Inc() { c.n.Add(1) }
func (c *count) Dec() { c.n.Add(-1) }

// TestObservers: Options.Middleware sees each request's route pattern
// (never its path; "" for no route), Options.Streams counts the open
// streams, Options.AuthFailures the refused tokens, and Options.Metrics
// is served at /metrics behind a read token.
func TestObservers(t *testing.T) {
	var mu sync.Mutex
	var patterns []string
	streams, fails := &count{}, &count{}
	e := servertest.NewEnv(t, checked(func(t *testing.T, reg *runner.Registry) (store.Store, any) {
		st := store.NewMemory()
		t.Cleanup(func() { st.Close() })
		return st, runLocal(t, st, reg)
	}), func(o *server.Options) {
		o.Middleware = func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				next.ServeHTTP(w, r)
				mu.Lock()
				patterns = append(patterns, r.Pattern)
				mu.Unlock()
			})
		}
		o.Streams, o.AuthFailures = streams, fails
		o.Metrics = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
			w.Write([]byte("exposition\n"))
		})
	})
	e.Submit(t, "o", `{"version":1,"root":{"act":"block"}}`)
	e.Do(t, "GET", "/api/v1/jobs/o?nodes=false", nil, "")
	e.Do(t, "GET", "/api/v1/nothing", nil, "")
	if a := e.Do(t, "PUT", "/api/v1/jobs/o", nil, ""); a.Status != http.StatusMethodNotAllowed {
		t.Errorf("PUT of a job: %d %s", a.Status, a.Body)
	}
	if a := e.Do(t, "GET", "/metrics", map[string]string{"Authorization": ""}, ""); a.Status != http.StatusUnauthorized {
		t.Errorf("/metrics without a token: %d", a.Status)
	}
	if a := e.Do(t, "GET", "/metrics", map[string]string{"Authorization": "Bearer " + servertest.ReadToken}, ""); a.Status != http.StatusOK || string(a.Body) != "exposition\n" {
		t.Errorf("/metrics: %d %s", a.Status, a.Body)
	}
	mu.Lock()
	want := []string{"POST /api/v1/jobs", "GET /api/v1/jobs/{id}", "", "", "GET /metrics", "GET /metrics"}
	if len(patterns) < len(want) || !slices.Equal(patterns[len(patterns)-len(want):], want) {
		t.Errorf("patterns the middleware saw: %q, want %q at the end", patterns, want)
	}
	mu.Unlock()
	if fails.n.Load() != 1 {
		t.Errorf("auth failures counted: %d, want 1", fails.n.Load())
	}

	resp, err := http.NewRequestWithContext(t.Context(), "GET", e.URL+"/api/v1/jobs/o/events", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Header.Set("Authorization", "Bearer "+servertest.ReadToken)
	stream, err := http.DefaultClient.Do(resp)
	if err != nil {
		t.Fatal(err)
	}
	// The snapshot came, so the stream is counted.
	if err := live.ReadEvents(stream.Body, func(ev live.Event) error { return errStop }); err != errStop {
		t.Fatal(err)
	}
	if n := streams.n.Load(); n != 1 {
		t.Errorf("open streams counted: %d, want 1", n)
	}
	stream.Body.Close()
	deadline, ok := t.Deadline()
	for streams.n.Load() != 0 {
		if ok && time.Until(deadline) < time.Second {
			t.Fatal("the closed stream stays counted")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

var errStop = errors.New("stop")
