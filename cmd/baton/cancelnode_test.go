package main

import (
	"path/filepath"
	"testing"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
)

// TestCancelNode: baton cancel --node on a store file. The running wait
// called gate fails with kind cancelled, the try around it rescues it
// (the rescue waits for resume, which runs it and the job succeeds); a
// node that is not running is left as it is, and the line says so (exit
// 0); a node the job does not have, a finished job, a missing one, a bad
// name and --node with two jobs exit 2, saying what and where.
func TestCancelNode(t *testing.T) {
	db := filepath.Join(t.TempDir(), "baton.db")
	storeJobs(t, db, map[job.ID]ast.Node{
		"gated": ast.Try(ast.Seq(ast.Wait("approval").Named("gate"), ast.Act("log", "after").Named("after")),
			ast.Rescue(ast.Act("log", "rescued"))),
	})
	r := baton(t, "cancel", "--store", db, "--node", "after", "gated").want(t, exitOK)
	if want := "node after at body.seq[1] of job gated is idle, not running: left as it is\n"; r.stdout != want {
		t.Errorf("cancel of an idle node printed %q, want %q", r.stdout, want)
	}
	r = baton(t, "cancel", "--store", db, "--node", "gate", "--reason", "no answer", "gated").want(t, exitOK)
	if want := "node gate at body.seq[0] of job gated cancelled: failed at v2; its next actions wait for: baton resume --store " + db + " gated\n"; r.stdout != want {
		t.Errorf("cancel of the running wait printed %q, want %q", r.stdout, want)
	}
	r = baton(t, "cancel", "--store", db, "--node", "gate", "gated").want(t, exitOK)
	if want := "node gate at body.seq[0] of job gated is failed, not running: left as it is\n"; r.stdout != want {
		t.Errorf("a second cancel printed %q, want %q", r.stdout, want)
	}
	r = baton(t, "inspect", "--store", db, "--format", "json", "gated").want(t, exitOK)
	contains(t, "inspect", r.stdout, `"cancelled_nodes":[[2,"no answer"]]`)
	r = baton(t, "cancel", "--store", db, "--node", "nosuch", "gated").want(t, exitError)
	contains(t, "stderr", r.stderr, "job gated in "+db+" has no node called nosuch (run 'baton inspect --store "+db+" gated' for its nodes)")

	r = baton(t, "resume", "--store", db, "gated").want(t, exitOK)
	contains(t, "resume", r.stdout, "rescued", "job gated succeeded")
	r = baton(t, "cancel", "--store", db, "--node", "gate", "gated").want(t, exitError)
	contains(t, "stderr", r.stderr, "job gated in "+db+" has finished (succeeded): no node to cancel")
	r = baton(t, "cancel", "--store", db, "--node", "gate", "nosuch").want(t, exitError)
	contains(t, "stderr", r.stderr, "job nosuch not found in "+db)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--node", "no good", "gated"}, "--node: name \"no good\""},
		{[]string{"--node", "", "gated"}, "--node: name is empty"},
		{[]string{"--node", "gate", "gated", "other"}, "--node cancels a node of one job: want one job ID, got 2"},
	} {
		r = baton(t, append([]string{"cancel", "--store", db}, c.args...)...).want(t, exitError)
		contains(t, "stderr", r.stderr, "baton: cancel: "+c.want, "usage: baton cancel")
	}
}
