package main

import (
	"bytes"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/batonwf/baton/internal/zktest"
	"github.com/batonwf/baton/job"
)

// TestZKDrainLeaderKilled: a drain across a leader kill of a 3-node
// ensemble completes (issue 18, Drain). Three 'baton worker' processes
// of capacity 2 run 9 jobs of 3 steps of 3 s; 'baton drain w1 --wait'
// (a process of its own) marks w1 draining while it runs actions; once
// w1 has seen its drain, the ensemble's leader is SIGKILLed (by its PID).
// The drain still completes: w1 finishes what it ran, claims nothing
// later than 1 s after it saw the drain (its own log), deregisters and
// exits 0; 'baton drain --wait' exits 0; every job succeeds and its
// history holds every step once.
func TestZKDrainLeaderKilled(t *testing.T) {
	ens := zktest.StartEnsemble(t, 3) // skips under -short
	root := ens.Path("drain")
	zkArgs := func(a ...string) []string { return append(a, "--zk", ens.ConnString(), "--root", root) }
	workers := map[string]*proc{}
	for _, name := range []string{"w1", "w2", "w3"} {
		workers[name] = startWorkerProc(t, name, zkArgs("worker", "--name", name, "--capacity", "2", "--verbose"))
	}
	w1 := workers["w1"]

	wf := writeWorkflow(t, "steps.json", `{"version":1,"root":{"seq":[
		{"act":"sleep","payload":"3s"},{"act":"sleep","payload":"3s"},{"act":"sleep","payload":"3s"}]}}`)
	var ids []job.ID
	for i := range 9 {
		id := job.ID(fmt.Sprintf("j%d", i))
		// In the test process: no server is killed yet.
		baton(t, zkArgs("submit", wf, "--id", string(id))...).want(t, exitOK)
		ids = append(ids, id)
	}
	runningNow := func() int {
		out := w1.stderr.String()
		return len(linesWith(out, `msg="action started"`)) - len(linesWith(out, `msg="action succeeded"`)) - len(linesWith(out, `msg="action failed"`))
	}
	eventually(t, zktest.Patience(t), "w1 running an action", func() (bool, string) {
		return runningNow() >= 1, w1.stderr.String()
	})

	// The drain, waiting, in a process of its own: its client lives
	// through the election too.
	drain := exec.Command(batonBinary(t), zkArgs("drain", "w1", "--wait")...)
	var drainOut, drainErr bytes.Buffer
	drain.Stdout, drain.Stderr = &drainOut, &drainErr
	drain.SysProcAttr = sysProcAttr()
	if err := drain.Start(); err != nil {
		t.Fatal(err)
	}
	drained := make(chan struct{})
	var drainRan error
	go func() {
		drainRan = drain.Wait()
		close(drained)
	}()
	t.Cleanup(func() {
		select {
		case <-drained:
		default:
			_ = drain.Process.Kill() // its own PID, not reaped before Wait returns
			<-drained
		}
	})
	eventually(t, zktest.Patience(t), "w1 seeing its drain", func() (bool, string) {
		return len(linesWith(w1.stderr.String(), `msg="draining: claiming nothing new`)) == 1, w1.stderr.String()
	})
	select {
	case <-w1.done:
		t.Fatalf("w1 finished its drain before the leader was killed: nothing proved\n%s", w1.stderr.String())
	default:
	}
	running := runningNow()
	leader := ens.Leader()
	if leader < 0 {
		t.Fatal("no leader to kill")
	}
	pid := ens.Node(leader).PID()
	ens.Node(leader).Kill()
	killed := time.Now()
	t.Logf("w1 draining with %d actions running; leader node %d (pid %d) SIGKILLed", running, leader+1, pid)
	next, err := ens.WaitQuorum(zktest.Patience(t))
	if err != nil {
		t.Fatal(err)
	}

	select {
	case <-drained:
		if err := drainRan; err != nil {
			t.Fatalf("baton drain w1 --wait: %v\nstdout:\n%s\nstderr:\n%s", err, drainOut.String(), drainErr.String())
		}
	case <-time.After(zktest.Patience(t)):
		t.Fatalf("baton drain w1 --wait did not return within %v of the leader kill\nstdout:\n%s\nstderr:\n%s\nw1:\n%s",
			zktest.Patience(t), drainOut.String(), drainErr.String(), w1.stderr.String())
	}
	contains(t, "drain stdout", drainOut.String(), "worker w1 is draining", "worker w1 drained: deregistered\n")
	select {
	case <-w1.done:
	case <-time.After(zktest.Patience(t)):
		t.Fatalf("w1 did not exit after it deregistered\n%s", w1.stderr.String())
	}
	if code := w1.stop(t); code != exitOK {
		t.Fatalf("drained w1 exit status %d\n%s", code, w1.stderr.String())
	}
	exited := time.Now()
	out := w1.stderr.String()
	contains(t, "w1 stderr", out, "baton worker w1: drained: ", " finished, 0 pins released; deregistered\n") // 1 action, 2 actions
	drainAt := logTime(t, linesWith(out, `msg="draining: claiming nothing new`)[0])
	for _, l := range linesWith(out, `msg="action claimed"`) {
		if at := logTime(t, l); at.After(drainAt.Add(time.Second)) {
			t.Errorf("w1 claimed at %v, more than 1s after it saw its drain at %v: %s", at, drainAt, l)
		}
	}
	// Every run w1 started ended (a drain never stops a running action).
	runsOf(t, "w1", w1, time.Time{})
	if strings.Contains(out, "handed back") {
		t.Errorf("w1 handed actions back: a drain lets them finish\n%s", out)
	}

	// Read in the test process once the ensemble has its new leader, from
	// the nodes that run (a client here must not reconnect under -race).
	var live []string
	for i := range ens.Len() {
		if i != leader {
			live = append(live, ens.Node(i).Addr())
		}
	}
	st := openStore(t, live, root)
	finals := waitSettled(t, st, ids)
	byW1 := 0
	for _, id := range ids {
		j := finals[id]
		if j.Status() != job.StatusSucceeded {
			t.Errorf("job %s ended %s:\n%s", id, j.Status(), job.Describe(j))
			continue
		}
		for _, r := range stepsOnce(t, st, j) {
			if r.Worker == "w1" {
				byW1++
			}
		}
	}
	t.Logf("leader killed %v after w1 saw its drain; new leader node %d; w1 exited %v after the kill, %d results of w1 applied; all %d jobs succeeded",
		killed.Sub(drainAt).Round(time.Millisecond), next+1, exited.Sub(killed).Round(time.Millisecond), byW1, len(ids))
}
