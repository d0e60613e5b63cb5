package metrics_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/batonwf/baton/metrics"
)

// The middleware counts requests by the route pattern that served them,
// never by their path: two jobs' pages are one series, and paths no
// route matches are another.
func ExampleMetrics_Middleware() {
	reg := prometheus.NewRegistry()
	m, err := metrics.New(reg)
	if err != nil {
		panic(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v1/jobs/{id}", func(w http.ResponseWriter, r *http.Request) {})
	h := m.Middleware(mux)
	for _, path := range []string{"/api/v1/jobs/order-7", "/api/v1/jobs/order-8", "/wp-admin"} {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", path, nil))
	}
	fams, _ := reg.Gather()
	for _, f := range fams {
		if f.GetName() != "baton_http_requests_total" {
			continue
		}
		for _, s := range f.GetMetric() {
			for _, l := range s.GetLabel() {
				fmt.Printf("%s=%q ", l.GetName(), l.GetValue())
			}
			fmt.Println(s.GetCounter().GetValue())
		}
	}
	// Output:
	// code="200" method="GET" route="GET /api/v1/jobs/{id}" 2
	// code="404" method="GET" route="unmatched" 1
}
