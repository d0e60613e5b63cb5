package server

import (
	"net/http"

	"github.com/batonwf/baton/api"
	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
)

// validate is POST /api/v1/workflows/validate.
func (s *srv) validate(w http.ResponseWriter, r *http.Request) error {
	root, err := s.decodeWorkflow(r)
	if err != nil {
		return err
	}
	norm, err := ast.Encode(root)
	if err != nil {
		return newProblem(CodeInvalidWorkflow, err.Error())
	}
	tr, err := job.New("validate", root)
	if err != nil {
		return newProblem(CodeInvalidWorkflow, err.Error())
	}
	missing, known, err := s.unknownActions(r.Context(), root)
	if err != nil {
		return err
	}
	if missing == nil {
		missing = []string{}
	}
	out := api.Validation{Workflow: rawJSON(norm), Nodes: api.NodesOf(tr.Job, api.ClipBytes), Unknown: missing, Known: known}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// rawJSON is JSON written as it is.
type rawJSON []byte

func (b rawJSON) MarshalJSON() ([]byte, error) { return b, nil }

// workers is GET /api/v1/workers.
func (s *srv) workers(w http.ResponseWriter, r *http.Request) error {
	out := api.Workers{Workers: []api.Worker{}}
	if s.workerLister != nil {
		ws, err := s.workerLister.Workers(r.Context())
		if err != nil {
			return newProblem(CodeStoreUnavailable, "list the workers: "+err.Error())
		}
		out.Known = true
		out.Workers = append(out.Workers, ws...)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// actions is GET /api/v1/actions.
func (s *srv) actions(w http.ResponseWriter, r *http.Request) error {
	out := api.Actions{Actions: []string{}}
	if s.actionLister != nil {
		names, err := s.actionLister.Actions(r.Context())
		if err != nil {
			return newProblem(CodeStoreUnavailable, "list the actions: "+err.Error())
		}
		out.Known = true
		out.Actions = append(out.Actions, names...)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// health is the body of /healthz and /readyz.
type health struct {
	Status string `json:"status"`
}

// healthz is GET /healthz: the process answers.
func (s *srv) healthz(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, health{"ok"})
	return nil
}

// readyz is GET /readyz: the store answers (a Stat of a job that need not
// exist) and the runner, if it can tell, runs. No details: it needs no
// token.
func (s *srv) readyz(w http.ResponseWriter, r *http.Request) error {
	ready := !s.isClosing()
	if ready {
		if _, err := s.statJob(r, "readyz"); err != nil {
			if p, ok := err.(*problem); !ok || p.code != CodeJobNotFound {
				ready = false
			}
		}
	}
	if ready && s.readier != nil {
		ready = s.readier.Ready(r.Context()) == nil
	}
	if !ready {
		writeJSON(w, http.StatusServiceUnavailable, health{"unavailable"})
		return nil
	}
	writeJSON(w, http.StatusOK, health{"ok"})
	return nil
}
