package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestServeHUPWithoutTokenFile: a SIGHUP to 'baton serve' started without
// --token-file is ignored, with a line saying so; the server goes on
// answering and stops cleanly on SIGTERM. SIGHUP's default action ended
// it at once, without a drain (exit status -1, no "stopped" line).
func TestServeHUPWithoutTokenFile(t *testing.T) {
	p := startProc(t, []string{"serve", "--listen", "127.0.0.1:0", "--store", filepath.Join(t.TempDir(), "jobs.db")})
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("serve (pid %d) stderr:\n%s", p.cmd.Process.Pid, p.stderr.String())
		}
	})
	addr := regexp.MustCompile(`baton serve: (http://[^/]+)/api/v1`)
	var url string
	eventually(t, 20*time.Second, "serve's address", func() (bool, string) {
		if m := addr.FindStringSubmatch(p.stderr.String()); m != nil {
			url = m[1]
			return true, ""
		}
		return false, p.stderr.String()
	})
	if err := p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, "the SIGHUP line", func() (bool, string) {
		select {
		case <-p.done:
			t.Fatalf("serve exited on SIGHUP: %v\n%s", p.err, p.stderr.String())
		default:
		}
		return strings.Contains(p.stderr.String(), "baton serve: SIGHUP: no --token-file to read again; ignored"), p.stderr.String()
	})
	baton(t, "status", "--server", url).want(t, exitOK)
	if code := p.stop(t); code != exitOK {
		t.Errorf("exit status %d after SIGTERM, want 0", code)
	}
	contains(t, "stderr", p.stderr.String(), "baton serve: stopped")
}
