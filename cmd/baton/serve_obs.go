package main

import (
	"fmt"
	"log/slog"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/metrics"
	"github.com/batonwf/baton/runner"
	"github.com/batonwf/baton/server"
	"github.com/batonwf/baton/server/live"
	"github.com/batonwf/baton/store"
)

// serveObs is how 'baton serve' watches itself and its jobs: its metrics,
// on a registry of its own, and the hub of its event streams.
type serveObs struct {
	reg *prometheus.Registry
	m   *metrics.Metrics
	hub *live.Hub
	st  store.Store // the backend's store, timed: what the server and the hub read
}

// newServeObs makes the metrics of 'baton serve' (with acts as the
// values of the action label) and the hub of its event streams over st.
// With notified (the runner runs in this process and notifies the hub of
// each step through hooks), the hub polls a watched job only as a safety
// net; otherwise it polls each watched job.
func newServeObs(st store.Store, acts *runner.Registry, notified bool, maxStreams int, log *slog.Logger) (*serveObs, error) {
	o := &serveObs{reg: prometheus.NewRegistry()}
	var err error
	if o.m, err = metrics.New(o.reg); err != nil {
		return nil, err
	}
	o.m.Actions(acts)
	o.st = o.m.Store(st)
	o.hub, err = live.New(live.Options{Store: o.st, Logger: log, Notified: notified, MaxStreams: maxStreams, Changed: job.Changed})
	if err != nil {
		return nil, fmt.Errorf("event streams: %v", err)
	}
	return o, nil
}

// hooks are the runner's hooks: its metrics, and a notice to the hub at
// each step.
func (o *serveObs) hooks() *runner.Hooks {
	return o.m.Hooks(&runner.Hooks{Step: func(j job.Job, _ int) { o.hub.Notify(j.ID()) }})
}

// serverOptions sets what the server takes of o in so: the timed store,
// the hub, the HTTP metrics, and /metrics unless it is served alone.
func (o *serveObs) serverOptions(so *server.Options, metricsAlone bool) {
	so.Store, so.Hub = o.st, o.hub
	so.Middleware, so.Streams, so.AuthFailures = o.m.Middleware, o.m.Streams(), o.m.AuthFailures()
	if !metricsAlone {
		so.Metrics = o.m.Handler()
	}
}

// metricsHandler serves /metrics alone (--metrics-listen).
func (o *serveObs) metricsHandler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", o.m.Handler())
	return mux
}
