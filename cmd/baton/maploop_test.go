package main

import (
	"path/filepath"
	"testing"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/store"
	"github.com/batonwf/baton/store/bolt"
)

// TestInspectMapAndLoop: baton inspect counts a started map's copies per
// state and says a loop's iteration; baton history says which step
// started the map, with its copies, and which began the loop's next
// iterations; the same text and JSON through 'baton serve'.
func TestInspectMapAndLoop(t *testing.T) {
	db := filepath.Join(t.TempDir(), "baton.db")
	storeJobs(t, db, map[job.ID]ast.Node{
		"m": ast.Seq(
			ast.Act("list", nil).Named("xs"),
			ast.Map("xs", ast.Act("work", nil).WithInputs("item")).Named("all"),
			ast.Loop(ast.Act("poll", nil).Named("done"), "done", true, 5).Named("polls"),
		),
	})
	// The job's results, committed as a runner would: each of the
	// actions outstanding succeeds with out.
	step := func(out string) {
		t.Helper()
		st, err := bolt.Open(db, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		j, err := st.Load(t.Context(), "m")
		if err != nil {
			t.Fatal(err)
		}
		var rs []job.Result
		for _, a := range j.Outstanding() {
			rs = append(rs, a.Succeed([]byte(out)))
		}
		tr, err := job.Restart(j, rs)
		if err == nil {
			err = store.Commit(t.Context(), st, tr)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	step(`["a","b","c"]`) // the map starts
	r := baton(t, "inspect", "m", "--store", db).want(t, exitOK)
	contains(t, "inspect", r.stdout, "  map seq[1] @all: running, 3 copies: 3 running\n", "    act work seq[1].map[2]: running #1\n",
		"  loop seq[2] @polls: idle, iteration 1\n")
	step(`null`) // the copies succeed, the loop starts
	step(`false`)
	step(`false`)
	r = baton(t, "inspect", "m", "--store", db).want(t, exitOK)
	contains(t, "inspect", r.stdout, "  map seq[1] @all: succeeded, 3 copies: 3 succeeded\n",
		"  loop seq[2] @polls: running, iteration 3\n", "    act poll seq[2].loop[2] @done: running #1\n")
	r = baton(t, "inspect", "--json", "m", "--store", db).want(t, exitOK)
	contains(t, "inspect --json", r.stdout, `"copies":{"count":3,"succeeded":3}`, `"iteration":3`)
	step(`true`)
	r = baton(t, "history", "m", "--store", db).want(t, exitOK)
	contains(t, "history", r.stdout, "      map seq[1] started 3 copies\n", "      loop seq[2] began iteration 2\n",
		"      loop seq[2] began iteration 3\n", "now succeeded")

	b := copyFile(t, db)
	p := startInProcess(t, "baton serve: http", "serve", "--store", b, "--listen", "127.0.0.1:0")
	url := serveURL(t, p)
	same(t, db, url, exitOK, "inspect", "m")
	same(t, db, url, exitOK, "inspect", "--json", "m")
	same(t, db, url, exitOK, "history", "m")
	r = same(t, db, url, exitOK, "history", "--json", "m")
	contains(t, "history --json", r.stdout, `"grew":[{"path":"seq[1]","kind":"map","copies":3}]`, `"grew":[{"path":"seq[2]","kind":"loop","iteration":3}]`)
	for _, f := range []string{"svg", "dot", "mermaid"} {
		same(t, db, url, exitOK, "inspect", "--format", f, "m")
	}
	r = baton(t, "inspect", "--format", "svg", "m", "--store", db).want(t, exitOK)
	contains(t, "inspect --format svg", r.stdout, "3 copies: 3✓", "iteration 3, until done = true, max 5")
}
