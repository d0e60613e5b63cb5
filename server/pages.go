package server

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/batonwf/baton/api"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/server/web"
	"github.com/batonwf/baton/store"
)

// The pages (package web renders them): HTML for browsers, beside the
// API and outside it. They are not in Routes (nor in openapi.json): Pages
// lists them. They take a bearer token like the API, or the session
// cookie /login sets; a browser without either is sent to /login. Their
// errors are pages too, with the API's codes.

// page is one page route.
type page struct {
	Route
	handle func(s *srv, w http.ResponseWriter, r *http.Request, c caller) error
	on     func(s *srv) bool
}

// caller is who asks for a page: the scope of their credential, and
// whether it is a session cookie.
type caller struct {
	scope   Scope
	session bool
}

func (c caller) page(title string) web.Page {
	return web.Page{Title: title, Write: c.scope >= ScopeWrite, Session: c.session}
}

var pageTable = []page{
	{Route{Method: "GET", Pattern: "/{$}", Scope: ScopeRead, Query: []string{"status", "prefix", "after"},
		Doc: "the job list: counts per status, filters, pages of 100"}, (*srv).listPage, nil},
	{Route{Method: "GET", Pattern: "/jobs/{id}", Scope: ScopeRead, Query: []string{"version", "node", "expand", "steps_from", "steps_status", "steps_action", "steps_path"},
		Doc: "a job's page: header, tree, details of a node, timeline, steps; now or at a past version"}, (*srv).jobPage, nil},
	{Route{Method: "GET", Pattern: "/jobs/{id}/tree.svg", Scope: ScopeRead, Query: []string{"version", "expand"},
		Doc: "the job page's tree as SVG, with the groups of expand opened (the page's script swaps it in)"}, (*srv).treePage, nil},
	{Route{Method: "GET", Pattern: "/jobs/{id}/signals", Scope: ScopeRead, Query: []string{"version", "full"},
		Doc: "the signals a job keeps, now or at a past version, the one named by full (NAME/ID) whole: the job page's list alone, which its script reads"}, (*srv).signalsPage, nil},
	{Route{Method: "POST", Pattern: "/jobs/{id}/cancel", Scope: ScopeWrite, Body: true,
		Doc: "the job page's cancel form (reason): cancels, then back to the job page"}, (*srv).cancelPage, func(s *srv) bool { return s.canceller != nil }},
	{Route{Method: "POST", Pattern: "/jobs/{id}/signals/{name}", Scope: ScopeWrite, Body: true,
		Doc: "the signal form of a running wait's panel (id, payload): sends the signal, then back to the job page"}, (*srv).signalPage, func(s *srv) bool { return s.signaller != nil }},
	{Route{Method: "GET", Pattern: "/new", Scope: ScopeRead, Doc: "validate, draw and submit a workflow"}, (*srv).newPage, nil},
	{Route{Method: "POST", Pattern: "/new", Scope: ScopeRead, Body: true,
		Doc: "the new page's form: do=check validates and draws; do=submit (write) submits, then to the job's page"}, (*srv).newPost, nil},
	{Route{Method: "GET", Pattern: "/workers", Scope: ScopeRead, Doc: "the live workers and the actions they run"}, (*srv).workersPage, nil},
	{Route{Method: "GET", Pattern: "/login", Scope: ScopeNone, Query: []string{"next"}, Doc: "the login form"}, (*srv).loginPage, nil},
	{Route{Method: "POST", Pattern: "/login", Scope: ScopeNone, Body: true,
		Doc: "log in with a token (form field token): sets the session cookie, then to next"}, (*srv).login, nil},
	{Route{Method: "POST", Pattern: "/logout", Scope: ScopeNone, Doc: "end the session"}, (*srv).logout, nil},
	{Route{Method: "GET", Pattern: "/static/{name}", Scope: ScopeNone, Doc: "the pages' style sheet and script"}, (*srv).static, nil},
}

// Pages returns the page routes, served or not. The slice is the
// caller's.
func Pages() []Route {
	out := make([]Route, len(pageTable))
	for i, p := range pageTable {
		out[i] = p.Route
	}
	return out
}

// crossOrigin refuses a state-changing request from another origin
// (http.CrossOriginProtection: Sec-Fetch-Site or Origin naming another
// site), so that a page's session cookie never acts for another site.
// Requests without those headers (programs, not browsers) pass.
func (s *srv) crossOrigin(r *http.Request) error {
	if err := s.cop.Check(r); err != nil {
		return newProblem(CodeForbidden, fmt.Sprintf("%s %s from another origin is refused: %v", r.Method, r.URL.Path, err))
	}
	return nil
}

// wrapPage is a page's handler: the page headers, the caller's
// credential (none: to /login), then the page; an error is an error page.
func (s *srv) wrapPage(p page) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", web.CSP)
		h.Set("Cache-Control", "no-store")
		if id := r.PathValue("id"); id != "" {
			setJob(w, id)
		}
		if err := s.crossOrigin(r); err != nil {
			s.pageProblem(w, r, err.(*problem))
			return
		}
		c := caller{}
		if s.tokens == nil {
			c.scope = ScopeWrite
		}
		if p.Scope != ScopeNone {
			var err error
			if c, err = s.pageCaller(r); err != nil {
				s.pageDenied(w, r, err)
				return
			}
			if c.scope < p.Scope {
				s.pageProblem(w, r, newProblem(CodeForbidden, fmt.Sprintf("%s %s needs a %s token; yours is %s", r.Method, r.URL.Path, p.Scope, c.scope)))
				return
			}
		}
		if p.Body {
			r.Body = http.MaxBytesReader(w, r.Body, s.maxBody)
		}
		if err := p.handle(s, w, r, c); err != nil {
			var pr *problem
			if !errors.As(err, &pr) {
				pr = newProblem(CodeInternal, err.Error())
			}
			s.pageProblem(w, r, pr)
		}
	})
}

// pageCaller returns who asks. A request with neither a token nor a
// session cookie is no failed authentication (a browser's first visit):
// it is errNoCredential.
func (s *srv) pageCaller(r *http.Request) (caller, error) {
	if s.tokens == nil {
		return caller{scope: ScopeWrite}, nil
	}
	if _, err := r.Cookie(SessionCookie); err != nil && r.Header.Get("Authorization") == "" {
		return caller{}, errNoCredential
	}
	scope, session, err := s.credential(r)
	if err != nil {
		return caller{}, err
	}
	return caller{scope: scope, session: session}, nil
}

var errNoCredential = errors.New("server: no credential")

// pageDenied answers a page request whose credential is missing or
// refused: a GET goes to /login (and back after it), anything else is
// an error page.
func (s *srv) pageDenied(w http.ResponseWriter, r *http.Request, err error) {
	var p *problem
	if errors.As(err, &p) && p.code == CodeTooManyAuthFailures {
		w.Header().Set("Retry-After", strconv.Itoa(p.retryAfter))
		s.pageProblem(w, r, p)
		return
	}
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		if _, cerr := r.Cookie(SessionCookie); cerr == nil {
			http.SetCookie(w, clearSession(r.TLS != nil))
		}
		http.Redirect(w, r, "/login?"+url.Values{"next": {r.URL.RequestURI()}}.Encode(), http.StatusSeeOther)
		return
	}
	if p == nil {
		p = newProblem(CodeUnauthorized, fmt.Sprintf("%s %s needs a token: log in at /login", r.Method, r.URL.Path))
	}
	s.pageProblem(w, r, p)
}

// pageProblem writes p as an error page with p's status.
func (s *srv) pageProblem(w http.ResponseWriter, r *http.Request, p *problem) {
	status := p.code.Status()
	v := web.ErrorView{Status: status, Code: string(p.code), Detail: p.detail}
	v.Title = http.StatusText(status)
	if rec := recorderOf(w); rec != nil {
		v.RequestID = rec.requestID
		if p.jobID != "" {
			rec.jobID = p.jobID
		}
	}
	h := w.Header()
	h.Set("Content-Security-Policy", web.CSP)
	h.Set("Content-Type", "text/html; charset=utf-8")
	if p.allow != "" {
		h.Set("Allow", p.allow)
	}
	w.WriteHeader(status)
	if err := s.site.Error(w, v); err != nil {
		s.log.Error("error page", "err", err)
	}
}

// writePage renders a page with status.
func (s *srv) writePage(w http.ResponseWriter, status int, render func(w *strings.Builder) error) error {
	var b strings.Builder
	if err := render(&b); err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(b.String()))
	return nil
}

// maxCounted bounds the jobs the list counts per status: past it the
// counts are lower bounds ("10000+"), so the page's cost does not grow
// with the store.
const maxCounted = 10_000

// listPage is GET /: the job list.
func (s *srv) listPage(w http.ResponseWriter, r *http.Request, c caller) error {
	q := r.URL.Query()
	status, prefix, after := q.Get("status"), q.Get("prefix"), q.Get("after")
	if status != "" && !containsString(web.ListStatuses, status) {
		return newProblem(CodeBadQuery, fmt.Sprintf("status %q: want one of %s", status, strings.Join(web.ListStatuses, ", ")))
	}
	if after != "" {
		if err := job.ID(after).Check(); err != nil {
			return newProblem(CodeBadQuery, fmt.Sprintf("after=%q is not a job ID", after))
		}
	}
	var v web.ListView
	if s.lister == nil {
		v = web.ListViewOf(nil, "", nil, false, status, prefix, after, s.now())
		v.Listed = false
	} else {
		out, err := s.listJobs(r.Context(), store.Query{Prefix: prefix, After: job.ID(after)}, status, defaultLimit)
		if err != nil {
			return err
		}
		counts, capped, err := s.countJobs(r.Context(), prefix)
		if err != nil {
			return err
		}
		// A listing knows no failure: the page's failed jobs (at most
		// its 100) are loaded for theirs.
		for i, sm := range out.Jobs {
			if sm.Status != "failed" {
				continue
			}
			if j, err := s.st.Load(r.Context(), job.ID(sm.ID)); err == nil {
				out.Jobs[i].Failure = api.SummaryOf(j).Failure
			}
		}
		v = web.ListViewOf(out.Jobs, out.Next, counts, capped, status, prefix, after, s.now())
	}
	v.Page = c.page("Jobs")
	return s.writePage(w, http.StatusOK, func(b *strings.Builder) error { return s.site.List(b, v) })
}

// countJobs counts the jobs with prefix per status, at most maxCounted
// of them (capped: there are more).
func (s *srv) countJobs(ctx context.Context, prefix string) (map[string]int, bool, error) {
	counts := map[string]int{}
	q := store.Query{Prefix: prefix, Limit: 1000}
	for n := 0; ; {
		infos, err := s.lister.List(ctx, q)
		if err != nil {
			return nil, false, newProblem(CodeStoreUnavailable, "count jobs: "+err.Error())
		}
		for _, in := range infos {
			if in.Damaged != nil {
				counts[api.StatusDamaged]++
			} else {
				counts[in.Status.String()]++
			}
		}
		n += len(infos)
		if len(infos) < q.Limit {
			return counts, false, nil
		}
		if n >= maxCounted {
			return counts, true, nil
		}
		q.After = infos[len(infos)-1].ID
	}
}

func containsString(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// pageJob is a job loaded for a page: at the version asked for (or the
// latest), with its history up to it when the store keeps one.
type pageJob struct {
	job     job.Job
	latest  uint64
	past    bool
	steps   []api.Step
	history bool
}

// pageJobOf loads the job a page's path names at the version its query
// asks for (the latest by default), without its steps.
func (s *srv) pageJobOf(r *http.Request) (job.ID, pageJob, error) {
	id, err := pathID(r)
	if err != nil {
		return id, pageJob{}, err
	}
	v, err := versionParam(r)
	if err != nil {
		return id, pageJob{}, err
	}
	pj, err := s.loadPageJob(r.Context(), id, v, false)
	return id, pj, err
}

// loadPageJob loads job id at version v (0: the latest).
func (s *srv) loadPageJob(ctx context.Context, id job.ID, v uint64, steps bool) (pageJob, error) {
	if s.historian == nil || v == 0 && !steps {
		if v > 0 {
			return pageJob{}, newProblem(CodeBadQuery, "this store keeps no history: version is not available").forJob(string(id))
		}
		j, err := s.st.Load(ctx, id)
		if err != nil {
			return pageJob{}, s.storeProblem(err, id, "load")
		}
		return pageJob{job: j, latest: j.Version(), history: s.historian != nil}, nil
	}
	h, err := s.historian.History(ctx, id)
	if err != nil {
		return pageJob{}, s.storeProblem(err, id, "load the history of")
	}
	first, last := h.Origin.Version(), h.Origin.Version()+uint64(len(h.Steps))
	pj := pageJob{latest: last, past: v > 0, history: true}
	if v == 0 {
		v = last
	}
	if v < first || v > last {
		return pageJob{}, newProblem(CodeVersionNotFound, fmt.Sprintf("job %s has versions %d to %d, not %d", id, first, last, v)).forJob(string(id))
	}
	cut := store.History{Origin: h.Origin, Steps: h.Steps[:v-first]}
	if v == last {
		// The latest version as the store loads it (a snapshot and the
		// journal's tail), if it still is: no replay of the whole history.
		if j, err := s.st.Load(ctx, id); err == nil && j.Version() == last {
			pj.job = j
		}
	}
	if pj.job.Version() == 0 {
		if pj.job, err = cut.Latest(); err != nil {
			return pageJob{}, s.storeProblem(fmt.Errorf("%w: %v", job.ErrCorrupt, err), id, "replay")
		}
	}
	if steps {
		hist, err := api.HistoryOf(cut, 0, 0)
		if err != nil {
			return pageJob{}, s.storeProblem(fmt.Errorf("%w: %v", job.ErrCorrupt, err), id, "replay")
		}
		pj.steps = hist.Steps
	}
	return pj, nil
}

// versionParam reads the version query parameter of a page: 0 when
// absent.
func versionParam(r *http.Request) (uint64, error) {
	q := r.URL.Query()
	if !q.Has("version") {
		return 0, nil
	}
	v, err := strconv.ParseUint(q.Get("version"), 10, 64)
	if err != nil || v == 0 {
		return 0, newProblem(CodeBadQuery, fmt.Sprintf("version=%q: want a version, 1 or more", q.Get("version")))
	}
	return v, nil
}

// jobPage is GET /jobs/{id}: the job's page.
func (s *srv) jobPage(w http.ResponseWriter, r *http.Request, c caller) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	v, err := versionParam(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	var from uint64
	if q.Has("steps_from") {
		if from, err = strconv.ParseUint(q.Get("steps_from"), 10, 64); err != nil {
			return newProblem(CodeBadQuery, fmt.Sprintf("steps_from=%q: want a version", q.Get("steps_from")))
		}
	}
	pj, err := s.loadPageJob(r.Context(), id, v, true)
	if err != nil {
		return err
	}
	expand := web.ParseExpand(q.Get("expand"))
	tree, err := web.DrawTree(pj.job, expand)
	if err != nil {
		return fmt.Errorf("draw job %s: %w", id, err)
	}
	// The store's times: Created always, Updated for the latest version
	// only (Summary.WithInfo).
	sm := s.stored(r.Context(), api.SummaryOf(pj.job))
	in := web.JobInput{
		Summary: sm, Job: pj.job, Latest: pj.latest, Past: pj.past, Steps: pj.steps, History: pj.history, Tree: tree,
		Node: q.Get("node"), Selected: q.Has("node"), StepsFrom: from, LazySteps: !q.Has("steps_from"),
		Filter: web.StepFilter{Status: q.Get("steps_status"), Action: q.Get("steps_action"), Path: q.Get("steps_path")},
		Write:  c.scope >= ScopeWrite && s.canceller != nil, Session: c.session, Now: s.now(),
		Signal: c.scope >= ScopeWrite && s.signaller != nil, SignalID: pageSignalID(),
	}
	view := web.JobViewOf(in)
	view.Session = c.session
	return s.writePage(w, http.StatusOK, func(b *strings.Builder) error { return s.site.Job(b, view) })
}

// treePage is GET /jobs/{id}/tree.svg: the page's tree, for the script
// to swap in.
func (s *srv) treePage(w http.ResponseWriter, r *http.Request, _ caller) error {
	id, pj, err := s.pageJobOf(r)
	if err != nil {
		return err
	}
	tree, err := web.DrawTree(pj.job, web.ParseExpand(r.URL.Query().Get("expand")))
	if err != nil {
		return fmt.Errorf("draw job %s: %w", id, err)
	}
	w.Header().Set("Content-Type", "image/svg+xml")
	_, _ = w.Write([]byte(tree.SVG))
	return nil
}

// signalsPage is GET /jobs/{id}/signals: the signals the job keeps at
// a version (now by default), the one named by full (NAME/ID) whole.
func (s *srv) signalsPage(w http.ResponseWriter, r *http.Request, c caller) error {
	_, pj, err := s.pageJobOf(r)
	if err != nil {
		return err
	}
	view := web.SignalsViewOf(pj.job, pj.latest, pj.past, r.URL.Query().Get("full"))
	view.Page = c.page(view.Title)
	return s.writePage(w, http.StatusOK, func(b *strings.Builder) error { return s.site.Signals(b, view) })
}

// cancelPage is POST /jobs/{id}/cancel: the cancel form.
func (s *srv) cancelPage(w http.ResponseWriter, r *http.Request, _ caller) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	if err := r.ParseForm(); err != nil {
		return newProblem(CodeBadRequest, "read the form: "+err.Error()).forJob(string(id))
	}
	reason := strings.TrimSpace(r.PostForm.Get("reason"))
	switch {
	case !utf8.ValidString(reason):
		return newProblem(CodeBadRequest, "the reason is not valid UTF-8").forJob(string(id))
	case len(reason) > MaxCancelReason:
		return newProblem(CodeBadRequest, fmt.Sprintf("the reason is %d bytes; at most %d", len(reason), MaxCancelReason)).forJob(string(id))
	case reason == "":
		reason = "cancelled on the job's page"
	}
	if s.isClosing() {
		return newProblem(CodeShuttingDown, "the server is shutting down: the job was not cancelled; try again later")
	}
	if _, err := s.cancelJob(r.Context(), id, reason); err != nil {
		return err
	}
	http.Redirect(w, r, web.JobURL(string(id), 0, ""), http.StatusSeeOther)
	return nil
}

// newPage is GET /new.
func (s *srv) newPage(w http.ResponseWriter, r *http.Request, c caller) error {
	v := web.NewView{}
	v.Page = c.page("New job")
	v.Write = v.Write && s.submitter != nil
	return s.writePage(w, http.StatusOK, func(b *strings.Builder) error { return s.site.New(b, v) })
}

// newPost is POST /new: check (validate and draw) or submit the form's
// workflow.
func (s *srv) newPost(w http.ResponseWriter, r *http.Request, c caller) error {
	if err := r.ParseForm(); err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return newProblem(CodeRequestTooLarge, fmt.Sprintf("the form is over %d bytes", s.maxBody))
		}
		return newProblem(CodeBadRequest, "read the form: "+err.Error())
	}
	v := web.NewView{Workflow: r.PostForm.Get("workflow"), ID: strings.TrimSpace(r.PostForm.Get("id")), Checked: true}
	v.Page = c.page("New job")
	v.Write = v.Write && s.submitter != nil
	status := http.StatusOK
	fail := func(p *problem) {
		status, v.Message, v.Problems = p.code.Status(), p.detail, p.problems
	}
	root, err := decodeWorkflowBytes([]byte(v.Workflow))
	if err != nil {
		var p *problem
		errors.As(err, &p)
		fail(p)
		return s.writePage(w, status, func(b *strings.Builder) error { return s.site.New(b, v) })
	}
	tr, err := job.New("preview", root)
	if err != nil {
		fail(newProblem(CodeInvalidWorkflow, err.Error()))
		return s.writePage(w, status, func(b *strings.Builder) error { return s.site.New(b, v) })
	}
	tree, err := web.DrawTree(tr.Job, nil)
	if err != nil {
		return fmt.Errorf("draw the workflow: %w", err)
	}
	v.Preview, v.Message = tree.SVG, "The workflow is valid."
	missing, _, err := s.unknownActions(r.Context(), root)
	if err != nil {
		return err
	}
	v.Unknown = missing
	if len(missing) > 0 {
		v.Message = "The workflow is valid, but no worker runs some of its actions."
	}
	if r.PostForm.Get("do") != "submit" {
		return s.writePage(w, status, func(b *strings.Builder) error { return s.site.New(b, v) })
	}
	switch {
	case c.scope < ScopeWrite:
		fail(newProblem(CodeForbidden, "submitting needs a write token"))
	case s.submitter == nil:
		fail(newProblem(CodeMethodNotAllowed, "this server does not submit jobs"))
	case s.isClosing():
		fail(newProblem(CodeShuttingDown, "the server is shutting down: the job was not submitted; try again later"))
	}
	if status != http.StatusOK {
		return s.writePage(w, status, func(b *strings.Builder) error { return s.site.New(b, v) })
	}
	id := job.ID(v.ID)
	if id == "" {
		id = s.newID()
	}
	if err := id.Check(); err != nil {
		fail(newProblem(CodeBadJobID, strings.TrimPrefix(err.Error(), "job: ")))
		return s.writePage(w, status, func(b *strings.Builder) error { return s.site.New(b, v) })
	}
	setJob(w, string(id))
	if _, _, err := s.submitJob(r.Context(), id, root); err != nil {
		var p *problem
		if !errors.As(err, &p) {
			return err
		}
		fail(p)
		return s.writePage(w, status, func(b *strings.Builder) error { return s.site.New(b, v) })
	}
	http.Redirect(w, r, web.JobURL(string(id), 0, ""), http.StatusSeeOther)
	return nil
}

// workersPage is GET /workers.
func (s *srv) workersPage(w http.ResponseWriter, r *http.Request, c caller) error {
	v := web.WorkersView{}
	v.Page = c.page("Workers")
	if s.workerLister != nil {
		ws, err := s.workerLister.Workers(r.Context())
		if err != nil {
			return newProblem(CodeStoreUnavailable, "list the workers: "+err.Error())
		}
		v.Known, v.Workers = true, ws
	}
	if s.actionLister != nil {
		names, err := s.actionLister.Actions(r.Context())
		if err != nil {
			return newProblem(CodeStoreUnavailable, "list the actions: "+err.Error())
		}
		v.ActionsKnown, v.Actions = true, names
	}
	return s.writePage(w, http.StatusOK, func(b *strings.Builder) error { return s.site.Workers(b, v) })
}

// nextPath returns next if it is a path of this server ("/..."), else
// "/": a login never sends a browser elsewhere.
func nextPath(next string) string {
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.HasPrefix(next, "/\\") || strings.ContainsAny(next, "\r\n") {
		return "/"
	}
	return next
}

// loginPage is GET /login.
func (s *srv) loginPage(w http.ResponseWriter, r *http.Request, c caller) error {
	v := web.LoginView{Next: nextPath(r.URL.Query().Get("next")), NoTokens: s.tokens == nil}
	v.Page = c.page("Log in")
	return s.writePage(w, http.StatusOK, func(b *strings.Builder) error { return s.site.Login(b, v) })
}

// login is POST /login: a token in, the session cookie out.
func (s *srv) login(w http.ResponseWriter, r *http.Request, _ caller) error {
	if err := r.ParseForm(); err != nil {
		return newProblem(CodeBadRequest, "read the form: "+err.Error())
	}
	next := nextPath(r.PostForm.Get("next"))
	if s.tokens == nil {
		http.Redirect(w, r, next, http.StatusSeeOther)
		return nil
	}
	client := clientAddr(r)
	if s.fails.blocked(client) {
		p := newProblem(CodeTooManyAuthFailures, fmt.Sprintf("too many failed authentications from %s: wait a minute", client))
		p.retryAfter = int(AuthWindow / time.Second)
		w.Header().Set("Retry-After", strconv.Itoa(p.retryAfter))
		return p
	}
	token := strings.TrimSpace(r.PostForm.Get("token"))
	scope := s.tokens.scopeOf(token)
	if scope == ScopeNone {
		s.fail(client)
		v := web.LoginView{Next: next, Error: "That token is not one of this server's."}
		v.Page = web.Page{Title: "Log in"}
		return s.writePage(w, http.StatusUnauthorized, func(b *strings.Builder) error { return s.site.Login(b, v) })
	}
	http.SetCookie(w, s.sessions.issue(scope, sha256.Sum256([]byte(token)), r.TLS != nil))
	http.Redirect(w, r, next, http.StatusSeeOther)
	return nil
}

// logout is POST /logout.
func (s *srv) logout(w http.ResponseWriter, r *http.Request, _ caller) error {
	http.SetCookie(w, clearSession(r.TLS != nil))
	http.Redirect(w, r, "/login", http.StatusSeeOther)
	return nil
}

// static is GET /static/{name}.
func (s *srv) static(w http.ResponseWriter, r *http.Request, _ caller) error {
	if !web.ServeAsset(w, r, r.PathValue("name")) {
		return newProblem(CodeNotFound, fmt.Sprintf("no asset %q: the pages have baton.css and baton.js", r.PathValue("name")))
	}
	return nil
}
