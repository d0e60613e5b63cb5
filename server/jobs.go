package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/batonwf/baton/api"
	"github.com/batonwf/baton/internal/render"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	"github.com/batonwf/baton/store"
)

// Listing limits.
const (
	defaultLimit = 100
	maxLimit     = 1000
)

// pathID returns the job ID of the path, checked.
func pathID(r *http.Request) (job.ID, error) {
	id := job.ID(r.PathValue("id"))
	if err := id.Check(); err != nil {
		return id, newProblem(CodeBadJobID, strings.TrimPrefix(err.Error(), "job: ")+" (in the path)")
	}
	return id, nil
}

// intParam reads query parameter name as an integer in [lo, hi], or def
// when absent.
func intParam(r *http.Request, name string, def, lo, hi int64) (int64, error) {
	q := query(r)
	if !q.Has(name) {
		return def, nil
	}
	v, err := strconv.ParseInt(q.Get(name), 10, 64)
	if err != nil || v < lo || v > hi {
		return 0, newProblem(CodeBadQuery, fmt.Sprintf("query parameter %s=%q: want an integer from %d to %d", name, q.Get(name), lo, hi))
	}
	return v, nil
}

// list is GET /api/v1/jobs.
func (s *srv) list(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	limit, err := intParam(r, "limit", defaultLimit, 1, maxLimit)
	if err != nil {
		return err
	}
	query := store.Query{Prefix: q.Get("prefix"), After: job.ID(q.Get("after"))}
	if query.After != "" {
		if err := query.After.Check(); err != nil {
			return newProblem(CodeBadQuery, fmt.Sprintf("query parameter after=%q is not a job ID (the next of a listing)", q.Get("after")))
		}
	}
	status := q.Get("status")
	if q.Has("status") {
		if _, err := job.ParseStatus(status); (err != nil && status != api.StatusDamaged) || status == "idle" {
			return newProblem(CodeBadQuery, fmt.Sprintf("query parameter status=%q: want running, succeeded, failed, cancelled or damaged", status))
		}
	}
	out, err := s.listJobs(r.Context(), query, status, int(limit))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// listJobs returns a page of at most limit summaries of the jobs query
// selects (its Limit is set here) with status ("" for any).
func (s *srv) listJobs(ctx context.Context, query store.Query, status string, limit int) (api.List, error) {
	keep := func(api.Summary) bool { return true }
	if status != "" {
		query.Unfinished = status == "running" || status == api.StatusDamaged
		keep = func(sm api.Summary) bool { return sm.Status == status }
	}
	out := api.List{Jobs: []api.Summary{}}
	// Read one more than the page to know whether there is a next one;
	// with a status filter the store filters what it can, and pages are
	// read until this one is full.
	for {
		query.Limit = limit + 1 - len(out.Jobs)
		infos, err := s.lister.List(ctx, query)
		if err != nil {
			return api.List{}, newProblem(CodeStoreUnavailable, "list jobs: "+err.Error())
		}
		for _, in := range infos {
			if sm := api.SummaryOfInfo(in); keep(sm) {
				out.Jobs = append(out.Jobs, sm)
			}
		}
		if len(infos) < query.Limit || len(out.Jobs) > limit {
			break
		}
		query.After = infos[len(infos)-1].ID
	}
	if len(out.Jobs) > limit {
		out.Jobs = out.Jobs[:limit]
		out.Next = out.Jobs[limit-1].ID
	}
	return out, nil
}

// load returns job id, now or at the version the query asks for.
func (s *srv) load(ctx context.Context, r *http.Request, id job.ID) (job.Job, error) {
	if !query(r).Has("version") {
		j, err := s.st.Load(ctx, id)
		if err != nil {
			return job.Job{}, s.storeProblem(err, id, "load")
		}
		return j, nil
	}
	v, err := intParam(r, "version", 0, 1, 1<<62)
	if err != nil {
		return job.Job{}, err
	}
	if s.historian == nil {
		return job.Job{}, newProblem(CodeBadQuery, "this store keeps no history: version is not available").forJob(string(id))
	}
	h, err := s.historian.History(ctx, id)
	if err != nil {
		return job.Job{}, s.storeProblem(err, id, "load the history of")
	}
	first, last := h.Origin.Version(), h.Origin.Version()+uint64(len(h.Steps))
	if uint64(v) < first || uint64(v) > last {
		return job.Job{}, newProblem(CodeVersionNotFound, fmt.Sprintf("job %s has versions %d to %d, not %d", id, first, last, v)).forJob(string(id))
	}
	j, err := h.At(uint64(v))
	if err != nil {
		return job.Job{}, s.storeProblem(fmt.Errorf("%w: %v", job.ErrCorrupt, err), id, "replay")
	}
	return j, nil
}

// get is GET /api/v1/jobs/{id}.
func (s *srv) get(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	q := query(r)
	nodes := true
	if v := q.Get("nodes"); q.Has("nodes") {
		if nodes, err = strconv.ParseBool(v); err != nil {
			return newProblem(CodeBadQuery, fmt.Sprintf("query parameter nodes=%q: want true or false", v))
		}
	}
	j, err := s.load(r.Context(), r, id)
	if err != nil {
		return err
	}
	out := api.JobOf(j, nodes)
	if !q.Has("version") {
		// A past version is the job as History.At made it, no more.
		out.Summary = s.stored(r.Context(), out.Summary)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// stored adds to sm the times of the job's first and last write, where
// the store tells them (store.Stat: one job's record, whatever the
// store holds).
func (s *srv) stored(ctx context.Context, sm api.Summary) api.Summary {
	if in, err := store.Stat(ctx, s.st, job.ID(sm.ID)); err == nil {
		sm = sm.WithInfo(in)
	}
	return sm
}

// node is GET /api/v1/jobs/{id}/node?path=P.
func (s *srv) node(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	if !r.URL.Query().Has("path") {
		return newProblem(CodeBadQuery, `query parameter path is required ("" is the root)`).forJob(string(id))
	}
	path := r.URL.Query().Get("path")
	j, err := s.load(r.Context(), r, id)
	if err != nil {
		return err
	}
	var found *api.Node
	j.Walk(func(n job.NodeInfo) bool {
		if n.Path == path {
			out := api.NodeOf(n, api.MaxNodeBytes)
			found = &out
			return false
		}
		return true
	})
	if found == nil {
		return newProblem(CodeNodeNotFound, fmt.Sprintf("job %s has no node at path %q", id, path)).forJob(string(id))
	}
	writeJSON(w, http.StatusOK, found)
	return nil
}

// graph is GET /api/v1/jobs/{id}/graph?format=dot|mermaid|svg.
func (s *srv) graph(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	draw, ctype := render.SVG, "image/svg+xml"
	text := func(f func(job.Job) string) func(job.Job) (string, error) {
		return func(j job.Job) (string, error) { return f(j), nil }
	}
	switch f := r.URL.Query().Get("format"); f {
	case "svg", "":
	case "dot":
		draw, ctype = text(render.Dot), "text/vnd.graphviz; charset=utf-8"
	case "mermaid":
		draw, ctype = text(render.Mermaid), "text/plain; charset=utf-8"
	default:
		return newProblem(CodeBadQuery, fmt.Sprintf("query parameter format=%q: want dot, mermaid or svg", f))
	}
	j, err := s.load(r.Context(), r, id)
	if err != nil {
		return err
	}
	out, err := draw(j)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", ctype)
	_, _ = w.Write([]byte(out))
	return nil
}

// cancel is POST /api/v1/jobs/{id}/cancel.
func (s *srv) cancel(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	req, err := s.cancelRequest(r, id)
	if err != nil {
		return err
	}
	if req.Reason == "" {
		req.Reason = "cancelled through the API"
	}
	j, err := s.cancelJob(r.Context(), id, req.Reason)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusAccepted, s.stored(r.Context(), api.SummaryOf(j)))
	return nil
}

// cancelRequest reads the body of a cancel route (a job's, a node's):
// {"reason": "..."}, optional, the reason at most MaxCancelReason bytes
// ("" when not given).
func (s *srv) cancelRequest(r *http.Request, id job.ID) (api.CancelRequest, error) {
	body, err := s.readBody(r)
	if err != nil {
		return api.CancelRequest{}, err
	}
	req := api.CancelRequest{}
	if len(body) > 0 {
		if bytes.HasPrefix(body, byteOrderMark) {
			return req, newProblem(CodeBadJSON, bomDetail).forJob(string(id))
		}
		if !utf8.Valid(body) {
			return req, newProblem(CodeBadRequest, "the body is not valid UTF-8").forJob(string(id))
		}
		dec := json.NewDecoder(strings.NewReader(string(body)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil {
			return req, newProblem(CodeBadJSON, `the body: want {"reason": "..."}: `+err.Error()).forJob(string(id))
		}
		if dec.More() {
			return req, newProblem(CodeBadJSON, `the body: data after {"reason": "..."}`).forJob(string(id))
		}
	}
	if len(req.Reason) > MaxCancelReason {
		return req, newProblem(CodeBadRequest, fmt.Sprintf("the reason is %d bytes; at most %d", len(req.Reason), MaxCancelReason)).forJob(string(id))
	}
	return req, nil
}

// cancelJob cancels job id for reason, unless it is cancelled already
// (the first reason is kept), and returns it as stored after the cancel.
func (s *srv) cancelJob(ctx context.Context, id job.ID, reason string) (job.Job, error) {
	j, err := s.st.Load(ctx, id)
	if err != nil {
		return job.Job{}, s.storeProblem(err, id, "cancel")
	}
	if _, ok := j.Cancelled(); ok {
		return j, nil
	}
	if j.Done() {
		return job.Job{}, newProblem(CodeJobFinished, fmt.Sprintf("job %s has finished (%s): there is nothing to cancel", id, j.Status())).forJob(string(id))
	}
	if err := s.canceller.Cancel(ctx, id, reason); err != nil {
		if errors.Is(err, runner.ErrFinished) {
			return job.Job{}, newProblem(CodeJobFinished, fmt.Sprintf("job %s finished before the cancel: there is nothing to cancel", id)).forJob(string(id))
		}
		return job.Job{}, s.storeProblem(err, id, "cancel")
	}
	if j, err = s.st.Load(ctx, id); err != nil {
		return job.Job{}, s.storeProblem(err, id, "load the cancelled")
	}
	return j, nil
}

// delete is DELETE /api/v1/jobs/{id}.
func (s *srv) delete(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	in, err := store.Stat(r.Context(), s.st, id)
	switch {
	case errors.Is(err, job.ErrCorrupt):
		// A damaged job is deleted: that is how it is removed.
	case err != nil:
		return s.storeProblem(err, id, "delete")
	case !in.Status.Settled():
		return newProblem(CodeJobRunning, fmt.Sprintf("job %s is %s: cancel it, and delete it once it has finished", id, in.Status)).forJob(string(id))
	}
	if err := s.deleter.Delete(r.Context(), id); err != nil {
		return s.storeProblem(err, id, "delete")
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
