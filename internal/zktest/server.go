package zktest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Where Debian's packages put ZooKeeper and the logging it needs; variables
// so that a test can pretend they are missing.
var (
	javaBin   = "java"
	zkJar     = "/usr/share/java/zookeeper.jar"
	logJars   = []string{"/usr/share/java/slf4j-log4j12.jar", "/usr/share/java/log4j-1.2.jar"}
	pickPorts = freePorts
)

// Bounds on every wait.
const (
	readyTimeout         = 30 * time.Second
	ensembleReadyTimeout = 60 * time.Second
	stopGrace            = 5 * time.Second
	killWait             = 10 * time.Second
	startAttempts        = 5 // launches on fresh ports when a port was taken
	logTail              = 32 << 10
)

const installHint = "apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y zookeeper"

// Option configures the servers that Start and StartEnsemble run. Options
// are ignored when ZK_SERVERS is set.
type Option func(*config)

type config struct {
	tickTime  time.Duration
	forceSync bool
	heap      string
	jvmFlags  []string
	extra     [][2]string
	logf      func(format string, args ...any) // Launch's logger; nil for none
}

func newConfig(opts []Option) config {
	c := config{tickTime: 500 * time.Millisecond, heap: "256m"}
	for _, o := range opts {
		o(&c)
	}
	return c
}

// TickTime sets the server's tick (default 500 ms). The server clamps each
// session's timeout to between 2 and 20 ticks.
func TickTime(d time.Duration) Option { return func(c *config) { c.tickTime = d } }

// ForceSync sets whether the server fsyncs its transaction log before it
// acknowledges a write (default false, for speed; ZooKeeper's own default,
// and what a benchmark measures, is true).
func ForceSync(on bool) Option { return func(c *config) { c.forceSync = on } }

// Heap sets the JVM's maximum heap, as -Xmx takes it (default "256m").
func Heap(size string) Option { return func(c *config) { c.heap = size } }

// JVMFlags adds flags to the server's java command line, system properties
// among them (for example "-Dzookeeper.extendedTypesEnabled=true" for TTL
// nodes).
func JVMFlags(flags ...string) Option {
	return func(c *config) { c.jvmFlags = append(c.jvmFlags, flags...) }
}

// Config adds a line key=value to the server's zoo.cfg, after the lines
// zktest writes (ZooKeeper keeps the last value of a key).
func Config(key, value string) Option {
	return func(c *config) { c.extra = append(c.extra, [2]string{key, value}) }
}

// Logf gives a server that Launch starts a logger for what Start would
// log to the test (ports taken and tried again, SIGKILLs). Start ignores
// it: its server logs to the test.
func Logf(f func(format string, args ...any)) Option {
	return func(c *config) { c.logf = f }
}

// Server is a ZooKeeper server a test started (or, with ZK_SERVERS, one it
// was pointed at), or one that Launch started outside a test. Its methods
// are safe for concurrent use.
type Server struct {
	t        testing.TB // nil for a server from Launch
	cfg      config
	external bool
	root     string

	// A started server's files and ports; an ensemble's node has an id.
	dir        string // zoo.cfg, log4j.properties, server.log, data/
	dataDir    string
	logPath    string
	id         int    // myid, 1-based; 0 for a standalone server
	peers      string // an ensemble's server.N lines
	clientPort int

	mu    sync.Mutex
	addrs []string
	proc  *process
}

// process is one run of the server's JVM.
type process struct {
	cmd       *exec.Cmd
	logOffset int64         // the log's size when it started
	done      chan struct{} // closed once Wait returned
	err       error         // Wait's result, set before done is closed
	verified  atomic.Bool   // conf named this server's data directory
}

// Start starts a standalone ZooKeeper server on a free 127.0.0.1 port with
// a data directory under t.TempDir, waits until it serves (at most 30 s)
// and stops it when the test ends. With ZK_SERVERS set it starts nothing
// and returns that server (see the package doc). Without ZooKeeper it
// skips the test, or fails it under BATON_REQUIRE_INTEGRATION=1.
func Start(t testing.TB, opts ...Option) *Server {
	t.Helper()
	if addrs := externalServers(); addrs != nil {
		return startExternal(t, addrs)
	}
	requireZooKeeper(t)
	s, err := newServer(newConfig(opts), t.TempDir(), 0)
	if err != nil {
		t.Fatalf("zktest: %v", err)
	}
	s.t = t
	t.Cleanup(s.cleanup)
	begin := time.Now()
	if err := s.startStandalone(); err != nil {
		t.Fatalf("zktest: %v", err)
	}
	t.Logf("zktest: standalone ZooKeeper %s ready in %v (pid %d)", s.Addr(), time.Since(begin).Round(time.Millisecond), s.PID())
	s.root = makeRoot(t, s.Addrs())
	return s
}

// Launch starts a standalone ZooKeeper server outside a test (a program
// such as the benchmark's needs one): like Start, on a free 127.0.0.1
// port, with its zoo.cfg, data directory and server.log in dir (made if
// missing), and returns once it serves (at most 30 s). The caller stops
// it with Close; if the program dies first, the kernel kills the server
// (Linux's parent-death signal). ZK_SERVERS plays no part, and the server
// has no Root (Root returns ""): the caller picks its nodes. Logf gives it
// a logger. Without ZooKeeper it returns an error saying how to install
// it.
func Launch(dir string, opts ...Option) (*Server, error) {
	if err := Available(); err != nil {
		return nil, err
	}
	s, err := newServer(newConfig(opts), dir, 0)
	if err != nil {
		return nil, fmt.Errorf("zktest: %w", err)
	}
	if err := s.startStandalone(); err != nil {
		return nil, fmt.Errorf("zktest: %w\n%s", err, s.logSince(nil))
	}
	return s, nil
}

// Available returns nil when Launch can start a server here, else an
// error saying what is missing and how to install it.
func Available() error {
	if missing := zooKeeperMissing(); missing != nil {
		return fmt.Errorf("zktest: ZooKeeper is not installed: %s (install it: %s)", strings.Join(missing, "; "), installHint)
	}
	return nil
}

// Close stops a server (SIGTERM, then SIGKILL after 5 s) and waits until
// it has exited; an error if it could not. It is how the caller of Launch
// stops its server; stopping a stopped server does nothing.
func (s *Server) Close() error {
	if s.external {
		return nil
	}
	s.stop(stopGrace)
	if p := s.running(); p != nil {
		return fmt.Errorf("zktest: %s (pid %d) still runs", s.name(), p.cmd.Process.Pid)
	}
	return nil
}

// startStandalone picks a port and starts the server on it, picking again
// when another process took the port first.
func (s *Server) startStandalone() error {
	for attempt := 1; ; attempt++ {
		ports, err := pickPorts(1)
		if err != nil {
			return err
		}
		s.setPort(ports[0])
		p, err := s.launch()
		if err == nil {
			err = s.waitReady(p, readyTimeout)
		}
		if err == nil {
			return nil
		}
		s.kill()
		if errors.Is(err, errPortTaken) && attempt < startAttempts {
			s.logf("zktest: %v; trying other ports", err)
			continue
		}
		return fmt.Errorf("standalone server on %s: %w (its log follows)", s.Addr(), err)
	}
}

func newServer(cfg config, dir string, id int) (*Server, error) {
	s := &Server{cfg: cfg, dir: dir, id: id,
		dataDir: filepath.Join(dir, "data"),
		logPath: filepath.Join(dir, "server.log"),
	}
	if err := os.MkdirAll(s.dataDir, 0o755); err != nil {
		return nil, err
	}
	if id > 0 {
		if err := os.WriteFile(filepath.Join(s.dataDir, "myid"), []byte(strconv.Itoa(id)+"\n"), 0o644); err != nil {
			return nil, err
		}
	}
	log4j := "log4j.rootLogger=INFO, CONSOLE\n" +
		"log4j.appender.CONSOLE=org.apache.log4j.ConsoleAppender\n" +
		"log4j.appender.CONSOLE.layout=org.apache.log4j.PatternLayout\n" +
		"log4j.appender.CONSOLE.layout.ConversionPattern=%d{ISO8601} %-5p [%t] %c{1}: %m%n\n"
	if err := os.WriteFile(filepath.Join(dir, "log4j.properties"), []byte(log4j), 0o644); err != nil {
		return nil, err
	}
	return s, nil
}

// logf logs to the test, or to Launch's logger.
func (s *Server) logf(format string, args ...any) {
	switch {
	case s.t != nil:
		s.t.Helper()
		s.t.Logf(format, args...)
	case s.cfg.logf != nil:
		s.cfg.logf(format, args...)
	}
}

// errorf fails the test, or logs to Launch's logger.
func (s *Server) errorf(format string, args ...any) {
	if s.t != nil {
		s.t.Helper()
		s.t.Errorf(format, args...)
		return
	}
	s.logf(format, args...)
}

// fatalf fails the test; a server from Launch has no test, and these
// methods (Restart, Launch) are not for it: it panics.
func (s *Server) fatalf(format string, args ...any) {
	if s.t == nil {
		panic(fmt.Sprintf(format, args...))
	}
	s.t.Helper()
	s.t.Fatalf(format, args...)
}

// helper marks the caller as a test helper, when there is a test.
func (s *Server) helper() {
	if s.t != nil {
		s.t.Helper()
	}
}

func (s *Server) setPort(port int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clientPort = port
	s.addrs = []string{"127.0.0.1:" + strconv.Itoa(port)}
}

// writeConfig writes zoo.cfg from the current ports.
func (s *Server) writeConfig() error {
	var b strings.Builder
	line := func(k, v string) { fmt.Fprintf(&b, "%s=%s\n", k, v) }
	line("tickTime", strconv.FormatInt(s.cfg.tickTime.Milliseconds(), 10))
	line("initLimit", "20")
	line("syncLimit", "10")
	line("dataDir", s.dataDir)
	line("clientPort", strconv.Itoa(s.clientPort))
	line("clientPortAddress", "127.0.0.1")
	line("admin.enableServer", "false")
	line("4lw.commands.whitelist", "*")
	line("maxClientCnxns", "0")
	line("forceSync", map[bool]string{true: "yes", false: "no"}[s.cfg.forceSync])
	b.WriteString(s.peers)
	for _, kv := range s.cfg.extra {
		line(kv[0], kv[1])
	}
	return os.WriteFile(filepath.Join(s.dir, "zoo.cfg"), []byte(b.String()), 0o644)
}

// launch writes zoo.cfg and starts the JVM; it does not wait.
func (s *Server) launch() (*process, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc != nil {
		select {
		case <-s.proc.done:
		default:
			return nil, errors.New("already running")
		}
	}
	if err := s.writeConfig(); err != nil {
		return nil, err
	}
	logf, err := os.OpenFile(s.logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer logf.Close() // the child has its own descriptor
	off, _ := logf.Seek(0, 2)
	cp := zkJar
	for _, j := range logJars {
		if _, err := os.Stat(j); err == nil {
			cp += ":" + j
		}
	}
	args := []string{"-Xmx" + s.cfg.heap, "-XX:-UsePerfData",
		"-Dlog4j.configuration=file:" + filepath.Join(s.dir, "log4j.properties"),
		"-Dzookeeper.admin.enableServer=false"}
	args = append(args, s.cfg.jvmFlags...)
	args = append(args, "-cp", cp, "org.apache.zookeeper.server.quorum.QuorumPeerMain", filepath.Join(s.dir, "zoo.cfg"))
	cmd := exec.Command(javaBin, args...)
	cmd.Dir = s.dir
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = sysProcAttr()
	fmt.Fprintf(logf, "==== zktest: %s %s\n", javaBin, strings.Join(args, " "))
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &process{cmd: cmd, logOffset: off, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	s.proc = p
	return p, nil
}

var errPortTaken = errors.New("a port was taken")

// waitReady waits until p's server serves in a ready mode (see probe). It
// fails at once if p exits.
func (s *Server) waitReady(p *process, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		if err := p.exited(s); err != nil {
			return err
		}
		mode, err := s.probe(p)
		if errors.Is(err, errPortTaken) {
			return err
		}
		if err == nil && s.readyMode(mode) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not serving after %v (last srvr: %q, %v)", timeout, mode, err)
		}
		select {
		case <-p.done:
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// probe asks p's server its mode. The first time it answers, conf must
// name this server's data directory: else another server holds the port
// (errPortTaken), and p will exit unable to bind it.
func (s *Server) probe(p *process) (string, error) {
	addr := s.Addr()
	mode, err := srvrMode(addr)
	if err != nil || p.verified.Load() {
		return mode, err
	}
	conf, err := FourLetter(addr, "conf")
	if err != nil {
		return "", err
	}
	if !strings.Contains(conf, s.dataDir) {
		return "", fmt.Errorf("%w: another server answers on %s", errPortTaken, addr)
	}
	p.verified.Store(true)
	return mode, nil
}

// exited is nil while p runs, else why it stopped (errPortTaken if it
// could not bind a port).
func (p *process) exited(s *Server) error {
	select {
	case <-p.done:
	default:
		return nil
	}
	if log := s.logSince(p); strings.Contains(log, "Address already in use") || strings.Contains(log, "BindException") {
		return fmt.Errorf("%w: %s exited (%v) unable to bind a port", errPortTaken, s.name(), p.err)
	}
	return fmt.Errorf("%s exited before it served: %v", s.name(), p.err)
}

func (s *Server) readyMode(mode string) bool {
	if s.id == 0 {
		return mode == "standalone"
	}
	return mode == "leader" || mode == "follower"
}

// Addr is the server's client address, "127.0.0.1:PORT" (with ZK_SERVERS,
// the first of its addresses).
func (s *Server) Addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addrs[0]
}

// Addrs is the server's client address as a list, for Connect.
func (s *Server) Addrs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.addrs...)
}

// ConnString is the client address as a connection string ("h:p[,h:p]").
func (s *Server) ConnString() string { return strings.Join(s.Addrs(), ",") }

// Root is the node the test keeps its nodes under (see the package doc).
func (s *Server) Root() string { return s.root }

// Path joins names onto Root.
func (s *Server) Path(names ...string) string {
	return path.Join(append([]string{s.root}, names...)...)
}

// External reports whether the server came from ZK_SERVERS.
func (s *Server) External() bool { return s.external }

// PID is the running server's process ID, 0 when it is not running (or is
// external).
func (s *Server) PID() int {
	if p := s.running(); p != nil {
		return p.cmd.Process.Pid
	}
	return 0
}

// Running reports whether the server's process runs (an external server:
// true).
func (s *Server) Running() bool { return s.external || s.running() != nil }

func (s *Server) running() *process {
	s.mu.Lock()
	p := s.proc
	s.mu.Unlock()
	if p == nil {
		return nil
	}
	select {
	case <-p.done:
		return nil
	default:
		return p
	}
}

// Mode is the server's mode as srvr tells it: "standalone", "leader" or
// "follower"; an error when it does not serve.
func (s *Server) Mode() (string, error) { return srvrMode(s.Addr()) }

// Stop sends the server SIGTERM, then SIGKILL if it still runs after 5 s,
// and waits until it has exited. Stopping a stopped server does nothing.
func (s *Server) Stop() {
	s.helper()
	s.skipIfExternal("Stop")
	s.stop(stopGrace)
}

// Kill sends the server SIGKILL and waits until it has exited.
func (s *Server) Kill() {
	s.helper()
	s.skipIfExternal("Kill")
	s.kill()
}

// Restart stops the server if it runs, starts it again on the same port
// with the same data directory, and waits until it serves (a node of an
// ensemble: until it leads or follows, which needs a quorum). It fails the
// test if it cannot, so it must be called from the test's goroutine.
func (s *Server) Restart() {
	s.helper()
	s.skipIfExternal("Restart")
	s.stop(stopGrace)
	begin := time.Now()
	p, err := s.launch()
	if err == nil {
		err = s.waitReady(p, readyTimeout)
	}
	if err != nil {
		s.kill()
		s.fatalf("zktest: restart of %s: %v (its log follows)", s.name(), err)
	}
	s.logf("zktest: %s restarted in %v (pid %d)", s.name(), time.Since(begin).Round(time.Millisecond), s.PID())
}

// Launch starts a stopped server again on the same port with the same data
// directory and returns at once; WaitReady waits for it. (Restart does
// both; Launch lets a test bring several nodes of an ensemble back at once.)
func (s *Server) Launch() {
	s.helper()
	s.skipIfExternal("Launch")
	if _, err := s.launch(); err != nil {
		s.fatalf("zktest: launch of %s: %v", s.name(), err)
	}
}

// WaitReady waits at most timeout until the running server serves, and
// says why not.
func (s *Server) WaitReady(timeout time.Duration) error {
	if s.external {
		return nil
	}
	p := s.running()
	if p == nil {
		return errors.New("zktest: " + s.name() + " is not running")
	}
	return s.waitReady(p, timeout)
}

func (s *Server) skipIfExternal(what string) {
	if s.external {
		s.t.Helper()
		s.t.Skipf("zktest: ZK_SERVERS is set (%s): %s needs a server this test started itself", s.ConnString(), what)
	}
}

func (s *Server) name() string {
	if s.id > 0 {
		return fmt.Sprintf("node %d (%s)", s.id, s.Addr())
	}
	return "server " + s.Addr()
}

// stop sends SIGTERM, waits up to grace, then SIGKILLs. It signals only a
// process it started and has not yet reaped, so the PID is its own.
func (s *Server) stop(grace time.Duration) {
	p := s.running()
	if p == nil {
		return
	}
	_ = p.cmd.Process.Signal(sigterm)
	select {
	case <-p.done:
	case <-time.After(grace):
		s.logf("zktest: %s still runs %v after SIGTERM: SIGKILL", s.name(), grace)
		s.kill()
	}
}

func (s *Server) kill() {
	p := s.running()
	if p == nil {
		return
	}
	_ = p.cmd.Process.Kill()
	select {
	case <-p.done:
	case <-time.After(killWait):
		s.errorf("zktest: %s (pid %d) has not exited %v after SIGKILL", s.name(), p.cmd.Process.Pid, killWait)
	}
}

// Log is everything the server has written (all its runs), for a test
// that wants to look; a failed test prints its end anyway.
func (s *Server) Log() string {
	b, _ := os.ReadFile(s.logPath)
	return string(b)
}

// logSince is the log from p's start on (all of it if p is nil), at most
// its last logTail bytes.
func (s *Server) logSince(p *process) string {
	b, _ := os.ReadFile(s.logPath)
	if p != nil && p.logOffset <= int64(len(b)) {
		b = b[p.logOffset:]
	}
	return tail(b)
}

func tail(b []byte) string {
	if len(b) > logTail {
		b = b[len(b)-logTail:]
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			b = b[i+1:]
		}
		return "[... the log's start is cut ...]\n" + string(b)
	}
	return string(b)
}

// cleanup stops the server and, if the test failed, prints its log.
func (s *Server) cleanup() {
	s.stop(stopGrace)
	if s.t.Failed() {
		s.t.Logf("zktest: log of %s (%s):\n%s", s.name(), s.logPath, tail([]byte(s.Log())))
	}
}

// zooKeeperMissing says what ZooKeeper needs that is missing here; nil
// if it can run.
func zooKeeperMissing() []string {
	var missing []string
	if _, err := exec.LookPath(javaBin); err != nil {
		missing = append(missing, "java ("+javaBin+") is not on PATH")
	}
	if _, err := os.Stat(zkJar); err != nil {
		missing = append(missing, zkJar+" does not exist")
	}
	return missing
}

// requireZooKeeper skips (or fails) the test when ZooKeeper cannot run here.
func requireZooKeeper(t testing.TB) {
	t.Helper()
	missing := zooKeeperMissing()
	if missing == nil {
		return
	}
	msg := "\n" + strings.Repeat("*", 78) + "\n" +
		"*** ZOOKEEPER IS NOT INSTALLED: " + strings.Join(missing, "; ") + "\n" +
		"*** This test needs a real ZooKeeper server. Install Debian's package (Java comes with it):\n" +
		"***     " + installHint + "\n" +
		"*** or point the tests at a running server: ZK_SERVERS=host:port go test ...\n" +
		"*** (scripts/test.sh installs it, and there a missing ZooKeeper is a failure.)\n" +
		strings.Repeat("*", 78)
	if os.Getenv("BATON_REQUIRE_INTEGRATION") == "1" {
		t.Fatal("BATON_REQUIRE_INTEGRATION=1 and" + msg)
	}
	t.Skip("SKIPPED:" + msg)
}
