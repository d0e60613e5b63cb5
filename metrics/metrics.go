package metrics

import (
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
)

// Metrics holds baton's metrics, registered with one registerer. Its
// methods are safe for concurrent use, and nil-safe: a nil *Metrics
// measures nothing (Hooks, Store and Middleware return what they are
// given), so a program without metrics passes nil around.
type Metrics struct {
	reg      prometheus.Registerer
	gatherer prometheus.Gatherer // reg, if it is one

	actions atomic.Pointer[runner.Registry] // the action label's values (Actions)

	jobsSubmitted prometheus.Counter
	jobsFinished  *prometheus.CounterVec // status
	jobsRunning   prometheus.Gauge
	steps         prometheus.Counter
	stepDuration  prometheus.Histogram
	stepResults   prometheus.Histogram
	ignored       *prometheus.CounterVec // reason

	actionsDispatched *prometheus.CounterVec   // action
	actionsFinished   *prometheus.CounterVec   // action, outcome
	actionDuration    *prometheus.HistogramVec // action
	actionWait        *prometheus.HistogramVec // action
	actionsInFlight   *prometheus.GaugeVec     // action

	storeDuration  *prometheus.HistogramVec // op
	storeConflicts prometheus.Counter

	httpRequests     *prometheus.CounterVec   // route, method, code
	httpDuration     *prometheus.HistogramVec // route, method
	httpStreams      prometheus.Gauge
	httpAuthFailures prometheus.Counter

	place placementMetrics // the Placement hook's (placement.go)

	running  runningJobs
	waits    dispatchTimes
	panicked sync.Map // actionKey -> struct{}: ActionPanicked, until ActionFinished
}

// Bucket layouts. Every histogram also has native-histogram resolution
// (a bucket factor of 1.1) for servers that scrape it.
var (
	// stepBuckets: a transition takes from 100 µs (memory) to seconds (a
	// slow disk or a remote store), up to 10 s.
	stepBuckets = prometheus.ExponentialBucketsRange(100e-6, 10, 16)
	// actionBuckets: a handler runs, or an action waits, from 1 ms to 1 h.
	actionBuckets = prometheus.ExponentialBucketsRange(1e-3, 3600, 22)
	// resultBuckets: results applied per step, 1 to 4096 (the runners'
	// largest batch).
	resultBuckets = prometheus.ExponentialBuckets(1, 2, 13)
)

const nativeFactor = 1.1

func histogramOpts(name, help string, buckets []float64) prometheus.HistogramOpts {
	return prometheus.HistogramOpts{
		Name: name, Help: help, Buckets: buckets,
		NativeHistogramBucketFactor:     nativeFactor,
		NativeHistogramMaxBucketNumber:  160,
		NativeHistogramMinResetDuration: time.Hour,
	}
}

// New makes baton's metrics and registers them with reg; with a nil reg,
// with a registry of its own (never prometheus.DefaultRegisterer: a
// program says which registry it serves). It also registers
// baton_build_info and the Go and process collectors, unless reg has them
// already (prometheus.DefaultRegisterer does). A reg that already holds
// baton's metrics (New called twice with it) is an error.
func New(reg prometheus.Registerer) (*Metrics, error) {
	if reg == nil {
		reg = prometheus.NewRegistry()
	}
	m := &Metrics{reg: reg}
	m.gatherer, _ = reg.(prometheus.Gatherer)

	m.jobsSubmitted = prometheus.NewCounter(prometheus.CounterOpts{Name: "baton_jobs_submitted_total", Help: "Jobs created."})
	m.jobsFinished = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "baton_jobs_finished_total", Help: "Jobs settled, by final status."}, []string{"status"})
	m.jobsRunning = prometheus.NewGauge(prometheus.GaugeOpts{Name: "baton_jobs_running", Help: "Unfinished jobs this process has seen a step of and not seen finish."})
	m.steps = prometheus.NewCounter(prometheus.CounterOpts{Name: "baton_steps_total", Help: "Transitions saved (a job's creation included)."})
	m.stepDuration = prometheus.NewHistogram(histogramOpts("baton_step_duration_seconds", "Time to load a job, apply results (Restart) and commit the transition; exemplars name the job.", stepBuckets))
	m.stepResults = prometheus.NewHistogram(histogramOpts("baton_step_results", "Results applied per step (batching).", resultBuckets))
	m.ignored = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "baton_results_ignored_total", Help: "Results the reducer did not apply, by reason."}, []string{"reason"})

	m.actionsDispatched = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "baton_actions_dispatched_total", Help: "Actions handed to the transport, by action name (registered names; the rest are other)."}, []string{"action"})
	m.actionsFinished = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "baton_actions_finished_total", Help: "Handler runs ended, by action name and outcome: succeeded, failed, panicked, timed_out."}, []string{"action", "outcome"})
	m.actionDuration = prometheus.NewHistogramVec(histogramOpts("baton_action_duration_seconds", "Handler run time, by action name; exemplars name the job and the action.", actionBuckets), []string{"action"})
	m.actionWait = prometheus.NewHistogramVec(histogramOpts("baton_action_wait_seconds", "Time from an action's dispatch to its handler's start, for actions dispatched and started in this process: the capacity signal.", actionBuckets), []string{"action"})
	m.actionsInFlight = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "baton_actions_in_flight", Help: "Handlers running, by action name."}, []string{"action"})

	m.storeDuration = prometheus.NewHistogramVec(histogramOpts("baton_store_operation_duration_seconds", "Store operations, by op: create, save, load, stat, list, history, delete, sweep.", stepBuckets), []string{"op"})
	m.storeConflicts = prometheus.NewCounter(prometheus.CounterOpts{Name: "baton_store_conflicts_total", Help: "Saves refused because the job changed since it was loaded (optimistic-concurrency losses)."})

	m.httpRequests = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "baton_http_requests_total", Help: "HTTP requests answered, by route pattern, method and status code."}, []string{"route", "method", "code"})
	m.httpDuration = prometheus.NewHistogramVec(histogramOpts("baton_http_request_duration_seconds", "HTTP request time, by route pattern and method; event streams are not timed.", stepBuckets), []string{"route", "method"})
	m.httpStreams = prometheus.NewGauge(prometheus.GaugeOpts{Name: "baton_http_streams", Help: "Open event streams."})
	m.httpAuthFailures = prometheus.NewCounter(prometheus.CounterOpts{Name: "baton_http_auth_failures_total", Help: "Requests refused for a missing or wrong token."})

	m.place = newPlacementMetrics()

	build := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "baton_build_info", Help: "What runs: baton's module version and VCS revision, and the Go version; always 1."}, []string{"version", "revision", "goversion"})
	build.WithLabelValues(buildInfo()).Set(1)

	for _, c := range append([]prometheus.Collector{
		m.jobsSubmitted, m.jobsFinished, m.jobsRunning, m.steps, m.stepDuration, m.stepResults, m.ignored,
		m.actionsDispatched, m.actionsFinished, m.actionDuration, m.actionWait, m.actionsInFlight,
		m.storeDuration, m.storeConflicts,
		m.httpRequests, m.httpDuration, m.httpStreams, m.httpAuthFailures,
		build,
	}, m.place.collectors()...) {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("metrics: register: %w", err)
		}
	}
	for _, c := range []prometheus.Collector{collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})} {
		if err := reg.Register(c); err != nil {
			if are := (prometheus.AlreadyRegisteredError{}); !errors.As(err, &are) {
				return nil, fmt.Errorf("metrics: register: %w", err)
			}
		}
	}

	// Every series whose label values are known up front exists from the
	// start, at zero: dashboards and rates see them before the first event.
	for _, s := range []job.Status{job.StatusSucceeded, job.StatusFailed, job.StatusCancelled} {
		m.jobsFinished.WithLabelValues(s.String())
	}
	for _, r := range ignoreReasons {
		m.ignored.WithLabelValues(r)
	}
	for _, op := range storeOps {
		m.storeDuration.WithLabelValues(op)
	}
	m.place.init()
	m.initAction(otherAction)
	return m, nil
}

// buildInfo returns the labels of baton_build_info: baton's module
// version ("(devel)" when built in its own tree), the VCS revision it was
// built from ("unknown" if not recorded, "-dirty" appended for a modified
// tree) and the Go version.
func buildInfo() (version, revision, goversion string) {
	version, revision, goversion = "unknown", "unknown", runtime.Version()
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return
	}
	const module = "github.com/batonwf/baton"
	if bi.Main.Path == module {
		version = bi.Main.Version
	} else {
		for _, d := range bi.Deps {
			if d.Path == module {
				version = d.Version
			}
		}
	}
	dirty := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			revision = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if dirty && revision != "unknown" {
		revision += "-dirty"
	}
	return clipValue(version, 64), clipValue(revision, 64), clipValue(goversion, 64)
}

// Actions makes the names registered in reg, now and later, the values
// the action label takes; every other action name counts as "other",
// since a workflow may name anything. Without it every action is
// "other". The series of the names registered now are made at once, at
// zero.
func (m *Metrics) Actions(reg *runner.Registry) {
	if m == nil || reg == nil {
		return
	}
	m.actions.Store(reg)
	for _, name := range reg.Names() {
		m.initAction(name)
	}
}

// otherAction is the action label of every name not registered.
const otherAction = "other"

// Outcomes of a handler's run (the outcome label).
const (
	outcomeSucceeded = "succeeded"
	outcomeFailed    = "failed"
	outcomePanicked  = "panicked"
	outcomeTimedOut  = "timed_out"
)

func (m *Metrics) initAction(name string) {
	m.actionsDispatched.WithLabelValues(name)
	for _, o := range []string{outcomeSucceeded, outcomeFailed, outcomePanicked, outcomeTimedOut} {
		m.actionsFinished.WithLabelValues(name, o)
	}
	m.actionDuration.WithLabelValues(name)
	m.actionWait.WithLabelValues(name)
	m.actionsInFlight.WithLabelValues(name)
	m.place.initAction(name)
}

// actionLabel returns the action label of the action called name.
func (m *Metrics) actionLabel(name string) string {
	if reg := m.actions.Load(); reg != nil {
		if _, ok := reg.Lookup(name); ok && name != otherAction && utf8.ValidString(name) {
			return name
		}
	}
	return otherAction
}

// Handler returns the handler of the metrics endpoint: promhttp over the
// registerer given to New, with OpenMetrics offered (which carries the
// exemplars). The registerer must also be a prometheus.Gatherer (a
// *prometheus.Registry is); if it is not, the handler answers 500 saying
// so. Serve it with a read token, or alone on a listener of its own.
func (m *Metrics) Handler() http.Handler {
	if m == nil || m.gatherer == nil {
		return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "metrics: no metrics, or a registerer that cannot be gathered", http.StatusInternalServerError)
		})
	}
	return promhttp.HandlerFor(m.gatherer, promhttp.HandlerOpts{EnableOpenMetrics: true, ErrorHandling: promhttp.ContinueOnError})
}

// Streams returns the gauge of open event streams
// (baton_http_streams): the server adds one when a stream opens and
// subtracts it when the stream ends. A nil *Metrics gives a gauge that
// is registered nowhere.
func (m *Metrics) Streams() prometheus.Gauge {
	if m == nil {
		return prometheus.NewGauge(prometheus.GaugeOpts{Name: "baton_http_streams", Help: "unregistered"})
	}
	return m.httpStreams
}

// AuthFailures returns the counter of requests refused for a missing or
// wrong token (baton_http_auth_failures_total). A nil *Metrics gives a
// counter that is registered nowhere.
func (m *Metrics) AuthFailures() prometheus.Counter {
	if m == nil {
		return prometheus.NewCounter(prometheus.CounterOpts{Name: "baton_http_auth_failures_total", Help: "unregistered"})
	}
	return m.httpAuthFailures
}

// exemplarBudget is what the labels of one exemplar may hold in all,
// names and values, counted in runes: client_golang refuses more, and
// ObserveWithExemplar panics on what it refuses.
const exemplarBudget = prometheus.ExemplarMaxRunes

// exemplar returns the exemplar labels job_id and, if actionID is not
// "", action_id, each clipped so that together they stay within
// exemplarBudget runes: the action ID takes at most half of what is left
// after the names, the job ID the rest.
func exemplar(id job.ID, actionID string) prometheus.Labels {
	const jobName, actionName = "job_id", "action_id"
	if actionID == "" {
		return prometheus.Labels{jobName: clipValue(string(id), exemplarBudget-len(jobName))}
	}
	left := exemplarBudget - len(jobName) - len(actionName)
	a := clipValue(actionID, left/2)
	j := clipValue(string(id), left-utf8.RuneCountInString(a))
	return prometheus.Labels{jobName: j, actionName: a}
}

// clipValue returns s as valid UTF-8 of at most max runes.
func clipValue(s string, max int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	n := 0
	for i := range s {
		if n == max {
			return s[:i]
		}
		n++
	}
	return s
}

// observeWithExemplar observes v in o with the exemplar ex when o takes
// exemplars, else plainly. It never panics: ex is within the budget and
// valid UTF-8 (see exemplar).
func observeWithExemplar(o prometheus.Observer, v float64, ex prometheus.Labels) {
	if eo, ok := o.(prometheus.ExemplarObserver); ok {
		eo.ObserveWithExemplar(v, ex)
		return
	}
	o.Observe(v)
}
