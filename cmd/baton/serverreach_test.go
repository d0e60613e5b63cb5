package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// closedURL returns the URL of a loopback port that nothing listens on.
func closedURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	ln.Close()
	return url
}

// TestSubmitServerUnreachable: a submit to a server that cannot be
// reached exits 3, as every other command through --server does and as
// docs/api.md says (it exited 2, the status of a bad workflow).
func TestSubmitServerUnreachable(t *testing.T) {
	url := closedURL(t)
	hello := writeWorkflow(t, "hello.json", helloJSON)
	for _, args := range [][]string{
		{"submit", "--server", url, hello},
		{"submit", "--server", url, "--wait", hello},
		{"submit", "--server", url, "--json", hello},
	} {
		r := baton(t, args...).want(t, exitStore)
		contains(t, "stderr", r.stderr, "connection refused")
	}
}

// TestSubmitWaitServerGone: 'submit --server --wait' whose server stops
// while it follows the job exits 3 (the server cannot be reached), with
// the job and the server named once (it exited 2, saying "job J in URL:
// job J in URL: ...").
func TestSubmitWaitServerGone(t *testing.T) {
	db := t.TempDir() + "/baton.db"
	p := startInProcess(t, "baton serve: http", "serve", "--store", db, "--listen", "127.0.0.1:0")
	url := serveURL(t, p)
	sleeper := writeWorkflow(t, "sleeper.json", `{"version":1,"root":{"act":"sleep","payload":"1h"}}`)
	done := make(chan result, 1)
	go func() { done <- baton(t, "submit", "--server", url, "--id", "s", "--wait", "--quiet", sleeper) }()
	eventually(t, 20*time.Second, "job s running in the server", func() (bool, string) {
		r := baton(t, "status", "--server", url, "s")
		return strings.Contains(r.stdout, `act sleep "1h": running #1`), r.stdout + r.stderr
	})
	if code := p.stop(t); code != exitOK {
		t.Fatalf("serve exited %d:\n%s", code, p.errOut.String())
	}
	var r result
	select {
	case r = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("submit --wait did not end within 60s of the server's stop")
	}
	r.want(t, exitStore)
	if n := strings.Count(r.stderr, "job s in "+url); n != 1 {
		t.Errorf("stderr names the job and the server %d times, want once:\n%s", n, r.stderr)
	}
}

// TestServerNotBaton: --server naming an HTTP server that is not baton's
// (a web server's HTML pages, for a 404 or a 200) gets one line saying so,
// exit 2; the page itself was printed whole.
func TestServerNotBaton(t *testing.T) {
	page := "<!DOCTYPE html>\n<html><head><title>Error</title></head>\n<body><h1>Not Found</h1>\n" + strings.Repeat("<p>filler</p>\n", 2000) + "</body></html>\n"
	for _, status := range []int{http.StatusNotFound, http.StatusOK} {
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.WriteHeader(status)
			io.WriteString(w, page)
		}))
		hello := writeWorkflow(t, "hello.json", helloJSON)
		for _, args := range [][]string{
			{"status"}, {"status", "j"}, {"history", "j"}, {"inspect", "j"}, {"cancel", "j"},
			{"signal", "j", "approval"}, {"delete", "j"}, {"submit", hello},
		} {
			r := baton(t, append(args, "--server", ts.URL)...).want(t, exitError)
			if strings.Contains(r.stderr, "<") || strings.Count(r.stderr, "\n") > 2 {
				t.Errorf("baton %q, a %d page: stderr has the page:\n%s", args, status, r.stderr)
			}
			contains(t, "stderr of "+strings.Join(args, " "), r.stderr, ts.URL, fmt.Sprintf("answered %d", status), "text/html", "not baton's API")
		}
		ts.Close()
	}
}

// TestServerTokenEnv: $BATON_TOKEN as a shell leaves it (a line read
// with its newline, a file's CRLF) works; one with a control character
// inside is refused naming $BATON_TOKEN, exit 2, before anything is sent
// (a trailing newline exited 3, "invalid header field value for
// Authorization", as if the server could not be reached).
func TestServerTokenEnv(t *testing.T) {
	const read = "read-token-0123456789"
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens")
	if err := os.WriteFile(tokens, []byte("read "+read+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startInProcess(t, "baton serve: http", "serve", "--store", filepath.Join(dir, "b.db"), "--listen", "127.0.0.1:0", "--token-file", tokens)
	url := serveURL(t, p)
	for _, tok := range []string{read + "\n", read + "\r\n", " " + read + " "} {
		t.Setenv(tokenEnv, tok)
		r := baton(t, "status", "--server", url).want(t, exitOK)
		contains(t, "stdout", r.stdout, "no jobs in "+url)
	}
	for _, tok := range []string{"read-token\n0123456789", "read-token\x010123456789"} {
		t.Setenv(tokenEnv, tok)
		r := baton(t, "status", "--server", url).want(t, exitError)
		contains(t, "stderr", r.stderr, "$"+tokenEnv)
		if strings.Contains(r.stderr, "0123456789") {
			t.Errorf("the error shows the token:\n%s", r.stderr)
		}
	}
}

// TestServedStoreInUse: a command that writes to a store file that 'baton
// serve' holds (another serve, run, cancel, delete) says that a serve may
// be the holder and how to reach its jobs (--server); it asked only
// whether a 'baton run' or 'baton resume' was still going.
func TestServedStoreInUse(t *testing.T) {
	db := filepath.Join(t.TempDir(), "baton.db")
	p := startInProcess(t, "baton serve: http", "serve", "--store", db, "--listen", "127.0.0.1:0")
	hello := writeWorkflow(t, "hello.json", helloJSON)
	for _, args := range [][]string{
		{"serve", "--listen", "127.0.0.1:0"}, {"run", hello}, {"cancel", "j"}, {"delete", "j"}, {"resume"},
	} {
		r := baton(t, append(args, "--store", db)...).want(t, exitStore)
		contains(t, "stderr of "+args[0], r.stderr, "baton: store "+db+" is in use by another process",
			"'baton serve'", "--server URL")
	}
	if code := p.stop(t); code != exitOK {
		t.Errorf("serve exited %d:\n%s", code, p.errOut.String())
	}
}

// TestServeAddressInUse: 'baton serve' on an address another process
// listens on fails naming it, exit 2, and leaves no store behind (it made
// the store file first, then found the address taken).
func TestServeAddressInUse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	db := filepath.Join(t.TempDir(), "baton.db")
	r := baton(t, "serve", "--store", db, "--listen", ln.Addr().String()).want(t, exitError)
	contains(t, "stderr", r.stderr, "listen on "+ln.Addr().String(), "address already in use")
	if _, err := os.Stat(db); err == nil {
		t.Error("the store was made although the server could not listen")
	}
	// The same for --metrics-listen.
	r = baton(t, "serve", "--store", db, "--listen", "127.0.0.1:0", "--metrics-listen", ln.Addr().String()).want(t, exitError)
	contains(t, "stderr", r.stderr, "listen on "+ln.Addr().String()+" (--metrics-listen)", "address already in use")
	if _, err := os.Stat(db); err == nil {
		t.Error("the store was made although the metrics could not listen")
	}
}

// TestServerRefusalNamedOnce: a cancel or a delete that the server
// refuses names the job and the server once ("cancel job J in URL: job J
// in URL: the reason is ..." before).
func TestServerRefusalNamedOnce(t *testing.T) {
	db := filepath.Join(t.TempDir(), "baton.db")
	p := startInProcess(t, "baton serve: http", "serve", "--store", db, "--listen", "127.0.0.1:0")
	url := serveURL(t, p)
	sleeper := writeWorkflow(t, "sleeper.json", `{"version":1,"root":{"act":"sleep","payload":"1h"}}`)
	baton(t, "submit", "--server", url, "--id", "s", sleeper).want(t, exitOK)
	quick := writeWorkflow(t, "quick.json", `{"version":1,"root":{"act":"log","payload":"done"}}`)
	baton(t, "submit", "--server", url, "--id", "q", "--wait", quick).want(t, exitOK)
	for _, c := range []struct {
		args []string
		want string
	}{
		// (A reason too long, the server's refusal this case used, is the
		// command's own now, before anything is sent.)
		{[]string{"cancel", "q"}, "job q in " + url + " has finished (succeeded): nothing to cancel\n"},
		{[]string{"delete", "s"}, "delete job s from " + url + ": job s is running: cancel it, and delete it once it has finished\n"},
	} {
		r := baton(t, append(c.args, "--server", url)...).want(t, exitError)
		contains(t, "stderr of "+c.args[0], r.stderr, c.want)
		if n := strings.Count(r.stderr, url); n != 1 {
			t.Errorf("%s: stderr names the server %d times, want once:\n%s", c.args[0], n, r.stderr)
		}
	}
	if code := p.stop(t); code != exitOK {
		t.Errorf("serve exited %d:\n%s", code, p.errOut.String())
	}
}

// TestServerTLSMismatch: http:// at a TLS server says what the server
// said ("Client sent an HTTP request to an HTTPS server"), and https://
// at a server whose certificate no system CA signed says how to trust it
// (SSL_CERT_FILE, as docs/api.md does).
func TestServerTLSMismatch(t *testing.T) {
	ts := httptest.NewTLSServer(http.NotFoundHandler())
	defer ts.Close()
	plain := "http://" + strings.TrimPrefix(ts.URL, "https://")
	r := baton(t, "status", "--server", plain).want(t, exitError)
	contains(t, "stderr", r.stderr, "answered 400 Bad Request", "Client sent an HTTP request to an HTTPS server")
	r = baton(t, "status", "--server", ts.URL).want(t, exitStore)
	contains(t, "stderr", r.stderr, "certificate", "SSL_CERT_FILE")
	r = baton(t, "cancel", "--server", ts.URL, "j").want(t, exitStore)
	contains(t, "stderr", r.stderr, "SSL_CERT_FILE")
}

// TestSubmitNeedsWhere: submit with nowhere to send the job names every
// place it can go, --server included (it named only --zk and --kafka).
func TestSubmitNeedsWhere(t *testing.T) {
	t.Setenv(serverEnv, "")
	r := baton(t, "submit", writeWorkflow(t, "hello.json", helloJSON)).want(t, exitError)
	contains(t, "stderr", r.stderr, "baton: submit: --zk, --kafka or --server is required", "$"+serverEnv)
}

// TestServerEnvNamed: a $BATON_SERVER that is no URL is named as such
// (the error said --server, which the command line did not hold).
func TestServerEnvNamed(t *testing.T) {
	t.Setenv(serverEnv, "localhost:8080")
	r := baton(t, "status").want(t, exitError)
	contains(t, "stderr", r.stderr, `$`+serverEnv+` "localhost:8080": want a URL like http://127.0.0.1:8080`)
	r = baton(t, "status", "--server", "127.0.0.1:1").want(t, exitError)
	contains(t, "stderr", r.stderr, `--server "127.0.0.1:1": want a URL like http://127.0.0.1:8080`)
}

// TestServerTokenHint: a refusal for want of a token, or of a write
// token, says where the CLI takes one from.
func TestServerTokenHint(t *testing.T) {
	const read, write = "read-token-0123456789", "write-token-0123456789"
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens")
	if err := os.WriteFile(tokens, []byte("read "+read+"\nwrite "+write+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startInProcess(t, "baton serve: http", "serve", "--store", filepath.Join(dir, "b.db"), "--listen", "127.0.0.1:0", "--token-file", tokens)
	url := serveURL(t, p)
	t.Setenv(tokenEnv, "")
	hello := writeWorkflow(t, "hello.json", helloJSON)
	for _, args := range [][]string{{"status"}, {"status", "j"}, {"submit", hello}} {
		r := baton(t, append(args, "--server", url)...).want(t, exitError)
		contains(t, "stderr of "+args[0], r.stderr, "needs Authorization: Bearer TOKEN", "(the CLI sends the token in $"+tokenEnv+" or the one --token-file names)")
	}
	t.Setenv(tokenEnv, read)
	r := baton(t, "submit", "--server", url, hello).want(t, exitError)
	contains(t, "stderr", r.stderr, "needs a write token", "(the CLI sends the token in $"+tokenEnv+" or the one --token-file names)")
}
