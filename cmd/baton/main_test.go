package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// result is what one baton invocation did.
type result struct {
	code           int
	stdout, stderr string
}

// baton runs the command in-process, as main does.
func baton(t *testing.T, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, strings.NewReader(""), &out, &errb)
	return result{code, out.String(), errb.String()}
}

// want fails the test unless r has exit status code.
func (r result) want(t *testing.T, code int) result {
	t.Helper()
	if r.code != code {
		t.Fatalf("exit status %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, code, r.stdout, r.stderr)
	}
	return r
}

// writeWorkflow writes a workflow file into a temporary directory.
func writeWorkflow(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func contains(t *testing.T, what, s string, subs ...string) {
	t.Helper()
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			t.Errorf("%s does not contain %q:\n%s", what, sub, s)
		}
	}
}

const helloJSON = `{"version":1,"root":{"par":[
	{"act":"log","payload":"a"},
	{"seq":[{"act":"log","payload":"b"},{"act":"log","payload":{"n":3}}]},
	{"try":{"act":"log","payload":"d"},"rescue":{"act":"log","payload":"e"},"finally":{"act":"log","payload":"f"}}
]}}`

const failJSON = `{"version":1,"root":{"seq":[
	{"act":"log","payload":"start"},
	{"try":{"act":"fail","payload":"boom"},"finally":{"act":"log","payload":"cleanup"}},
	{"act":"log","payload":"never"}
]}}`

func TestRunSucceeds(t *testing.T) {
	db := filepath.Join(t.TempDir(), "baton.db")
	r := baton(t, "run", writeWorkflow(t, "hello.json", helloJSON), "--store", db).want(t, exitOK)
	contains(t, "stdout", r.stdout,
		"par[0]#1: a\n", "par[1].seq[0]#1: b\n", `par[1].seq[1]#1: {"n":3}`+"\n", "par[2].finally#1: f\n",
		"par: succeeded\n", `act log "e" par[2].rescue: idle`, " succeeded: 5/6 actions settled, v")
	if strings.Contains(r.stdout, "par[2].rescue#1") {
		t.Errorf("the rescue ran:\n%s", r.stdout)
	}
	if r.stderr != "" {
		t.Errorf("stderr is not empty: %s", r.stderr)
	}
	// The default ID: the base name and a sortable UTC timestamp.
	id := regexp.MustCompile(`(?m)^job (\S+) succeeded: `).FindStringSubmatch(r.stdout)
	if id == nil || !regexp.MustCompile(`^hello-\d{8}T\d{6}\.\d{3}Z$`).MatchString(id[1]) {
		t.Errorf("default job ID %q, want hello-YYYYMMDDTHHMMSS.mmmZ", id)
	}
}

func TestRunFlagsAfterFileAndQuiet(t *testing.T) {
	db := filepath.Join(t.TempDir(), "baton.db")
	file := writeWorkflow(t, "hello.json", helloJSON)
	r := baton(t, "run", "--quiet", file, "--id", "q1", "--store", db, "--workers", "1", "--timeout", "5s").want(t, exitOK)
	if strings.Contains(r.stdout, "par: succeeded") {
		t.Errorf("--quiet printed the tree:\n%s", r.stdout)
	}
	contains(t, "stdout", r.stdout, "par[0]#1: a\n", "job q1 succeeded: 5/6 actions settled")
	r = baton(t, "run", file, "--id", "q1", "--store", db).want(t, exitError)
	contains(t, "stderr", r.stderr, "baton: job q1 already exists in "+db)
}

func TestRunFails(t *testing.T) {
	db := filepath.Join(t.TempDir(), "baton.db")
	r := baton(t, "run", writeWorkflow(t, "fail.json", failJSON), "--store", db, "--id", "f1").want(t, exitFailed)
	contains(t, "stdout", r.stdout, "seq[1].finally#1: cleanup\n", "job f1 failed at seq[1].body (fail): boom: 3/4 actions settled")
	if strings.Contains(r.stdout, "never\n") {
		t.Errorf("ran the action after the failure:\n%s", r.stdout)
	}
}

func TestRunActionTimeout(t *testing.T) {
	db := filepath.Join(t.TempDir(), "baton.db")
	file := writeWorkflow(t, "slow.json", `{"version":1,"root":{"act":"sleep","payload":"10s"}}`)
	start := time.Now()
	r := baton(t, "run", file, "--store", db, "--timeout", "50ms").want(t, exitFailed)
	contains(t, "stdout", r.stdout, "timed out after 50ms")
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v", d)
	}
}

func TestRunMalformedJSON(t *testing.T) {
	db := filepath.Join(t.TempDir(), "baton.db")
	file := writeWorkflow(t, "bad.json", "{\"version\":1,\n \"root\": {\"seq\": [\n   {\"act\": \"log\" \"payload\": 1}]}}")
	r := baton(t, "run", file, "--store", db).want(t, exitError)
	contains(t, "stderr", r.stderr, "baton: "+file+": ", "line 3, column 18")
	if _, err := os.Stat(db); err == nil {
		t.Error("the store was made for a bad file")
	}
}

// TestRunByteOrderMark: a workflow saved with a byte-order mark (as some
// Windows editors do) is refused naming the mark, as the API does, and
// stores nothing; it said "invalid character 'ï' looking for beginning of
// value".
func TestRunByteOrderMark(t *testing.T) {
	db := filepath.Join(t.TempDir(), "baton.db")
	file := writeWorkflow(t, "bom.json", "\xef\xbb\xbf"+helloJSON)
	r := baton(t, "run", file, "--store", db).want(t, exitError)
	contains(t, "stderr", r.stderr, "baton: "+file+": workflow: the file starts with a byte-order mark (EF BB BF): save it without one\n")
	if _, err := os.Stat(db); err == nil {
		t.Error("the store was made for a bad file")
	}
	r = baton(t, "submit", "--server", "http://127.0.0.1:1", file).want(t, exitError)
	contains(t, "stderr", r.stderr, "byte-order mark")
}

// TestRunEmptyWorkflow: an empty workflow file, or nothing on standard
// input, is said to be empty, as the API says of an empty body, and
// stores nothing; it was "JSON syntax error at line 1, column 1:
// unexpected end of JSON input".
func TestRunEmptyWorkflow(t *testing.T) {
	db := filepath.Join(t.TempDir(), "baton.db")
	for _, text := range []string{"", " \n\t\n"} {
		file := writeWorkflow(t, "empty.json", text)
		r := baton(t, "run", file, "--store", db).want(t, exitError)
		contains(t, "stderr", r.stderr, "baton: "+file+`: workflow: the file is empty: want a workflow like {"version":1,"root":...}`+"\n")
	}
	r := baton(t, "run", "-", "--store", db).want(t, exitError)
	contains(t, "stderr", r.stderr, `baton: standard input: workflow: the input is empty: want a workflow like {"version":1,"root":...}`+"\n")
	if _, err := os.Stat(db); err == nil {
		t.Error("the store was made for an empty workflow")
	}
}

// TestRunPipe: a workflow given as a pipe (a shell's <(...), /dev/stdin)
// is refused saying how to read one from standard input: '-'.
func TestRunPipe(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "flow.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	r := baton(t, "run", fifo, "--store", filepath.Join(t.TempDir(), "b.db")).want(t, exitError)
	contains(t, "stderr", r.stderr, "workflow file "+fifo+" is not a regular file: it is a named pipe (give - to read the workflow from standard input)")
}

func TestRunInvalidWorkflow(t *testing.T) {
	file := writeWorkflow(t, "bad.json", `{"version":1,"root":{"seq":[{"act":"log"},{"par":[]},{"tri":1}]}}`)
	r := baton(t, "run", file, "--store", filepath.Join(t.TempDir(), "b.db")).want(t, exitError)
	contains(t, "stderr", r.stderr, "baton: "+file+": workflow: ", "seq[2]: node has none of the keys")
}

func TestRunUnknownAction(t *testing.T) {
	db := filepath.Join(t.TempDir(), "baton.db")
	baton(t, "run", writeWorkflow(t, "ok.json", helloJSON), "--store", db, "--id", "ok").want(t, exitOK)
	file := writeWorkflow(t, "typo.json", `{"version":1,"root":{"seq":[{"act":"log","payload":"x"},{"act":"email.send"},{"act":"lgo"}]}}`)
	r := baton(t, "run", file, "--store", db, "--id", "typo").want(t, exitError)
	contains(t, "stderr", r.stderr, "baton: "+file+": unknown actions \"email.send\", \"lgo\"", "built-in actions: fail, http.get, log, sleep, value", "nothing was run")
	if r.stdout != "" {
		t.Errorf("stdout: %s", r.stdout)
	}
	r = baton(t, "status", "--store", db).want(t, exitOK)
	if strings.Contains(r.stdout, "typo") {
		t.Errorf("the job with unknown actions was stored:\n%s", r.stdout)
	}
}

func TestRunMissingFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "nope.json")
	r := baton(t, "run", file, "--store", filepath.Join(t.TempDir(), "b.db")).want(t, exitError)
	contains(t, "stderr", r.stderr, "baton: workflow file "+file+" does not exist")
}

func TestRunBadID(t *testing.T) {
	r := baton(t, "run", writeWorkflow(t, "h.json", helloJSON), "--id", "a/b", "--store", filepath.Join(t.TempDir(), "b.db")).want(t, exitError)
	contains(t, "stderr", r.stderr, `baton: job ID "a/b" has '/' at byte 1`)
}

func TestDefaultID(t *testing.T) {
	now := time.Date(2026, 1, 2, 15, 4, 5, 123e6, time.FixedZone("X", 3600))
	for file, want := range map[string]string{
		"dir/hello.json":        "hello-20260102T140405.123Z",
		"my flow.v2.json":       "my-flow.v2-20260102T140405.123Z",
		".json":                 "job-20260102T140405.123Z",
		"noext":                 "noext-20260102T140405.123Z",
		strings.Repeat("é", 80): strings.Repeat("é", 50) + "-20260102T140405.123Z",
	} {
		id := defaultID(file, now)
		if string(id) != want {
			t.Errorf("defaultID(%q) = %q, want %q", file, id, want)
		}
		if err := id.Check(); err != nil {
			t.Errorf("defaultID(%q): %v", file, err)
		}
	}
}

func TestUsage(t *testing.T) {
	r := baton(t).want(t, exitError)
	contains(t, "stderr", r.stderr, "baton: no command given", "usage: baton COMMAND")
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}} {
		r = baton(t, args...).want(t, exitOK)
		contains(t, "stdout", r.stdout, "usage: baton COMMAND", "run ", "resume ", "status ", "history ", "inspect ")
	}
	for _, cmd := range commands() {
		for _, args := range [][]string{{cmd.name, "--help"}, {cmd.name, "-h"}, {"help", cmd.name}} {
			r = baton(t, args...).want(t, exitOK)
			contains(t, "stdout", r.stdout, "usage: baton "+cmd.name)
			if cmd.name != "help" {
				contains(t, "stdout", r.stdout, "Flags:")
			}
			if !slices.Contains([]string{"help", "worker", "submit", "drain", "undrain", "keys", "placement"}, cmd.name) {
				contains(t, "stdout", r.stdout, "-store PATH")
			}
			if cmd.name != "help" && cmd.name != "run" {
				contains(t, "stdout", r.stdout, "-zk HOST:PORT")
			}
		}
	}
	r = baton(t, "frob").want(t, exitError)
	contains(t, "stderr", r.stderr, `baton: unknown command "frob"`)
	r = baton(t, "help", "frob").want(t, exitError)
	contains(t, "stderr", r.stderr, `baton: help: unknown command "frob"`)
	for _, cmd := range commands() {
		r = baton(t, cmd.name, "--frob").want(t, exitError)
		contains(t, "stderr", r.stderr, "baton: "+cmd.name+": flag provided but not defined: -frob", "usage: baton "+cmd.name)
	}
	for _, args := range [][]string{
		{"run"}, {"run", "a.json", "b.json"}, {"run", "a.json", "--workers", "0"},
		{"resume", "a b"}, {"status", "a", "b"}, {"history"}, {"inspect"},
		{"inspect", "--format", "png", "j"}, {"run", "--timeout", "soon", "a.json"},
	} {
		r = baton(t, args...).want(t, exitError)
		contains(t, "stderr", r.stderr, "baton: "+args[0]+": ", "usage: baton "+args[0])
	}
}

// syncBuffer is a bytes.Buffer safe for concurrent use.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// interruptibleBaton runs the command with a context the test cancels, as
// Ctrl-C would, once stdout or stderr contains after.
func interruptibleBaton(t *testing.T, after string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errb syncBuffer
	c := &cli{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: os.Getenv, now: time.Now, noSignals: true}
	done := make(chan int, 1)
	go func() { done <- c.main(ctx, args) }()
	deadline := time.After(time.Minute)
	for !strings.Contains(out.String(), after) && !strings.Contains(errb.String(), after) {
		select {
		case code := <-done:
			t.Fatalf("finished with %d before %q appeared\nstdout:\n%s\nstderr:\n%s", code, after, out.String(), errb.String())
		case <-deadline:
			t.Fatalf("%q did not appear\nstdout:\n%s\nstderr:\n%s", after, out.String(), errb.String())
		case <-time.After(5 * time.Millisecond):
		}
	}
	cancel()
	select {
	case code := <-done:
		return result{code, out.String(), errb.String()}
	case <-time.After(time.Minute): // a hang: the drain is seconds at most
		t.Fatal("did not stop after the interrupt")
		return result{}
	}
}
