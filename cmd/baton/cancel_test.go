package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/store/bolt"
)

// TestCancel: baton cancel ends a job with nothing left to run at once;
// one inside a try with a finally waits for resume, which runs the
// finally and ends it cancelled with the reason. Cancelling again says
// so; a finished job and a missing one are errors.
func TestCancel(t *testing.T) {
	db := filepath.Join(t.TempDir(), "baton.db")
	storeJobs(t, db, map[job.ID]ast.Node{
		"plain":   ast.Seq(ast.Act("log", "a"), ast.Act("log", "b")),
		"cleanup": ast.Try(ast.Act("log", "body"), ast.Finally(ast.Act("log", "cleanup"))),
	})
	before := time.Now()
	r := baton(t, "cancel", "plain", "--store", db).want(t, exitOK)
	contains(t, "stdout", r.stdout, "job plain cancelled at v2\n")
	r = baton(t, "cancel", "--reason", "customer asked", "cleanup", "--store", db).want(t, exitOK)
	contains(t, "stdout", r.stdout, "job cleanup cancelled at v2; its finally blocks have still to run: baton resume --store "+db+" cleanup\n")

	r = baton(t, "resume", "cleanup", "--store", db)
	contains(t, "stdout", r.stdout, "finally#1: cleanup\n", "job cleanup cancelled (customer asked): 1/2 actions settled, v3")
	if r.code != exitFailed {
		t.Errorf("resume of a cancelled job: exit %d, want %d (it did not succeed)\n%s%s", r.code, exitFailed, r.stdout, r.stderr)
	}
	st, err := bolt.Open(db, nil)
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[job.ID]string{"plain": "cancelled with baton cancel", "cleanup": "customer asked"} {
		j, err := st.Load(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if why, ok := j.Cancelled(); j.Status() != job.StatusCancelled || !ok || why != want {
			t.Errorf("job %s: %s, cancelled %q %v; want cancelled %q\n%s", id, j.Status(), why, ok, want, job.Describe(j))
		}
		// The cancel carries its time, as a runner's does.
		if at, ok := j.CancelTime(); !ok || at.Before(before.Add(-time.Second)) || at.After(time.Now()) {
			t.Errorf("job %s: cancel time %v, %v; want one from %v on", id, at, ok, before)
		}
		if id == "plain" {
			if settled, _ := j.Progress(); settled != 0 {
				t.Errorf("the cancelled job ran %d actions", settled)
			}
		}
	}
	st.Close()

	r = baton(t, "cancel", "cleanup", "--store", db).want(t, exitOK)
	contains(t, "stdout", r.stdout, "job cleanup was cancelled already (customer asked): cancelled\n")

	storeJobs(t, db, map[job.ID]ast.Node{"done": ast.Act("log", "x")})
	baton(t, "resume", "done", "--store", db).want(t, exitOK)
	r = baton(t, "cancel", "done", "nosuch", "--store", db).want(t, exitError)
	contains(t, "stderr", r.stderr, "job done in "+db+" has finished (succeeded): nothing to cancel\n", "job nosuch not found in "+db)
	r = baton(t, "cancel", "--reason", "", "x", "--store", db).want(t, exitError)
	contains(t, "stderr", r.stderr, "--reason must not be empty")
}

// TestHistoryShowsDeadlineAndCancel: history shows a deadline armed when
// its node starts, its firing, and a cancel with its reason.
func TestHistoryShowsDeadlineAndCancel(t *testing.T) {
	db := filepath.Join(t.TempDir(), "baton.db")
	wf := writeWorkflow(t, "dl.json", `{"version":1,"root":{"seq":[
		{"try":{"act":"sleep","payload":"10s","deadline":"50ms"},"finally":{"act":"log","payload":"cleanup"}},
		{"act":"sleep","payload":"10s"}]}}`)
	r := baton(t, "run", wf, "--store", db, "--id", "dl").want(t, exitFailed)
	contains(t, "stdout", r.stdout, "job dl failed at seq[0].body: deadline of 50ms exceeded: 2/3 actions settled")
	r = baton(t, "history", "dl", "--store", db).want(t, exitOK)
	contains(t, "stdout", r.stdout, "      waits: seq[0].body@deadline due ", "      seq[0].body@deadline: timer fired at ",
		"(seq[0].body: deadline of 50ms exceeded)")

	storeJobs(t, db, map[job.ID]ast.Node{"c": ast.Act("log", "x")})
	baton(t, "cancel", "c", "--reason", "no\nlonger needed", "--store", db).want(t, exitOK)
	r = baton(t, "history", "c", "--store", db).want(t, exitOK)
	contains(t, "stdout", r.stdout, "v2  cancelled, 0/1 actions settled\n      cancelled: \"no\\nlonger needed\"\n")
}

// TestCancelReasonChecked: a reason that is not UTF-8, or longer than
// the API takes, is refused before anything is read or stored, in every
// mode, as through the API (the store's cancel kept it as it was).
func TestCancelReasonChecked(t *testing.T) {
	db := filepath.Join(t.TempDir(), "baton.db")
	storeJobs(t, db, map[job.ID]ast.Node{"plain": ast.Seq(ast.Act("log", "a"))})
	r := baton(t, "cancel", "--reason", "bad \xff byte", "plain", "--store", db).want(t, exitError)
	contains(t, "stderr", r.stderr, "--reason is not valid UTF-8")
	r = baton(t, "cancel", "--node", "x", "--reason", "bad \xff byte", "plain", "--store", db).want(t, exitError)
	contains(t, "stderr", r.stderr, "--reason is not valid UTF-8")
	r = baton(t, "cancel", "--reason", strings.Repeat("r", 1025), "plain", "--store", db).want(t, exitError)
	contains(t, "stderr", r.stderr, "--reason is 1025 bytes; at most 1024, as through the API")
	r = baton(t, "status", "plain", "--store", db).want(t, exitOK)
	if strings.Contains(r.stdout, "cancelled") {
		t.Errorf("a refused cancel changed the job:\n%s", r.stdout)
	}
}
