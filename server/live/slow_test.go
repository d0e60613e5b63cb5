package live_test

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/batonwf/baton/server/live"
	"github.com/batonwf/baton/store"
)

// A client that stops reading is dropped once a write has blocked for
// SlowClient; while it blocks, the hub holds at most the one event being
// written; the client resumes from its last version and misses nothing.
func TestSlowClientDropped(t *testing.T) {
	const pad = 256 << 10
	st := store.NewMemory()
	hub, srv := serve(t, live.Options{Store: st, Notified: true, MaxRate: 1000, SlowClient: 300 * time.Millisecond}, enc{pad: pad})
	d := newJob(t, st, hub, "slow", 5000)

	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.(*net.TCPConn).SetReadBuffer(4 << 10)
	fmt.Fprintf(conn, "GET /jobs/slow/events HTTP/1.1\r\nHost: test\r\n\r\n")
	br := bufio.NewReaderSize(conn, 1<<10)
	var head strings.Builder
	for !strings.Contains(head.String(), "event: snapshot") {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("reading the stream's start: %v (read %q)", err, head.String())
		}
		head.WriteString(line)
	}
	// From here on the client reads nothing.
	maxBuffered := int64(0)
	deadline := time.Now().Add(60 * time.Second)
	for hub.Stats().Dropped == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("client not dropped after %d steps: stats %+v", d.j.Version(), hub.Stats())
		}
		// Steps come slowly enough for each to be an event of its own.
		d.step()
		time.Sleep(2 * time.Millisecond)
		maxBuffered = max(maxBuffered, hub.Stats().Buffered)
	}
	if one := int64(pad + 64<<10); maxBuffered > one {
		t.Errorf("the hub held %d bytes for one blocked client, more than one event (%d)", maxBuffered, one)
	}
	waitFor(t, "the dropped stream to be closed", func() bool {
		s := hub.Stats()
		return s.Streams == 0 && s.Buffered == 0
	})
	t.Logf("dropped after v%d; the hub held at most %d bytes for it", d.j.Version(), maxBuffered)

	// It comes back from the last version it read (v1).
	d.step()
	c := connect(t, jobURL(srv, "slow"), "1", http.StatusOK)
	got := map[uint64]string{}
	readSteps(t, c, 1, d.j.Version(), got)
	checkAgainstHistory(t, st, "slow", 2, d.j.Version(), got)
}

// waitFor polls cond until it holds, failing the test after a generous
// deadline (a stuck test's, not a measure).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
