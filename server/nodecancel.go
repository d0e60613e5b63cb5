package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/batonwf/baton/api"
	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
)

// NodeCanceller is a runner that cancels one running node of a job
// (job.CancelNode): a missing job is an error wrapping store.ErrNotFound,
// a finished one runner.ErrFinished. It may return before the cancel is
// applied.
type NodeCanceller interface {
	CancelNode(ctx context.Context, id job.ID, name, reason string) error
}

// cancelNode is POST /api/v1/jobs/{id}/nodes/{name}/cancel: the body,
// optional, is {"reason": "..."}, as the job's cancel route takes. The
// node called name is cancelled if it runs; if it does not (idle, or
// settled), it is left as it is and the answer says so (Sent false).
func (s *srv) cancelNode(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	name := r.PathValue("name")
	if msg := ast.CheckSignalName(name); msg != "" {
		return newProblem(CodeBadRequest, "node "+msg+" (in the path)").forJob(string(id))
	}
	req, err := s.cancelRequest(r, id)
	if err != nil {
		return err
	}
	if req.Reason == "" {
		req.Reason = "cancelled through the API"
	}
	ctx := r.Context()
	j, err := s.st.Load(ctx, id)
	if err != nil {
		return s.storeProblem(err, id, "cancel a node of")
	}
	n, ok := namedNode(j, name)
	switch {
	case j.Done():
		return newProblem(CodeJobFinished, fmt.Sprintf("job %s has finished (%s): there is no node to cancel", id, j.Status())).forJob(string(id))
	case !ok:
		return newProblem(CodeNodeNotFound, fmt.Sprintf("job %s has no node called %s", id, name)).forJob(string(id))
	}
	out := api.NodeCancelled{Job: string(id), Node: name, Path: n.Path}
	if n.Status == job.StatusRunning {
		if s.isClosing() {
			return newProblem(CodeShuttingDown, "the server is shutting down: the node was not cancelled; try again later")
		}
		err := s.nodeCanceller.CancelNode(ctx, id, name, req.Reason)
		switch {
		case errors.Is(err, runner.ErrFinished):
			return newProblem(CodeJobFinished, fmt.Sprintf("job %s finished before the cancel: there is no node to cancel", id)).forJob(string(id))
		case err != nil:
			return s.storeProblem(err, id, "cancel a node of")
		}
		out.Sent = true
		if j, err = s.st.Load(ctx, id); err != nil {
			return s.storeProblem(err, id, "load the")
		}
		n, _ = namedNode(j, name)
	}
	out.Status = n.Status.String()
	if n.Failure != nil {
		out.Failure = api.FailureOf(*n.Failure)
	}
	out.Summary = s.stored(ctx, api.SummaryOf(j))
	writeJSON(w, http.StatusAccepted, out)
	return nil
}

// namedNode returns the node called name in j, and whether there is one.
func namedNode(j job.Job, name string) (job.NodeInfo, bool) {
	var out job.NodeInfo
	found := false
	j.Walk(func(n job.NodeInfo) bool {
		if n.Name == name {
			out, found = n, true
		}
		return !found
	})
	return out, found
}
