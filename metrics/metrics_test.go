package metrics_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/metrics"
	"github.com/batonwf/baton/runner"
	"github.com/batonwf/baton/store"
	"github.com/batonwf/baton/store/bolt"
	"github.com/batonwf/baton/store/storetest"
)

// TestLint: with every metric holding samples, the linter of
// client_golang finds nothing to say about names, units, types or help.
func TestLint(t *testing.T) {
	tr := newRun(t, handlers(nil), nil)
	tr.run(t, "a", ast.Par(ast.Act("ok", nil), ast.Act("fail", nil)))
	mux := http.NewServeMux()
	mux.HandleFunc("GET /x", func(w http.ResponseWriter, r *http.Request) {})
	tr.m.Middleware(mux).ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/x", nil))
	tr.m.Streams().Inc()
	tr.m.AuthFailures().Inc()
	problems, err := testutil.GatherAndLint(tr.reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
}

// TestNew: build info, the Go and process collectors, and a registerer
// that has the collectors already or has baton's metrics already.
func TestNew(t *testing.T) {
	reg := prometheus.NewRegistry()
	if _, err := metrics.New(reg); err != nil {
		t.Fatal(err)
	}
	b := family(t, reg, "baton_build_info").GetMetric()
	if len(b) != 1 || b[0].GetGauge().GetValue() != 1 {
		t.Fatalf("baton_build_info: %v", b)
	}
	for _, l := range b[0].GetLabel() {
		if l.GetValue() == "" {
			t.Errorf("baton_build_info: empty %s", l.GetName())
		}
	}
	family(t, reg, "go_goroutines")
	family(t, reg, "process_start_time_seconds")
	if _, err := metrics.New(reg); err == nil {
		t.Error("New twice on one registry: no error")
	}

	own := prometheus.NewRegistry()
	own.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if _, err := metrics.New(own); err != nil {
		t.Errorf("New with the collectors registered already: %v", err)
	}
	if m, err := metrics.New(nil); err != nil || m == nil {
		t.Errorf("New(nil): %v", err)
	}
}

// TestNil: a nil *Metrics hands back what it is given and serves 500.
func TestNil(t *testing.T) {
	var m *metrics.Metrics
	h := &runner.Hooks{}
	st := store.NewMemory()
	next := http.NotFoundHandler()
	if m.Hooks(h) != h || m.Store(st) != st {
		t.Error("nil Metrics wraps")
	}
	if got := m.Middleware(next); got == nil {
		t.Error("nil Middleware")
	}
	m.Actions(runner.NewRegistry())
	m.Streams().Inc()
	m.AuthFailures().Inc()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != http.StatusInternalServerError {
		t.Errorf("nil Handler: %d", rec.Code)
	}
}

// TestHandlerOpenMetrics: the endpoint offers OpenMetrics, which
// carries the exemplars that link a slow bucket to its job.
func TestHandlerOpenMetrics(t *testing.T) {
	tr := newRun(t, handlers(nil), nil)
	tr.run(t, "exemplary-job", ast.Act("ok", nil))
	srv := httptest.NewServer(tr.m.Handler())
	defer srv.Close()
	req, _ := http.NewRequest("GET", srv.URL, nil)
	req.Header.Set("Accept", "application/openmetrics-text; version=1.0.0")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/openmetrics-text") {
		t.Fatalf("Content-Type %q", ct)
	}
	for _, want := range []string{`job_id="exemplary-job"`, `action_id="root#1"`, "baton_build_info", "# EOF"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("the exposition lacks %s", want)
		}
	}
}

// TestStoreConformance: the timed store passes the store suite, so it
// answers as the store it wraps; the suite's racing savers lose with
// conflicts, which are counted.
func TestStoreConformance(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := metrics.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	storetest.Run(t, func(t *testing.T) store.Store { return m.Store(store.NewMemory()) })
	if got := value(t, reg, "baton_store_conflicts_total"); got == 0 {
		t.Error("no conflict counted")
	}
	for _, op := range []string{"create", "save", "load", "list", "history", "delete"} {
		if count(t, reg, "baton_store_operation_duration_seconds", "op", op) == 0 {
			t.Errorf("no %s timed", op)
		}
	}
}

// TestStoreConflict: a stale save is refused as the store refuses it,
// and counted once.
func TestStoreConflict(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, _ := metrics.New(reg)
	st := m.Store(store.NewMemory())
	ctx := t.Context()
	tr, err := job.New("c", ast.Par(ast.Act("a", nil), ast.Act("b", nil)))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Create(ctx, tr.Job); err != nil {
		t.Fatal(err)
	}
	one, _ := job.Restart(tr.Job, []job.Result{tr.Actions[0].Succeed(nil)})
	other, _ := job.Restart(tr.Job, []job.Result{tr.Actions[1].Succeed(nil)})
	if err := st.Save(ctx, one.Job, one.Step); err != nil {
		t.Fatal(err)
	}
	if err := st.Save(ctx, other.Job, other.Step); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("stale save: %v", err)
	}
	if got := value(t, reg, "baton_store_conflicts_total"); got != 1 {
		t.Errorf("baton_store_conflicts_total = %v, want 1", got)
	}
	if got := count(t, reg, "baton_store_operation_duration_seconds", "op", "save"); got != 2 {
		t.Errorf("%d saves timed, want 2", got)
	}
}

// TestStoreInstant: the timed store forwards whether its store is instant
// (store.IsInstant), so runner/inmem takes the same path under baton
// serve's metrics as on the bare store.
func TestStoreInstant(t *testing.T) {
	m, err := metrics.New(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	if !store.IsInstant(m.Store(store.NewMemory())) {
		t.Error("a timed memory store is not instant")
	}
	b, err := bolt.Open(filepath.Join(t.TempDir(), "b.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if store.IsInstant(m.Store(b)) {
		t.Error("a timed bolt store is instant")
	}
}
