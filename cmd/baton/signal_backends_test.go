package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/batonwf/baton/internal/zktest"
)

// jobSucceeded matches the first line of 'baton status approve' once the
// job (not only its wait) has succeeded.
var jobSucceeded = regexp.MustCompile(`(?m)^job approve v\d+: succeeded`)

// approveJSON is a job whose wait takes the signal approval, then logs.
const approveJSON = `{"version":3,"root":{"seq":[{"wait":"approval","name":"answer"},{"act":"log","payload":"approved"}]}}`

// TestZKSignal: baton signal --zk reaches a wait that a worker's job
// runs; the worker runs what comes after it; a signal to the finished
// job is refused with exit status 2.
func TestZKSignal(t *testing.T) {
	srv := zktest.Start(t)
	root := srv.Path("signal")
	args := func(a ...string) []string { return append(a, "--zk", srv.ConnString(), "--root", root) }
	w := startWorker(t, srv, root, "w1")
	baton(t, args("submit", writeWorkflow(t, "approve.json", approveJSON), "--id", "approve")...).want(t, exitOK)
	r := baton(t, args("signal", "approve", "aproval", "--id", "a0")...).want(t, exitError)
	contains(t, "stderr", r.stderr, "baton: signal job approve in ZooKeeper "+srv.ConnString()+" under "+root+": no wait of the job takes signal aproval (its waits take approval)\n")
	r = baton(t, args("signal", "approve", "approval", "--id", "a1", "--data", `"yes"`)...).want(t, exitOK)
	// The worker may have run the action after the wait by the time the
	// command reads the job back: v2 or later.
	if !regexp.MustCompile(`^signal approval \(id a1\) taken by the wait at seq\[0\]: job approve at v\d+\n$`).MatchString(r.stdout) {
		t.Errorf("signal printed %q", r.stdout)
	}
	eventually(t, 30*time.Second, "the job to succeed", func() (bool, string) {
		r := baton(t, args("status", "approve")...)
		return jobSucceeded.MatchString(r.stdout), r.stdout + r.stderr
	})
	contains(t, "worker stdout", w.stdout.String(), "seq[1]#1: approved\n")
	r = baton(t, args("signal", "approve", "approval", "--id", "a2")...).want(t, exitError)
	contains(t, "stderr", r.stderr, "job approve in ZooKeeper "+srv.ConnString()+" under "+root+" has finished (succeeded): no wait takes a signal")
	r = baton(t, args("signal", "nosuch", "approval")...).want(t, exitError)
	contains(t, "stderr", r.stderr, "job nosuch not found in ZooKeeper")
}

// TestKafkaSignal: baton signal --kafka goes to the restarter that owns
// the job, whose wait takes it; the worker runs what comes after.
func TestKafkaSignal(t *testing.T) {
	addr := kafkaBroker(t)
	args := func(a ...string) []string { return append(a, "--kafka", addr, "--prefix", "sg") }
	w := startInProcess(t, "baton worker w1: serving ", args("worker", "--name", "w1")...)
	baton(t, args("submit", writeWorkflow(t, "approve.json", approveJSON), "--id", "approve")...).want(t, exitOK)
	r := baton(t, args("signal", "approve", "aproval", "--id", "a0")...).want(t, exitError)
	contains(t, "stderr", r.stderr, "baton: signal job approve in Kafka ", ": no wait of the job takes signal aproval (its waits take approval)\n")
	r = baton(t, args("signal", "approve", "approval", "--id", "a1", "--data", `{"ok":true}`)...).want(t, exitOK)
	contains(t, "stdout", r.stdout, "signal approval (id a1) ")
	eventually(t, 30*time.Second, "the job to succeed", func() (bool, string) {
		r := baton(t, args("status", "approve")...)
		return jobSucceeded.MatchString(r.stdout), r.stdout + r.stderr
	})
	eventually(t, 10*time.Second, "the worker to log", func() (bool, string) {
		return strings.Contains(w.out.String(), "seq[1]#1: approved\n"), w.out.String()
	})
	r = baton(t, args("signal", "approve", "approval", "--id", "a2")...).want(t, exitError)
	contains(t, "stderr", r.stderr, "has finished (succeeded): no wait takes a signal")
}

// TestServerSignal: baton signal --server goes through 'baton serve',
// whose runner applies it and runs what comes after the wait; a bad
// payload is refused before anything is sent, a finished job after.
func TestServerSignal(t *testing.T) {
	p := startInProcess(t, "baton serve: http", "serve", "--store", filepath.Join(t.TempDir(), "b.db"), "--listen", "127.0.0.1:0")
	url := serveURL(t, p)
	baton(t, "submit", writeWorkflow(t, "approve.json", approveJSON), "--server", url, "--id", "approve").want(t, exitOK)
	eventually(t, 20*time.Second, "the wait running", func() (bool, string) {
		r := baton(t, "status", "--server", url, "approve")
		return strings.Contains(r.stdout, "wait seq[0] @answer: running"), r.stdout + r.stderr
	})
	// A misspelt name: no wait of the job takes it, and the error says
	// which names its waits take, naming the job and the server once.
	r := baton(t, "signal", "approve", "aproval", "--server", url, "--id", "a0").want(t, exitError)
	if want := "baton: signal: job approve in " + url + ": no wait of the job takes signal aproval (its waits take approval)\n"; r.stderr != want {
		t.Errorf("a misspelt signal through the server: stderr %q, want %q", r.stderr, want)
	}
	r = baton(t, "signal", "approve", "approval", "--server", url, "--id", "a1", "--data", `"yes"`).want(t, exitOK)
	// The runner may have run the action after the wait by the time the
	// server reads the job back: v2 or later.
	if !regexp.MustCompile(`^signal approval \(id a1\) taken by the wait at seq\[0\]: job approve at v\d+\n$`).MatchString(r.stdout) {
		t.Errorf("signal through the server printed %q", r.stdout)
	}
	eventually(t, 20*time.Second, "the job to succeed", func() (bool, string) {
		r := baton(t, "status", "--server", url, "approve")
		return jobSucceeded.MatchString(r.stdout), r.stdout + r.stderr
	})
	r = baton(t, "signal", "approve", "approval", "--server", url, "--data", "{").want(t, exitError)
	contains(t, "stderr", r.stderr, "baton: signal: --data: the value is not JSON")
	r = baton(t, "signal", "approve", "approval", "--server", url).want(t, exitError)
	contains(t, "stderr", r.stderr, "has finished (succeeded): no wait takes a signal")
	if code := p.stop(t); code != exitOK {
		t.Errorf("serve exited %d:\n%s", code, p.errOut.String())
	}
}
