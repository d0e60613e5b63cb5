package server

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"time"

	"github.com/batonwf/baton/server/live"
	"github.com/batonwf/baton/server/web"
	"github.com/batonwf/baton/store"
)

// srv is the handler New returns.
type srv struct {
	st        store.Store
	lister    store.Lister
	historian store.Historian
	deleter   Deleter // the runner's, else the store's

	submitter     Submitter
	jobSubmitter  JobSubmitter // submitter, when it returns the job it made
	canceller     Canceller
	signaller     Signaller
	nodeCanceller NodeCanceller
	actionLister  ActionLister
	workerLister  WorkerLister
	readier       Readier
	hub           *live.Hub // nil without a Historian
	closing       <-chan struct{}

	tokens        *Tokens
	sessions      *sessions
	site          *web.Site
	cop           *http.CrossOriginProtection
	log           *slog.Logger
	now           func() time.Time
	maxBody       int64
	maxUnfinished int

	metrics      http.Handler
	streams      Gauge
	authFailures Counter

	// routes serves the routes; mux serves them too, and a catch-all
	// ("/", noRoute) for every request none takes, so that a request is
	// matched to its route once (routes alone tells 404 from 405).
	routes  *http.ServeMux
	mux     *http.ServeMux
	handler http.Handler // dispatch, in Options.Middleware
	fails   *failures

	unfinished unfinishedCount

	idPrefix [4]byte       // random: the request IDs of this server's life
	idCount  atomic.Uint64 // request IDs made
}

// New returns the API's handler. It fails when o has no store.
func New(o Options) (http.Handler, error) {
	if o.Store == nil {
		return nil, errors.New("server: Options.Store is required")
	}
	s := &srv{
		st: o.Store, closing: o.Closing, tokens: o.Tokens,
		log: o.Logger, now: o.Now, maxBody: o.MaxBodyBytes, maxUnfinished: o.MaxUnfinished,
		metrics: o.Metrics, streams: o.Streams, authFailures: o.AuthFailures,
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.maxBody <= 0 {
		s.maxBody = DefaultMaxBodyBytes
	}
	if s.maxUnfinished == 0 {
		s.maxUnfinished = DefaultMaxUnfinished
	}
	s.lister, _ = o.Store.(store.Lister)
	s.historian, _ = o.Store.(store.Historian)
	if d, ok := o.Runner.(Deleter); ok {
		s.deleter = d
	} else if d, ok := o.Store.(store.Deleter); ok {
		s.deleter = d
	}
	s.submitter, _ = o.Runner.(Submitter)
	s.jobSubmitter, _ = o.Runner.(JobSubmitter)
	s.canceller, _ = o.Runner.(Canceller)
	s.signaller, _ = o.Runner.(Signaller)
	s.nodeCanceller, _ = o.Runner.(NodeCanceller)
	s.actionLister, _ = o.Runner.(ActionLister)
	s.workerLister, _ = o.Runner.(WorkerLister)
	s.readier, _ = o.Runner.(Readier)
	if err := s.startHub(o); err != nil {
		return nil, err
	}
	s.fails = newFailures(s.now)
	_, _ = rand.Read(s.idPrefix[:])
	var start [8]byte // the count starts anywhere: two servers of one prefix seldom meet
	_, _ = rand.Read(start[:])
	s.idCount.Store(binary.BigEndian.Uint64(start[:]))
	var err error
	if s.sessions, err = newSessions(o.SessionKey, o.SessionTTL, s.now); err != nil {
		return nil, err
	}
	if s.site, err = web.NewSite(); err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	s.cop = http.NewCrossOriginProtection()
	s.routes, s.mux = http.NewServeMux(), http.NewServeMux()
	for _, mux := range []*http.ServeMux{s.routes, s.mux} {
		for _, rt := range table {
			if rt.on == nil || rt.on(s) {
				mux.Handle(rt.Method+" "+rt.Pattern, s.wrap(rt))
			}
		}
		for _, p := range pageTable {
			if p.on == nil || p.on(s) {
				mux.Handle(p.Method+" "+p.Pattern, s.wrapPage(p))
			}
		}
	}
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		r.Pattern = "" // no route: the log line and Options.Middleware see none
		s.noRoute(w, r)
	})
	s.handler = http.HandlerFunc(s.dispatch)
	if o.Middleware != nil {
		s.handler = o.Middleware(s.handler)
	}
	return s, nil
}

// recorder is the ResponseWriter handlers write to: it keeps what the
// request's log line says.
type recorder struct {
	http.ResponseWriter
	status    int
	bytes     int64
	requestID string
	jobID     string
}

func (rec *recorder) WriteHeader(status int) {
	if rec.status == 0 {
		rec.status = status
	}
	rec.ResponseWriter.WriteHeader(status)
}

func (rec *recorder) Write(b []byte) (int, error) {
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	n, err := rec.ResponseWriter.Write(b)
	rec.bytes += int64(n)
	return n, err
}

// Unwrap lets http.ResponseController reach the connection.
func (rec *recorder) Unwrap() http.ResponseWriter { return rec.ResponseWriter }

// setJob names the job of the request in its log line.
func setJob(w http.ResponseWriter, id string) {
	if rec := recorderOf(w); rec != nil {
		rec.jobID = id
	}
}

// recorderOf returns the recorder under w (Options.Middleware may wrap
// it), or nil.
func recorderOf(w http.ResponseWriter) *recorder {
	for {
		switch x := w.(type) {
		case *recorder:
			return x
		case interface{ Unwrap() http.ResponseWriter }:
			w = x.Unwrap()
		default:
			return nil
		}
	}
}

// ServeHTTP answers a request: security headers, the request ID, the
// route (or a JSON 404/405), the log line; a panic becomes 500 internal.
func (s *srv) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	rec := &recorder{ResponseWriter: w, requestID: s.requestID(r.Header.Get("X-Request-Id"))}
	// The keys are in canonical form and the values shared (net/http
	// only reads them): no canonicalizing nor a slice per header and
	// request, as Header.Set would.
	h := w.Header()
	h["X-Content-Type-Options"] = nosniff
	h["Referrer-Policy"] = noReferrer
	h["X-Request-Id"] = []string{rec.requestID}
	if strings.HasPrefix(r.URL.Path, "/api/") {
		h["Cache-Control"] = noStore
	}
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			s.log.Error("http handler panicked", "request_id", rec.requestID, "route", r.Pattern,
				"panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			if rec.status == 0 {
				writeProblem(rec, newProblem(CodeInternal, fmt.Sprintf("internal error answering %s %s (request %s); the server goes on", r.Method, r.URL.Path, rec.requestID)))
			}
		}
		end := time.Now()
		s.logRequest(r, rec, end, end.Sub(start))
	}()
	s.handler.ServeHTTP(rec, r)
}

// dispatch gives a request to its route, or answers that it has none.
// The ServeMux sets r.Pattern on r itself, so that Options.Middleware,
// around dispatch, sees the route once dispatch returns.
func (s *srv) dispatch(w http.ResponseWriter, r *http.Request) {
	if p := uncleanPath(r.URL.Path); p != nil {
		writeProblem(w, p)
		return
	}
	if r.Method != http.MethodConnect && strings.HasPrefix(r.URL.Path, "/") {
		// A clean path (uncleanPath passed it), which ServeMux neither
		// cleans nor redirects: s.mux matches it once, to its route or
		// to its catch-all, noRoute.
		s.mux.ServeHTTP(w, r)
		return
	}
	// Anything else (CONNECT, "*") as ServeMux alone would have it, but
	// that its own answers to what no route takes are JSON.
	if _, pattern := s.routes.Handler(r); pattern == "" {
		s.noRoute(w, r)
		return
	}
	s.routes.ServeHTTP(w, r)
}

// noRoute answers a request no route takes: 405 with Allow when the path
// has routes for other methods, else 404.
func (s *srv) noRoute(w http.ResponseWriter, r *http.Request) {
	h, _ := s.routes.Handler(r)
	probe := &headerProbe{header: http.Header{}}
	h.ServeHTTP(probe, r)
	if probe.status == http.StatusMethodNotAllowed {
		p := newProblem(CodeMethodNotAllowed, fmt.Sprintf("%s is not a method of %s (allowed: %s)", r.Method, r.URL.Path, probe.header.Get("Allow")))
		p.allow = probe.header.Get("Allow")
		writeProblem(w, p)
		return
	}
	writeProblem(w, newProblem(CodeNotFound, fmt.Sprintf("no route %s %s (the API is under /api/v1; see GET /)", r.Method, r.URL.Path)))
}

// headerProbe runs ServeMux's own 404/405 handler to learn which it is.
type headerProbe struct {
	header http.Header
	status int
}

func (p *headerProbe) Header() http.Header         { return p.header }
func (p *headerProbe) Write(b []byte) (int, error) { return len(b), nil }
func (p *headerProbe) WriteHeader(status int)      { p.status = status }

// uncleanPath returns the answer to a path with an empty, "." or ".."
// segment, which ServeMux would redirect, or nil.
func uncleanPath(path string) *problem {
	rest := strings.TrimPrefix(path, "/")
	for i := 0; ; i++ {
		seg, after, more := strings.Cut(rest, "/")
		rest = after
		if seg != "." && seg != ".." && (seg != "" || !more) {
			if !more {
				return nil
			}
			continue
		}
		if strings.HasPrefix(path, "/api/v1/jobs/") && i == 3 && seg != "" {
			return newProblem(CodeBadJobID, fmt.Sprintf("job ID %q in path %s is not allowed (a relative path in ZooKeeper and file systems)", seg, path))
		}
		return newProblem(CodeNotFound, fmt.Sprintf("no route for path %s: it has an empty, '.' or '..' segment", path))
	}
}

// The values of the headers every answer has.
var (
	nosniff    = []string{"nosniff"}
	noReferrer = []string{"no-referrer"}
	noStore    = []string{"no-store"}
)

// requestID returns the client's request ID if it is sane (1 to 128
// printable ASCII bytes), else a new one: 24 hex digits, the server's
// random prefix and the count of IDs it made. They name requests in logs
// and answers, unique without being secret, so no random read per
// request.
func (s *srv) requestID(given string) string {
	if len(given) > 0 && len(given) <= 128 && !strings.ContainsFunc(given, func(r rune) bool { return r <= ' ' || r > '~' }) {
		return given
	}
	var b [12]byte
	copy(b[:], s.idPrefix[:])
	binary.BigEndian.PutUint64(b[4:], s.idCount.Add(1))
	return hex.EncodeToString(b[:])
}

// logRequest writes the request's one log line, at end, when the request
// was answered after took: no bodies, no tokens.
func (s *srv) logRequest(r *http.Request, rec *recorder, end time.Time, took time.Duration) {
	level := slog.LevelInfo
	if rec.status >= 500 {
		level = slog.LevelError
	}
	// Handed to the handler as a record with no source: the line's
	// source would be this function, every time, and finding it
	// (runtime.Callers) cost an eighth of the line. The attributes go
	// into the record straight, with no slice of them made first.
	h, ctx := s.log.Handler(), context.Background()
	if !h.Enabled(ctx, level) {
		return
	}
	line := slog.NewRecord(end, level, "http request", 0)
	line.AddAttrs(slog.String("method", r.Method), slog.String("route", r.Pattern), slog.Int("status", rec.status),
		slog.Duration("duration", took), slog.Int64("bytes", rec.bytes))
	line.AddAttrs(slog.String("request_id", rec.requestID), slog.String("remote", r.RemoteAddr))
	if rec.jobID != "" {
		line.AddAttrs(slog.String("job_id", rec.jobID))
	}
	_ = h.Handle(ctx, line)
}

// wrap is a route's handler: auth, query and body checks, then the
// route's own handler; an error it returns is written as a problem.
func (s *srv) wrap(rt route) http.Handler {
	allowed := map[string]bool{}
	for _, q := range rt.Query {
		allowed[q] = true
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if id := r.PathValue("id"); id != "" {
			setJob(w, id)
		}
		err := s.check(rt, allowed, w, r)
		if err == nil {
			err = rt.handle(s, w, r)
		}
		if err != nil {
			var p *problem
			if !errors.As(err, &p) {
				p = newProblem(CodeInternal, err.Error())
			}
			writeProblem(w, p)
		}
	})
}

// check is what every route checks before its handler runs.
func (s *srv) check(rt route, allowed map[string]bool, w http.ResponseWriter, r *http.Request) error {
	if err := s.crossOrigin(r); err != nil {
		return err
	}
	if rt.Scope != ScopeNone {
		if err := s.authorize(r, rt.Scope); err != nil {
			return err
		}
	}
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return newProblem(CodeBadQuery, fmt.Sprintf("the query string of %s %s cannot be read: %v", rt.Method, rt.Pattern, err))
	}
	r.Form = q // read by query: the query is parsed once
	for k := range q {
		if !allowed[k] {
			want := "none"
			if len(rt.Query) > 0 {
				want = strings.Join(rt.Query, ", ")
			}
			return newProblem(CodeBadQuery, fmt.Sprintf("unknown query parameter %q for %s %s (allowed: %s)", k, rt.Method, rt.Pattern, want))
		}
		if len(q[k]) > 1 {
			return newProblem(CodeBadQuery, fmt.Sprintf("query parameter %q given %d times for %s %s", k, len(q[k]), rt.Method, rt.Pattern))
		}
	}
	if rt.Scope == ScopeWrite && s.isClosing() {
		return newProblem(CodeShuttingDown, fmt.Sprintf("the server is shutting down: %s %s was not done; try another server or later", r.Method, r.URL.Path))
	}
	if rt.Body {
		return s.checkBody(w, r)
	}
	return nil
}

// query returns the request's query parameters. check keeps them, once
// parsed, in r.Form: what ParseForm makes of a request whose body is not
// a form, the only bodies the API takes (a form is 415); so an API
// handler's every read of a parameter costs no parse of the query again.
// Elsewhere (a page) the query is parsed here and r.Form left alone, so
// that the page's ParseForm still reads a form body.
func query(r *http.Request) url.Values {
	if r.Form != nil {
		return r.Form
	}
	return r.URL.Query()
}

// checkBody refuses a body that is not plain JSON or too large, before
// reading any of it, and bounds what will be read.
func (s *srv) checkBody(w http.ResponseWriter, r *http.Request) error {
	if ce := r.Header.Get("Content-Encoding"); ce != "" && !strings.EqualFold(ce, "identity") {
		return newProblem(CodeUnsupportedMedia, fmt.Sprintf("Content-Encoding %q is not accepted: send the body uncompressed", ce))
	}
	ct := r.Header.Get("Content-Type")
	empty := r.ContentLength == 0 && len(r.TransferEncoding) == 0 // no body: no type needed
	if mt, _, _ := strings.Cut(ct, ";"); !empty && !strings.EqualFold(strings.TrimSpace(mt), "application/json") {
		if ct == "" {
			ct = "none"
		}
		return newProblem(CodeUnsupportedMedia, fmt.Sprintf("Content-Type is %s: send application/json (curl -d sends a form; add -H 'Content-Type: application/json')", ct))
	}
	if r.ContentLength > s.maxBody {
		return newProblem(CodeRequestTooLarge, fmt.Sprintf("the body is %d bytes; at most %d are taken", r.ContentLength, s.maxBody))
	}
	r.Body = http.MaxBytesReader(w, r.Body, s.maxBody)
	return nil
}

// readBody reads a checked body.
func (s *srv) readBody(r *http.Request) ([]byte, error) {
	b, err := io.ReadAll(r.Body)
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return nil, newProblem(CodeRequestTooLarge, fmt.Sprintf("the body is over %d bytes", s.maxBody))
	case errors.Is(err, os.ErrDeadlineExceeded):
		// The connection's read deadline: the http.Server's ReadTimeout.
		return nil, newProblem(CodeBadRequest, fmt.Sprintf("the body did not arrive within the server's read timeout (%d bytes of it did)", len(b)))
	case err != nil:
		return nil, newProblem(CodeBadRequest, "read the body: "+err.Error())
	}
	return b, nil
}

func (s *srv) isClosing() bool {
	if s.closing == nil {
		return false
	}
	select {
	case <-s.closing:
		return true
	default:
		return false
	}
}
