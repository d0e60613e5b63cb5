package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestHugeFailureMessageIsClipped runs a workflow whose fail action fails
// with a 1 MB message and checks that no command prints it whole: every
// summary, header, history line and rendering clips it. (Clipping does not
// depend on the size; 1 MB keeps the test quick under the race detector.)
func TestHugeFailureMessageIsClipped(t *testing.T) {
	const limit = 64 << 10
	db := filepath.Join(t.TempDir(), "baton.db")
	msg := strings.Repeat("boom ", 1<<20/5)
	file := writeWorkflow(t, "huge.json", `{"version":1,"root":{"seq":[{"act":"log","payload":"start"},{"act":"fail","payload":"`+msg+`"}]}}`)
	for _, args := range [][]string{
		{"run", file, "--id", "huge"},
		{"history", "huge"},
		{"status", "huge"},
		{"status"},
		{"inspect", "huge"},
		{"inspect", "--format", "dot", "huge"},
		{"inspect", "--format", "mermaid", "huge"},
		{"inspect", "--format", "svg", "huge"},
		{"inspect", "--version", "3", "huge"},
	} {
		want := exitOK
		if args[0] == "run" {
			want = exitFailed
		}
		r := baton(t, append(args, "--store", db)...).want(t, want)
		if n := len(r.stdout) + len(r.stderr); n > limit {
			t.Errorf("baton %v printed %d bytes, more than %d", args, n, limit)
		}
		if args[0] == "run" {
			contains(t, "stdout", r.stdout, "job huge failed at seq[1] (fail): boom boom")
		}
	}
}
