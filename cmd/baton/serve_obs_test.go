package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/batonwf/baton/client"
	"github.com/batonwf/baton/store"
)

const (
	obsWriteToken = "write-token-for-metrics-0123"
	obsReadToken  = "read-token-for-metrics-0123"
)

// get answers GET url with token ("" for none): status and body.
func get(t *testing.T, url, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), "GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// TestServeMetrics: /metrics on the main listener needs a read token and
// serves the exposition: build info, the runner's and the store's
// metrics, HTTP requests labelled by route pattern (never the path), the
// auth failures.
func TestServeMetrics(t *testing.T) {
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens")
	if err := os.WriteFile(tokens, []byte("write "+obsWriteToken+"\nread "+obsReadToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startInProcess(t, "baton serve: http", "serve", "--store", filepath.Join(dir, "baton.db"), "--listen", "127.0.0.1:0", "--token-file", tokens)
	base := serveURL(t, p)
	c := client.New(base, client.Options{Token: obsWriteToken})
	if _, _, err := c.Submit(t.Context(), "hello", []byte(helloJSON)); err != nil {
		t.Fatal(err)
	}
	if sum, err := c.Wait(t.Context(), "hello"); err != nil || sum.Status != "succeeded" {
		t.Fatalf("wait: %+v, %v", sum, err)
	}
	if code, body := get(t, base+"/metrics", ""); code != http.StatusUnauthorized {
		t.Fatalf("/metrics without a token: %d %s", code, body)
	}
	code, body := get(t, base+"/metrics", obsReadToken)
	if code != http.StatusOK {
		t.Fatalf("/metrics with a read token: %d %s", code, body)
	}
	for _, want := range []string{
		`baton_build_info{`,
		`baton_jobs_submitted_total 1`,
		`baton_jobs_finished_total{status="succeeded"} 1`,
		`baton_actions_finished_total{action="log",outcome="succeeded"} 5`, // helloJSON's
		`baton_store_operation_duration_seconds_count{op="save"} `,
		`baton_http_requests_total{code="201",method="POST",route="POST /api/v1/jobs"} 1`,
		`baton_http_requests_total{code="401",method="GET",route="GET /metrics"} 1`,
		`baton_http_auth_failures_total 1`,
		`baton_http_streams 0`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s:\n%s", want, body)
		}
	}
	if regexp.MustCompile(`route="[^"]*hello`).MatchString(body) {
		t.Errorf("a route label holds a job ID:\n%s", body)
	}
	if code := p.stop(t); code != exitOK {
		t.Errorf("exit status %d:\n%s", code, p.errOut.String())
	}
}

// TestServeMetricsListen: with --metrics-listen, /metrics is served there
// alone (no token), and not on the main listener.
func TestServeMetricsListen(t *testing.T) {
	dir := t.TempDir()
	p := startInProcess(t, "baton serve: http", "serve", "--store", filepath.Join(dir, "baton.db"), "--listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0")
	m := regexp.MustCompile(`baton serve: (http://[^/]+)/metrics`).FindStringSubmatch(p.errOut.String())
	if m == nil {
		t.Fatalf("no metrics address on stderr:\n%s", p.errOut.String())
	}
	if code, body := get(t, m[1]+"/metrics", ""); code != http.StatusOK || !strings.Contains(body, "baton_build_info{") {
		t.Errorf("--metrics-listen /metrics: %d %s", code, body)
	}
	if code, body := get(t, serveURL(t, p)+"/metrics", ""); code != http.StatusNotFound {
		t.Errorf("/metrics on the main listener with --metrics-listen: %d %s", code, body)
	}
	if code := p.stop(t); code != exitOK {
		t.Errorf("exit status %d:\n%s", code, p.errOut.String())
	}
}

// TestServeRegistryLint: the registry 'baton serve' exposes follows
// Prometheus' conventions (testutil.GatherAndLint), with every metric
// moved once.
func TestServeRegistryLint(t *testing.T) {
	st := store.NewMemory()
	defer st.Close()
	o, err := newServeObs(st, builtins(io.Discard, http.DefaultClient), true, 10, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer o.hub.Shutdown(context.Background())
	problems, err := testutil.GatherAndLint(o.reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
}
