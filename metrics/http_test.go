package metrics_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/batonwf/baton/metrics"
)

// TestMiddleware: requests count by the mux's pattern, never the path;
// unknown methods and unmatched paths share one series each; an event
// stream is counted, flushes through the wrapper, and is not timed; a
// panic counts as a 500 and goes on up.
func TestMiddleware(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := metrics.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v1/jobs/{id}", func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("id") == "gone" {
			w.WriteHeader(http.StatusNotFound)
		}
		_, _ = w.Write([]byte("{}"))
	})
	flushed := false
	mux.HandleFunc("GET /api/v1/jobs/{id}/events", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte("data: x\n\n"))
		flushed = http.NewResponseController(w).Flush() == nil
	})
	mux.HandleFunc("POST /boom", func(http.ResponseWriter, *http.Request) { panic("boom") })
	h := m.Middleware(mux)
	do := func(method, path string) int {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(method, path, nil))
		return rec.Code
	}
	for _, p := range []string{"/api/v1/jobs/a", "/api/v1/jobs/b", "/api/v1/jobs/%2E%2E", "/api/v1/jobs/gone"} {
		do("GET", p)
	}
	do("GET", "/no/such/path/1")
	do("GET", "/no/such/path/2")
	do("BREW", "/api/v1/jobs/a")
	do("GET", "/api/v1/jobs/a/events")
	func() {
		defer func() {
			if recover() == nil {
				t.Error("the panic did not go on up")
			}
		}()
		do("POST", "/boom")
	}()

	route := "GET /api/v1/jobs/{id}"
	for _, c := range []struct {
		route, method, code string
		want                float64
	}{
		{route, "GET", "200", 3},
		{route, "GET", "404", 1},
		{"unmatched", "GET", "404", 2},
		{"unmatched", "other", "405", 1},
		{"GET /api/v1/jobs/{id}/events", "GET", "200", 1},
		{"POST /boom", "POST", "500", 1},
	} {
		if got := value(t, reg, "baton_http_requests_total", "route", c.route, "method", c.method, "code", c.code); got != c.want {
			t.Errorf("baton_http_requests_total{route=%q,method=%s,code=%s} = %v, want %v", c.route, c.method, c.code, got, c.want)
		}
	}
	if n := len(family(t, reg, "baton_http_requests_total").GetMetric()); n != 6 {
		t.Errorf("%d series of requests, want 6", n)
	}
	if got := count(t, reg, "baton_http_request_duration_seconds", "route", route, "method", "GET"); got != 4 {
		t.Errorf("%d requests timed on %s, want 4", got, route)
	}
	if got := count(t, reg, "baton_http_request_duration_seconds", "route", "GET /api/v1/jobs/{id}/events", "method", "GET"); got != 0 {
		t.Errorf("an event stream was timed")
	}
	if !flushed {
		t.Error("the stream could not flush through the middleware")
	}
}
