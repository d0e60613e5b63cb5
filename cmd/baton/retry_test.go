package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestHTTPGetRetries: against a server that fails twice then answers, the
// built-in http.get with a retry policy succeeds on attempt 3, and the
// history shows both failed attempts, the two waits with their due times,
// and the timer firings.
func TestHTTPGetRetries(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) <= 2 {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprint(w, "hello")
	}))
	defer srv.Close()
	file := writeWorkflow(t, "flaky.json", `{"version":1,"root":{"act":"http.get","payload":"`+srv.URL+`",
		"retry":{"attempts":5,"initial":"20ms","multiplier":2}}}`)
	db := filepath.Join(t.TempDir(), "baton.db")
	r := baton(t, "run", file, "--store", db, "--id", "flaky", "--quiet").want(t, exitOK)
	contains(t, "run", r.stdout, "job flaky succeeded: 1/1 actions settled")
	if n := calls.Load(); n != 3 {
		t.Errorf("the server was called %d times, want 3", n)
	}
	h := baton(t, "history", "flaky", "--store", db).want(t, exitOK).stdout
	// Every attempt ran on 'baton run' itself, under one name.
	m := regexp.MustCompile(`root#1 http\.get on (\S+):`).FindStringSubmatch(h)
	if m == nil {
		t.Fatalf("history names no worker for root#1:\n%s", h)
	}
	runner := m[1]
	for _, want := range []string{
		"root#1 http.get on " + runner + ": failed: http.get " + srv.URL + ": status 503",
		"root#2 http.get on " + runner + ": failed: http.get " + srv.URL + ": status 503",
		"root#3 http.get on " + runner + ": ok -> ",
	} {
		contains(t, "history", h, want)
	}
	waits := regexp.MustCompile(`waits: root@retry#(\d) due (\S+)`).FindAllStringSubmatch(h, -1)
	fired := regexp.MustCompile(`root@retry#(\d): timer fired at (\S+)`).FindAllStringSubmatch(h, -1)
	if len(waits) != 2 || waits[0][1] != "2" || waits[1][1] != "3" || len(fired) != 2 {
		t.Fatalf("history does not show the two waits and firings:\n%s", h)
	}
	for i := range 2 {
		due, err1 := time.Parse(time.RFC3339Nano, waits[i][2])
		at, err2 := time.Parse(time.RFC3339Nano, fired[i][2])
		if err1 != nil || err2 != nil || at.Before(due) {
			t.Errorf("timer %s fired at %s, before it was due at %s (%v %v)", waits[i][1], fired[i][2], waits[i][2], err1, err2)
		}
	}
	if !strings.Contains(h, "now succeeded") {
		t.Errorf("history:\n%s", h)
	}
	t.Logf("history:\n%s", h)
}
