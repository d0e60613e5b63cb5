package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"sync"

	"github.com/batonwf/baton/api"
	"github.com/batonwf/baton/ast"
)

// Code is the stable code of an error answer: part of the API, never
// renamed. Each comes with one HTTP status.
type Code string

// The codes of error answers, by status.
const (
	CodeBadJSON             Code = "bad_json"               // 400: the body is not JSON, or not the JSON expected
	CodeBadJobID            Code = "bad_job_id"             // 400: a job ID job.ID.Check refuses
	CodeBadQuery            Code = "bad_query"              // 400: an unknown query parameter or a bad value
	CodeBadRequest          Code = "bad_request"            // 400: anything else wrong with the request
	CodeBadSignal           Code = "bad_signal"             // 400: a signal's name, ID or payload refused
	CodeUnauthorized        Code = "unauthorized"           // 401: no token, or not a known one
	CodeForbidden           Code = "forbidden"              // 403: a read token on a write route
	CodeNotFound            Code = "not_found"              // 404: no such route
	CodeJobNotFound         Code = "job_not_found"          // 404
	CodeVersionNotFound     Code = "version_not_found"      // 404
	CodeNodeNotFound        Code = "node_not_found"         // 404
	CodeMethodNotAllowed    Code = "method_not_allowed"     // 405, with Allow
	CodeJobExists           Code = "job_exists"             // 409: the ID is taken by another workflow
	CodeJobFinished         Code = "job_finished"           // 409: cancel of a settled job
	CodeJobRunning          Code = "job_running"            // 409: delete of an unsettled job
	CodeRequestTooLarge     Code = "request_too_large"      // 413
	CodeUnsupportedMedia    Code = "unsupported_media_type" // 415
	CodeInvalidWorkflow     Code = "invalid_workflow"       // 422, with problems
	CodeUnknownAction       Code = "unknown_action"         // 422, with problems
	CodeTooManyJobs         Code = "too_many_jobs"          // 429, with Retry-After
	CodeTooManyStreams      Code = "too_many_streams"       // 429, with Retry-After (event streams: coming)
	CodeTooManyAuthFailures Code = "too_many_auth_failures" // 429, with Retry-After
	CodeInternal            Code = "internal"               // 500
	CodeJobDamaged          Code = "job_damaged"            // 500: the stored job cannot be read
	CodeStoreUnavailable    Code = "store_unavailable"      // 503
	CodeShuttingDown        Code = "shutting_down"          // 503
)

// codes lists every code, for the docs' test.
var codes = []Code{
	CodeBadJSON, CodeBadJobID, CodeBadQuery, CodeBadRequest, CodeBadSignal, CodeUnauthorized, CodeForbidden,
	CodeNotFound, CodeJobNotFound, CodeVersionNotFound, CodeNodeNotFound, CodeMethodNotAllowed,
	CodeJobExists, CodeJobFinished, CodeJobRunning, CodeRequestTooLarge, CodeUnsupportedMedia,
	CodeInvalidWorkflow, CodeUnknownAction, CodeTooManyJobs, CodeTooManyStreams, CodeTooManyAuthFailures,
	CodeInternal, CodeJobDamaged, CodeStoreUnavailable, CodeShuttingDown,
}

// Status returns the HTTP status of answers with code c.
func (c Code) Status() int {
	switch c {
	case CodeBadJSON, CodeBadJobID, CodeBadQuery, CodeBadRequest, CodeBadSignal:
		return http.StatusBadRequest
	case CodeUnauthorized:
		return http.StatusUnauthorized
	case CodeForbidden:
		return http.StatusForbidden
	case CodeNotFound, CodeJobNotFound, CodeVersionNotFound, CodeNodeNotFound:
		return http.StatusNotFound
	case CodeMethodNotAllowed:
		return http.StatusMethodNotAllowed
	case CodeJobExists, CodeJobFinished, CodeJobRunning:
		return http.StatusConflict
	case CodeRequestTooLarge:
		return http.StatusRequestEntityTooLarge
	case CodeUnsupportedMedia:
		return http.StatusUnsupportedMediaType
	case CodeInvalidWorkflow, CodeUnknownAction:
		return http.StatusUnprocessableEntity
	case CodeTooManyJobs, CodeTooManyStreams, CodeTooManyAuthFailures:
		return http.StatusTooManyRequests
	case CodeStoreUnavailable, CodeShuttingDown:
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// problem is an error a handler returns: the answer to write.
type problem struct {
	code       Code
	detail     string
	jobID      string
	problems   []api.PathProblem
	retryAfter int // seconds; 0: no Retry-After
	allow      string
}

func (p *problem) Error() string { return string(p.code) + ": " + p.detail }

func newProblem(code Code, detail string) *problem { return &problem{code: code, detail: detail} }

func (p *problem) forJob(id string) *problem { p.jobID = id; return p }

// astProblems converts a workflow's problems.
func astProblems(ps []ast.Problem) []api.PathProblem {
	out := make([]api.PathProblem, len(ps))
	for i, p := range ps {
		out[i] = api.PathProblem{Path: p.Path, Message: p.Msg}
	}
	return out
}

// writeProblem writes p as application/problem+json.
func writeProblem(w http.ResponseWriter, p *problem) {
	status := p.code.Status()
	rec := recorderOf(w)
	out := api.Problem{
		Type: "urn:baton:problem:" + string(p.code), Title: http.StatusText(status), Status: status,
		Detail: p.detail, Code: string(p.code), JobID: p.jobID, Problems: p.problems,
	}
	if rec != nil {
		out.RequestID = rec.requestID
		if p.jobID != "" {
			rec.jobID = p.jobID
		}
	}
	h := w.Header()
	h.Set("Content-Type", "application/problem+json")
	if p.retryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(p.retryAfter))
	}
	if p.allow != "" {
		h.Set("Allow", p.allow)
	}
	if p.code == CodeUnauthorized {
		h.Set("WWW-Authenticate", `Bearer realm="baton"`)
	}
	body, _ := json.Marshal(out)
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}

// writeJSON writes v with status: api.Marshal's bytes (JSON and a
// newline), encoded into a buffer the answers share and sent with their
// length.
func writeJSON(w http.ResponseWriter, status int, v any) {
	buf := answers.Get().(*bytes.Buffer)
	defer putAnswer(buf)
	buf.Reset()
	if err := encodeAnswer(buf, v); err != nil {
		writeProblem(w, newProblem(CodeInternal, "encode the answer: "+err.Error()))
		return
	}
	h := w.Header()
	h["Content-Type"] = jsonType
	h["Content-Length"] = []string{strconv.Itoa(buf.Len())}
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// encodeAnswer writes v to buf as json.Encoder does (with its newline):
// a summary, and a job without its nodes (a status read), through
// api.Summary.AppendJSON, which writes the same bytes without reflection.
func encodeAnswer(buf *bytes.Buffer, v any) error {
	var sum *api.Summary
	switch v := v.(type) {
	case api.Summary:
		sum = &v
	case api.Job:
		if len(v.Nodes) == 0 && len(v.Timers) == 0 {
			sum = &v.Summary
		}
	}
	if sum == nil {
		return json.NewEncoder(buf).Encode(v)
	}
	b, err := sum.AppendJSON(buf.AvailableBuffer())
	if err != nil {
		return err
	}
	buf.Write(b)
	return buf.WriteByte('\n')
}

var jsonType = []string{"application/json"}

// answers are the buffers writeJSON encodes into.
var answers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// putAnswer gives buf back to answers, unless it grew past 64 KiB (a
// job's every node): the pool keeps no large buffer alive for small
// answers.
func putAnswer(buf *bytes.Buffer) {
	if buf.Cap() <= 64<<10 {
		answers.Put(buf)
	}
}
