package main

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/batonwf/baton/internal/zktest"
)

// logTime reads the time of a worker's log line (slog's text format).
func logTime(t *testing.T, line string) time.Time {
	t.Helper()
	rest, ok := strings.CutPrefix(line, "time=")
	if !ok {
		t.Fatalf("log line without a time: %s", line)
	}
	at, err := time.Parse(time.RFC3339Nano, strings.Fields(rest)[0])
	if err != nil {
		t.Fatalf("log line %q: %v", line, err)
	}
	return at
}

// linesWith returns the lines of s that hold sub.
func linesWith(s, sub string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return out
}

// TestZKDrain: worker processes under load. A drained worker claims
// nothing later than 1 s after it saw the drain (its own log, claims at
// debug level), finishes what it ran, deregisters and exits 0 by itself,
// printing what it finished; 'baton drain --wait' exits 0 then; every
// job succeeds. Then the refusals, undrain, a down worker, a garbled
// registration, keys and the settings.
func TestZKDrain(t *testing.T) {
	srv := zktest.Start(t)
	root := srv.Path("drain")
	args := func(a ...string) []string { return append(a, "--zk", srv.ConnString(), "--root", root) }

	w1 := startWorker(t, srv, root, "w1", "--capacity", "2", "--verbose")
	w2 := startWorker(t, srv, root, "w2", "--capacity", "2")

	r := baton(t, args("placement")...).want(t, exitOK)
	contains(t, "stdout", r.stdout, "strategy: spread\n", "wait: 2s")
	r = baton(t, args("placement", "--strategy", "fill")...).want(t, exitError)
	contains(t, "stderr", r.stderr, `unknown strategy "fill" (valid: spread, pack)`)
	r = baton(t, args("placement", "--strategy", "pack", "--wait", "1s", "--quarantine-after", "3")...).want(t, exitOK)
	contains(t, "stdout", r.stdout, "strategy: pack\n", "wait: 1s", "after 3 failures")
	r = baton(t, args("drain", "nosuch")...).want(t, exitError)
	contains(t, "stderr", r.stderr, `no worker "nosuch" in ZooKeeper`, "(registered: w1, w2)")

	// Load: 16 jobs of 4 steps of 300ms each, about 5s of work for the 4
	// slots of both workers.
	wf := writeWorkflow(t, "steps.json", `{"version":1,"root":{"seq":[
		{"act":"sleep","payload":"300ms"},{"act":"sleep","payload":"300ms"},{"act":"sleep","payload":"300ms"},{"act":"sleep","payload":"300ms"}]}}`)
	const jobs = 16
	for i := range jobs {
		baton(t, args("submit", wf, "--id", fmt.Sprintf("j%d", i))...).want(t, exitOK)
	}
	eventually(t, 20*time.Second, "w1 running actions", func() (bool, string) {
		return len(linesWith(w1.stderr.String(), `msg="action claimed"`)) >= 2, w1.stderr.String()
	})
	r = baton(t, args("drain", "w1", "--wait")...).want(t, exitOK)
	contains(t, "stdout", r.stdout, "worker w1 is draining", "worker w1 drained: deregistered\n")
	select {
	case <-w1.done:
	case <-time.After(zktest.Patience(t)):
		t.Fatalf("w1 did not exit after it deregistered\n%s", w1.stderr.String())
	}
	if code := w1.stop(t); code != exitOK {
		t.Fatalf("drained w1 exit status %d\n%s", code, w1.stderr.String())
	}
	out := w1.stderr.String()
	// One action or several, as the drain met them ("1 action finished"
	// failed the check of " actions finished" under load).
	if !regexp.MustCompile(`baton worker w1: drained: \d+ actions? finished, 0 pins released; deregistered\n`).MatchString(out) {
		t.Errorf("w1 stderr does not say it drained:\n%s", out)
	}
	seen := linesWith(out, `msg="draining: claiming nothing new`)
	if len(seen) != 1 {
		t.Fatalf("w1 logged its drain %d times:\n%s", len(seen), out)
	}
	drainAt := logTime(t, seen[0])
	for _, l := range linesWith(out, `msg="action claimed"`) {
		if at := logTime(t, l); at.After(drainAt.Add(time.Second)) {
			t.Errorf("w1 claimed at %v, more than 1s after it saw its drain at %v: %s", at, drainAt, l)
		}
	}
	if strings.Contains(out, "handed back") {
		t.Errorf("w1 handed actions back: a drain lets them finish\n%s", out)
	}
	eventually(t, 60*time.Second, "every job succeeded", func() (bool, string) {
		r := baton(t, args("status")...)
		return strings.Count(r.stdout, "succeeded") == jobs, r.stdout
	})
	r = baton(t, args("status")...).want(t, exitOK)
	if strings.Contains(r.stdout, "w1 ") {
		t.Errorf("status still lists the drained w1:\n%s", r.stdout)
	}
	contains(t, "stdout", r.stdout, "placement: strategy pack, wait 1s")

	// w2 is the only one left: no drain without --force. Drained while it
	// runs an action, then undrained, it stays.
	r = baton(t, args("drain", "w2")...).want(t, exitError)
	contains(t, "stderr", r.stderr, "worker w2 is the only available worker for fail, http.get, log, sleep, value", "--force")
	long := writeWorkflow(t, "long.json", `{"version":1,"root":{"act":"sleep","payload":"2s"}}`)
	baton(t, args("submit", long, "--id", "long")...).want(t, exitOK)
	eventually(t, 20*time.Second, "w2 running the long action", func() (bool, string) {
		r := baton(t, args("status")...)
		// w2's RUNNING column, not the queue's list, which names the
		// entry while it still waits.
		return regexp.MustCompile(`(?m)^w2 .* long/root#1$`).MatchString(r.stdout), r.stdout
	})
	r = baton(t, args("drain", "w2", "--force")...).want(t, exitOK)
	contains(t, "stdout", r.stdout, "worker w2 is draining")
	r = baton(t, args("undrain", "w2")...).want(t, exitOK)
	contains(t, "stdout", r.stdout, "worker w2 is available\n")
	r = baton(t, args("submit", long, "--id", "after-undrain", "--wait")...).want(t, exitOK)
	select {
	case <-w2.done:
		t.Fatalf("the undrained w2 exited\n%s", w2.stderr.String())
	default:
	}
	r = baton(t, args("keys", "dataset-42")...).want(t, exitOK)
	contains(t, "stdout", r.stdout, "KEY         HOLDER  PINNED  NEXT\ndataset-42  w2      no      -\n")
	r = baton(t, args("keys")...).want(t, exitOK)
	contains(t, "stdout", r.stdout, "no pins in ZooKeeper")
	r = baton(t, args("keys", "--worker", "w9")...).want(t, exitError)
	contains(t, "stderr", r.stderr, `no worker "w9"`, "registered: w2")

	// Stopped, w2 is down: it keeps its registration; drained, it goes.
	if code := w2.stop(t); code != exitOK {
		t.Fatalf("w2 exit status %d", code)
	}
	r = baton(t, args("status")...).want(t, exitOK)
	contains(t, "stdout", r.stdout, "w2      down (grace ")

	// A registration garbled by hand is listed unreadable; drained, it goes.
	zc := zktest.Connect(t, srv.Addrs(), 5*time.Second)
	if _, err := zc.Create(root+"/workers/w9", []byte(`{"state":`), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	r = baton(t, args("status")...).want(t, exitOK)
	contains(t, "stdout", r.stdout, "w9      unreadable")
	for _, name := range []string{"w2", "w9"} {
		r = baton(t, args("drain", name)...).want(t, exitOK)
		contains(t, "stdout", r.stdout, "worker "+name+" was down: removed, 0 pins released\n")
	}
	r = baton(t, args("status")...).want(t, exitOK)
	contains(t, "stdout", r.stdout, "no workers in ZooKeeper")
	r = baton(t, args("undrain", "w2")...).want(t, exitError)
	contains(t, "stderr", r.stderr, `no worker "w2" in ZooKeeper`, "none is registered")
}

// TestWorkerPlacementFlags: bad --capacity, --limit and --name are usage
// errors naming the flag, before anything connects (or, for a limit of an
// action the worker has no handler for, once the runner is made).
func TestWorkerPlacementFlags(t *testing.T) {
	srv := zktest.Start(t)
	z := []string{"worker", "--zk", srv.ConnString(), "--root", srv.Path("flags")}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--capacity", "0"}, "--capacity must be at least 1, got 0"},
		{[]string{"--capacity", "-2"}, "--capacity must be at least 1, got -2"},
		{[]string{"--capacity", "many"}, `invalid value "many" for flag -capacity`},
		{[]string{"--workers", "0"}, "--workers must be at least 1, got 0"},
		{[]string{"--limit", "sleep"}, `want ACTION=N, got "sleep"`},
		{[]string{"--limit", "sleep=0"}, "sleep: want a number of actions of at least 1"},
		{[]string{"--limit", "sleep=1", "--limit", "sleep=2"}, "sleep given twice"},
		{[]string{"--limit", "frob=1"}, `no handler for action "frob" here (it has: fail, http.get, log, sleep, value)`},
		{[]string{"--capacity", "2", "--limit", "sleep=3"}, "limit sleep=3: want 1 to the capacity (2)"},
		{[]string{"--name", ""}, "--name must not be empty"},
		{[]string{"--name", "a/b"}, `"a/b"`},
		{[]string{"--grace", "-1s"}, "--grace must not be negative"},
	} {
		r := baton(t, append(z, tc.args...)...).want(t, exitError)
		contains(t, "stderr "+strings.Join(tc.args, " "), r.stderr, tc.want)
	}
}
