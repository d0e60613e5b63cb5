package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
)

// TestHistorySignals: baton history says what a signal and a node's
// cancel were (the signal's name, ID and the wait that took it, or kept;
// the node and the reason), never "timer fired"; the same text and JSON
// through 'baton serve' on a copy of the file.
func TestHistorySignals(t *testing.T) {
	db := filepath.Join(t.TempDir(), "baton.db")
	storeJobs(t, db, map[job.ID]ast.Node{
		"s": ast.Seq(
			ast.Par(
				ast.Wait("approval").Named("answer"),
				ast.Try(ast.Wait("hold").Named("gate"), ast.Rescue(ast.Act("log", "rescued"))),
			),
			ast.Wait("later").Named("late"),
		),
	})
	baton(t, "signal", "s", "later", "--id", "l1", "--data", `"early"`, "--store", db).want(t, exitOK)
	baton(t, "signal", "s", "approval", "--id", "a1", "--data", `{"ok":true}`, "--store", db).want(t, exitOK)
	baton(t, "cancel", "--node", "gate", "--reason", "no answer", "s", "--store", db).want(t, exitOK)
	r := baton(t, "resume", "s", "--store", db).want(t, exitOK)
	contains(t, "resume", r.stdout, "job s succeeded")

	r = baton(t, "history", "s", "--store", db).want(t, exitOK)
	contains(t, "history", r.stdout,
		"      @signal/later/l1: signal later (id l1) kept for a wait to come -> \"early\"\n",
		"      @signal/approval/a1: signal approval (id a1) taken by the wait at seq[0].par[0] -> {\"ok\":true}\n",
		"      @cancel/gate: node gate at seq[0].par[1].body cancelled: no answer\n",
		"      signal later (id l1), kept before, taken by the wait at seq[1]\n")
	if strings.Contains(r.stdout, "timer") {
		t.Errorf("history shows a timer:\n%s", r.stdout)
	}

	b := copyFile(t, db)
	p := startInProcess(t, "baton serve: http", "serve", "--store", b, "--listen", "127.0.0.1:0")
	url := serveURL(t, p)
	same(t, db, url, exitOK, "history", "s")
	r = same(t, db, url, exitOK, "history", "--json", "s")
	contains(t, "history --json", r.stdout,
		`"signal":{"name":"approval","id":"a1","taken":true}`, `"node_cancel":{"node":"gate","reason":"no answer"}`,
		`"taken":[{"name":"later","id":"l1","path":"seq[1]"}]`)
}
