// Package zktest runs real ZooKeeper servers for tests: a standalone server
// (Start) or an ensemble on loopback (StartEnsemble), each a JVM started
// from Debian's zookeeper package (/usr/share/java/zookeeper.jar) on free
// 127.0.0.1 ports with data in the test's temporary directory, and stopped
// by its own process ID when the test ends. Connect opens a client session
// with github.com/go-zookeeper/zk and closes it at the end of the test.
//
// It is a test-support package: _test.go files import it, and so does the
// benchmark program (bench), which starts its server outside any test with
// Launch and stops it with Close.
//
// # What a server is
//
// A server's zoo.cfg has tickTime=500ms (TickTime), so sessions of 1 s to
// 10 s are possible (the server clamps a session timeout to 2 to 20 ticks),
// forceSync=no (ForceSync: the benchmark wants yes), no admin server (it
// would take port 8080), every four-letter command allowed and no limit on
// connections; the JVM has -Xmx256m (Heap) and any JVMFlags. Its output
// (stdout, stderr and log4j at INFO) goes to a file in the test's temporary
// directory, printed when the test fails.
//
// Start and StartEnsemble wait until every server answers "srvr" with its
// mode (standalone, or one leader and the others followers) and "conf"
// with its own data directory, so a server of another test that took the
// port first is never mistaken for it: a port taken between picking and
// binding is picked again, a bounded number of times. Every wait is
// bounded: 30 s for a server to be ready (60 s for an ensemble), 5 s from
// SIGTERM to SIGKILL. A server process gets SIGKILL if the test binary
// dies without running its cleanups (Linux's parent-death signal).
//
// Stop (SIGTERM, then SIGKILL after the grace period), Kill (SIGKILL) and
// Restart (same port, same data directory) make outages: a test can stop
// a server for N seconds and bring it back, or kill an ensemble's leader
// and restart it. They must be called from the test's goroutine when
// ZK_SERVERS is set (they skip the test then); otherwise Stop and Kill may
// be called from any goroutine.
//
// # Where a test keeps its nodes
//
// Every Server and Ensemble has a Root: a node created for the test alone
// ("/zktest/<test name>-<random>"). A test keeps its nodes under Root (Path
// joins names onto it) and never writes elsewhere, so that the same test
// runs unchanged against a shared server. go-zookeeper has no chroot: the
// prefix is the test's to add.
//
// # ZK_SERVERS
//
// When the environment variable ZK_SERVERS is set (host:port[,host:port]),
// Start starts no process: it returns a Server for that existing server
// (or ensemble) with a fresh Root, which its cleanup deletes with
// everything under it. Such a test may create, read, change and delete
// nodes under Root, open and close sessions, and let its own sessions
// expire. It may not stop, kill or restart the server (Stop, Kill, Restart
// and Launch skip the test, saying why), rely on the Options (they are
// ignored: the server has its own tick time and session bounds), nor touch
// nodes outside Root. StartEnsemble skips its test: it needs servers it
// may kill.
//
// # When ZooKeeper is missing
//
// Without java or /usr/share/java/zookeeper.jar (and without ZK_SERVERS),
// Start and StartEnsemble skip the test with a loud message saying how to
// install ZooKeeper; with BATON_REQUIRE_INTEGRATION=1 (scripts/test.sh sets
// it, and installs the package) they fail it instead. StartEnsemble also
// skips under -short: an ensemble takes several seconds to boot.
package zktest
