package metrics_test

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/metrics"
	"github.com/batonwf/baton/runner"
	"github.com/batonwf/baton/runner/inmem"
	"github.com/batonwf/baton/store"
)

// family returns the metric family called name, gathered from g now.
func family(t *testing.T, g prometheus.Gatherer, name string) *dto.MetricFamily {
	t.Helper()
	fams, err := g.Gather()
	if err != nil {
		t.Fatalf("Gather: %v", err)
	}
	for _, f := range fams {
		if f.GetName() == name {
			return f
		}
	}
	t.Fatalf("no metric family %s", name)
	return nil
}

// series returns the series of family name whose labels are labels
// (name, value pairs), or nil.
func series(t *testing.T, g prometheus.Gatherer, name string, labels ...string) *dto.Metric {
	t.Helper()
	for _, m := range family(t, g, name).GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		ok := len(have) == len(labels)/2
		for i := 0; ok && i+1 < len(labels); i += 2 {
			ok = have[labels[i]] == labels[i+1]
		}
		if ok {
			return m
		}
	}
	return nil
}

// value returns the value of a counter or gauge series (0 if absent).
func value(t *testing.T, g prometheus.Gatherer, name string, labels ...string) float64 {
	t.Helper()
	m := series(t, g, name, labels...)
	switch {
	case m == nil:
		return 0
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	}
	t.Fatalf("%s is no counter or gauge", name)
	return 0
}

// count returns the sample count of a histogram series (0 if absent).
func count(t *testing.T, g prometheus.Gatherer, name string, labels ...string) uint64 {
	t.Helper()
	m := series(t, g, name, labels...)
	if m == nil {
		return 0
	}
	return m.GetHistogram().GetSampleCount()
}

// seriesCount returns how many series the baton_ families hold.
func seriesCount(t *testing.T, g prometheus.Gatherer) int {
	t.Helper()
	fams, err := g.Gather()
	if err != nil {
		t.Fatalf("Gather: %v", err)
	}
	n := 0
	for _, f := range fams {
		if len(f.GetName()) > 6 && f.GetName()[:6] == "baton_" {
			n += len(f.GetMetric())
		}
	}
	return n
}

// testRun is a runner/inmem runner over a store wrapped by metrics, with
// the metrics' hooks, running until the test ends.
type testRun struct {
	reg *prometheus.Registry
	m   *metrics.Metrics
	st  store.Store
	r   *inmem.Runner
	ctx context.Context
}

// newRun starts a runner with the handlers of handlers; the metrics
// know the action names of known (handlers if nil).
func newRun(t *testing.T, handlers, known *runner.Registry) *testRun {
	t.Helper()
	reg := prometheus.NewRegistry()
	m, err := metrics.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	if known == nil {
		known = handlers
	}
	m.Actions(known)
	st := m.Store(store.NewMemory())
	// Fields set one by one: they may move into an embedded struct.
	var o inmem.Options
	o.Store, o.Registry, o.Hooks, o.Workers = st, handlers, m.Hooks(nil), 4
	o.NoResume = true // a resume racing the first Submit would dispatch its actions twice
	r, err := inmem.New(o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-done
		_ = r.Close()
	})
	return &testRun{reg: reg, m: m, st: st, r: r, ctx: ctx}
}

// run submits root as job id and waits for its end.
func (tr *testRun) run(t *testing.T, id job.ID, root ast.Node) job.Job {
	t.Helper()
	if err := tr.r.Submit(tr.ctx, id, root); err != nil {
		t.Fatalf("Submit %s: %v", id, err)
	}
	j, err := tr.r.Wait(tr.ctx, id)
	if err != nil {
		t.Fatalf("Wait %s: %v", id, err)
	}
	return j
}

// eventually polls cond until it holds or the test's minute runs out.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after a minute", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
