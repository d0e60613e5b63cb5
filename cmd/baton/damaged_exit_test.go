package main

import (
	"path/filepath"
	"testing"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
)

// TestDamagedJobExit: status, history and inspect of a job the store
// cannot read exit 3 (the store is damaged), directly as through a
// server, as cancel did; directly they exited 2, the status of a bad
// argument, and through the server 3.
func TestDamagedJobExit(t *testing.T) {
	db := filepath.Join(t.TempDir(), "a.db")
	storeJobs(t, db, map[job.ID]ast.Node{"broken": ast.Act("log", "x"), "fine": ast.Act("log", "y")})
	damageOrigin(t, db, "broken")
	served := copyFile(t, db)
	p := startInProcess(t, "baton serve: http", "serve", "--store", served, "--listen", "127.0.0.1:0")
	url := serveURL(t, p)
	for _, args := range [][]string{{"status", "broken"}, {"history", "broken"}, {"inspect", "broken"}, {"status", "--json", "broken"}, {"inspect", "--format", "dot", "broken"}} {
		r := baton(t, append(args, "--store", db)...).want(t, exitStore)
		contains(t, "stderr", r.stderr, "broken")
		baton(t, append(args, "--server", url)...).want(t, exitStore)
	}
	r := baton(t, "inspect", "--format", "json", "--store", db, "broken").want(t, exitStore)
	contains(t, "stderr", r.stderr, "broken")
	baton(t, "status", "--store", db, "fine").want(t, exitOK)
}
