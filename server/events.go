package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/batonwf/baton/api"
	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/server/live"
)

// streamsRetryAfter is the Retry-After of 429 too_many_streams.
const streamsRetryAfter = 10

// startHub sets s.hub: o.Hub, or one of the server's own over a store
// that keeps history; and shuts it down when o.Closing closes.
func (s *srv) startHub(o Options) error {
	s.hub = o.Hub
	if s.hub == nil && s.historian != nil {
		h, err := live.New(live.Options{
			Store: o.Store, Now: o.Now, Logger: o.Logger, Poll: o.PollInterval,
			MaxStreams: o.MaxStreams, Changed: job.Changed,
		})
		if err != nil {
			return fmt.Errorf("server: %w", err)
		}
		s.hub = h
	}
	if s.hub != nil && o.Closing != nil {
		go func() {
			<-o.Closing
			_ = s.hub.Shutdown(context.Background())
		}()
	}
	return nil
}

// jobEvents is GET /api/v1/jobs/{id}/events: the job's event stream.
func (s *srv) jobEvents(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	sw := &streamWriter{ResponseWriter: w, gauge: s.streams}
	defer sw.done()
	if err := s.hub.ServeJob(sw, r, id, jobEncoder{r.Context(), s}); err != nil {
		return s.hubProblem(err, id)
	}
	return nil
}

// listEvents is GET /api/v1/events: the list's event stream.
func (s *srv) listEvents(w http.ResponseWriter, r *http.Request) error {
	sw := &streamWriter{ResponseWriter: w, gauge: s.streams}
	defer sw.done()
	if err := s.hub.ServeList(sw, r, listEncoder{}); err != nil {
		return s.hubProblem(err, "")
	}
	return nil
}

// hubProblem is the answer to an error of the hub about job id ("" for
// the list).
func (s *srv) hubProblem(err error, id job.ID) *problem {
	switch {
	case errors.Is(err, live.ErrTooManyStreams):
		p := newProblem(CodeTooManyStreams, fmt.Sprintf("too many open event streams (%v): close one, or follow the job by long polling its history", err))
		p.retryAfter = streamsRetryAfter
		return p
	case errors.Is(err, live.ErrShutdown):
		return newProblem(CodeShuttingDown, "the server is shutting down: no new event streams; try another server or later")
	case id == "":
		return newProblem(CodeStoreUnavailable, "follow the job list: "+err.Error())
	}
	return s.storeProblem(err, id, "follow")
}

// streamWriter counts an event stream in Options.Streams from its
// headers (text/event-stream, 200) to the end of its handler.
type streamWriter struct {
	http.ResponseWriter
	gauge Gauge
	open  bool
}

func (w *streamWriter) WriteHeader(status int) {
	if !w.open && w.gauge != nil && status == http.StatusOK &&
		strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream") {
		w.open = true
		w.gauge.Inc()
	}
	w.ResponseWriter.WriteHeader(status)
}

// Unwrap lets http.ResponseController reach the connection.
func (w *streamWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *streamWriter) done() {
	if w.open {
		w.open = false
		w.gauge.Dec()
	}
}

// jobEncoder makes the data of a job stream's events, in the shapes of
// the job and history routes (api.Job, api.StepEvent, api.Summary). A
// snapshot and the end carry the store's times as the job route does (one
// store.Stat each; a step reads nothing more).
type jobEncoder struct {
	ctx context.Context
	s   *srv
}

var _ live.Encoder = jobEncoder{}

func (e jobEncoder) Snapshot(j job.Job) any {
	out := api.JobOf(j, true)
	out.Summary = e.s.stored(e.ctx, out.Summary)
	return out
}

func (e jobEncoder) End(j job.Job) any { return e.s.stored(e.ctx, api.SummaryOf(j)) }

// Step gives each result the action of its node: every result a step
// applied changed its node, so the changed nodes name them all.
func (jobEncoder) Step(steps []live.Step, changed []job.NodeInfo) any {
	out := api.StepEvent{Steps: make([]api.Step, 0, len(steps)), Changed: make([]api.Node, 0, len(changed))}
	names := make(map[string]string, len(changed))
	for _, n := range changed {
		out.Changed = append(out.Changed, api.NodeOf(n, api.ClipBytes))
		if n.Kind == ast.KindAct {
			names[n.Path] = n.Action
		}
	}
	for _, st := range steps {
		as := api.Step{
			Version: st.Version, Created: st.Created, Dispatched: st.Dispatched,
			Status: st.Status.String(), Settled: st.Settled, Total: st.Total,
		}
		if !st.Time.IsZero() {
			t := st.Time.UTC()
			as.Time = &t
		}
		for _, res := range st.Results {
			as.Results = append(as.Results, api.ResultOf(res, names))
		}
		if st.Cancelled {
			as.Cancel = &api.Cancel{Reason: st.Cancel}
		}
		out.Steps = append(out.Steps, as)
	}
	return out
}

// listEncoder makes the data of the list stream's changes events.
type listEncoder struct{}

var _ live.ListEncoder = listEncoder{}

func (listEncoder) Changes(cs []live.Change) any {
	out := api.Changes{Changes: make([]api.Change, len(cs))}
	for i, c := range cs {
		out.Changes[i] = api.Change{Seq: c.Seq, ID: string(c.ID), Created: c.Created, Deleted: c.Deleted, Version: c.Version, At: c.At.UTC()}
		if !c.Deleted {
			out.Changes[i].Status = c.Status.String()
		}
	}
	return out
}

// serveMetrics is GET /metrics: Options.Metrics.
func (s *srv) serveMetrics(w http.ResponseWriter, r *http.Request) error {
	s.metrics.ServeHTTP(w, r)
	return nil
}
