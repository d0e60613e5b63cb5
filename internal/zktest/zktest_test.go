package zktest

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

var acl = zk.WorldACL(zk.PermAll)

// TestMain also serves as a client process for TestEphemeralOfKilledClient:
// with ZKTEST_HELPER_CLIENT set it connects, creates an ephemeral node,
// says so, and waits to be killed.
func TestMain(m *testing.M) {
	if addr := os.Getenv("ZKTEST_HELPER_CLIENT"); addr != "" {
		helperClient(addr, os.Getenv("ZKTEST_HELPER_PATH"))
		return
	}
	os.Exit(m.Run())
}

func helperClient(addr, node string) {
	c, _, err := dial([]string{addr}, 2*time.Second, &bufLogger{})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	if _, err := c.Create(node, []byte("mine"), zk.FlagEphemeral, acl); err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	fmt.Printf("created %d\n", c.SessionID())
	time.Sleep(60 * time.Second) // killed long before; bounded all the same
	os.Exit(2)
}

func TestStandalone(t *testing.T) {
	s := Start(t)
	if mode, err := s.Mode(); err != nil || mode != "standalone" {
		t.Fatalf("Mode() = %q, %v; want standalone", mode, err)
	}
	if !strings.HasPrefix(s.Addr(), "127.0.0.1:") || s.ConnString() != s.Addr() {
		t.Errorf("Addr() = %q, ConnString() = %q", s.Addr(), s.ConnString())
	}
	if pid := s.PID(); pid <= 0 || syscall.Kill(pid, 0) != nil {
		t.Errorf("PID() = %d: no such process", pid)
	}
	if !strings.HasPrefix(s.Root(), rootParent+"/TestStandalone-") || s.Path("a", "b") != s.Root()+"/a/b" {
		t.Errorf("Root() = %q, Path(a, b) = %q", s.Root(), s.Path("a", "b"))
	}
	c := Connect(t, s.Addrs(), 4*time.Second)

	// create, get
	p := s.Path("job")
	if _, err := c.Create(p, []byte("one"), 0, acl); err != nil {
		t.Fatal(err)
	}
	data, stat, err := c.Get(p)
	if err != nil || string(data) != "one" {
		t.Fatalf("Get = %q, %v", data, err)
	}

	// a multi: check the version, set, create a sequential queue entry
	q := s.Path("q")
	if _, err := c.Create(q, nil, 0, acl); err != nil {
		t.Fatal(err)
	}
	res, err := c.Multi(
		&zk.CheckVersionRequest{Path: p, Version: stat.Version},
		&zk.SetDataRequest{Path: p, Data: []byte("two"), Version: stat.Version},
		&zk.CreateRequest{Path: q + "/e-", Data: []byte("x"), Acl: acl, Flags: zk.FlagSequence},
	)
	if err != nil {
		t.Fatalf("Multi: %v", err)
	}
	if want := q + "/e-0000000000"; res[2].String != want {
		t.Errorf("Multi created %q, want %q", res[2].String, want)
	}
	// the same multi again: the version is stale, nothing applies
	_, err = c.Multi(
		&zk.SetDataRequest{Path: p, Data: []byte("three"), Version: stat.Version},
		&zk.CreateRequest{Path: q + "/e-", Data: []byte("x"), Acl: acl, Flags: zk.FlagSequence},
	)
	if !errors.Is(err, zk.ErrBadVersion) {
		t.Errorf("stale Multi: %v, want %v", err, zk.ErrBadVersion)
	}
	data, _, err = c.Get(p)
	if err != nil || string(data) != "two" {
		t.Errorf("after the multis Get = %q, %v; want two", data, err)
	}
	kids, _, err := c.Children(q)
	if err != nil || len(kids) != 1 {
		t.Errorf("queue = %v, %v; want one entry", kids, err)
	}
	if out, err := FourLetter(s.Addr(), "conf"); err != nil || !strings.Contains(out, "tickTime=500") {
		t.Errorf("conf = %q, %v; want tickTime=500", out, err)
	}
}

// A client process that dies (SIGKILL) leaves its ephemeral node until the
// server expires its session.
func TestEphemeralOfKilledClient(t *testing.T) {
	s := Start(t)
	c := Connect(t, s.Addrs(), 4*time.Second)
	node := s.Path("owner")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "ZKTEST_HELPER_CLIENT="+s.Addr(), "ZKTEST_HELPER_PATH="+node)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	session, ok := strings.CutPrefix(strings.TrimSpace(line), "created ")
	if err != nil || !ok {
		t.Fatalf("client process said %q, %v", line, err)
	}
	_, stat, err := c.Get(node)
	if err != nil || strconv.FormatInt(stat.EphemeralOwner, 10) != session {
		t.Fatalf("Get(%s): %v, %v; want an ephemeral node of session %s", node, stat, err, session)
	}

	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	_ = cmd.Wait()
	gone := waitGone(t, c, node, Patience(t))
	took := gone.Sub(killed)
	t.Logf("the ephemeral node of a SIGKILLed client (2 s session, tick 500 ms) went after %v", took.Round(time.Millisecond))
	if took < time.Second {
		t.Errorf("the node went %v after the kill: before the session could expire", took)
	}
}

// waitGone waits (with a watch) until node does not exist, and says when.
func waitGone(t *testing.T, c *zk.Conn, node string, bound time.Duration) time.Time {
	t.Helper()
	deadline := time.After(bound)
	for {
		ok, _, ev, err := c.ExistsW(node)
		if err != nil {
			t.Fatalf("ExistsW(%s): %v", node, err)
		}
		if !ok {
			return time.Now()
		}
		select {
		case <-ev:
		case <-deadline:
			t.Fatalf("%s still exists after %v", node, bound)
		}
	}
}

// Stop, then Restart on the same port: the data is kept, and so is a
// session whose client reconnects in time; Kill, then Restart, the same.
func TestStopRestartKeepsData(t *testing.T) {
	s := Start(t)
	addr, pid := s.Addr(), s.PID()
	held := Connect(t, s.Addrs(), 2*time.Second) // held across the outages
	c := Connect(t, s.Addrs(), 4*time.Second)
	if _, err := c.Create(s.Path("kept"), []byte("persistent"), 0, acl); err != nil {
		t.Fatal(err)
	}
	if _, err := held.Create(s.Path("eph"), nil, zk.FlagEphemeral, acl); err != nil {
		t.Fatal(err)
	}
	session := held.SessionID()

	s.Stop()
	if s.Running() || s.PID() != 0 {
		t.Errorf("after Stop: Running() = %v, PID() = %d", s.Running(), s.PID())
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("process %d after Stop: %v, want ESRCH", pid, err)
	}
	if _, err := FourLetter(addr, "srvr"); err == nil {
		t.Errorf("%s answers after Stop", addr)
	}
	const outage = 3 * time.Second // longer than the held session's timeout
	time.Sleep(outage)
	s.Restart()
	if s.Addr() != addr || s.PID() == pid || s.PID() == 0 {
		t.Errorf("after Restart: Addr() = %s (was %s), PID() = %d (was %d)", s.Addr(), addr, s.PID(), pid)
	}
	c2 := Connect(t, s.Addrs(), 4*time.Second)
	if data, _, err := c2.Get(s.Path("kept")); err != nil || string(data) != "persistent" {
		t.Errorf("after Stop and Restart Get = %q, %v", data, err)
	}
	// The held client reconnects by itself (its back-off is 1 s); how soon
	// depends on the machine's load, so the wait is bounded only by the
	// test's deadline.
	begin := time.Now()
	WaitFor(t, "the held client reconnects after the restart", func() error {
		_, err := held.Sync(s.Root())
		return err
	})
	ephemeral, _, _ := c2.Exists(s.Path("eph"))
	// The server restarts the expiry clock of the sessions it reloads: a
	// session outlives an outage longer than its timeout if its client
	// comes back in time after the restart (seen: yes).
	t.Logf("a %v outage (SIGTERM): the held client was back %v after the restart; its session (2 s timeout) survived: %v; its ephemeral node survived: %v",
		outage, time.Since(begin).Round(time.Millisecond), held.SessionID() == session, ephemeral)

	// SIGKILL: what was acknowledged is kept (forceSync=no writes the log
	// to the page cache; only a machine crash could lose it).
	if _, err := c2.Create(s.Path("kept2"), []byte("before kill"), 0, acl); err != nil {
		t.Fatal(err)
	}
	s.Kill()
	if s.Running() {
		t.Error("Running() after Kill")
	}
	s.Restart()
	c3 := Connect(t, s.Addrs(), 4*time.Second)
	for _, n := range []string{"kept", "kept2"} {
		if ok, _, err := c3.Exists(s.Path(n)); err != nil || !ok {
			t.Errorf("after Kill and Restart %s: exists %v, %v", n, ok, err)
		}
	}
}

// A port taken between picking and binding, here by a fake server that
// answers srvr, is picked again.
func TestPortTakenIsPickedAgain(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { l.Close(); wg.Wait() })
	wg.Add(1)
	go func() { // a server that says it is a standalone ZooKeeper
		defer wg.Done()
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			buf := make([]byte, 4)
			_ = conn.SetDeadline(time.Now().Add(2 * time.Second))
			if _, err := conn.Read(buf); err == nil {
				fmt.Fprintf(conn, "Mode: standalone\ndataDir=/elsewhere\n")
			}
			conn.Close()
		}
	}()
	taken := l.Addr().(*net.TCPAddr).Port
	calls := 0
	pickPorts = func(n int) ([]int, error) {
		calls++
		if calls == 1 {
			return []int{taken}, nil
		}
		return freePorts(n)
	}
	t.Cleanup(func() { pickPorts = freePorts })
	s := Start(t)
	if s.Addr() == l.Addr().String() || calls != 2 {
		t.Errorf("Start is on %s after %d picks; the taken port was %d", s.Addr(), calls, taken)
	}
	if mode, err := s.Mode(); err != nil || mode != "standalone" {
		t.Errorf("Mode() = %q, %v", mode, err)
	}
}

func TestFreePortsDistinct(t *testing.T) {
	seen := map[int]bool{}
	for range 5 {
		ports, err := freePorts(9)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ports {
			if seen[p] {
				t.Fatalf("port %d handed out twice", p)
			}
			seen[p] = true
		}
	}
}

// fakeTB stands in for a test, to see Start skip or fail.
type fakeTB struct {
	testing.TB
	mu           sync.Mutex
	skip, failed string
}

func (f *fakeTB) Skip(args ...any) { f.skipNow(fmt.Sprint(args...)) }
func (f *fakeTB) Skipf(format string, args ...any) {
	f.skipNow(fmt.Sprintf(format, args...))
}
func (f *fakeTB) SkipNow()          { f.skipNow("SkipNow") }
func (f *fakeTB) Fatal(args ...any) { f.failNow(fmt.Sprint(args...)) }
func (f *fakeTB) Fatalf(format string, args ...any) {
	f.failNow(fmt.Sprintf(format, args...))
}
func (f *fakeTB) FailNow() { f.failNow("FailNow") }

func (f *fakeTB) skipNow(msg string) {
	f.mu.Lock()
	f.skip = msg
	f.mu.Unlock()
	runtime.Goexit()
}

func (f *fakeTB) failNow(msg string) {
	f.mu.Lock()
	f.failed = msg
	f.mu.Unlock()
	runtime.Goexit()
}

// runFake calls f with a fakeTB on a goroutine of its own (Skip and Fatal end
// it) and returns what it was told.
func runFake(t *testing.T, f func(testing.TB)) (skip, failed string) {
	fake := &fakeTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(fake)
	}()
	<-done
	return fake.skip, fake.failed
}

func TestMissingZooKeeper(t *testing.T) {
	t.Setenv("ZK_SERVERS", "")
	jar := zkJar
	zkJar = "/nonexistent/zookeeper.jar"
	t.Cleanup(func() { zkJar = jar })

	t.Setenv("BATON_REQUIRE_INTEGRATION", "")
	skip, failed := runFake(t, func(tb testing.TB) { Start(tb); t.Error("Start returned") })
	if failed != "" || !strings.Contains(skip, "ZOOKEEPER IS NOT INSTALLED") || !strings.Contains(skip, installHint) {
		t.Errorf("without BATON_REQUIRE_INTEGRATION: skip %q, fail %q", skip, failed)
	}
	t.Logf("the skip message:%s", strings.TrimPrefix(skip, "SKIPPED:"))

	t.Setenv("BATON_REQUIRE_INTEGRATION", "1")
	skip, failed = runFake(t, func(tb testing.TB) { Start(tb); t.Error("Start returned") })
	if skip != "" || !strings.Contains(failed, "BATON_REQUIRE_INTEGRATION=1") || !strings.Contains(failed, installHint) {
		t.Errorf("with BATON_REQUIRE_INTEGRATION=1: skip %q, fail %q", skip, failed)
	}
	_, failed = runFake(t, func(tb testing.TB) { StartEnsemble(tb, 3); t.Error("StartEnsemble returned") })
	if !strings.Contains(failed, "ZOOKEEPER IS NOT INSTALLED") && !testing.Short() {
		t.Errorf("StartEnsemble with BATON_REQUIRE_INTEGRATION=1: fail %q", failed)
	}

	if err := Available(); err == nil || !strings.Contains(err.Error(), installHint) {
		t.Errorf("Available() = %v, want an error saying how to install ZooKeeper", err)
	}
	if s, err := Launch(t.TempDir()); err == nil || !strings.Contains(err.Error(), installHint) {
		t.Errorf("Launch: %v, %v; want an error saying how to install ZooKeeper", s, err)
	}
}

// With ZK_SERVERS, Start runs no process: the test gets a root of its own,
// deleted at its end, and Kill skips it.
func TestZKServers(t *testing.T) {
	s := Start(t)
	c := Connect(t, s.Addrs(), 4*time.Second)
	var root string
	var sub *testing.T
	reached := false
	t.Run("kill skips", func(t *testing.T) {
		sub = t
		t.Setenv("ZK_SERVERS", " "+s.Addr()+" ")
		e := Start(t)
		root = e.Root()
		if !e.External() || e.PID() != 0 || !e.Running() || e.Addr() != s.Addr() {
			t.Errorf("External() = %v, PID() = %d, Running() = %v, Addr() = %s", e.External(), e.PID(), e.Running(), e.Addr())
		}
		if !strings.HasPrefix(root, rootParent+"/TestZKServers_kill_skips-") {
			t.Errorf("Root() = %q", root)
		}
		ce := Connect(t, e.Addrs(), 4*time.Second)
		if _, err := ce.Create(e.Path("a"), nil, 0, acl); err != nil {
			t.Fatal(err)
		}
		if _, err := ce.Create(e.Path("a", "b"), nil, 0, acl); err != nil {
			t.Fatal(err)
		}
		e.Kill()
		reached = true
	})
	if reached || !sub.Skipped() {
		t.Errorf("Kill with ZK_SERVERS: went on %v, skipped %v", reached, sub.Skipped())
	}
	if ok, _, err := c.Exists(root); err != nil || ok {
		t.Errorf("the external test's root %s after it ended: exists %v, %v", root, ok, err)
	}
	if s.Running() != true {
		t.Error("the server stopped")
	}
	t.Run("ensemble skips", func(t *testing.T) {
		sub = t
		t.Setenv("ZK_SERVERS", s.Addr())
		StartEnsemble(t, 3)
		reached = true
	})
	if reached || !sub.Skipped() {
		t.Errorf("StartEnsemble with ZK_SERVERS: went on %v, skipped %v", reached, sub.Skipped())
	}
}

// Start, Connect, Stop and Restart leave no goroutine behind.
// Launch starts a server without a test: it serves with the options
// given, logs to the logger given, has no root, and Close stops it.
func TestLaunch(t *testing.T) {
	if externalServers() != nil {
		t.Skip("ZK_SERVERS is set: Launch starts a server of its own, which this test needs not")
	}
	requireZooKeeper(t)
	var logged []string
	s, err := Launch(t.TempDir(), ForceSync(true), TickTime(time.Second),
		Logf(func(format string, args ...any) { logged = append(logged, fmt.Sprintf(format, args...)) }))
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = s.Close()
		}
	})
	if mode, err := s.Mode(); err != nil || mode != "standalone" {
		t.Fatalf("Mode() = %q, %v; want standalone", mode, err)
	}
	if s.Root() != "" || s.External() {
		t.Errorf("Root() = %q, External() = %v; want none and false", s.Root(), s.External())
	}
	conf, err := FourLetter(s.Addr(), "conf")
	if err != nil || !strings.Contains(conf, "tickTime=1000") {
		t.Errorf("conf = %q, %v; want tickTime=1000", conf, err)
	}
	cfg, err := os.ReadFile(filepath.Join(s.dir, "zoo.cfg"))
	if err != nil || !strings.Contains(string(cfg), "forceSync=yes\n") {
		t.Errorf("zoo.cfg = %q, %v; want forceSync=yes", cfg, err)
	}
	c := Connect(t, s.Addrs(), 4*time.Second)
	if _, err := c.Create("/launched", []byte("x"), 0, acl); err != nil {
		t.Fatal(err)
	}
	pid := s.PID()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	stopped = true
	if s.Running() || syscall.Kill(pid, 0) == nil {
		t.Errorf("after Close: Running() = %v, process %d exists", s.Running(), pid)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	t.Logf("logged: %q", logged)
}

func TestNoGoroutineLeak(t *testing.T) {
	before := runtime.NumGoroutine()
	t.Run("use", func(t *testing.T) {
		s := Start(t)
		c := Connect(t, s.Addrs(), 2*time.Second)
		if _, err := c.Create(s.Path("x"), nil, 0, acl); err != nil {
			t.Fatal(err)
		}
		s.Stop()
		s.Restart()
		if _, err := c.Sync(s.Root()); err != nil { // reconnects in about 1 s
			time.Sleep(1500 * time.Millisecond)
		}
	})
	// Every goroutine the subtest started ends, however long a loaded
	// machine takes (a client mid-handshake at Close finishes its
	// handshake first: see closeWait).
	limit := Patience(t)
	deadline := time.Now().Add(limit)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines before, %d after %v:\n%s", before, runtime.NumGoroutine(), limit, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A 3-node ensemble: a write on one node is read on another; SIGKILL of
// the leader elects another and a client writes again; the killed node,
// restarted, follows and has the writes it missed.
func TestEnsemble(t *testing.T) {
	begin := time.Now()
	e := StartEnsemble(t, 3)
	t.Logf("boot: %v", time.Since(begin).Round(time.Millisecond))
	if e.Len() != 3 || len(e.Addrs()) != 3 || strings.Count(e.ConnString(), ",") != 2 {
		t.Fatalf("Len() = %d, Addrs() = %v", e.Len(), e.Addrs())
	}
	leader := e.Leader()
	if leader < 0 {
		t.Fatal("no leader")
	}
	other := (leader + 1) % 3
	third := (leader + 2) % 3
	pids := map[int]bool{}
	for i := range 3 {
		pids[e.Node(i).PID()] = true
		mode, err := e.Node(i).Mode()
		if want := map[bool]string{true: "leader", false: "follower"}[i == leader]; err != nil || mode != want {
			t.Errorf("node %d: Mode() = %q, %v; want %s", i+1, mode, err, want)
		}
	}
	if len(pids) != 3 {
		t.Errorf("PIDs %v", pids)
	}

	// a write on one node, read on another
	cOther := Connect(t, []string{e.Node(other).Addr()}, 4*time.Second)
	cThird := Connect(t, []string{e.Node(third).Addr()}, 4*time.Second)
	x := e.Path("x")
	if _, err := cOther.Create(x, []byte("hello"), 0, acl); err != nil {
		t.Fatal(err)
	}
	if _, err := cThird.Sync(x); err != nil {
		t.Fatal(err)
	}
	if data, _, err := cThird.Get(x); err != nil || string(data) != "hello" {
		t.Fatalf("Get on node %d = %q, %v", third+1, data, err)
	}

	// SIGKILL of the leader
	c := Connect(t, e.Addrs(), 4*time.Second)
	if _, err := c.Create(e.Path("eph"), nil, zk.FlagEphemeral, acl); err != nil {
		t.Fatal(err)
	}
	session := c.SessionID()
	killed := time.Now()
	e.Node(leader).Kill()
	newLeader, err := e.WaitQuorum(Patience(t))
	elected := time.Since(killed)
	if err != nil {
		t.Fatalf("after the leader was killed: %v", err)
	}
	if newLeader == leader {
		t.Fatalf("the killed node %d leads", leader+1)
	}
	var writes int
	WaitFor(t, "a write after the leader was killed", func() error {
		writes++
		_, err := c.Set(x, []byte("after failover"), -1)
		return err
	})
	wrote := time.Since(killed)
	t.Logf("SIGKILL of leader node %d: node %d leads after %v; the client wrote again after %v (%d tries)",
		leader+1, newLeader+1, elected.Round(time.Millisecond), wrote.Round(time.Millisecond), writes)
	if ok, _, err := c.Exists(e.Path("eph")); err != nil || !ok || c.SessionID() != session {
		t.Errorf("the session's ephemeral node after the failover: exists %v, %v; session 0x%x, was 0x%x", ok, err, c.SessionID(), session)
	}

	// the killed node, restarted, rejoins and has the write it missed
	e.Node(leader).Restart()
	if mode, err := e.Node(leader).Mode(); err != nil || mode != "follower" {
		t.Errorf("the restarted node %d: Mode() = %q, %v; want follower", leader+1, mode, err)
	}
	if l, err := e.WaitQuorum(Patience(t)); err != nil || l != newLeader {
		t.Errorf("WaitQuorum() = %d, %v; want %d", l, err, newLeader)
	}
	cBack := Connect(t, []string{e.Node(leader).Addr()}, 4*time.Second)
	if _, err := cBack.Sync(x); err != nil {
		t.Fatal(err)
	}
	if data, _, err := cBack.Get(x); err != nil || string(data) != "after failover" {
		t.Errorf("Get on the restarted node = %q, %v", data, err)
	}
}
