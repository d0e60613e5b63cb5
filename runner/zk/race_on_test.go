//go:build race

package zk_test

import "testing"

// reconnects skips a test whose clients reconnect (a server killed, a
// connection cut) when it is built with -race: go-zookeeper v1.0.4 races
// with itself on reconnection (Conn.lastZxid, written by recvLoop and read
// by sendSetWatches), which the race detector reports as the test's
// failure, whatever baton does. scripts/test.sh runs these tests again
// without -race and fails unless each passes.
func reconnects(t *testing.T) {
	t.Skip("skipped under -race: go-zookeeper v1.0.4 has a data race of its own when it reconnects; scripts/test.sh runs this test without -race")
}
