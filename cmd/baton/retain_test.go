package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// listed returns the job IDs 'baton status' lists, in order.
func listed(t *testing.T, db string) []string {
	t.Helper()
	r := baton(t, "status", "--store", db).want(t, exitOK)
	var ids []string
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n")[1:] {
		ids = append(ids, strings.Fields(line)[0])
	}
	return ids
}

// TestRunRetain: 'baton run --retain D' deletes the jobs of the store that
// finished more than D ago, and keeps the others; without it every job is
// kept.
func TestRunRetain(t *testing.T) {
	db := filepath.Join(t.TempDir(), "baton.db")
	file := writeWorkflow(t, "hello.json", helloJSON)
	baton(t, "run", "--quiet", file, "--id", "old", "--store", db).want(t, exitOK)
	ended := time.Now()
	baton(t, "run", "--quiet", file, "--id", "kept", "--store", db).want(t, exitOK)
	if got := strings.Join(listed(t, db), " "); got != "kept old" {
		t.Fatalf("without --retain the store lists %q, want both jobs", got)
	}
	// 'old' finished 50 ms ago or more; 'kept' too, but later.
	for time.Since(ended) < 50*time.Millisecond {
		time.Sleep(5 * time.Millisecond)
	}
	baton(t, "run", "--quiet", file, "--id", "new", "--store", db, "--retain", "1h").want(t, exitOK)
	if got := strings.Join(listed(t, db), " "); got != "kept new old" {
		t.Fatalf("with --retain 1h the store lists %q, want every job", got)
	}
	baton(t, "run", "--quiet", file, "--id", "newer", "--store", db, "--retain", "50ms").want(t, exitOK)
	got := listed(t, db)
	if strings.Contains(strings.Join(got, " "), "old") || !strings.Contains(strings.Join(got, " "), "newer") {
		t.Fatalf("with --retain 50ms the store lists %q, want 'old' deleted and 'newer' kept", got)
	}

	r := baton(t, "run", file, "--store", db, "--retain", "-1s").want(t, exitError)
	contains(t, "stderr", r.stderr, "--retain must not be negative")
	r = baton(t, "resume", "--zk", "127.0.0.1:1", "--retain", "1h").want(t, exitError)
	contains(t, "stderr", r.stderr, "--retain goes with the bolt store")
}
