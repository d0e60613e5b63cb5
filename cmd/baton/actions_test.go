package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/batonwf/baton/job"
)

// testServer serves /ok, /big (100 KiB), /error (500) and /slow on
// 127.0.0.1.
func testServer(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "hello, baton") })
	mux.HandleFunc("/big", func(w http.ResponseWriter, _ *http.Request) { w.Write(bytes.Repeat([]byte("x"), 100<<10)) })
	mux.HandleFunc("/error", func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "oops", http.StatusInternalServerError) })
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func act(name string, payload string) job.Action {
	return job.Action{JobID: "t", ID: "root#1", Name: name, Payload: []byte(payload), Attempt: 1}
}

func TestHTTPGet(t *testing.T) {
	srv := testServer(t)
	client := srv.Client()
	get := httpGetAction(client)
	ctx := context.Background()
	down := httptest.NewServer(http.NotFoundHandler())
	closed := down.URL // nothing listens there once it is closed
	down.Close()

	out, err := get(ctx, act("http.get", fmt.Sprintf(`%q`, srv.URL+"/ok")))
	if err != nil {
		t.Fatal(err)
	}
	var res httpGetResult
	if err := json.Unmarshal(out, &res); err != nil || res != (httpGetResult{Status: 200, Bytes: 12, Body: "hello, baton"}) {
		t.Errorf("output %s (%v)", out, err)
	}

	out, err = get(ctx, act("http.get", fmt.Sprintf(`{"url":%q,"max_bytes":200000}`, srv.URL+"/big")))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(out, &res); err != nil || res.Bytes != 100<<10 || len(res.Body) != 4096 {
		t.Errorf("big: status %d, bytes %d, body %d bytes (%v)", res.Status, res.Bytes, len(res.Body), err)
	}

	for _, tc := range []struct{ payload, want string }{
		{fmt.Sprintf(`%q`, srv.URL+"/error"), "status 500 Internal Server Error"},
		{fmt.Sprintf(`{"url":%q,"max_bytes":10}`, srv.URL+"/ok"), "body is larger than max_bytes (10 bytes)"},
		{fmt.Sprintf(`{"url":%q,"timeout":"50ms"}`, srv.URL+"/slow"), "no response within 50ms"},
		{`"ftp://127.0.0.1/x"`, "only http and https URLs are allowed"},
		{`"file:///etc/passwd"`, "only http and https URLs are allowed"},
		{`"http://"`, "has no host"},
		{`{"url":"http://127.0.0.1/","timeout":"soon"}`, `timeout "soon" is not a positive duration`},
		{`{"url":"http://127.0.0.1/","max_bytes":0}`, "max_bytes must be positive"},
		{`{"uri":"http://127.0.0.1/"}`, `unknown field "uri"`},
		{`42`, "payload must be a URL"},
		{``, "it is empty"},
		{fmt.Sprintf(`%q`, closed+"/x"), "http.get " + closed + "/x: dial tcp "},
	} {
		_, err := get(ctx, act("http.get", tc.payload))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("http.get %s: error %v, want %q", tc.payload, err, tc.want)
		}
	}
}

func TestHTTPGetWorkflow(t *testing.T) {
	srv := testServer(t)
	db := filepath.Join(t.TempDir(), "baton.db")
	file := writeWorkflow(t, "get.json", fmt.Sprintf(`{"version":1,"root":{"act":"http.get","payload":%q}}`, srv.URL+"/ok"))
	r := baton(t, "run", file, "--store", db).want(t, exitOK)
	contains(t, "stdout", r.stdout, `-> {"status":200,"bytes":12,"body":"hello, baton"}`)

	file = writeWorkflow(t, "get.json", fmt.Sprintf(`{"version":1,"root":{"act":"http.get","payload":{"url":%q}}}`, srv.URL+"/error"))
	r = baton(t, "run", file, "--store", db, "--id", "e").want(t, exitFailed)
	// The summary clips the message to 60 bytes; the stored job has it all.
	contains(t, "stdout", r.stdout, "failed at root (http.get): http.get "+srv.URL+"/error: status 500")
	r = baton(t, "inspect", "--format", "json", "--store", db, "e").want(t, exitOK)
	contains(t, "json", r.stdout, `"error":"http.get `+srv.URL+`/error: status 500 Internal Server Error"`)

	file = writeWorkflow(t, "get.json", fmt.Sprintf(`{"version":1,"root":{"act":"http.get","payload":{"url":%q,"max_bytes":1000}}}`, srv.URL+"/big"))
	baton(t, "run", file, "--store", db, "--id", "big").want(t, exitFailed)
	r = baton(t, "inspect", "--format", "json", "--store", db, "big").want(t, exitOK)
	contains(t, "json", r.stdout, "body is larger than max_bytes (1000 bytes)")
}

func TestBodyText(t *testing.T) {
	body := append(bytes.Repeat([]byte("a"), httpBodyText-1), "é"...) // é straddles the cut
	got := bodyText(body)
	if !utf8.ValidString(got) || got != strings.Repeat("a", httpBodyText-1) {
		t.Errorf("bodyText cut a rune: %d bytes, valid %v", len(got), utf8.ValidString(got))
	}
	if got := bodyText([]byte("ok\xff")); got != "ok\uFFFD" {
		t.Errorf("bodyText = %q", got)
	}
}

func TestLogSleepFail(t *testing.T) {
	ctx := context.Background()
	var out bytes.Buffer
	log := logAction(&out)
	for _, p := range []string{`"plain text"`, `{"a":[1,2]}`, `7`} {
		if _, err := log(ctx, act("log", p)); err != nil {
			t.Fatal(err)
		}
	}
	// Each line names the job and the action: a worker runs many jobs.
	if want := "t root#1: plain text\nt root#1: {\"a\":[1,2]}\nt root#1: 7\n"; out.String() != want {
		t.Errorf("log printed %q, want %q", out.String(), want)
	}

	for _, p := range []string{`"20ms"`, `20`, `0.5`} {
		start := time.Now()
		if _, err := sleepAction(ctx, act("sleep", p)); err != nil {
			t.Errorf("sleep %s: %v", p, err)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("sleep %s took %v", p, d)
		}
	}
	for _, p := range []string{`"soon"`, `"-1s"`, `true`, ``} {
		if _, err := sleepAction(ctx, act("sleep", p)); err == nil || !strings.HasPrefix(err.Error(), "sleep: ") {
			t.Errorf("sleep %s: error %v", p, err)
		}
	}
	cctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := sleepAction(cctx, act("sleep", `"1h"`)); err == nil || time.Since(start) > 2*time.Second {
		t.Errorf("sleep ignored its context: %v after %v", err, time.Since(start))
	}

	for p, want := range map[string]string{`"card declined"`: "card declined", `{"code":7}`: `{"code":7}`, ``: "failed by the fail action"} {
		if _, err := failAction(ctx, act("fail", p)); err == nil || err.Error() != want {
			t.Errorf("fail %s: error %v, want %q", p, err, want)
		}
	}
}

// TestHTTPGetSurroundingTimeout checks that http.get blames its own
// timeout only when that fired: when the context it was given ends first
// it returns the context's error, and baton run reports one time limit,
// the one that was overrun.
func TestHTTPGetSurroundingTimeout(t *testing.T) {
	srv := testServer(t)
	get := httpGetAction(srv.Client())
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := get(ctx, act("http.get", fmt.Sprintf(`%q`, srv.URL+"/slow"))) // its own timeout: 10s
	if !errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "no response within") {
		t.Errorf("http.get under a 50ms context: error %v, want the context's error", err)
	}

	db := filepath.Join(t.TempDir(), "baton.db")
	file := writeWorkflow(t, "get.json", fmt.Sprintf(`{"version":1,"root":{"act":"http.get","payload":%q}}`, srv.URL+"/slow"))
	r := baton(t, "run", file, "--store", db, "--timeout", "200ms").want(t, exitFailed)
	contains(t, "stdout", r.stdout, `failed at root (http.get): action "http.get" timed out after 200ms: `)
	for _, bad := range []string{"no response within", "deadline exceeded", "10s"} {
		if strings.Contains(r.stdout, bad) {
			t.Errorf("stdout says %q:\n%s", bad, r.stdout)
		}
	}
}

// TestHTTPGetPayloadErrors checks that a payload of the wrong shape is
// described in JSON's words, naming the field, never with Go's types.
func TestHTTPGetPayloadErrors(t *testing.T) {
	get := httpGetAction(http.DefaultClient)
	for payload, want := range map[string]string{
		`{"url":5}`:                           `payload field "url" must be a string (the URL), got a number`,
		`{"url":"http://h/","timeout":5}`:     `payload field "timeout" must be a duration like "5s", got a number`,
		`{"url":"http://h/","max_bytes":"x"}`: `payload field "max_bytes" must be a whole number, got a string`,
		`{"url":"http://h/","max_bytes":1.5}`: `payload field "max_bytes" must be a whole number, got 1.5`,
		`{"url":["http://h/"]}`:               `payload field "url" must be a string (the URL), got an array`,
		`{"url":"http://h/","extra":true}`:    `payload has an unknown field "extra" (allowed: url, timeout, max_bytes)`,
		`42`:                                  `payload must be a URL or {"url": ..., "timeout": "5s", "max_bytes": N}, got a number`,
		`[1]`:                                 `payload must be a URL or {"url": ..., "timeout": "5s", "max_bytes": N}, got an array`,
		`true`:                                `payload must be a URL or {"url": ..., "timeout": "5s", "max_bytes": N}, got a boolean`,
	} {
		_, err := get(context.Background(), act("http.get", payload))
		if err == nil || err.Error() != "http.get: "+want {
			t.Errorf("http.get %s: error %v, want %q", payload, err, "http.get: "+want)
		}
		for _, goWords := range []string{"Go ", "main.", "httpGetRequest", "int64", "json: "} {
			if err != nil && strings.Contains(err.Error(), goWords) {
				t.Errorf("http.get %s: error %q contains %q", payload, err, goWords)
			}
		}
	}
}

// TestValueAndLogInputs checks the value action (its output is its
// payload, so that a choice, a map or a loop has something to read in
// 'baton run') and that log prints the inputs a leaf takes (a map copy's
// item and index).
func TestValueAndLogInputs(t *testing.T) {
	ctx := context.Background()
	for p, want := range map[string]string{`["a","b"]`: `["a","b"]`, `"large"`: `"large"`, `{"n": 1}`: `{"n": 1}`, ``: ``} {
		out, err := valueAction(ctx, act("value", p))
		if err != nil || string(out) != want {
			t.Errorf("value %s: output %q, %v; want %q", p, out, err, want)
		}
	}
	var out bytes.Buffer
	a := act("log", `"copy"`)
	a.Inputs = []job.Input{{Name: "item", Output: json.RawMessage(`"b"`)}, {Name: "index", Output: json.RawMessage(`1`)}, {Name: "none"}}
	if _, err := logAction(&out)(ctx, a); err != nil {
		t.Fatal(err)
	}
	if want := "t root#1: copy (item \"b\", index 1, none null)\n"; out.String() != want {
		t.Errorf("log printed %q, want %q", out.String(), want)
	}
}

// TestLanguageExample runs examples/language.json as a new user would,
// with 'baton run': a choice on a value, a map over a list with a limit,
// and a race of a wait and a sleep that nobody signals.
func TestLanguageExample(t *testing.T) {
	db := filepath.Join(t.TempDir(), "baton.db")
	r := baton(t, "run", filepath.Join("..", "..", "examples", "language.json"), "--store", db, "--id", "lang").want(t, exitOK)
	for _, want := range []string{
		"lang seq[1].choice[0]#1: large order: review it\n",
		`choice seq[1]: succeeded, on size = "large", chose case 0`,
		`act log "small order: ship it" seq[1].choice[1]: skipped`,
		"lang seq[3].map[0]#1: pack (item \"pen\", index 0)\n",
		"lang seq[3].map[1]#1: pack (item \"ink\", index 1)\n",
		"lang seq[3].map[2]#1: pack (item \"pad\", index 2)\n",
		"map seq[3] @packed: succeeded, 3 copies: 3 succeeded\n",
		"loop seq[4]: succeeded, iteration 1\n",
		// The wait lost the race to the sleep: its own failure is told.
		"wait seq[5].race[0] @approval: failed, waits for signal approval: [withdrawn] the wait for signal approval was withdrawn\n",
		"lang seq[6]#1: shipped\n",
		`job lang succeeded`,
	} {
		contains(t, "stdout", r.stdout, want)
	}
}
