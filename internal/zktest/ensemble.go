package zktest

import (
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Ensemble is a ZooKeeper ensemble on loopback that a test started: Node(i)
// is the server with myid i+1, each with its own client, peer and election
// ports and data directory.
type Ensemble struct {
	t     testing.TB
	nodes []*Server
	root  string
}

// StartEnsemble starts an ensemble of n servers (n >= 2; 3 is the usual)
// on free 127.0.0.1 ports, waits (at most 60 s) until one leads and the
// others follow, and stops every node when the test ends. It skips the
// test under -short and when ZK_SERVERS is set, and like Start when
// ZooKeeper is missing.
func StartEnsemble(t testing.TB, n int, opts ...Option) *Ensemble {
	t.Helper()
	if n < 2 {
		t.Fatalf("zktest: an ensemble of %d servers: want 2 or more", n)
	}
	if addrs := externalServers(); addrs != nil {
		t.Skipf("zktest: ZK_SERVERS is set (%s): an ensemble test needs servers it starts and kills itself", strings.Join(addrs, ","))
	}
	if testing.Short() {
		t.Skip("\n" + strings.Repeat("*", 78) + "\n" +
			"*** SKIPPED under -short: this test boots a ZooKeeper ensemble (several seconds).\n" +
			"*** Run it without -short (scripts/test.sh does).\n" +
			strings.Repeat("*", 78))
	}
	requireZooKeeper(t)
	cfg := newConfig(opts)
	base := t.TempDir()
	e := &Ensemble{t: t}
	for i := range n {
		s, err := newServer(cfg, filepath.Join(base, fmt.Sprintf("node%d", i+1)), i+1)
		if err != nil {
			t.Fatalf("zktest: %v", err)
		}
		s.t = t
		e.nodes = append(e.nodes, s)
	}
	t.Cleanup(e.cleanup)
	begin := time.Now()
	for attempt := 1; ; attempt++ {
		ports, err := pickPorts(3 * n)
		if err != nil {
			t.Fatalf("zktest: %v", err)
		}
		var peers strings.Builder
		for i := range n {
			fmt.Fprintf(&peers, "server.%d=127.0.0.1:%d:%d\n", i+1, ports[3*i+1], ports[3*i+2])
		}
		for i, s := range e.nodes {
			s.peers = peers.String()
			s.setPort(ports[3*i])
		}
		err = e.launchAll()
		if err == nil {
			_, err = e.waitQuorum(ensembleReadyTimeout, true)
		}
		if err == nil {
			break
		}
		e.each((*Server).kill)
		if errors.Is(err, errPortTaken) && attempt < startAttempts {
			t.Logf("zktest: %v; trying other ports", err)
			continue
		}
		t.Fatalf("zktest: ensemble of %d: %v (the nodes' logs follow)", n, err)
	}
	t.Logf("zktest: ZooKeeper ensemble %s ready in %v, leader node %d", e.ConnString(), time.Since(begin).Round(time.Millisecond), e.Leader()+1)
	e.root = makeRoot(t, e.Addrs())
	return e
}

func (e *Ensemble) launchAll() error {
	for _, s := range e.nodes {
		if _, err := s.launch(); err != nil {
			return fmt.Errorf("launch of %s: %w", s.name(), err)
		}
	}
	return nil
}

// Len is the number of nodes.
func (e *Ensemble) Len() int { return len(e.nodes) }

// Node is the i-th node (0-based; its myid is i+1). Stop, Kill, Restart
// and Launch act on that node alone.
func (e *Ensemble) Node(i int) *Server { return e.nodes[i] }

// Addrs lists every node's client address, for Connect.
func (e *Ensemble) Addrs() []string {
	var addrs []string
	for _, s := range e.nodes {
		addrs = append(addrs, s.Addr())
	}
	return addrs
}

// ConnString is every node's client address, comma-separated.
func (e *Ensemble) ConnString() string { return strings.Join(e.Addrs(), ",") }

// Root is the node the test keeps its nodes under (see the package doc).
func (e *Ensemble) Root() string { return e.root }

// Path joins names onto Root.
func (e *Ensemble) Path(names ...string) string {
	return path.Join(append([]string{e.root}, names...)...)
}

// Leader is the index of the running node whose srvr says "leader", or -1
// if none does now.
func (e *Ensemble) Leader() int {
	for i, s := range e.nodes {
		if s.running() == nil {
			continue
		}
		if mode, err := s.Mode(); err == nil && mode == "leader" {
			return i
		}
	}
	return -1
}

// WaitQuorum waits at most timeout until one running node leads and every
// other running node follows, and returns the leader's index. Stopped
// nodes are left out: after a leader is killed, it measures the election
// among the others.
func (e *Ensemble) WaitQuorum(timeout time.Duration) (int, error) {
	return e.waitQuorum(timeout, false)
}

// waitQuorum is WaitQuorum; with all, every node must run (a node that
// exits is an error at once).
func (e *Ensemble) waitQuorum(timeout time.Duration, all bool) (int, error) {
	deadline := time.Now().Add(timeout)
	for {
		leader, modes, err := e.quorum(all)
		if err != nil {
			return -1, err
		}
		if leader >= 0 {
			return leader, nil
		}
		if time.Now().After(deadline) {
			return -1, fmt.Errorf("no quorum after %v: %s", timeout, strings.Join(modes, ", "))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// quorum looks once: the leader's index if the running nodes have one
// leader and the rest follow (else -1), and each node's mode for messages.
func (e *Ensemble) quorum(all bool) (int, []string, error) {
	leader, ok, n := -1, true, 0
	var modes []string
	for i, s := range e.nodes {
		p := s.running()
		if p == nil {
			s.mu.Lock()
			last := s.proc
			s.mu.Unlock()
			if all && last != nil {
				return -1, nil, last.exited(s)
			}
			modes = append(modes, fmt.Sprintf("node %d stopped", i+1))
			continue
		}
		n++
		mode, err := s.probe(p)
		if errors.Is(err, errPortTaken) {
			return -1, nil, err
		}
		switch {
		case err != nil:
			modes = append(modes, fmt.Sprintf("node %d: %v", i+1, err))
			ok = false
		case mode == "leader" && leader < 0:
			modes = append(modes, fmt.Sprintf("node %d leads", i+1))
			leader = i
		case mode == "follower":
			modes = append(modes, fmt.Sprintf("node %d follows", i+1))
		default:
			modes = append(modes, fmt.Sprintf("node %d: mode %q", i+1, mode))
			ok = false
		}
	}
	if n == 0 {
		return -1, modes, errors.New("no node runs")
	}
	if !ok {
		leader = -1
	}
	return leader, modes, nil
}

// each calls f on every node at once and waits.
func (e *Ensemble) each(f func(*Server)) {
	var wg sync.WaitGroup
	for _, s := range e.nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(s)
		}()
	}
	wg.Wait()
}

// cleanup stops every node and, if the test failed, prints their logs.
func (e *Ensemble) cleanup() {
	e.each(func(s *Server) { s.stop(stopGrace) })
	if e.t.Failed() {
		for _, s := range e.nodes {
			e.t.Logf("zktest: log of %s (%s):\n%s", s.name(), s.logPath, tail([]byte(s.Log())))
		}
	}
}
