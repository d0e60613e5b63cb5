package server_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/batonwf/baton/runner"
	"github.com/batonwf/baton/server"
	"github.com/batonwf/baton/server/servertest"
	"github.com/batonwf/baton/store"
)

// Bad inputs of issue 16 section 4 beyond the suite's own (which runs
// them on every store): each is refused with its problem, nothing stored.

func memoryEnv(t *testing.T) *servertest.Env {
	return servertest.NewEnv(t, checked(func(t *testing.T, reg *runner.Registry) (store.Store, any) {
		st := store.NewMemory()
		return st, runLocal(t, st, reg)
	}), nil)
}

// TestVeryDeepWorkflow: a tree 20,000 levels deep is refused naming the
// decoder's nesting limit, without exhausting a stack.
func TestVeryDeepWorkflow(t *testing.T) {
	e := memoryEnv(t)
	const n = 20000
	body := `{"version":1,"root":` + strings.Repeat(`{"seq":[`, n) + `{"act":"ok"}` + strings.Repeat(`]}`, n) + `}`
	e.Unchanged(t, func() {
		p := e.Do(t, "POST", "/api/v1/jobs?id=deep", nil, body).Problem(t, 400, server.CodeBadJSON)
		if !strings.Contains(p.Detail, "10000 levels") {
			t.Errorf("the detail does not name the limit: %q", p.Detail)
		}
	})
}

// TestSlashInIDQuery: a job ID with a '/' given unescaped in the query.
func TestSlashInIDQuery(t *testing.T) {
	e := memoryEnv(t)
	e.Unchanged(t, func() {
		e.Do(t, "POST", "/api/v1/jobs?id=a/b", nil, `{"version":1,"root":{"act":"ok"}}`).Problem(t, 400, server.CodeBadJobID)
	})
}

// TestExpectContinueTooLarge: a 9 MiB body announced with Expect:
// 100-continue is refused (413) from its Content-Length, and the client
// is never asked for it: the answer comes with no byte of it sent.
func TestExpectContinueTooLarge(t *testing.T) {
	e := memoryEnv(t)
	e.Unchanged(t, func() {
		conn, err := net.Dial("tcp", strings.TrimPrefix(e.URL, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		fmt.Fprintf(conn, "POST /api/v1/jobs?id=big HTTP/1.1\r\nHost: baton\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\nExpect: 100-continue\r\n\r\n",
			servertest.WriteToken, 9<<20)
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		servertest.Answer{Status: resp.StatusCode, Header: resp.Header, Body: b}.Problem(t, 413, server.CodeRequestTooLarge)
	})
}
