package main

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestKafkaPlace: two worker processes with --capacity, --limit and
// --claim-lease; status lists them; drain and undrain of an unknown
// name exit 2 listing the known ones; a drain under load with --wait
// exits 0 once the worker has left, the drained process exits 0 by
// itself, status no longer lists it, and every job succeeds. Bad
// placement flags are usage errors.
func TestKafkaPlace(t *testing.T) {
	addr := kafkaBroker(t)
	const p = "place"
	args := func(a ...string) []string { return append(a, "--kafka", addr, "--prefix", p) }

	for _, bad := range [][]string{
		{"--capacity", "0"},
		{"--capacity", "x"},
		{"--limit", "nosuch=1"},
		{"--limit", "sleep=9", "--capacity", "2"},
		{"--limit", "sleep"},
		{"--claim-lease", "-1s"},
		{"--capacity", "3", "--workers", "2"},
	} {
		r := baton(t, args(append([]string{"worker", "--name", "x"}, bad...)...)...).want(t, exitError)
		if !strings.Contains(r.stderr, "usage") && !strings.Contains(r.stderr, "invalid") {
			t.Errorf("worker %v: stderr does not say why:\n%s", bad, r.stderr)
		}
	}

	w1 := startWorkerProc(t, "w1", args("worker", "--name", "w1", "--capacity", "2", "--limit", "sleep=2", "--claim-lease", "30s"))
	w2 := startWorkerProc(t, "w2", args("worker", "--name", "w2", "--capacity", "3"))
	contains(t, "w1 stderr", w1.stderr.String(), "(2 at once)")
	eventually(t, 30*time.Second, "status lists both workers", func() (bool, string) {
		r := baton(t, args("status")...)
		ok := strings.Contains(r.stdout, "WORKER") && strings.Contains(r.stdout, "w1") && strings.Contains(r.stdout, "w2")
		return ok && r.code == exitOK, r.stdout + r.stderr
	})
	r := baton(t, args("status")...).want(t, exitOK)
	contains(t, "status", r.stdout, "WORKER  STATE      CAPACITY  RUNNING  QUARANTINED\n")
	for _, line := range []string{"w1      available  2", "w2      available  3"} {
		contains(t, "status", r.stdout, line)
	}

	r = baton(t, args("drain", "nosuch")...).want(t, exitError)
	contains(t, "drain stderr", r.stderr, `no worker "nosuch" in Kafka `+addr+` under prefix `+p+` (known: w1, w2)`)
	r = baton(t, args("undrain", "nosuch")...).want(t, exitError)
	contains(t, "undrain stderr", r.stderr, "(known: w1, w2)")
	baton(t, args("drain", "--timeout", "1s", "w2")...).want(t, exitError)

	// Under load: 12 jobs of four 300ms sleeps in a par.
	wf := writeWorkflow(t, "load.json", `{"version":1,"root":{"par":[
		{"act":"sleep","payload":"300ms"},{"act":"sleep","payload":"300ms"},
		{"act":"sleep","payload":"300ms"},{"act":"sleep","payload":"300ms"}]}}`)
	var ids []string
	for i := range 12 {
		id := fmt.Sprintf("load-%02d", i)
		baton(t, args("submit", wf, "--id", id)...).want(t, exitOK)
		ids = append(ids, id)
	}
	r = baton(t, args("drain", "--wait", "--timeout", "60s", "w2")...).want(t, exitOK)
	contains(t, "drain stdout", r.stdout, "worker w2 is draining", "worker w2 drained and left\n")
	select {
	case <-w2.done:
		if code := w2.stop(t); code != exitOK {
			t.Errorf("the drained worker exited %d; want 0\n%s", code, w2.stderr.String())
		}
		contains(t, "w2 stderr", w2.stderr.String(), "baton worker w2: drained: it finished what it ran and left\n")
	case <-time.After(30 * time.Second):
		t.Fatalf("the drained worker did not exit:\n%s", w2.stderr.String())
	}
	for _, id := range ids {
		eventually(t, 60*time.Second, "job "+id+" succeeds", func() (bool, string) {
			r := baton(t, args("status", id)...)
			return strings.Contains(r.stdout, "succeeded"), r.stdout + r.stderr
		})
	}
	r = baton(t, args("status")...).want(t, exitOK)
	if strings.Contains(r.stdout, "w2 ") {
		t.Errorf("status still lists the drained worker:\n%s", r.stdout)
	}
	r = baton(t, args("undrain", "w1")...).want(t, exitOK)
	contains(t, "undrain stdout", r.stdout, "worker w1 is available")
}
