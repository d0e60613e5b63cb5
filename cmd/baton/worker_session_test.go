package main

import (
	"strings"
	"testing"
	"time"

	"github.com/batonwf/baton/internal/zktest"
)

// TestWorkerZKSessionTimeout: baton worker --zk-session-timeout sets the
// worker's ZooKeeper session timeout, as the server sees it (its "cons"
// command: to=MILLISECONDS); a bad value is a usage error that names the
// flag, and so is the flag without --zk or with --kafka.
func TestWorkerZKSessionTimeout(t *testing.T) {
	srv := zktest.Start(t)
	root := srv.Path("session")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--zk", srv.ConnString(), "--root", root, "--zk-session-timeout", "0s"}, "--zk-session-timeout must be from 1s to 10m0s, got 0s"},
		{[]string{"--zk", srv.ConnString(), "--root", root, "--zk-session-timeout", "-5s"}, "--zk-session-timeout must be from 1s to 10m0s, got -5s"},
		{[]string{"--zk", srv.ConnString(), "--root", root, "--zk-session-timeout", "500ms"}, "--zk-session-timeout must be from 1s to 10m0s, got 500ms"},
		{[]string{"--zk", srv.ConnString(), "--root", root, "--zk-session-timeout", "11m"}, "--zk-session-timeout must be from 1s to 10m0s, got 11m0s"},
		{[]string{"--zk", srv.ConnString(), "--root", root, "--zk-session-timeout", "soon"}, `invalid value "soon" for flag -zk-session-timeout`},
		{[]string{"--kafka", "127.0.0.1:1", "--zk-session-timeout", "4s"}, "--zk-session-timeout needs --zk; it does not go with --kafka"},
		{[]string{"--zk-session-timeout", "4s"}, "--zk or --kafka is required"},
	} {
		r := baton(t, append([]string{"worker"}, c.args...)...).want(t, exitError)
		contains(t, "stderr of worker "+strings.Join(c.args, " "), r.stderr, c.want, "usage: baton worker")
	}
	r := baton(t, "worker", "--help")
	contains(t, "worker --help", r.stdout+r.stderr, "-zk-session-timeout D", "(default 10s)")

	startWorker(t, srv, root, "w1", "--zk-session-timeout", "4s")
	eventually(t, 20*time.Second, "a session of 4s on the server", func() (bool, string) {
		out, err := zktest.FourLetter(srv.Addr(), "cons")
		return err == nil && strings.Contains(out, "to=4000,"), out
	})
}
