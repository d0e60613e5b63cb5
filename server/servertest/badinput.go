package servertest

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/batonwf/baton/server"
)

// badCase is one bad request: what is sent and the answer it must get.
type badCase struct {
	name    string
	method  string
	path    string
	headers map[string]string
	body    string
	status  int
	code    server.Code
	// detail, if not "", must be in the problem's detail.
	detail string
	// check, if not nil, checks more of the problem.
	paths []string
}

func deep(n int) string {
	return `{"version":1,"root":` + strings.Repeat(`{"seq":[`, n) + `{"act":"ok"}` + strings.Repeat(`]}`, n) + `}`
}

func badCases() []badCase {
	post := func(name, body string, status int, code server.Code, detail string) badCase {
		return badCase{name: name, method: "POST", path: "/api/v1/jobs?id=bad", body: body, status: status, code: code, detail: detail}
	}
	get := func(name, path string, status int, code server.Code) badCase {
		return badCase{name: name, method: "GET", path: path, status: status, code: code}
	}
	cases := []badCase{
		// Bodies.
		post("MalformedJSON", `{"version":1,`, 400, server.CodeBadJSON, "line 1"),
		post("Null", `null`, 400, server.CodeBadJSON, "null"),
		post("TrailingData", okFlow+` {}`, 400, server.CodeBadJSON, "after top-level value"),
		post("TopLevelArray", `[`+okFlow+`]`, 400, server.CodeBadJSON, "array"),
		post("InvalidUTF8", `{"version":1,"root":{"act":"ok","payload":"`+"\xff"+`"}}`, 400, server.CodeBadJSON, "UTF-8"),
		post("ByteOrderMark", "\xef\xbb\xbf"+okFlow, 400, server.CodeBadJSON, "byte-order mark"),
		post("TooDeep", deep(200), 422, server.CodeInvalidWorkflow, "128"),
		{name: "UnknownKindsAndFields", method: "POST", path: "/api/v1/jobs?id=bad",
			body:   `{"version":1,"root":{"seq":[{"bad":1},{"act":"ok","zzz":2},{"par":[{"nope":{}}]}]}}`,
			status: 422, code: server.CodeInvalidWorkflow, paths: []string{"seq[0]", "seq[1]", "seq[2].par[0]"}},
		{name: "UnknownAction", method: "POST", path: "/api/v1/jobs?id=bad",
			body:   `{"version":1,"root":{"seq":[{"act":"ok"},{"act":"nobody"},{"act":"nobody"}]}}`,
			status: 422, code: server.CodeUnknownAction, detail: "nobody", paths: []string{"seq[1]", "seq[2]"}},
		{name: "EmptyBody", method: "POST", path: "/api/v1/jobs?id=bad", headers: map[string]string{"Content-Type": "application/json"},
			status: 400, code: server.CodeBadJSON, detail: "empty"},
		{name: "GzipBody", method: "POST", path: "/api/v1/jobs?id=bad", body: okFlow, headers: map[string]string{"Content-Encoding": "gzip"},
			status: 415, code: server.CodeUnsupportedMedia, detail: "uncompressed"},
		{name: "NoContentType", method: "POST", path: "/api/v1/jobs?id=bad", body: okFlow, headers: map[string]string{"Content-Type": ""},
			status: 415, code: server.CodeUnsupportedMedia, detail: "application/json"},
		{name: "FormContentType", method: "POST", path: "/api/v1/jobs?id=bad", body: okFlow, headers: map[string]string{"Content-Type": "application/x-www-form-urlencoded"},
			status: 415, code: server.CodeUnsupportedMedia, detail: "application/json"},
		// IDs and paths.
		{name: "EmptyID", method: "POST", path: "/api/v1/jobs?id=", body: okFlow, status: 400, code: server.CodeBadJobID, detail: "empty"},
		{name: "LongID", method: "POST", path: "/api/v1/jobs?id=" + strings.Repeat("a", 201), body: okFlow, status: 400, code: server.CodeBadJobID, detail: "201 bytes"},
		{name: "SlashID", method: "POST", path: "/api/v1/jobs?id=a%2Fb", body: okFlow, status: 400, code: server.CodeBadJobID},
		{name: "ControlID", method: "POST", path: "/api/v1/jobs?id=a%01b", body: okFlow, status: 400, code: server.CodeBadJobID},
		{name: "DotID", method: "POST", path: "/api/v1/jobs?id=.", body: okFlow, status: 400, code: server.CodeBadJobID},
		{name: "DotDotID", method: "POST", path: "/api/v1/jobs?id=..", body: okFlow, status: 400, code: server.CodeBadJobID},
		{name: "BadPercentQuery", method: "POST", path: "/api/v1/jobs?id=%zz", body: okFlow, status: 400, code: server.CodeBadQuery},
		get("SlashInPath", "/api/v1/jobs/a%2Fb", 400, server.CodeBadJobID),
		get("ControlInPath", "/api/v1/jobs/a%01b", 400, server.CodeBadJobID),
		get("LongInPath", "/api/v1/jobs/"+strings.Repeat("a", 201), 400, server.CodeBadJobID),
		get("DotDotPath", "/api/v1/jobs/..", 400, server.CodeBadJobID),
		get("DotPath", "/api/v1/jobs/./history", 400, server.CodeBadJobID),
		get("EscapedDotDotPath", "/api/v1/jobs/%2E%2E", 400, server.CodeBadJobID),
		get("DoubleSlashPath", "/api//v1/jobs", 404, server.CodeNotFound),
		get("UnknownJob", "/api/v1/jobs/nope", 404, server.CodeJobNotFound),
		get("UnknownJobHistory", "/api/v1/jobs/nope/history", 404, server.CodeJobNotFound),
		get("UnknownJobGraph", "/api/v1/jobs/nope/graph", 404, server.CodeJobNotFound),
		{name: "CancelReasonTooLong", method: "POST", path: "/api/v1/jobs/nope/cancel", body: `{"reason":"` + strings.Repeat("r", 1025) + `"}`,
			status: 400, code: server.CodeBadRequest, detail: "1025 bytes"},
		{name: "CancelReasonNotUTF8", method: "POST", path: "/api/v1/jobs/nope/cancel", body: "{\"reason\":\"\xff\"}",
			status: 400, code: server.CodeBadRequest, detail: "UTF-8"},
		{name: "CancelUnknownField", method: "POST", path: "/api/v1/jobs/nope/cancel", body: `{"why":"x"}`,
			status: 400, code: server.CodeBadJSON, detail: "why"},
		{name: "CancelByteOrderMark", method: "POST", path: "/api/v1/jobs/nope/cancel", body: "\xef\xbb\xbf" + `{"reason":"x"}`,
			status: 400, code: server.CodeBadJSON, detail: "byte-order mark"},
		{name: "NodeCancelByteOrderMark", method: "POST", path: "/api/v1/jobs/nope/nodes/n/cancel", body: "\xef\xbb\xbf" + `{"reason":"x"}`,
			status: 400, code: server.CodeBadJSON, detail: "byte-order mark"},
		// Queries.
		get("UnknownParameter", "/api/v1/jobs?stauts=failed", 400, server.CodeBadQuery),
		get("RepeatedParameter", "/api/v1/jobs?limit=1&limit=2", 400, server.CodeBadQuery),
		get("LimitZero", "/api/v1/jobs?limit=0", 400, server.CodeBadQuery),
		get("LimitNegative", "/api/v1/jobs?limit=-1", 400, server.CodeBadQuery),
		get("LimitHuge", "/api/v1/jobs?limit=1000000000000", 400, server.CodeBadQuery),
		get("LimitNotANumber", "/api/v1/jobs?limit=abc", 400, server.CodeBadQuery),
		get("GarbageCursor", "/api/v1/jobs?after=a%20b", 400, server.CodeBadQuery),
		get("UnknownStatus", "/api/v1/jobs?status=done", 400, server.CodeBadQuery),
		get("WaitTooLong", "/api/v1/jobs/nope/history?wait=26s", 400, server.CodeBadQuery),
		get("WaitNotADuration", "/api/v1/jobs/nope/history?wait=soon", 400, server.CodeBadQuery),
		get("VersionZero", "/api/v1/jobs/nope?version=0", 400, server.CodeBadQuery),
		get("NodesNotABool", "/api/v1/jobs/nope?nodes=perhaps", 400, server.CodeBadQuery),
		get("NodeWithoutPath", "/api/v1/jobs/nope/node", 400, server.CodeBadQuery),
		get("UnknownGraphFormat", "/api/v1/jobs/nope/graph?format=png", 400, server.CodeBadQuery),
		get("UnknownParameterOnJob", "/api/v1/jobs/nope?verison=2", 400, server.CodeBadQuery),
	}
	return cases
}

func testBadInput(t *testing.T, cfg Config) {
	e := NewEnv(t, cfg, func(o *server.Options) { o.MaxBodyBytes = 1 << 20 })
	e.Submit(t, "there", okFlow)
	e.Settled(t, "there")
	for _, c := range badCases() {
		t.Run(c.name, func(t *testing.T) {
			e.Unchanged(t, func() {
				p := e.Do(t, c.method, c.path, c.headers, c.body).Problem(t, c.status, c.code)
				if !strings.Contains(p.Detail, c.detail) {
					t.Errorf("detail %q does not say %q", p.Detail, c.detail)
				}
				if c.paths != nil {
					var got []string
					for _, pp := range p.Problems {
						got = append(got, pp.Path)
						if pp.Message == "" {
							t.Errorf("problem at %q without a message", pp.Path)
						}
					}
					if fmt.Sprint(got) != fmt.Sprint(c.paths) {
						t.Errorf("problems at %v, want %v: %+v", got, c.paths, p.Problems)
					}
				}
			})
		})
	}
	// A body over the limit is refused from its Content-Length before it
	// is read: with Expect: 100-continue the client never sends it.
	t.Run("TooLarge", func(t *testing.T) {
		e.Unchanged(t, func() {
			big := `{"version":1,"root":{"act":"ok","payload":"` + strings.Repeat("x", 2<<20) + `"}}`
			e.Do(t, "POST", "/api/v1/jobs?id=bad", map[string]string{"Expect": "100-continue"}, big).Problem(t, 413, server.CodeRequestTooLarge)
		})
	})
	// Without a length, the read is cut at the limit.
	t.Run("TooLargeChunked", func(t *testing.T) {
		e.Unchanged(t, func() {
			big := `{"version":1,"root":{"act":"ok","payload":"` + strings.Repeat("x", 2<<20) + `"}}`
			req, err := http.NewRequestWithContext(ctxOf(t), "POST", e.URL+"/api/v1/jobs?id=bad", struct{ *strings.Reader }{strings.NewReader(big)})
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+WriteToken)
			if req.ContentLength != 0 {
				t.Fatalf("the request has a length: %d", req.ContentLength)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 413 {
				t.Errorf("chunked 2 MiB: %d", resp.StatusCode)
			}
		})
	})
	// A path net/http cannot parse is answered by net/http, before the API.
	t.Run("BadPercentPath", func(t *testing.T) {
		conn, err := net.Dial("tcp", strings.TrimPrefix(e.URL, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if _, err := conn.Write([]byte("GET /api/v1/jobs/%zz HTTP/1.1\r\nHost: x\r\n\r\n")); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 400 {
			t.Errorf("GET /api/v1/jobs/%%zz: %d", resp.StatusCode)
		}
	})
}
