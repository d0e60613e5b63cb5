package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/store/bolt"
)

// TestSignal: baton signal on a store file. A running wait takes the
// signal, and the actions after it wait for resume; a signal sent before
// its wait is kept; a signal sent again changes nothing; a finished job,
// a missing one, a bad name, ID or payload are errors that say what and
// where, with exit status 2.
func TestSignal(t *testing.T) {
	db := filepath.Join(t.TempDir(), "baton.db")
	storeJobs(t, db, map[job.ID]ast.Node{
		"approve": ast.Seq(ast.Wait("approval").Named("answer"), ast.Act("log", "after")),
		"early":   ast.Seq(ast.Act("log", "first"), ast.Wait("approval")),
	})
	r := baton(t, "signal", "approve", "approval", "--id", "a1", "--data", `{"ok":true}`, "--store", db).want(t, exitOK)
	contains(t, "stdout", r.stdout, "signal approval (id a1) taken by the wait at seq[0]: job approve at v2; its next actions wait for: baton resume --store "+db+" approve\n")
	r = baton(t, "signal", "approve", "approval", "--id", "a1", "--data", `{"ok":false}`, "--store", db).want(t, exitOK)
	contains(t, "stdout", r.stdout, "signal approval (id a1) taken by the wait at seq[0]: job approve at v2")
	r = baton(t, "resume", "approve", "--store", db).want(t, exitOK)
	contains(t, "stdout", r.stdout, "job approve succeeded")
	st, err := bolt.Open(db, nil)
	if err != nil {
		t.Fatal(err)
	}
	j, err := st.Load(context.Background(), "approve")
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	if out, _ := j.Output("answer"); string(out) != `{"ok":true}` {
		t.Errorf("the wait's output is %s, want the first signal's payload", out)
	}

	payload := filepath.Join(t.TempDir(), "payload.json")
	if err := os.WriteFile(payload, []byte(`["from", "a file"]`), 0o600); err != nil {
		t.Fatal(err)
	}
	r = baton(t, "signal", "--data", "@"+payload, "early", "approval", "--store", db).want(t, exitOK)
	contains(t, "stdout", r.stdout, "signal approval (id cli-", ") kept by job early for a wait to come (v2)\n")

	r = baton(t, "signal", "approve", "approval", "--store", db).want(t, exitError)
	contains(t, "stderr", r.stderr, "job approve in "+db+" has finished (succeeded): no wait takes a signal")
	r = baton(t, "signal", "early", "aproval", "--store", db).want(t, exitError)
	contains(t, "stderr", r.stderr, "baton: signal job early in "+db+": no wait of the job takes signal aproval (its waits take approval)\n")
	r = baton(t, "signal", "nosuch", "approval", "--store", db).want(t, exitError)
	contains(t, "stderr", r.stderr, "job nosuch not found in "+db)

	big := filepath.Join(t.TempDir(), "big.json")
	if err := os.WriteFile(big, []byte(`"`+strings.Repeat("x", job.MaxSignalPayload)+`"`), 0o600); err != nil {
		t.Fatal(err)
	}
	bom := filepath.Join(t.TempDir(), "bom.json")
	if err := os.WriteFile(bom, []byte("\xef\xbb\xbf{\"ok\": true}"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"early"}, "want a job ID and a signal name, got 1 arguments"},
		{[]string{"early", "no good"}, "signal name"},
		{[]string{"early", "approval", "--data", "{nope"}, "--data: the value is not JSON"},
		{[]string{"early", "approval", "--data", "@" + big}, "--data: " + big + " holds more than 65536 bytes, a signal's payload limit"},
		{[]string{"early", "approval", "--data", "@" + filepath.Join(t.TempDir(), "missing.json")}, "--data: cannot read "},
		{[]string{"early", "approval", "--data", "@"}, "--data: @ names no file"},
		{[]string{"early", "approval", "--id", "bad\x01id"}, "signal approval: ID"},
		// An empty value (an unset variable: --data "$ANSWER") is no
		// payload the user meant: it was sent as null.
		{[]string{"early", "approval", "--data", ""}, "--data is empty: give a JSON value (null for none)"},
		{[]string{"early", "approval", "--data", "@" + bom}, "--data: " + bom + " starts with a byte-order mark (EF BB BF): save it without one"},
	} {
		r = baton(t, append(append([]string{"signal"}, c.args...), "--store", db)...).want(t, exitError)
		contains(t, "stderr", r.stderr, "baton: signal: "+c.want, "usage: baton signal")
	}
}

// TestSignalLockedStore: a store file that 'baton run' holds cannot take
// a signal from another process; the error says how to signal a job
// while it runs.
func TestSignalLockedStore(t *testing.T) {
	db := filepath.Join(t.TempDir(), "baton.db")
	storeJobs(t, db, map[job.ID]ast.Node{"approve": ast.Seq(ast.Wait("approval"), ast.Act("log", "after"))})
	held, err := bolt.Open(db, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	r := baton(t, "signal", "approve", "approval", "--store", db).want(t, exitStore)
	contains(t, "stderr", r.stderr, "baton: store "+db+" is in use by another process",
		"to signal a job while it runs, run it under 'baton serve --store "+db+"' and send it with 'baton signal --server URL'")
}

// TestRunHintsSignals: 'baton run' of a job that can go on only with a
// signal (its wait runs; no action, no timer left) says, once, that none
// can reach it while run holds the store, and how to send one; it waited
// in silence before. A wait beside a sleep (a timer pending) says
// nothing: the sleep moves the job on.
func TestRunHintsSignals(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "baton.db")
	wf := filepath.Join(dir, "approve.json")
	if err := os.WriteFile(wf, []byte(`{"version":3,"root":{"seq":[{"act":"log","payload":"asked"},{"wait":"approval"},{"act":"log","payload":"after"}]}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	want := "baton run: job approve can go on only with a signal (it waits for approval), and 'baton run' holds its store, so none can reach it: stop this (Ctrl-C), run it with 'baton serve --store " + db + "', and send it with 'baton signal --server URL approve approval'"
	p := startInProcess(t, want, "run", "--store", db, "--id", "approve", wf)
	if code := p.stop(t); code != exitInterrupted {
		t.Errorf("interrupted run: exit %d, want %d", code, exitInterrupted)
	}
	if n := strings.Count(p.errOut.String(), "can go on only with a signal"); n != 1 {
		t.Errorf("the hint came %d times, want once:\n%s", n, p.errOut.String())
	}

	race := filepath.Join(dir, "race.json")
	if err := os.WriteFile(race, []byte(`{"version":3,"root":{"race":[{"wait":"approval"},{"sleep":"300ms"}]}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	r := baton(t, "run", "--store", filepath.Join(dir, "race.db"), "--id", "race", race).want(t, exitOK)
	if strings.Contains(r.stderr, "can go on only with a signal") {
		t.Errorf("a wait raced by a sleep got the hint:\n%s", r.stderr)
	}
}
