package zktest

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// Bounds of a client's waits.
const (
	sessionWait = 30 * time.Second // from Connect to a session
	// From Close to the client's goroutines gone. go-zookeeper's Close
	// does not interrupt a handshake in progress, which waits up to ten
	// connect timeouts (10 s) for the server's answer, nor its own close
	// request (1 s): a client reconnecting to a server that is slow after
	// a restart can take that long. Past this bound zktest stops waiting
	// and says so in the test's log; it does not fail the test for what
	// the library does after Close.
	closeWait = 15 * time.Second
)

// Connect opens a client session to addrs with the given session timeout
// (the server clamps it to 2 to 20 of its ticks) and returns once the
// session exists: go-zookeeper's Connect returns before it has one. It
// fails the test if there is none within 30 s. The client logs to a buffer
// printed only if the test fails. At the end of the test the session is
// closed and Connect's cleanup waits (at most 10 s) until the client's
// goroutines are gone; a client still running then is logged, not failed
// (see closeWait).
//
// opts are go-zookeeper's options (zk.WithEventCallback, zk.WithDialer,
// ...), applied after zktest's logger. The library's event channel is not
// handed out: it drops events once 6 are unread; a test that wants the
// session's events passes zk.WithEventCallback.
func Connect(t testing.TB, addrs []string, sessionTimeout time.Duration, opts ...func(*zk.Conn)) *zk.Conn {
	t.Helper()
	log := &bufLogger{}
	c, events, err := dial(addrs, sessionTimeout, log, opts...)
	if err != nil {
		t.Fatalf("zktest: connect to %s: %v\n%s", strings.Join(addrs, ","), err, log)
	}
	t.Cleanup(func() {
		if err := closeConn(c, events); err != nil {
			t.Logf("zktest: %v (left to finish by itself)", err)
		}
		if t.Failed() {
			t.Logf("zktest: client log (session 0x%x to %s):\n%s", c.SessionID(), strings.Join(addrs, ","), log)
		}
	})
	return c
}

// dial connects and waits for a session; on failure it closes what it
// opened.
func dial(addrs []string, sessionTimeout time.Duration, log *bufLogger, opts ...func(*zk.Conn)) (*zk.Conn, <-chan zk.Event, error) {
	opts = append([]func(*zk.Conn){zk.WithLogger(log)}, opts...)
	c, events, err := connectWith(zk.Connect, addrs, sessionTimeout, opts)
	if err != nil {
		return nil, nil, err
	}
	timer := time.NewTimer(sessionWait)
	defer timer.Stop()
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				return nil, nil, errors.New("the client closed before it had a session")
			}
			if ev.State == zk.StateHasSession {
				return c, events, nil
			}
		case <-timer.C:
			cerr := closeConn(c, events)
			return nil, nil, errors.Join(fmt.Errorf("no session after %v", sessionWait), cerr)
		}
	}
}

// connectWith calls connect (zk.Connect) with opts: go-zookeeper's option
// type is unexported, so this generic function names it by inference.
func connectWith[O ~func(*zk.Conn)](connect func([]string, time.Duration, ...O) (*zk.Conn, <-chan zk.Event, error),
	addrs []string, sessionTimeout time.Duration, opts []func(*zk.Conn)) (*zk.Conn, <-chan zk.Event, error) {
	zopts := make([]O, len(opts))
	for i, o := range opts {
		zopts[i] = O(o)
	}
	return connect(addrs, sessionTimeout, zopts...)
}

// closeConn closes c and waits until its event channel is closed, which
// the library does when its last goroutine ends.
func closeConn(c *zk.Conn, events <-chan zk.Event) error {
	c.Close()
	timer := time.NewTimer(closeWait)
	defer timer.Stop()
	for {
		select {
		case _, ok := <-events:
			if !ok {
				return nil
			}
		case <-timer.C:
			return fmt.Errorf("the client to %s has not stopped %v after Close", c.Server(), closeWait)
		}
	}
}

// bufLogger keeps the client's last log lines.
type bufLogger struct {
	mu    sync.Mutex
	lines []string
	cut   int
}

func (l *bufLogger) Printf(format string, args ...any) {
	line := time.Now().Format("15:04:05.000 ") + fmt.Sprintf(format, args...)
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.lines) == 200 {
		l.lines = l.lines[1:]
		l.cut++
	}
	l.lines = append(l.lines, line)
}

func (l *bufLogger) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := strings.Join(l.lines, "\n")
	if l.cut > 0 {
		s = fmt.Sprintf("[... %d earlier lines cut ...]\n%s", l.cut, s)
	}
	return s
}

// externalServers is ZK_SERVERS split, or nil.
func externalServers() []string {
	v := strings.TrimSpace(os.Getenv("ZK_SERVERS"))
	if v == "" {
		return nil
	}
	var addrs []string
	for _, a := range strings.Split(v, ",") {
		if a = strings.TrimSpace(a); a != "" {
			addrs = append(addrs, a)
		}
	}
	return addrs
}

func startExternal(t testing.TB, addrs []string) *Server {
	t.Helper()
	s := &Server{t: t, external: true, addrs: addrs}
	s.root = makeRoot(t, addrs)
	t.Logf("zktest: ZK_SERVERS=%s: using that server, root %s", s.ConnString(), s.root)
	t.Cleanup(func() {
		if err := removeRoot(addrs, s.root); err != nil {
			t.Errorf("zktest: removing %s from %s: %v", s.root, s.ConnString(), err)
		}
	})
	return s
}

// rootParent holds every test's root.
const rootParent = "/zktest"

// makeRoot creates a node for this test alone: /zktest/<test name>-<random>.
func makeRoot(t testing.TB, addrs []string) string {
	t.Helper()
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	name := []byte(t.Name())
	for i, c := range name {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			name[i] = '_'
		}
	}
	if len(name) > 100 {
		name = name[:100]
	}
	root := rootParent + "/" + string(name) + "-" + hex.EncodeToString(rnd[:])
	log := &bufLogger{}
	c, events, err := dial(addrs, 10*time.Second, log)
	if err != nil {
		t.Fatalf("zktest: connect to %s: %v\n%s", strings.Join(addrs, ","), err, log)
	}
	defer func() {
		if err := closeConn(c, events); err != nil {
			t.Logf("zktest: %v (left to finish by itself)", err)
		}
	}()
	if _, err := c.Create(rootParent, nil, 0, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
		t.Fatalf("zktest: create %s: %v", rootParent, err)
	}
	if _, err := c.Create(root, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatalf("zktest: create %s: %v", root, err)
	}
	return root
}

// removeRoot deletes root and everything under it (at most 30 s).
func removeRoot(addrs []string, root string) error {
	c, events, err := dial(addrs, 10*time.Second, &bufLogger{})
	if err != nil {
		return err
	}
	deadline := time.Now().Add(30 * time.Second)
	err = deleteAll(c, root, deadline)
	_ = closeConn(c, events) // see closeWait: not the test's failure
	return err
}

func deleteAll(c *zk.Conn, p string, deadline time.Time) error {
	if time.Now().After(deadline) {
		return errors.New("out of time")
	}
	children, _, err := c.Children(p)
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, ch := range children {
		if err := deleteAll(c, path.Join(p, ch), deadline); err != nil {
			return err
		}
	}
	if err := c.Delete(p, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
		return err
	}
	return nil
}
