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
	"time"
	"unicode/utf8"

	"github.com/batonwf/baton/api"
	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	"github.com/batonwf/baton/store"
)

// submit is POST /api/v1/jobs[?id=ID]: check everything, then submit.
func (s *srv) submit(w http.ResponseWriter, r *http.Request) error {
	id := job.ID(r.URL.Query().Get("id"))
	if !r.URL.Query().Has("id") {
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
	if err := s.checkActions(r.Context(), root); err != nil {
		return err
	}
	// A retry of a submit that was done is told by the store's
	// create-if-absent (store.ErrExists), and answered from the store.
	if err := s.checkUnfinished(r.Context()); err != nil {
		// A retry of a job that exists is no new job: answered as such
		// though the server takes no more.
		if e := s.existing(r.Context(), w, id, root); !errors.Is(e, store.ErrNotFound) {
			return e
		}
		return err
	}
	if err := s.submitter.Submit(r.Context(), id, root); err != nil {
		switch {
		case errors.Is(err, store.ErrExists):
			return s.existing(r.Context(), w, id, root)
		case errors.Is(err, runner.ErrUnknownActions):
			return newProblem(CodeUnknownAction, fmt.Sprintf("job %s: %v", id, err)).forJob(string(id))
		}
		return s.storeProblem(err, id, "submit")
	}
	s.mu.Lock()
	s.unfinished++
	s.mu.Unlock()
	// The answer is the job as created (job.New: the version and the
	// actions it dispatched), with the times the store tells (store.Stat,
	// one job's record): the job is not read back.
	tr, err := job.New(id, root)
	if err != nil {
		return s.storeProblem(err, id, "summarise the submitted")
	}
	w.Header().Set("Location", "/api/v1/jobs/"+url.PathEscape(string(id)))
	writeJSON(w, http.StatusCreated, s.stored(r.Context(), api.SummaryOf(tr.Job)))
	return nil
}

// existing answers a submit of a job that exists: 200 with its summary if
// it runs the same workflow, 409 job_exists if not. It returns
// store.ErrNotFound, unanswered, when there is no such job.
func (s *srv) existing(ctx context.Context, w http.ResponseWriter, id job.ID, root ast.Node) error {
	j, err := s.st.Load(ctx, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return err
	case err != nil:
		return s.storeProblem(err, id, "load")
	case !ast.Equal(j.Workflow(), root):
		return newProblem(CodeJobExists, fmt.Sprintf("job %s exists with another workflow; choose another id", id)).forJob(string(id))
	}
	w.Header().Set("Location", "/api/v1/jobs/"+url.PathEscape(string(id)))
	writeJSON(w, http.StatusOK, s.stored(ctx, api.SummaryOf(j)))
	return nil
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
	if len(body) == 0 {
		return ast.Node{}, newProblem(CodeBadJSON, `the body is empty: send a workflow like {"version":1,"root":...}`)
	}
	if bytes.HasPrefix(body, []byte("\xef\xbb\xbf")) {
		return ast.Node{}, newProblem(CodeBadJSON, "the body starts with a byte-order mark: send JSON without one")
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

// checkUnfinished refuses a submit past MaxUnfinished. The count is the
// store's listing of unfinished jobs (at most MaxUnfinished read), taken
// at most once a second (and again at each submit while the count is at
// the bound), plus the submits this server made since. The listing is
// taken outside the server's lock, by one submit at a time: the others
// go on with the count they have, and no submit waits for a listing that
// another one takes.
func (s *srv) checkUnfinished(ctx context.Context) error {
	if s.maxUnfinished < 0 || s.lister == nil {
		return nil
	}
	s.mu.Lock()
	now := s.now()
	recount := !s.counting && (now.Sub(s.countAt) >= time.Second || s.unfinished >= s.maxUnfinished)
	if recount {
		s.counting, s.countAt = true, now
	}
	s.mu.Unlock()
	if recount {
		infos, err := s.lister.List(ctx, store.Query{Unfinished: true, Limit: s.maxUnfinished})
		s.mu.Lock()
		s.counting = false
		if err != nil {
			s.countAt = time.Time{}
		} else {
			s.unfinished = len(infos)
		}
		s.mu.Unlock()
		if err != nil {
			return newProblem(CodeStoreUnavailable, "count the unfinished jobs: "+err.Error())
		}
	}
	s.mu.Lock()
	n := s.unfinished
	s.mu.Unlock()
	if n >= s.maxUnfinished {
		p := newProblem(CodeTooManyJobs, fmt.Sprintf("%d jobs are unfinished, the most this server takes (--max-unfinished); submit again once some have finished", n))
		p.retryAfter = 5
		return p
	}
	return nil
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
