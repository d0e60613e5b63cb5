package main

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
	"unicode/utf8"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
)

// Defaults and limits of http.get.
const (
	httpTimeout  = 10 * time.Second
	httpMaxBytes = 1 << 20 // 1 MiB
	httpBodyText = 4 << 10 // bytes of the body kept in the output
)

// builtins returns a registry with the built-in actions; log writes to
// out. The registry's http.get uses client.
func builtins(out io.Writer, client *http.Client) *runner.Registry {
	reg := runner.NewRegistry()
	must := func(err error) {
		if err != nil {
			panic(err) // the names below are valid and registered once
		}
	}
	must(reg.Register("log", logAction(out)))
	must(reg.Register("sleep", sleepAction))
	must(reg.Register("fail", failAction))
	must(reg.Register("value", valueAction))
	must(reg.Register("http.get", httpGetAction(client)))
	return reg
}

// logAction prints its payload, prefixed with the job ID and the action
// ID ("j-42 seq[0]#1: hello": a worker runs many jobs at once): a string
// as it is, anything else as JSON; then the inputs the leaf takes, if
// any, each name with its value as JSON ("(item "pen", index 0)": a map
// copy's element and index).
func logAction(out io.Writer) runner.Handler {
	return func(_ context.Context, a job.Action) ([]byte, error) {
		msg := string(a.Payload)
		var s string
		if json.Unmarshal(a.Payload, &s) == nil {
			msg = s
		}
		var b strings.Builder
		fmt.Fprintf(&b, "%s %s: %s", a.JobID, a.ID, msg)
		for i, in := range a.Inputs {
			sep := ", "
			if i == 0 {
				sep = " ("
			}
			v := string(in.Output)
			if len(v) == 0 {
				v = "null"
			}
			b.WriteString(sep + in.Name + " " + v)
		}
		if len(a.Inputs) > 0 {
			b.WriteByte(')')
		}
		b.WriteByte('\n')
		_, err := io.WriteString(out, b.String())
		return nil, err
	}
}

// valueAction outputs its payload as it is (nothing when it has none): a
// value for a choice to choose on, a list for a map to run over, or what
// a loop's until compares.
func valueAction(_ context.Context, a job.Action) ([]byte, error) {
	return a.Payload, nil
}

// sleepAction waits for its payload, a Go duration ("200ms") or a number
// of milliseconds, or until the context ends.
func sleepAction(ctx context.Context, a job.Action) ([]byte, error) {
	d, err := sleepDuration(a.Payload)
	if err != nil {
		return nil, fmt.Errorf("sleep: %v", err)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("sleep %s: %w", d, ctx.Err())
	}
}

func sleepDuration(payload []byte) (time.Duration, error) {
	var v any
	if err := json.Unmarshal(payload, &v); err != nil {
		return 0, fmt.Errorf(`payload must be a duration like "200ms" or a number of milliseconds, got %s`, job.Clip(string(payload)))
	}
	var d time.Duration
	switch v := v.(type) {
	case string:
		var err error
		if d, err = time.ParseDuration(v); err != nil {
			return 0, fmt.Errorf("payload %q is not a duration like \"200ms\" or \"1.5s\"", v)
		}
	case float64:
		d = time.Duration(v * float64(time.Millisecond))
	default:
		return 0, fmt.Errorf(`payload must be a duration like "200ms" or a number of milliseconds, got %s`, job.Clip(string(payload)))
	}
	if d < 0 {
		return 0, fmt.Errorf("negative duration %s", d)
	}
	return d, nil
}

// failAction fails with its payload as the message: a string as it is,
// anything else as JSON.
func failAction(_ context.Context, a job.Action) ([]byte, error) {
	msg := string(a.Payload)
	var s string
	if json.Unmarshal(a.Payload, &s) == nil {
		msg = s
	}
	if msg == "" {
		msg = "failed by the fail action"
	}
	return nil, errors.New(msg)
}

// httpGetRequest is the payload of http.get, when it is not just a URL.
type httpGetRequest struct {
	URL      string `json:"url"`
	Timeout  string `json:"timeout"`
	MaxBytes int64  `json:"max_bytes"`
}

// httpGetResult is the output of http.get.
type httpGetResult struct {
	Status int    `json:"status"`
	Bytes  int64  `json:"bytes"`
	Body   string `json:"body"` // the first 4 KiB, as text
}

// httpGetAction fetches a URL: only http and https, a timeout (default
// 10s) and a body limit (default 1 MiB; a larger body fails the action).
// A status other than 2xx fails the action, naming the status.
func httpGetAction(client *http.Client) runner.Handler {
	return func(ctx context.Context, a job.Action) ([]byte, error) {
		req, timeout, err := parseHTTPGet(a.Payload)
		if err != nil {
			return nil, fmt.Errorf("http.get: %v", err)
		}
		outer := ctx
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		// cut explains an error from the request or the body: when the
		// context the action was given ended (the run's --timeout, or a
		// shutdown), its error alone, for the runner to report; when
		// http.get's own timeout fired, that timeout.
		cut := func(err error, own string) error {
			switch {
			case outer.Err() != nil:
				return outer.Err()
			case errors.Is(ctx.Err(), context.DeadlineExceeded):
				return fmt.Errorf("http.get %s: %s %s", req.URL, own, timeout)
			}
			return err
		}
		hr, err := http.NewRequestWithContext(ctx, http.MethodGet, req.URL, nil)
		if err != nil {
			return nil, fmt.Errorf("http.get %s: %v", req.URL, err)
		}
		resp, err := client.Do(hr)
		if err != nil {
			var ue *url.Error // says `Get "URL": ...`; the message names the URL already
			if errors.As(err, &ue) {
				err = ue.Err
			}
			return nil, cut(fmt.Errorf("http.get %s: %v", req.URL, err), "no response within")
		}
		defer resp.Body.Close()
		if resp.StatusCode < 200 || resp.StatusCode > 299 {
			return nil, fmt.Errorf("http.get %s: status %s", req.URL, resp.Status)
		}
		body, err := io.ReadAll(io.LimitReader(resp.Body, req.MaxBytes+1))
		if err != nil {
			return nil, cut(fmt.Errorf("http.get %s: reading the body: %v", req.URL, err), "body not received within")
		}
		if int64(len(body)) > req.MaxBytes {
			return nil, fmt.Errorf("http.get %s: body is larger than max_bytes (%d bytes)", req.URL, req.MaxBytes)
		}
		return json.Marshal(httpGetResult{Status: resp.StatusCode, Bytes: int64(len(body)), Body: bodyText(body)})
	}
}

// parseHTTPGet reads the payload of http.get: a URL string, or an object.
func parseHTTPGet(payload []byte) (httpGetRequest, time.Duration, error) {
	req := httpGetRequest{MaxBytes: httpMaxBytes}
	trimmed := bytes.TrimSpace(payload)
	switch {
	case len(trimmed) == 0:
		return req, 0, errors.New(`payload must be a URL or {"url": ...}; it is empty`)
	case trimmed[0] == '"':
		if err := json.Unmarshal(trimmed, &req.URL); err != nil {
			return req, 0, fmt.Errorf("payload: %v", err)
		}
	case trimmed[0] != '{':
		return req, 0, fmt.Errorf(`payload must be a URL or {"url": ..., "timeout": "5s", "max_bytes": N}, got %s`, ast.DescribeJSON(trimmed))
	default:
		dec := json.NewDecoder(bytes.NewReader(trimmed))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil {
			return req, 0, httpPayloadError(err)
		}
	}
	u, err := url.Parse(req.URL)
	switch {
	case req.URL == "":
		return req, 0, errors.New("no url given")
	case err != nil:
		return req, 0, fmt.Errorf("bad url %q: %v", req.URL, err)
	case u.Scheme != "http" && u.Scheme != "https":
		return req, 0, fmt.Errorf("url %q: only http and https URLs are allowed", req.URL)
	case u.Host == "":
		return req, 0, fmt.Errorf("url %q has no host", req.URL)
	}
	timeout := httpTimeout
	if req.Timeout != "" {
		if timeout, err = time.ParseDuration(req.Timeout); err != nil || timeout <= 0 {
			return req, 0, fmt.Errorf("timeout %q is not a positive duration like \"5s\"", req.Timeout)
		}
	}
	if req.MaxBytes <= 0 {
		return req, 0, fmt.Errorf("max_bytes must be positive, got %s", strconv.FormatInt(req.MaxBytes, 10))
	}
	return req, timeout, nil
}

// httpGetFields says what each field of http.get's payload must be.
var httpGetFields = map[string]string{
	"url":       "a string (the URL)",
	"timeout":   `a duration like "5s"`,
	"max_bytes": "a whole number",
}

// httpPayloadError says in JSON's words, not Go's, what is wrong with an
// object payload of http.get that did not decode: a field of the wrong
// type or an unknown field.
func httpPayloadError(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && httpGetFields[te.Field] != "" {
		got := te.Value // "string", "number", "number 1.5", "bool", "array", "object"
		switch {
		case strings.HasPrefix(got, "number ") && len(got) <= 30:
			got = strings.TrimPrefix(got, "number ")
		case strings.HasPrefix(got, "number"):
			got = "a number"
		case got == "bool":
			got = "a boolean"
		case got == "array" || got == "object":
			got = "an " + got
		default:
			got = "a " + got
		}
		return fmt.Errorf("payload field %q must be %s, got %s", te.Field, httpGetFields[te.Field], got)
	}
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return fmt.Errorf("payload has an unknown field %s (allowed: url, timeout, max_bytes)", name)
	}
	return fmt.Errorf("payload: %v", err)
}

// bodyText returns the first httpBodyText bytes of body as valid UTF-8,
// without a rune cut in half at the end.
func bodyText(body []byte) string {
	if len(body) > httpBodyText {
		body = body[:httpBodyText]
		for i := 0; i < utf8.UTFMax && len(body) > 0; i++ {
			if r, size := utf8.DecodeLastRune(body); r != utf8.RuneError || size != 1 {
				break
			}
			body = body[:len(body)-1]
		}
	}
	return strings.ToValidUTF8(string(body), "\uFFFD")
}
