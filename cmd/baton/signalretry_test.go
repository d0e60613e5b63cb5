package main

import (
	"path/filepath"
	"testing"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
)

// TestSignalRetryAfterEnd: a signal sent again with the same ID after the
// job finished is the safe retry the help promises (exit 0, saying what
// the first one did), directly and through a server; a new signal to the
// finished job is refused, exit 2. The retry was refused, exit 2, "has
// finished: no wait takes a signal", as if the first had been lost.
func TestSignalRetryAfterEnd(t *testing.T) {
	a := filepath.Join(t.TempDir(), "a.db")
	storeJobs(t, a, map[job.ID]ast.Node{
		"took": ast.Seq(ast.Wait("approval")),
		"kept": ast.Seq(ast.Act("sleep", "1h"), ast.Wait("approval")),
	})
	r := baton(t, "signal", "--store", a, "--id", "s1", "took", "approval").want(t, exitOK)
	contains(t, "stdout", r.stdout, "signal approval (id s1) taken by the wait at seq[0]")
	baton(t, "signal", "--store", a, "--id", "s1", "kept", "approval").want(t, exitOK)
	baton(t, "cancel", "--store", a, "kept").want(t, exitOK)

	b := copyFile(t, a)
	p := startInProcess(t, "baton serve: http", "serve", "--store", b, "--listen", "127.0.0.1:0")
	url := serveURL(t, p)
	r = same(t, a, url, exitOK, "signal", "--id", "s1", "took", "approval")
	contains(t, "stdout", r.stdout, "signal approval (id s1) was taken by the wait at seq[0] before job took finished (succeeded)\n")
	r = same(t, a, url, exitOK, "signal", "--id", "s1", "kept", "approval")
	contains(t, "stdout", r.stdout, "signal approval (id s1) was kept by job kept, which finished (cancelled) before a wait took it\n")
	for _, c := range [][]string{{"--id", "s2", "took", "approval"}, {"--id", "s1", "took", "other"}, {"took", "approval"}} {
		r = same(t, a, url, exitError, append([]string{"signal"}, c...)...)
		contains(t, "stderr", r.stderr, "has finished (succeeded): no wait takes a signal")
	}
	if code := p.stop(t); code != exitOK {
		t.Errorf("serve exited %d:\n%s", code, p.errOut.String())
	}
}
