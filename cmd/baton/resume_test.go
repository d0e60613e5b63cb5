package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/store/bolt"
)

// storeJobs creates jobs with job.New and store.Create only, as a process
// that crashed right after submitting them would leave them: unfinished,
// their first actions never run.
func storeJobs(t *testing.T, db string, jobs map[job.ID]ast.Node) {
	t.Helper()
	st, err := bolt.Open(db, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for id, root := range jobs {
		tr, err := job.New(id, root)
		j := tr.Job
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Create(context.Background(), j); err != nil {
			t.Fatal(err)
		}
	}
}

func TestResume(t *testing.T) {
	db := filepath.Join(t.TempDir(), "baton.db")
	storeJobs(t, db, map[job.ID]ast.Node{
		"r1": ast.Seq(ast.Act("log", "one"), ast.Act("log", "two")),
		"r2": ast.Par(ast.Act("log", "three"), ast.Act("sleep", "10ms")),
	})
	r := baton(t, "status", "--store", db).want(t, exitOK)
	contains(t, "status", r.stdout, "r1  running  1 ", "r2  running  1 ")

	r = baton(t, "resume", "--store", db).want(t, exitOK)
	contains(t, "resume", r.stdout, "resuming 2 unfinished jobs in "+db+"\n",
		"seq[0]#1: one\n", "seq[1]#1: two\n", "par[0]#1: three\n",
		"job r1 succeeded: 2/2 actions settled, v3", "job r2 succeeded: 2/2 actions settled")

	r = baton(t, "resume", "--store", db).want(t, exitOK)
	contains(t, "resume", r.stdout, "no unfinished jobs in "+db)
}

func TestResumeFailure(t *testing.T) {
	db := filepath.Join(t.TempDir(), "baton.db")
	storeJobs(t, db, map[job.ID]ast.Node{
		"good": ast.Act("log", "fine"),
		"bad":  ast.Seq(ast.Act("fail", "kaput"), ast.Act("log", "never")),
		// An action no handler knows fails; it never runs anything.
		"odd": ast.Act("no.such.action", nil),
	})
	r := baton(t, "resume", "--store", db).want(t, exitFailed)
	contains(t, "resume", r.stdout, "job good succeeded", "job bad failed at seq[0] (fail): kaput",
		`job odd failed at root (no.such.action): no handler registered for action "no.such.action"`)
}

func TestInterruptThenResume(t *testing.T) {
	db := filepath.Join(t.TempDir(), "baton.db")
	file := writeWorkflow(t, "slow.json", `{"version":1,"root":{"seq":[
		{"act":"log","payload":"one"},{"act":"sleep","payload":"300ms"},{"act":"log","payload":"two"}]}}`)
	r := interruptibleBaton(t, "seq[0]#1: one\n", "run", file, "--store", db, "--id", "slow")
	if r.code != exitInterrupted {
		t.Fatalf("exit status %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, exitInterrupted, r.stdout, r.stderr)
	}
	contains(t, "stderr", r.stderr, "interrupted: job slow is saved in "+db+"; finish it with: baton resume --store "+db+"\n")
	if strings.Contains(r.stdout, "two") {
		t.Fatalf("ran on after the interrupt:\n%s", r.stdout)
	}

	r = baton(t, "status", "--store", db).want(t, exitOK)
	contains(t, "status", r.stdout, "slow  running")

	r = baton(t, "resume", "--store", db).want(t, exitOK)
	contains(t, "resume", r.stdout, "seq[2]#1: two\n", "job slow succeeded: 3/3 actions settled")
	if strings.Contains(r.stdout, "one") {
		t.Errorf("resume ran a finished action again:\n%s", r.stdout)
	}
}

func TestRunLeavesOtherJobsAlone(t *testing.T) {
	db := filepath.Join(t.TempDir(), "baton.db")
	storeJobs(t, db, map[job.ID]ast.Node{"other": ast.Act("log", "other")})
	r := baton(t, "run", writeWorkflow(t, "h.json", helloJSON), "--store", db, "--id", "mine").want(t, exitOK)
	if strings.Contains(r.stdout, "other") {
		t.Errorf("baton run ran another job:\n%s", r.stdout)
	}
	r = baton(t, "status", "--store", db).want(t, exitOK)
	contains(t, "status", r.stdout, "other  running")
}
