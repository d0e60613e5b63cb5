package server_test

import (
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/batonwf/baton/server"
	"github.com/batonwf/baton/store"
)

// comingLater is what openapi.json describes ahead of the server: LOUDLY,
// the one place that lists it. The event streams (package server/live)
// and /metrics (package metrics) are written in the document as they will
// be served; their merge adds them to the route table, and the tests then
// fail until they are removed from here. too_many_streams is answered by
// the streams only.
var comingLater = struct {
	ops   []string
	codes []server.Code
}{
	ops:   nil,
	codes: nil,
}

// TestMain runs the tests, then, when all of them ran, checks that every
// error code of the API was answered by some test (checkAPI notes them).
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 && flag.Lookup("test.run").Value.String() == "" && flag.Lookup("test.skip").Value.String() == "" {
		if err := codesAnswered(); err != nil {
			fmt.Fprintf(os.Stderr, "FAIL: the error codes: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// codesAnswered says which codes of the API no test had answered, and
// which codes of comingLater were answered after all.
func codesAnswered() error {
	answered.mu.Lock()
	defer answered.mu.Unlock()
	var missing, early []string
	for _, c := range server.Codes {
		later := slices.Contains(comingLater.codes, c)
		switch n := answered.codes[string(c)]; {
		case n == 0 && !later:
			missing = append(missing, string(c))
		case n > 0 && later:
			early = append(early, string(c))
		}
	}
	switch {
	case len(missing) > 0:
		return fmt.Errorf("no test was answered %s (answered: %v)", strings.Join(missing, ", "), answered.codes)
	case len(early) > 0:
		return fmt.Errorf("%s answered: remove it from comingLater in openapi_test.go", strings.Join(early, ", "))
	}
	return nil
}

// TestOpenAPIDocument: the document loads and validates as OpenAPI 3.1,
// is what GET /api/v1/openapi.json serves, and its Code enum is exactly
// the server's codes.
func TestOpenAPIDocument(t *testing.T) {
	doc := spec(t)
	if doc.OpenAPI != "3.1.0" || !doc.IsOpenAPI31OrLater() {
		t.Errorf("openapi %q, want 3.1.0", doc.OpenAPI)
	}
	var enum []string
	for _, v := range doc.Components.Schemas["Code"].Value.Enum {
		enum = append(enum, v.(string))
	}
	var codes []string
	for _, c := range server.Codes {
		codes = append(codes, string(c))
	}
	slices.Sort(enum)
	slices.Sort(codes)
	if !slices.Equal(enum, codes) {
		t.Errorf("the document's codes:\n%v\nthe server's:\n%v", enum, codes)
	}
	h, err := server.New(server.Options{Store: store.NewMemory()})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(checkAPI(t, h))
	defer ts.Close()
	resp, err := http.Get(ts.URL + "/api/v1/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	served, err := io.ReadAll(resp.Body)
	file, _ := os.ReadFile("openapi.json")
	if err != nil || resp.StatusCode != 200 || string(served) != string(file) {
		t.Errorf("GET /api/v1/openapi.json: %d, %v, %d bytes (the file has %d)", resp.StatusCode, err, len(served), len(file))
	}
}

// TestOpenAPIRoutes: the route table and the document list the same
// operations, both ways (but for comingLater), each with the same query
// parameters, the same need of a token and the same body.
func TestOpenAPIRoutes(t *testing.T) {
	doc := spec(t)
	table := map[string]server.Route{}
	for _, rt := range server.Routes() {
		table[rt.Method+" "+strings.TrimSuffix(rt.Pattern, "{$}")] = rt
	}
	documented := map[string]bool{}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			name := method + " " + path
			documented[name] = true
			rt, ok := table[name]
			later := slices.Contains(comingLater.ops, name)
			switch {
			case ok && later:
				t.Errorf("%s is in the route table: remove it from comingLater in openapi_test.go", name)
				continue
			case !ok && !later:
				t.Errorf("the document describes %s, which the route table lacks", name)
				continue
			case !ok:
				continue
			}
			var query []string
			for _, p := range append(slices.Clone(item.Parameters), op.Parameters...) {
				if p.Value.In == "query" {
					query = append(query, p.Value.Name)
				}
			}
			slices.Sort(query)
			want := slices.Sorted(slices.Values(rt.Query))
			if !slices.Equal(query, want) {
				t.Errorf("%s: the document's query parameters %v, the table's %v", name, query, want)
			}
			scope := "read" // the document's default
			if op.Security != nil {
				scope = "none"
				for _, req := range *op.Security {
					scope = strings.Join(req["bearer"], ",")
				}
			}
			if scope != rt.Scope.String() {
				t.Errorf("%s: the document asks for %q, the table for %q", name, scope, rt.Scope)
			}
			if (op.RequestBody != nil) != rt.Body {
				t.Errorf("%s: a body in the document %v, in the table %v", name, op.RequestBody != nil, rt.Body)
			}
		}
	}
	for name := range table {
		if !documented[name] {
			t.Errorf("the route table has %s, which the document does not describe", name)
		}
	}
}

// TestCheckAPICatches: the check refuses answers the document does not
// describe, so that the suite's passing means something: a field, a
// status, a content type, a code at the wrong status, a missing header,
// a request the document refuses answered 2xx, and one it takes refused
// as malformed.
func TestCheckAPICatches(t *testing.T) {
	doc := spec(t)
	problem := func(status int, code string) func(http.ResponseWriter) {
		return func(w http.ResponseWriter) {
			w.Header().Set("X-Request-Id", "r")
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(status)
			fmt.Fprintf(w, `{"type":"urn:baton:problem:%s","title":"t","status":%d,"detail":"d","code":%q,"request_id":"r"}`, code, status, code)
		}
	}
	jsonAnswer := func(status int, body string, headers ...string) func(http.ResponseWriter) {
		return func(w http.ResponseWriter) {
			w.Header().Set("X-Request-Id", "r")
			for i := 0; i+1 < len(headers); i += 2 {
				w.Header().Set(headers[i], headers[i+1])
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			io.WriteString(w, body)
		}
	}
	summary := `{"id":"a","status":"running","version":1,"settled":0,"total":1}`
	for _, c := range []struct {
		name, pattern, target string
		answer                func(http.ResponseWriter)
		wrong                 string // "" for an answer the document describes
	}{
		{"Healthy", "GET /healthz", "/healthz", jsonAnswer(200, `{"status":"ok"}`), ""},
		{"UnknownField", "GET /healthz", "/healthz", jsonAnswer(200, `{"status":"ok","load":1}`), "load"},
		{"UnknownStatus", "GET /healthz", "/healthz", jsonAnswer(202, `{"status":"ok"}`), "status is not supported"},
		{"WrongContentType", "GET /healthz", "/healthz", func(w http.ResponseWriter) {
			w.Header().Set("X-Request-Id", "r")
			io.WriteString(w, "ok")
		}, "Content-Type"},
		{"NoRequestID", "GET /healthz", "/healthz", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"status":"ok"}`)
		}, "X-Request-Id"},
		{"Problem", "GET /api/v1/jobs/{id}", "/api/v1/jobs/a", problem(404, "job_not_found"), ""},
		{"CodeOfAnotherStatus", "GET /api/v1/jobs/{id}", "/api/v1/jobs/a", problem(404, "job_exists"), "status"},
		{"UnknownCode", "GET /api/v1/jobs/{id}", "/api/v1/jobs/a", problem(404, "gone"), "code"},
		{"CreatedWithoutLocation", "POST /api/v1/jobs", "/api/v1/jobs?id=a", jsonAnswer(201, summary), "Location"},
		{"Created", "POST /api/v1/jobs", "/api/v1/jobs?id=a", jsonAnswer(201, summary, "Location", "/api/v1/jobs/a"), ""},
		{"RefusedRequestTaken", "POST /api/v1/jobs", "/api/v1/jobs?id=..", jsonAnswer(201, summary, "Location", "/api/v1/jobs/a"), "refuses"},
		{"UnknownParameterTaken", "GET /healthz", "/healthz?verbose=1", jsonAnswer(200, `{"status":"ok"}`), "unknown or repeated"},
		{"GoodQueryRefused", "GET /api/v1/jobs", "/api/v1/jobs?limit=5", problem(400, "bad_query"), "document takes"},
		{"BadQueryRefused", "GET /api/v1/jobs", "/api/v1/jobs?limit=5000", problem(400, "bad_query"), ""},
		{"ErrorNotAProblem", "GET /api/v1/jobs/{id}", "/api/v1/jobs/a", jsonAnswer(404, `{}`), "problem+json"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got error
			mux := http.NewServeMux()
			mux.HandleFunc(c.pattern, func(w http.ResponseWriter, r *http.Request) {
				rec := &recording{ResponseWriter: w}
				c.answer(rec)
				got = checkExchange(doc, r, []byte(`{"version":1,"root":{"act":"ok"}}`), rec)
			})
			method, _, _ := strings.Cut(c.pattern, " ")
			req := httptest.NewRequest(method, c.target, nil)
			req.Header.Set("Content-Type", "application/json")
			mux.ServeHTTP(httptest.NewRecorder(), req)
			switch {
			case c.wrong == "" && got != nil:
				t.Errorf("refused: %v", got)
			case c.wrong != "" && (got == nil || !strings.Contains(got.Error(), c.wrong)):
				t.Errorf("got %v, want an error naming %q", got, c.wrong)
			}
		})
	}
}
