package server_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/batonwf/baton/server"
	"github.com/batonwf/baton/server/servertest"
	"github.com/batonwf/baton/store"
)

// The transport's bad inputs (issue 16 section 4), on the http.Server
// 'baton serve' makes (server.HTTPServer) with short limits: each test
// runs in about a second, on loopback, and closes every connection it
// opens.

// serveWith serves the API of a memory store and an in-process runner on
// a loopback listener, through server.HTTPServer with limits l; state, if
// not nil, is the server's ConnState hook. Both are closed by t.Cleanup.
func serveWith(t *testing.T, l server.Limits, state func(net.Conn, http.ConnState)) (string, store.Store) {
	t.Helper()
	st := store.NewMemory()
	r := runLocal(t, st, servertest.Actions())
	h, err := server.New(server.Options{Store: st, Runner: r})
	if err != nil {
		t.Fatal(err)
	}
	hs := server.HTTPServer(checkAPI(t, h), l)
	hs.ConnState = state
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	t.Cleanup(func() {
		hs.Close()
		if err := <-served; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("serve: %v", err)
		}
	})
	return ln.Addr().String(), st
}

// dial opens a connection to addr, closed by t.Cleanup.
func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// healthy checks that the server at addr answers a new client.
func healthy(t *testing.T, addr string) {
	t.Helper()
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := c.Get("http://" + addr + "/healthz")
	if err != nil {
		t.Fatalf("the server does not answer: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("healthz: %d", resp.StatusCode)
	}
}

// closedByServer reads conn until the server closes it (EOF or a reset),
// failing t at its deadline; it returns what was read.
func closedByServer(t *testing.T, conn net.Conn) []byte {
	t.Helper()
	if d, ok := t.Deadline(); ok {
		conn.SetReadDeadline(d.Add(-5 * time.Second))
	}
	b, err := io.ReadAll(conn)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("the server never closed the connection (read %q)", b)
	}
	return b
}

// TestTrickledBody: a body that trickles in is cut at the read timeout:
// the answer (400 bad_request, naming the read timeout) comes while most
// of the body is still to be sent, nothing is stored, and the server goes
// on answering.
func TestTrickledBody(t *testing.T) {
	addr, st := serveWith(t, server.Limits{ReadTimeout: time.Second}, nil)
	body := `{"version":1,"root":{"act":"ok","payload":"` + strings.Repeat("x", 2000) + `"}}`
	conn := dial(t, addr)
	fmt.Fprintf(conn, "POST /api/v1/jobs?id=slow HTTP/1.1\r\nHost: baton\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", len(body))
	var sent atomic.Int64
	answered := make(chan struct{})
	done := make(chan struct{})
	go func() { // a byte every 20ms: 40 s for the whole body
		defer close(done)
		for i := range len(body) {
			select {
			case <-answered:
				return
			case <-time.After(20 * time.Millisecond):
			}
			if _, err := conn.Write([]byte{body[i]}); err != nil {
				return // the server closed the connection
			}
			sent.Add(1)
		}
	}()
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	close(answered)
	<-done
	if err != nil {
		t.Fatalf("no answer: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	a := servertest.Answer{Status: resp.StatusCode, Header: resp.Header, Body: b}
	p := a.Problem(t, 400, server.CodeBadRequest)
	if !strings.Contains(p.Detail, "read timeout") || strings.Contains(p.Detail, "127.0.0.1") {
		t.Errorf("the detail does not name the read timeout (or names addresses): %q", p.Detail)
	}
	if n := sent.Load(); n >= int64(len(body)) {
		t.Errorf("the whole body (%d bytes) was sent before the answer", n)
	}
	if _, err := st.Load(t.Context(), "slow"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the trickled job was stored: %v", err)
	}
	closedByServer(t, conn)
	healthy(t, addr)
}

// TestTrickledRequestLine: a request line that trickles in is cut at the
// read header timeout (the connection closed), while the server answers
// other clients.
func TestTrickledRequestLine(t *testing.T) {
	addr, _ := serveWith(t, server.Limits{ReadHeaderTimeout: 500 * time.Millisecond}, nil)
	conn := dial(t, addr)
	if _, err := conn.Write([]byte("GET /heal")); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	done := make(chan int)
	go func() { // a byte every 50ms, never a whole line; at most 60 s
		n := 0
		defer func() { done <- n }()
		for range 1200 {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			if _, err := conn.Write([]byte("z")); err != nil {
				return
			}
			n++
		}
	}()
	healthy(t, addr) // while the line trickles
	got := closedByServer(t, conn)
	close(stop)
	if n := <-done; n >= 1200 {
		t.Errorf("the connection stayed open while %d bytes trickled in", n)
	}
	// net/http may answer a cut request itself, in plain text, and close.
	if len(got) > 0 && (!strings.HasPrefix(string(got), "HTTP/1.1 4") || !strings.Contains(string(got), "Connection: close")) {
		t.Errorf("the server answered %q", got)
	}
	healthy(t, addr)
}

// TestIdleConnections: with 2,000 connections open and silent, the server
// goes on answering; once each has had an answer, kept alive and idle,
// each is closed by the server after IdleTimeout, no sooner.
func TestIdleConnections(t *testing.T) {
	if testing.Short() {
		t.Skip("2,000 connections")
	}
	const n = 2000
	const idle = time.Second
	var mu sync.Mutex
	idleSince := map[net.Conn]time.Time{}
	var accepted, open, early atomic.Int64
	// Silent connections wait for their first request for up to the
	// header timeout (a minute here); answered ones for IdleTimeout.
	addr, _ := serveWith(t, server.Limits{IdleTimeout: idle, ReadHeaderTimeout: time.Minute}, func(c net.Conn, s http.ConnState) {
		mu.Lock()
		defer mu.Unlock()
		switch s {
		case http.StateNew:
			accepted.Add(1)
			open.Add(1)
		case http.StateIdle:
			idleSince[c] = time.Now()
		case http.StateActive:
			delete(idleSince, c)
		case http.StateClosed, http.StateHijacked:
			open.Add(-1)
			if since, ok := idleSince[c]; ok && time.Since(since) < idle {
				early.Add(1)
			}
			delete(idleSince, c)
		}
	})
	ctx := t.Context()
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for !cond() {
			select {
			case <-ctx.Done():
				t.Fatalf("gave up waiting for %s (open %d, accepted %d)", what, open.Load(), accepted.Load())
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
	conns := make([]net.Conn, n)
	t.Cleanup(func() {
		for _, c := range conns {
			if c != nil {
				c.Close()
			}
		}
	})
	for i := range conns {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		conns[i] = c
	}
	waitFor("the server to accept 2,000 connections", func() bool { return accepted.Load() == n })
	healthy(t, addr)

	// Each asks once, and is kept alive.
	readers := make([]*bufio.Reader, n)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	var next atomic.Int64
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				readers[i] = bufio.NewReader(conns[i])
				if _, err := conns[i].Write([]byte("GET /healthz HTTP/1.1\r\nHost: baton\r\n\r\n")); err != nil {
					errs <- fmt.Errorf("connection %d: %w", i, err)
					return
				}
				resp, err := http.ReadResponse(readers[i], nil)
				if err != nil {
					errs <- fmt.Errorf("connection %d: %w", i, err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 || resp.Close {
					errs <- fmt.Errorf("connection %d: %d, close %v", i, resp.StatusCode, resp.Close)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	healthy(t, addr)
	// Each idle connection is closed by the server: its read ends.
	for i, c := range conns {
		if d, ok := t.Deadline(); ok {
			c.SetReadDeadline(d.Add(-5 * time.Second))
		}
		if b, err := io.ReadAll(readers[i]); err != nil && !isReset(err) || len(b) > 0 {
			t.Fatalf("connection %d: read %q, %v", i, b, err)
		}
	}
	waitFor("the server to close them all", func() bool { return open.Load() == 0 })
	if e := early.Load(); e > 0 {
		t.Errorf("%d idle connections were closed before IdleTimeout", e)
	}
	healthy(t, addr)
}

func isReset(err error) bool {
	return strings.Contains(err.Error(), "connection reset")
}

// TestHeadersTooLarge: headers over MaxHeaderBytes (64 KiB by default)
// get net/http's own 431, and the server goes on.
func TestHeadersTooLarge(t *testing.T) {
	addr, _ := serveWith(t, server.Limits{}, nil)
	req, err := http.NewRequest("GET", "http://"+addr+"/healthz", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Big", strings.Repeat("x", server.DefaultMaxHeaderBytes+4<<10))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("68 KiB of headers: %d", resp.StatusCode)
	}
	healthy(t, addr)
}
