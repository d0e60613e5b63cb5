package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/batonwf/baton/internal/zktest"
)

// gatedJSON is a job whose wait, called gate, runs in a try that a
// rescue logging "rescued" follows: cancelling gate is rescued.
const gatedJSON = `{"version":3,"root":{"try":{"seq":[{"wait":"approval","name":"gate"},{"act":"log","payload":"after","name":"after"}]},"rescue":{"act":"log","payload":"rescued"}}}`

// gatedSucceeded matches the first line of 'baton status gated' once the
// job has succeeded.
var gatedSucceeded = regexp.MustCompile(`(?m)^job gated v\d+: succeeded`)

// TestZKCancelNode: baton cancel --node --zk saves the cancel of the
// running wait of a worker's job; the worker runs the rescue and the job
// succeeds; the finished job's node is refused with exit status 2.
func TestZKCancelNode(t *testing.T) {
	srv := zktest.Start(t)
	root := srv.Path("cancelnode")
	args := func(a ...string) []string { return append(a, "--zk", srv.ConnString(), "--root", root) }
	w := startWorker(t, srv, root, "w1")
	baton(t, args("submit", writeWorkflow(t, "gated.json", gatedJSON), "--id", "gated")...).want(t, exitOK)
	r := baton(t, args("cancel", "--node", "after", "gated")...).want(t, exitOK)
	contains(t, "stdout", r.stdout, "node after at body.seq[1] of job gated is idle, not running: left as it is\n")
	r = baton(t, args("cancel", "--node", "gate", "--reason", "no answer", "gated")...).want(t, exitOK)
	// The cancel is saved when the command reads the job back; the
	// worker may have run the rescue by then: v2 or later.
	if !regexp.MustCompile(`^node gate at body\.seq\[0\] of job gated cancelled: failed at v\d+\n$`).MatchString(r.stdout) {
		t.Errorf("cancel --node printed %q", r.stdout)
	}
	eventually(t, 30*time.Second, "the job to succeed", func() (bool, string) {
		r := baton(t, args("status", "gated")...)
		return gatedSucceeded.MatchString(r.stdout), r.stdout + r.stderr
	})
	contains(t, "worker stdout", w.stdout.String(), "rescue#1: rescued\n")
	r = baton(t, args("cancel", "--node", "gate", "gated")...).want(t, exitError)
	contains(t, "stderr", r.stderr, "job gated in ZooKeeper "+srv.ConnString()+" under "+root+" has finished (succeeded): no node to cancel")
	r = baton(t, args("cancel", "--node", "gate", "nosuch")...).want(t, exitError)
	contains(t, "stderr", r.stderr, "job nosuch not found in ZooKeeper")
}

// TestKafkaCancelNode: baton cancel --node --kafka goes to the restarter
// that owns the job, which cancels the running wait; the worker runs the
// rescue and the job succeeds.
func TestKafkaCancelNode(t *testing.T) {
	addr := kafkaBroker(t)
	args := func(a ...string) []string { return append(a, "--kafka", addr, "--prefix", "cn") }
	w := startInProcess(t, "baton worker w1: serving ", args("worker", "--name", "w1")...)
	baton(t, args("submit", writeWorkflow(t, "gated.json", gatedJSON), "--id", "gated")...).want(t, exitOK)
	eventually(t, 20*time.Second, "the wait running", func() (bool, string) {
		r := baton(t, args("status", "gated")...)
		return strings.Contains(r.stdout, "wait body.seq[0] @gate: running"), r.stdout + r.stderr
	})
	r := baton(t, args("cancel", "--node", "gate", "gated")...).want(t, exitOK)
	// Sent to the restarter, or applied already when read back.
	if !regexp.MustCompile(`^(cancel of node gate at body\.seq\[0\] of job gated sent; |node gate at body\.seq\[0\] of job gated cancelled: failed at v\d+\n$)`).MatchString(r.stdout) {
		t.Errorf("cancel --node printed %q", r.stdout)
	}
	eventually(t, 30*time.Second, "the job to succeed", func() (bool, string) {
		r := baton(t, args("status", "gated")...)
		return gatedSucceeded.MatchString(r.stdout), r.stdout + r.stderr
	})
	eventually(t, 10*time.Second, "the worker to log", func() (bool, string) {
		return strings.Contains(w.out.String(), "rescue#1: rescued\n"), w.out.String()
	})
	r = baton(t, args("cancel", "--node", "gate", "gated")...).want(t, exitError)
	contains(t, "stderr", r.stderr, "has finished (succeeded): no node to cancel")
}

// TestServerCancelNode: baton cancel --node --server goes through 'baton
// serve', whose runner cancels the running wait and runs the rescue; an
// idle node is left as it is; a node the job lacks and the finished job
// are refused with exit status 2.
func TestServerCancelNode(t *testing.T) {
	p := startInProcess(t, "baton serve: http", "serve", "--store", filepath.Join(t.TempDir(), "b.db"), "--listen", "127.0.0.1:0")
	url := serveURL(t, p)
	baton(t, "submit", writeWorkflow(t, "gated.json", gatedJSON), "--server", url, "--id", "gated").want(t, exitOK)
	eventually(t, 20*time.Second, "the wait running", func() (bool, string) {
		r := baton(t, "status", "--server", url, "gated")
		return strings.Contains(r.stdout, "wait body.seq[0] @gate: running"), r.stdout + r.stderr
	})
	r := baton(t, "cancel", "--node", "after", "--server", url, "gated").want(t, exitOK)
	contains(t, "stdout", r.stdout, "node after at body.seq[1] of job gated is idle, not running: left as it is\n")
	r = baton(t, "cancel", "--node", "nosuch", "--server", url, "gated").want(t, exitError)
	contains(t, "stderr", r.stderr, "job gated in "+url+" has no node called nosuch")
	r = baton(t, "cancel", "--node", "gate", "--reason", "no answer", "--server", url, "gated").want(t, exitOK)
	// The server's runner applies the cancel after it answers, or before.
	if !regexp.MustCompile(`^(cancel of node gate at body\.seq\[0\] of job gated sent; |node gate at body\.seq\[0\] of job gated cancelled: failed at v\d+\n$)`).MatchString(r.stdout) {
		t.Errorf("cancel --node through the server printed %q", r.stdout)
	}
	eventually(t, 20*time.Second, "the job to succeed", func() (bool, string) {
		r := baton(t, "status", "--server", url, "gated")
		return gatedSucceeded.MatchString(r.stdout), r.stdout + r.stderr
	})
	r = baton(t, "inspect", "--server", url, "gated").want(t, exitOK)
	contains(t, "inspect", r.stdout, "wait body.seq[0] @gate: failed", `act log "rescued" rescue: succeeded`)
	r = baton(t, "cancel", "--node", "gate", "--server", url, "gated").want(t, exitError)
	contains(t, "stderr", r.stderr, "has finished (succeeded): no node to cancel")
	if code := p.stop(t); code != exitOK {
		t.Errorf("serve exited %d:\n%s", code, p.errOut.String())
	}
}

// TestZKCancelNodeStopping: on --zk, the cancel of a node that is
// stopping already (cancelled once, its finally block entered before the
// cancel still to run: no worker runs it yet) is ignored, and the line
// says so as it does on a store file, instead of claiming a second
// cancel.
func TestZKCancelNodeStopping(t *testing.T) {
	srv := zktest.Start(t)
	root := srv.Path("cancelstopping")
	args := func(a ...string) []string { return append(a, "--zk", srv.ConnString(), "--root", root) }
	wf := `{"version":3,"root":{"seq":[{"try":{"wait":"go"},"finally":{"act":"log","payload":"cleanup"},"name":"slow"},{"act":"log","payload":"after"}]}}`
	baton(t, args("submit", writeWorkflow(t, "slow.json", wf), "--id", "slow")...).want(t, exitOK)
	baton(t, args("signal", "slow", "go", "--id", "g1")...).want(t, exitOK) // the finally block starts
	r := baton(t, args("cancel", "--node", "slow", "--reason", "first", "slow")...).want(t, exitOK)
	contains(t, "stdout", r.stdout, "node slow at seq[0] of job slow cancelled at v3; it fails with kind cancelled once what runs under it has settled\n")
	r = baton(t, args("cancel", "--node", "slow", "--reason", "second", "slow")...).want(t, exitOK)
	if want := "node slow at seq[0] of job slow left as it is: node slow is running, or stopped already\n"; r.stdout != want {
		t.Errorf("the second cancel printed %q, want %q", r.stdout, want)
	}
	r = baton(t, args("history", "slow")...).want(t, exitOK)
	contains(t, "history", r.stdout, "job slow: 3 versions", "@cancel/slow: node slow at seq[0] cancelled: first\n")
}
