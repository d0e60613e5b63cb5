package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/batonwf/baton/api"
	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
)

// TestInspectSignalsAndChoice: baton inspect says the signal each wait
// waits for and the one it took, what a choice read and chose, and lists
// the signals taken and kept; the same text and JSON through 'baton
// serve' on a copy of the file.
func TestInspectSignalsAndChoice(t *testing.T) {
	db := filepath.Join(t.TempDir(), "baton.db")
	storeJobs(t, db, map[job.ID]ast.Node{
		"s": ast.Seq(
			ast.Act("log", "gold").Named("tier"),
			ast.Choice("tier", ast.When("gold", ast.Act("log", "gold path")), ast.When(nil, ast.Act("log", "none")), ast.Else(ast.Act("log", "other"))), // log gives null
			ast.Wait("go"),
			ast.Wait("later"),
		),
	})
	baton(t, "signal", "s", "later", "--id", "l1", "--data", `"early"`, "--store", db).want(t, exitOK)
	r := baton(t, "inspect", "s", "--store", db).want(t, exitOK)
	contains(t, "inspect", r.stdout,
		"  choice seq[1]: idle, on tier\n",
		"  wait seq[2]: idle, waits for signal go\n",
		"  wait seq[3]: idle, waits for signal later\n",
		"signal later (id l1) kept for a wait to come, received ")
	contains(t, "inspect", r.stdout, ` -> "early"`+"\n")
	r = baton(t, "inspect", "--json", "s", "--store", db).want(t, exitOK)
	contains(t, "inspect --json", r.stdout, `"signals":{"kept":[{"name":"later","id":"l1","payload":"\"early\"","at":"`, `"signal":"go"`, `"choice":{"on":"tier"}`)

	baton(t, "signal", "s", "go", "--id", "g1", "--store", db).want(t, exitOK)
	r = baton(t, "resume", "s", "--store", db).want(t, exitOK)
	contains(t, "resume", r.stdout, "job s succeeded")
	r = baton(t, "inspect", "s", "--store", db).want(t, exitOK)
	contains(t, "inspect", r.stdout,
		"  choice seq[1]: succeeded, on tier = null, chose case 1\n",
		"  wait seq[2]: succeeded, waits for signal go, took go/g1\n",
		"  wait seq[3]: succeeded, waits for signal later, took later/l1\n",
		"signal go (id g1) taken by the wait at seq[2]\nsignal later (id l1) taken by the wait at seq[3]\n")
	r = baton(t, "inspect", "--json", "s", "--store", db).want(t, exitOK)
	contains(t, "inspect --json", r.stdout, `"choice":{"on":"tier","read":"null","cases":[1]}`,
		`"signals":{"taken":[{"name":"go","id":"g1","path":"seq[2]"},{"name":"later","id":"l1","path":"seq[3]"}]}`)

	b := copyFile(t, db)
	p := startInProcess(t, "baton serve: http", "serve", "--store", b, "--listen", "127.0.0.1:0")
	url := serveURL(t, p)
	same(t, db, url, exitOK, "inspect", "s")
	same(t, db, url, exitOK, "inspect", "--json", "s")
}

// TestChoiceText: a choice's line says one case, several, the else, or
// nothing chosen; before it started, only the leaf it reads.
func TestChoiceText(t *testing.T) {
	for _, c := range []struct {
		c       api.Chosen
		started bool
		want    string
	}{
		{api.Chosen{On: "kind"}, false, "on kind"},
		{api.Chosen{On: "kind", Read: `"x"`, Cases: []int{0}}, true, `on kind = "x", chose case 0`},
		{api.Chosen{On: "tags", Read: `["a","c"]`, Cases: []int{0, 2}}, true, `on tags = ["a","c"], chose cases 0, 2`},
		{api.Chosen{On: "kind", Read: "null", Else: true}, true, `on kind = null, chose else`},
		{api.Chosen{On: "kind", Read: `"y"`}, true, `on kind = "y", chose nothing`},
		{api.Chosen{On: "kind", Read: `"` + strings.Repeat("y", 198), Clipped: true}, true, `on kind = "` + strings.Repeat("y", 59) + `..., chose nothing`},
	} {
		if got := choiceText(c.c, c.started); got != c.want {
			t.Errorf("choiceText(%+v, %v) = %q, want %q", c.c, c.started, got, c.want)
		}
	}
}
