package main

import (
	"strings"
	"testing"
	"time"
)

// TestServeKafkaNoRestarter: 'baton serve --kafka' without --workers,
// while no restarter runs: a submit or a cancel through it is refused at
// once (503 store_unavailable, exit 3, naming the missing restarter) and
// sends nothing. The submit hung, silently, until a restarter came; the
// job was then stored and run, while the CLI, whose answer the server
// could no longer write, exited 3 with "EOF".
func TestServeKafkaNoRestarter(t *testing.T) {
	addr := kafkaBroker(t)
	p := startInProcess(t, "baton serve: http", "serve", "--listen", "127.0.0.1:0", "--kafka", addr, "--prefix", "lonely", "--write-timeout", "2s")
	url := serveURL(t, p)
	// It says so when it starts, instead of "the job waits in topic".
	eventually(t, 20*time.Second, "serve's warning", func() (bool, string) {
		return strings.Contains(p.errOut.String(), "baton serve: submits and cancels are refused (503) until a restarter runs: no restarter runs in Kafka "+addr), p.errOut.String()
	})
	if strings.Contains(p.errOut.String(), "waits in topic") {
		t.Errorf("serve says a job waits for a restarter:\n%s", p.errOut.String())
	}
	hello := writeWorkflow(t, "h.json", helloJSON)
	for _, args := range [][]string{{"submit", "--id", "h", hello}, {"submit", "--id", "h", "--wait", hello}} {
		done := make(chan result, 1)
		go func() { done <- baton(t, append(args, "--server", url)...) }()
		select {
		case r := <-done:
			r.want(t, exitStore)
			contains(t, "stderr", r.stderr, "no restarter runs in Kafka "+addr+" under prefix lonely", "nothing was sent")
		case <-time.After(30 * time.Second):
			t.Fatalf("baton %s: no answer within 30s", strings.Join(args, " "))
		}
	}
	// A restarter now: nothing was left in the topic for it to store.
	w := startInProcess(t, "baton worker", "worker", "--kafka", addr, "--prefix", "lonely")
	eventually(t, 20*time.Second, "the restarter serving", func() (bool, string) {
		r := baton(t, "status", "--kafka", addr, "--prefix", "lonely")
		return strings.Contains(r.stdout, "restarters: 1 in group"), r.stdout + r.stderr
	})
	r := baton(t, "submit", "--server", url, "--id", "later", "--wait", "--quiet", hello).want(t, exitOK)
	contains(t, "stdout", r.stdout, "job later succeeded")
	r = baton(t, "status", "--server", url).want(t, exitOK)
	if strings.Contains(r.stdout, "h ") {
		t.Errorf("the refused job was stored:\n%s", r.stdout)
	}
	// A delete through the server goes to the restarter that owns the
	// job: it failed, exit 3, "this process does not own the job's
	// partition", whatever ran.
	baton(t, "submit", "--server", url, "--id", "gone", "--wait", "--quiet", hello).want(t, exitOK)
	r = baton(t, "delete", "--server", url, "gone").want(t, exitOK)
	contains(t, "stdout", r.stdout, "deleted gone (job, succeeded at v")
	baton(t, "status", "--server", url, "gone").want(t, exitError)
	w.stop(t)
	// Without a restarter again: a delete and a cancel answer at once.
	eventually(t, 30*time.Second, "no restarter", func() (bool, string) {
		r := baton(t, "status", "--kafka", addr, "--prefix", "lonely")
		return strings.Contains(r.stdout, "no restarter runs"), r.stdout + r.stderr
	})
	done := make(chan result, 1)
	go func() { done <- baton(t, "delete", "--server", url, "later") }()
	select {
	case r := <-done:
		r.want(t, exitStore)
		contains(t, "stderr", r.stderr, "no restarter runs in Kafka "+addr+" under prefix lonely", "nothing was sent")
	case <-time.After(30 * time.Second):
		t.Errorf("delete: no answer within 30s")
	}
	baton(t, "status", "--server", url, "later").want(t, exitOK)
}
