package server

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/batonwf/baton/api"
	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	"github.com/batonwf/baton/store"
)

// submit is POST /api/v1/jobs[?id=ID]: check everything, then submit.
func (s *srv) submit(w http.ResponseWriter, r *http.Request) error {
	q := query(r)
	id := job.ID(q.Get("id"))
	if !q.Has("id") {
		id = s.newID()
	}
	setJob(w, string(id))
	if err := id.Check(); err != nil {
		return newProblem(CodeBadJobID, strings.TrimPrefix(err.Error(), "job: ")+" (query parameter id)")
	}
	root, err := s.decodeWorkflow(r)
	if err != nil {
		return err
	}
	j, created, err := s.submitJob(r.Context(), id, root)
	if err != nil {
		return err
	}
	w.Header().Set("Location", "/api/v1/jobs/"+url.PathEscape(string(id)))
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	writeJSON(w, status, s.stored(r.Context(), api.SummaryOf(j)))
	return nil
}

// submitJob checks root's actions and submits it as job id. A job id of
// the same workflow is returned as it is (created false: a retry); of
// another workflow, it is 409 job_exists.
func (s *srv) submitJob(ctx context.Context, id job.ID, root ast.Node) (j job.Job, created bool, err error) {
	if err := s.checkActions(ctx, root); err != nil {
		return job.Job{}, false, err
	}
	// A retry of a submit that was done is told by the store's
	// create-if-absent (store.ErrExists), and answered from the store.
	if err := s.checkUnfinished(ctx); err != nil {
		// A retry of a job that exists is no new job: answered as such
		// though the server takes no more.
		if j, e := s.existing(ctx, id, root); !errors.Is(e, store.ErrNotFound) {
			return j, false, e
		}
		return job.Job{}, false, err
	}
	made := s.jobSubmitter != nil
	if made {
		j, err = s.jobSubmitter.SubmitJob(ctx, id, root)
	} else {
		err = s.submitter.Submit(ctx, id, root)
	}
	if err != nil {
		switch {
		case errors.Is(err, store.ErrExists):
			j, err := s.existing(ctx, id, root)
			return j, false, err
		case errors.Is(err, runner.ErrUnknownActions):
			return job.Job{}, false, newProblem(CodeUnknownAction, fmt.Sprintf("job %s: %v", id, err)).forJob(string(id))
		}
		return job.Job{}, false, s.storeProblem(err, id, "submit")
	}
	s.unfinished.added()
	// The answer is the job as created (the version and the actions it
	// dispatched), with the times the store tells (store.Stat, one job's
	// record, in the caller's stored): the job is not read back. A runner
	// that does not return it has it made again here (job.New is
	// deterministic: the same version and first actions).
	if !made {
		tr, err := job.New(id, root)
		if err != nil {
			return job.Job{}, false, s.storeProblem(err, id, "summarise the submitted")
		}
		j = tr.Job
	}
	return j, true, nil
}

// existing returns job id if it runs root's workflow, and 409 job_exists
// if it runs another. It returns store.ErrNotFound, unwrapped, when
// there is no such job.
func (s *srv) existing(ctx context.Context, id job.ID, root ast.Node) (job.Job, error) {
	j, err := s.st.Load(ctx, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return job.Job{}, err
	case err != nil:
		return job.Job{}, s.storeProblem(err, id, "load")
	case !ast.Equal(j.Workflow(), root):
		return job.Job{}, newProblem(CodeJobExists, fmt.Sprintf("job %s exists with another workflow; choose another id", id)).forJob(string(id))
	}
	return j, nil
}

// newID names a job the client did not name: "job-" and the time, and
// random hex to keep two in one millisecond apart.
func (s *srv) newID() job.ID {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return job.ID("job-" + s.now().UTC().Format("20060102T150405.000Z") + "-" + hex.EncodeToString(b[:]))
}

// decodeWorkflow reads and decodes the body as a workflow: 400 bad_json
// when it is not JSON of the right shape, 422 invalid_workflow with every
// problem when the tree is invalid.
func (s *srv) decodeWorkflow(r *http.Request) (ast.Node, error) {
	body, err := s.readBody(r)
	if err != nil {
		return ast.Node{}, err
	}
	return decodeWorkflowBytes(body)
}

// decodeWorkflowBytes decodes body as a workflow, as decodeWorkflow does.
func decodeWorkflowBytes(body []byte) (ast.Node, error) {
	if len(body) == 0 {
		return ast.Node{}, newProblem(CodeBadJSON, `the body is empty: send a workflow like {"version":1,"root":...}`)
	}
	if bytes.HasPrefix(body, byteOrderMark) {
		return ast.Node{}, newProblem(CodeBadJSON, bomDetail)
	}
	if !utf8.Valid(body) {
		n := 0
		for n < len(body) {
			r, size := utf8.DecodeRune(body[n:])
			if r == utf8.RuneError && size == 1 {
				break
			}
			n += size
		}
		return ast.Node{}, newProblem(CodeBadJSON, fmt.Sprintf("the body is not valid UTF-8 at byte %d", n))
	}
	root, err := ast.Decode(body)
	var ae *ast.Error
	switch {
	case errors.As(err, &ae):
		p := newProblem(CodeInvalidWorkflow, fmt.Sprintf("the workflow has %d problem%s; the first: %s", len(ae.Problems), plural(len(ae.Problems)), ae.Problems[0]))
		p.problems = astProblems(ae.Problems)
		return ast.Node{}, p
	case err != nil:
		return ast.Node{}, newProblem(CodeBadJSON, "the body: "+strings.TrimPrefix(err.Error(), "workflow: "))
	}
	return root, nil
}

// checkActions refuses a workflow naming actions no worker runs, when
// the runner can tell.
func (s *srv) checkActions(ctx context.Context, root ast.Node) error {
	missing, known, err := s.unknownActions(ctx, root)
	if err != nil || !known || len(missing) == 0 {
		return err
	}
	var ps []api.PathProblem
	ast.Walk(root, func(path string, n *ast.Node) bool {
		if n.Kind == ast.KindAct && slices.Contains(missing, n.Action) {
			ps = append(ps, api.PathProblem{Path: path, Message: fmt.Sprintf("no worker runs action %q", n.Action)})
		}
		return true
	})
	p := newProblem(CodeUnknownAction, fmt.Sprintf("no worker runs action%s %s", plural(len(missing)), strings.Join(missing, ", ")))
	p.problems = ps
	return p
}

// unknownActions returns the actions of root no worker runs, and whether
// the runner can tell.
func (s *srv) unknownActions(ctx context.Context, root ast.Node) ([]string, bool, error) {
	if s.actionLister == nil {
		return nil, false, nil
	}
	if c, ok := s.actionLister.(actionChecker); ok {
		return c.missingActions(root), true, nil
	}
	names, err := s.actionLister.Actions(ctx)
	if err != nil {
		return nil, false, newProblem(CodeStoreUnavailable, "list the actions workers run: "+err.Error())
	}
	var missing []string
	ast.Walk(root, func(_ string, n *ast.Node) bool {
		if n.Kind == ast.KindAct && !slices.Contains(names, n.Action) && !slices.Contains(missing, n.Action) {
			missing = append(missing, n.Action)
		}
		return true
	})
	slices.Sort(missing)
	return missing, true, nil
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// byteOrderMark is UTF-8's, which some editors put first in a file; JSON
// has none. A body that starts with it is refused naming it (bomDetail),
// on every route that takes JSON, rather than as an invalid character.
var byteOrderMark = []byte("\xef\xbb\xbf")

const bomDetail = "the body starts with a byte-order mark: send JSON without one"
