// Package metrics gives baton's Prometheus metrics, on
// github.com/prometheus/client_golang: runner hooks (Hooks), a store
// wrapper (Store), an HTTP middleware (Middleware) and the endpoint that
// serves them (Handler). docs/metrics.md lists every metric.
//
//	m, err := metrics.New(reg)              // reg: a *prometheus.Registry
//	m.Actions(handlers)                     // the action label's values
//	st = m.Store(st)                        // timed store operations
//	hooks := m.Hooks(nil)                   // a runner's Options.Hooks
//	mux.Handle("GET /metrics", m.Handler()) // OpenMetrics, with exemplars
//	srv.Handler = m.Middleware(mux)         // wraps the ServeMux itself
//
// It is the only package of baton that imports Prometheus: ast, job, store
// and runner never do (internal/archtest checks it), so a program that
// does not want it does not build it.
//
// # Contracts
//
//   - New registers everything with the registerer it is given, never
//     with prometheus.DefaultRegisterer unless that is what it is given,
//     and adds baton_build_info and the Go and process collectors unless
//     the registerer has them already.
//   - Labels stay bounded, whatever the input: action takes only the
//     names registered in the runner.Registry given to Actions (the rest
//     count as "other", since a workflow may name anything); route is the
//     ServeMux pattern, never the path; method is a known method or
//     "other"; job IDs never become labels. Every series whose label
//     values are known up front exists from New (or Actions) on, at zero:
//     after the first job, more jobs add no series.
//   - Job IDs and action IDs go in exemplars of
//     baton_step_duration_seconds (job_id) and
//     baton_action_duration_seconds (job_id, action_id), clipped so an
//     exemplar stays within client_golang's 128 runes, which it refuses
//     with a panic; a slow bucket links to its job.
//   - The hooks never panic: a runner does not recover a panic in a hook
//     (only in handlers), and one would end the process.
//   - baton_action_wait_seconds is measured for actions dispatched and
//     started in this process (runner/inmem, or a ZooKeeper or Kafka
//     process that runs its own workers): the dispatch and the start are
//     paired in memory, at most 100,000 at a time, each waiting at most an
//     hour for its other half.
//   - baton_jobs_running counts the jobs this process has seen a step of
//     and not seen finish. With one process (runner/inmem) that is every
//     unfinished job it runs; with several processes on one ZooKeeper or
//     Kafka runner, a job another process finished stays counted until
//     this process restarts.
//   - A nil *Metrics measures nothing: its Hooks, Store and Middleware
//     return what they are given.
package metrics
