package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"

	"github.com/batonwf/baton/server"
	"github.com/batonwf/baton/server/servertest"
)

// The OpenAPI check. Every server this package's tests start passes its
// requests and answers through checkAPI, which validates both against
// openapi.json with kin-openapi's openapi3filter (status, headers, content
// type, JSON body) and notes each error code answered; TestMain then
// checks that every code of the API was answered by some test.

// loadSpec loads and validates openapi.json, once for the whole package.
// It also gives openapi3filter the text types the API answers with, which
// it does not know, read as plain text (checked against "type": "string").
var loadSpec = sync.OnceValues(func() (*openapi3.T, error) {
	for _, ct := range []string{"text/html", "text/vnd.graphviz", "image/svg+xml", "text/event-stream", "application/openmetrics-text"} {
		openapi3filter.RegisterBodyDecoder(ct, openapi3filter.PlainBodyDecoder)
	}
	b, err := os.ReadFile("openapi.json")
	if err != nil {
		return nil, err
	}
	doc, err := openapi3.NewLoader().LoadFromData(b)
	if err != nil {
		return nil, err
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, err
	}
	return doc, nil
})

// spec returns the document, failing t if it does not load or validate.
func spec(t *testing.T) *openapi3.T {
	t.Helper()
	doc, err := loadSpec()
	if err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	return doc
}

// answered counts the error codes the package's servers answered.
var answered = struct {
	mu    sync.Mutex
	codes map[string]int
}{codes: map[string]int{}}

// checked is the suite's configuration with every server's handler
// wrapped by checkAPI.
func checked(open servertest.Open) servertest.Config {
	return servertest.Config{Open: open, Wrap: checkAPI}
}

// maxChecked bounds the answer body kept for the check; past it (an event
// stream that runs long) only the status, headers and content type are
// checked.
const maxChecked = 4 << 20

// checkAPI wraps h so that each request and its answer are checked
// against the document once h has answered, failing t on a difference.
// It passes both through unchanged: the body is recorded as h reads it
// (nothing is read ahead, so a body refused from its length is never
// read), the answer as h writes it.
func checkAPI(t *testing.T, h http.Handler) http.Handler {
	doc := spec(t)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// h gets a copy of r with the body teed: net/http looks at the
		// original's body after h returns (an unread Expect:
		// 100-continue body is never asked for) and must find it as is.
		var in *teeBody
		if r.Body != nil && r.Body != http.NoBody {
			in = &teeBody{ReadCloser: r.Body}
			r = r.WithContext(r.Context())
			r.Body = in
		}
		rec := &recording{ResponseWriter: w}
		h.ServeHTTP(rec, r)
		var body []byte
		if in != nil {
			body = in.buf.Bytes()
		}
		if err := checkExchange(doc, r, body, rec); err != nil {
			t.Errorf("OpenAPI: %s %s answered %d: %v", r.Method, r.URL.RequestURI(), rec.status, err)
		}
	})
}

// teeBody keeps what the handler read of a request body.
type teeBody struct {
	io.ReadCloser
	buf bytes.Buffer
}

func (b *teeBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.buf.Write(p[:n])
	return n, err
}

// recording keeps an answer: its status, its header as it was sent and
// (up to maxChecked) its body.
type recording struct {
	http.ResponseWriter
	status int
	header http.Header
	body   bytes.Buffer
	over   bool
}

func (rec *recording) WriteHeader(status int) {
	if rec.status == 0 {
		rec.status = status
		rec.header = rec.ResponseWriter.Header().Clone()
	}
	rec.ResponseWriter.WriteHeader(status)
}

func (rec *recording) Write(b []byte) (int, error) {
	if rec.status == 0 {
		rec.WriteHeader(http.StatusOK)
	}
	if rec.body.Len()+len(b) > maxChecked {
		rec.over = true
	} else {
		rec.body.Write(b)
	}
	return rec.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection (streams
// flush and set their deadlines through it).
func (rec *recording) Unwrap() http.ResponseWriter { return rec.ResponseWriter }

// exchangeError is a difference between an exchange and the document.
type exchangeError string

func (e exchangeError) Error() string { return string(e) }

var pathParam = regexp.MustCompile(`\{([a-z_]+)\}`)

// checkExchange checks one request, with the part of its body the
// handler read, and its answer against doc.
func checkExchange(doc *openapi3.T, r *http.Request, body []byte, rec *recording) error {
	if rec.status == 0 { // a handler that wrote nothing: net/http sends 200
		rec.status, rec.header = http.StatusOK, rec.ResponseWriter.Header().Clone()
	}
	if isPageRoute(r.Pattern) {
		// The pages are HTML for browsers, outside the API's document
		// (pages_test.go checks them).
		return nil
	}
	problem, err := checkProblem(doc, rec)
	if err != nil {
		return err
	}
	if r.Pattern == "" {
		// No route took the request: the answer is a problem (404, 405,
		// or 400 for a path with a bad job ID segment).
		if problem == nil || !slices.Contains([]int{400, 404, 405}, rec.status) {
			return exchangeError("a request no route takes must be answered 400, 404 or 405 with a problem")
		}
		if rec.status == 405 && rec.header.Get("Allow") == "" {
			return exchangeError("405 without Allow")
		}
		return nil
	}
	method, path, _ := strings.Cut(r.Pattern, " ")
	path = strings.TrimSuffix(path, "{$}")
	item := doc.Paths.Value(path)
	if item == nil || item.GetOperation(method) == nil {
		return exchangeError("the document has no operation " + method + " " + path)
	}
	params := map[string]string{}
	for _, m := range pathParam.FindAllStringSubmatch(path, -1) {
		params[m[1]] = r.PathValue(m[1])
	}
	req := r.Clone(context.Background())
	req.Body = io.NopCloser(bytes.NewReader(body))
	input := &openapi3filter.RequestValidationInput{
		Request: req, PathParams: params,
		Route:   &routers.Route{Spec: doc, Path: path, PathItem: item, Method: method, Operation: item.GetOperation(method)},
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc},
	}
	reqErr := openapi3filter.ValidateRequest(context.Background(), input)
	if reqErr == nil {
		reqErr = unknownQuery(item, item.GetOperation(method), r)
	}
	if reqErr != nil && rec.status < 400 {
		// A request the document refuses must be refused by the server.
		return exchangeError("the server took a request the document refuses: " + reqErr.Error())
	}
	if reqErr == nil && problem != nil && slices.Contains(strictCodes, problem.Code) && !proseBound(problem) {
		// And the other way: what the server refuses as malformed, the
		// document refuses too.
		return exchangeError("the document takes a request the server refuses as " + problem.Code)
	}
	resp := rec.body.Bytes()
	out := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: input, Status: rec.status, Header: rec.header,
		Body:    io.NopCloser(bytes.NewReader(resp)),
		Options: &openapi3filter.Options{IncludeResponseStatus: true, ExcludeResponseBody: rec.over},
	}
	if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
		return err
	}
	if ref := item.GetOperation(method).Responses.Status(rec.status); ref != nil && len(ref.Value.Content) == 0 && len(resp) > 0 {
		return exchangeError("a body on an answer the document gives none")
	}
	return nil
}

// isPageRoute says whether pattern is one of server.Pages.
func isPageRoute(pattern string) bool {
	for _, p := range server.Pages() {
		if pattern == p.Method+" "+p.Pattern {
			return true
		}
	}
	return false
}

// checkProblem checks an answer of type application/problem+json against
// the document's Problem schema and the code's status, and notes its
// code; it returns nil for any other answer, and an error for an error
// status that is not a problem.
func checkProblem(doc *openapi3.T, rec *recording) (*problemBody, error) {
	if rec.header.Get("Content-Type") != "application/problem+json" {
		if rec.status >= 400 && rec.status != http.StatusServiceUnavailable {
			return nil, exchangeError("an error answer that is not application/problem+json: " + rec.header.Get("Content-Type"))
		}
		return nil, nil
	}
	var v any
	if err := json.Unmarshal(rec.body.Bytes(), &v); err != nil {
		return nil, err
	}
	if err := doc.Components.Schemas["Problem"].Value.VisitJSON(v, openapi3.EnableJSONSchema2020()); err != nil {
		return nil, err
	}
	var p problemBody
	if err := json.Unmarshal(rec.body.Bytes(), &p); err != nil {
		return nil, err
	}
	if got := server.Code(p.Code).Status(); got != rec.status || p.Status != rec.status {
		return nil, exchangeError("code " + p.Code + " is answered with its status")
	}
	answered.mu.Lock()
	answered.codes[p.Code]++
	answered.mu.Unlock()
	return &p, nil
}

// strictCodes are the codes of requests malformed by the document's own
// terms: a request answered with one must fail the document's checks.
// bad_json is not one: JSON's own syntax (trailing data, invalid UTF-8)
// is read leniently by openapi3filter's decoder.
var strictCodes = []string{"bad_query", "bad_job_id", "unsupported_media_type"}

// proseBound reports whether p refuses a value the document bounds in
// prose only: a wait over 25s (a duration's value is no JSON Schema
// bound).
func proseBound(p *problemBody) bool {
	return p.Code == "bad_query" && strings.HasPrefix(p.Detail, "query parameter wait=")
}

// unknownQuery refuses, as the document says the API does, a query
// parameter the operation does not declare, or one given twice.
func unknownQuery(item *openapi3.PathItem, op *openapi3.Operation, r *http.Request) error {
	declared := map[string]bool{}
	for _, p := range append(slices.Clone(item.Parameters), op.Parameters...) {
		if p.Value.In == "query" {
			declared[p.Value.Name] = true
		}
	}
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return err
	}
	for k, vs := range q {
		if !declared[k] || len(vs) > 1 {
			return exchangeError("query parameter " + k + " is unknown or repeated")
		}
	}
	return nil
}

type problemBody struct {
	Code   string `json:"code"`
	Detail string `json:"detail"`
	Status int    `json:"status"`
}
