package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/batonwf/baton/api"
	"github.com/batonwf/baton/job"
)

// Options configure a Client.
type Options struct {
	// HTTPClient makes the requests; nil means http.DefaultClient.
	HTTPClient *http.Client
	// Token is sent as "Authorization: Bearer TOKEN" when not empty.
	Token string
}

// Client calls one server.
type Client struct {
	base  string
	http  *http.Client
	token string
}

// New returns a client of the server at base ("http://127.0.0.1:8080").
func New(base string, o Options) *Client {
	c := &Client{base: strings.TrimSuffix(base, "/"), http: o.HTTPClient, token: o.Token}
	if c.http == nil {
		c.http = http.DefaultClient
	}
	return c
}

// Error is an error answer of the server: its problem. An answer that is
// not one of the API's (another server's page, a proxy's error) is an
// Error too, with Code "" and a Detail that names its status and content
// type, never its body beyond a line of plain text.
type Error struct {
	api.Problem
}

func (e *Error) Error() string {
	return fmt.Sprintf("baton server: %d %s: %s", e.Status, e.Code, e.Detail)
}

// Is reports whether target is an *Error with the same code, so that
// errors.Is(err, &client.Error{Problem: api.Problem{Code: "job_not_found"}})
// works.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// Code returns the code of err's problem, or "" if err is not an *Error.
func Code(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// do sends a request and decodes a 2xx JSON answer into out (if not nil);
// it returns the status.
func (c *Client) do(ctx context.Context, method, path string, q url.Values, body []byte, out any) (int, error) {
	u := c.base + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return 0, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	answer := io.Reader(resp.Body)
	if resp.StatusCode >= 300 {
		answer = io.LimitReader(answer, maxProblemBytes)
	}
	data, err := io.ReadAll(answer)
	if err != nil {
		return resp.StatusCode, fmt.Errorf("%s %s: read the answer: %w", method, path, err)
	}
	if resp.StatusCode >= 300 {
		e := &Error{}
		if json.Unmarshal(data, &e.Problem) != nil || e.Code == "" {
			e.Problem = notBaton(resp, data)
		}
		return resp.StatusCode, e
	}
	switch {
	case out == nil && len(data) > 0 && !isJSON(resp.Header.Get("Content-Type")):
		// An answer with no value to decode (204) that came with a page.
		return resp.StatusCode, &Error{Problem: notBaton(resp, data)}
	case out != nil:
		if s, ok := out.(*string); ok {
			*s = string(data)
		} else if err := json.Unmarshal(data, out); err != nil {
			if !isJSON(resp.Header.Get("Content-Type")) {
				return resp.StatusCode, &Error{Problem: notBaton(resp, data)}
			}
			return resp.StatusCode, fmt.Errorf("%s %s: decode the answer: %w", method, path, err)
		}
	}
	return resp.StatusCode, nil
}

// maxProblemBytes bounds the error answer read: a problem is a few
// lines; a server that is not baton's may send a page of any size.
const maxProblemBytes = 1 << 20

// notBaton is the problem of an answer that is not one of the API's (a
// web server's page, a proxy's error): its Code is "", and its Detail one
// line saying what came instead, with the first line of a text/plain or
// untyped body (net/http's own answers, like 431 or a TLS server's to
// plain HTTP) clipped to 200 bytes, and never the body of a page.
func notBaton(resp *http.Response, data []byte) api.Problem {
	ct, _, _ := strings.Cut(resp.Header.Get("Content-Type"), ";")
	ct = strings.TrimSpace(ct)
	what := ct
	if what == "" {
		what = "no Content-Type"
	}
	detail := fmt.Sprintf("the server answered %s with %s, not baton's API (is it a 'baton serve'?)", resp.Status, what)
	if ct == "text/plain" || ct == "" {
		line, _, _ := strings.Cut(strings.TrimSpace(string(data)), "\n")
		if len(line) > 200 {
			line = strings.ToValidUTF8(line[:200], "") + "..."
		}
		if line != "" {
			detail += fmt.Sprintf(": %q", line)
		}
	}
	return api.Problem{Status: resp.StatusCode, Detail: detail}
}

// isJSON reports whether the media type of a Content-Type is JSON's.
func isJSON(contentType string) bool {
	ct, _, _ := strings.Cut(contentType, ";")
	ct = strings.ToLower(strings.TrimSpace(ct))
	return ct == "application/json" || strings.HasSuffix(ct, "+json")
}

func jobPath(id job.ID, rest string) string {
	return "/api/v1/jobs/" + url.PathEscape(string(id)) + rest
}

// Submit submits workflow (the JSON of a workflow file) as job id, or
// under a name the server chooses when id is "". created is false when
// the job existed with the same workflow (a retry).
func (c *Client) Submit(ctx context.Context, id job.ID, workflow []byte) (sum api.Summary, created bool, err error) {
	q := url.Values{}
	if id != "" {
		q.Set("id", string(id))
	}
	status, err := c.do(ctx, "POST", "/api/v1/jobs", q, workflow, &sum)
	return sum, status == http.StatusCreated, err
}

// ListQuery selects the jobs List returns.
type ListQuery struct {
	Status string // running, succeeded, failed, cancelled or damaged; "" for all
	Prefix string
	After  job.ID // the Next of the previous page
	Limit  int    // 0: the server's default (100)
}

// List returns a page of jobs.
func (c *Client) List(ctx context.Context, lq ListQuery) (api.List, error) {
	q := url.Values{}
	if lq.Status != "" {
		q.Set("status", lq.Status)
	}
	if lq.Prefix != "" {
		q.Set("prefix", lq.Prefix)
	}
	if lq.After != "" {
		q.Set("after", string(lq.After))
	}
	if lq.Limit != 0 {
		q.Set("limit", strconv.Itoa(lq.Limit))
	}
	var out api.List
	_, err := c.do(ctx, "GET", "/api/v1/jobs", q, nil, &out)
	return out, err
}

// JobQuery says which version of a job Job returns, and how much of it.
type JobQuery struct {
	Version uint64 // 0: the newest
	NoNodes bool   // the summary alone
}

// Job returns a job's summary and nodes.
func (c *Client) Job(ctx context.Context, id job.ID, jq JobQuery) (api.Job, error) {
	q := url.Values{}
	if jq.Version != 0 {
		q.Set("version", strconv.FormatUint(jq.Version, 10))
	}
	if jq.NoNodes {
		q.Set("nodes", "false")
	}
	var out api.Job
	_, err := c.do(ctx, "GET", jobPath(id, ""), q, nil, &out)
	return out, err
}

// Node returns one node of a job in full.
func (c *Client) Node(ctx context.Context, id job.ID, path string) (api.Node, error) {
	var out api.Node
	_, err := c.do(ctx, "GET", jobPath(id, "/node"), url.Values{"path": {path}}, nil, &out)
	return out, err
}

// History returns the steps after version from (0: all), at most limit
// (0: the server's default); with wait > 0 the server waits up to that
// long for a step after from.
func (c *Client) History(ctx context.Context, id job.ID, from uint64, limit int, wait time.Duration) (api.History, error) {
	q := url.Values{"from": {strconv.FormatUint(from, 10)}}
	if limit != 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	if wait > 0 {
		q.Set("wait", wait.String())
	}
	var out api.History
	_, err := c.do(ctx, "GET", jobPath(id, "/history"), q, nil, &out)
	return out, err
}

// Graph returns the drawing of a job: format dot, mermaid or svg.
func (c *Client) Graph(ctx context.Context, id job.ID, format string) (string, error) {
	return c.GraphAt(ctx, id, 0, format)
}

// GraphAt returns the drawing of a job as it was at version (0: now).
func (c *Client) GraphAt(ctx context.Context, id job.ID, version uint64, format string) (string, error) {
	q := url.Values{"format": {format}}
	if version != 0 {
		q.Set("version", strconv.FormatUint(version, 10))
	}
	var out string
	_, err := c.do(ctx, "GET", jobPath(id, "/graph"), q, nil, &out)
	return out, err
}

// Cancel cancels a job with reason ("" lets the server say why).
func (c *Client) Cancel(ctx context.Context, id job.ID, reason string) (api.Summary, error) {
	body, err := json.Marshal(api.CancelRequest{Reason: reason})
	if err != nil {
		return api.Summary{}, err
	}
	var out api.Summary
	_, err = c.do(ctx, "POST", jobPath(id, "/cancel"), nil, body, &out)
	return out, err
}

// CancelNode cancels the running node called name in job id with reason
// ("" lets the server say why): it fails with kind cancelled, which a try
// around it may rescue. A node that is not running is left as it is (the
// answer's Sent is false).
func (c *Client) CancelNode(ctx context.Context, id job.ID, name, reason string) (api.NodeCancelled, error) {
	body, err := json.Marshal(api.CancelRequest{Reason: reason})
	if err != nil {
		return api.NodeCancelled{}, err
	}
	var out api.NodeCancelled
	_, err = c.do(ctx, "POST", jobPath(id, "/nodes/"+url.PathEscape(name)+"/cancel"), nil, body, &out)
	return out, err
}

// Signal sends job id the signal name with an ID ("": the server makes
// one, returned) and a JSON payload (nil for null).
func (c *Client) Signal(ctx context.Context, id job.ID, name, sigID string, payload json.RawMessage) (api.SignalSent, error) {
	body, err := json.Marshal(api.SignalRequest{ID: sigID, Payload: payload})
	if err != nil {
		return api.SignalSent{}, err
	}
	var out api.SignalSent
	_, err = c.do(ctx, "POST", jobPath(id, "/signals/"+url.PathEscape(name)), nil, body, &out)
	return out, err
}

// Delete deletes a settled job.
func (c *Client) Delete(ctx context.Context, id job.ID) error {
	_, err := c.do(ctx, "DELETE", jobPath(id, ""), nil, nil, nil)
	return err
}

// Validate validates a workflow without submitting it.
func (c *Client) Validate(ctx context.Context, workflow []byte) (api.Validation, error) {
	var out api.Validation
	_, err := c.do(ctx, "POST", "/api/v1/workflows/validate", nil, workflow, &out)
	return out, err
}

// Workers lists the live workers.
func (c *Client) Workers(ctx context.Context) (api.Workers, error) {
	var out api.Workers
	_, err := c.do(ctx, "GET", "/api/v1/workers", nil, nil, &out)
	return out, err
}

// Actions lists the actions some worker runs.
func (c *Client) Actions(ctx context.Context) (api.Actions, error) {
	var out api.Actions
	_, err := c.do(ctx, "GET", "/api/v1/actions", nil, nil, &out)
	return out, err
}

// Wait polls the job's history with long polls until it has finished,
// and returns its summary.
func (c *Client) Wait(ctx context.Context, id job.ID) (api.Summary, error) {
	var from uint64
	for {
		j, err := c.Job(ctx, id, JobQuery{NoNodes: true})
		if err != nil {
			return api.Summary{}, err
		}
		if j.Status != "running" {
			return j.Summary, nil
		}
		from = j.Version
		if _, err := c.History(ctx, id, from, 1, 25*time.Second); err != nil {
			return api.Summary{}, err
		}
	}
}
