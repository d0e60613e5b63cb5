package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// mountTmpfs mounts a tmpfs of size bytes on a new directory and returns
// it; it is unmounted when the test ends. It needs root; without it the
// test is skipped, loudly, and a skip fails where integration tests are
// required (BATON_REQUIRE_INTEGRATION=1, as scripts/test.sh sets).
func mountTmpfs(t *testing.T, size int) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "small")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d", size), "tmpfs", dir).CombinedOutput()
	if err != nil {
		msg := fmt.Sprintf("cannot mount a small tmpfs to fill (needs root): %v: %s", err, strings.TrimSpace(string(out)))
		if os.Getenv("BATON_REQUIRE_INTEGRATION") != "" {
			t.Fatal(msg)
		}
		t.Skip("SKIPPED: " + msg)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

// fill writes a file in dir until the file system is full, then frees
// keep bytes of it; it returns the file.
func fill(t *testing.T, dir string, keep int) string {
	t.Helper()
	p := filepath.Join(dir, "filler")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	block := make([]byte, 4096)
	n := 0
	for {
		k, err := f.Write(block)
		n += k
		if errors.Is(err, syscall.ENOSPC) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Truncate(int64(max(0, n-keep))); err != nil {
		t.Fatal(err)
	}
	return p
}

// within runs baton in-process and fails the test if it takes longer than
// d: a command that hangs is the defect.
func within(t *testing.T, d time.Duration, args ...string) result {
	t.Helper()
	done := make(chan result, 1)
	go func() {
		var out, errb syncBuffer
		c := &cli{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: os.Getenv, now: time.Now, noSignals: true}
		code := c.main(context.Background(), args)
		done <- result{code, out.String(), errb.String()}
	}()
	select {
	case r := <-done:
		return r
	case <-time.After(d):
		t.Fatalf("baton %q did not finish within %v (hangs)", args, d)
		return result{}
	}
}

// TestDiskFull: a store write that fails for lack of space ends baton run
// with a clear message and exit status 3, the job stays as last saved, and
// baton resume finishes it once space is free. Before, run hung forever
// after a few retries.
func TestDiskFull(t *testing.T) {
	body := strings.Repeat("x", 3000)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, body) }))
	defer srv.Close()
	var acts []string
	for i := range 300 {
		acts = append(acts, fmt.Sprintf(`{"act":"http.get","payload":%q}`, fmt.Sprintf("%s/%d", srv.URL, i)))
	}
	file := writeWorkflow(t, "big.json", `{"version":1,"root":{"par":[`+strings.Join(acts, ",")+`]}}`)

	dir := mountTmpfs(t, 8<<20)
	db := filepath.Join(dir, "baton.db")
	within(t, time.Minute, "run", writeWorkflow(t, "h.json", helloJSON), "--store", db, "--id", "first", "--quiet").want(t, exitOK)
	filler := fill(t, dir, 64<<10)

	r := within(t, time.Minute, "run", file, "--store", db, "--id", "big", "--quiet")
	r.want(t, exitStore)
	t.Logf("the full disk, as the user sees it:\n%s", r.stderr)
	contains(t, "stderr", r.stderr, "baton: store "+db+" failed: write "+db+": no space left on device\n",
		"once the store can be written, finish it with: baton resume --store "+db+" big")

	// Space again: the job resumes from where it was saved and finishes.
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	r = within(t, time.Minute, "resume", "--store", db)
	r.want(t, exitOK)
	contains(t, "resume", r.stdout, "job big succeeded: 300/300 actions settled")
	r = within(t, time.Minute, "status", "--store", db)
	contains(t, "status", r.stdout, "big    succeeded", "first  succeeded")
}
