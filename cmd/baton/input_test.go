package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// batonStdin runs the command in-process with stdin as its standard input.
func batonStdin(t *testing.T, stdin io.Reader, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	c := &cli{stdin: stdin, stdout: &out, stderr: &errb, getenv: os.Getenv, now: time.Now, noSignals: true}
	code := c.main(context.Background(), args)
	return result{code, out.String(), errb.String()}
}

// endless is a reader that never runs out of spaces.
type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	return len(p), nil
}

func TestRunNotARegularFile(t *testing.T) {
	db := filepath.Join(t.TempDir(), "baton.db")
	dir := t.TempDir()
	for _, file := range []string{os.DevNull, "/dev/zero", dir} {
		if _, err := os.Stat(file); err != nil {
			t.Logf("skipping %s: %v", file, err)
			continue
		}
		r := baton(t, "run", file, "--store", db).want(t, exitError)
		contains(t, "stderr", r.stderr, "baton: workflow file "+file+" is not a regular file")
	}
	if _, err := os.Stat(db); err == nil {
		t.Error("the store was made for a file that is not a workflow")
	}
}

func TestRunFileTooBig(t *testing.T) {
	db := filepath.Join(t.TempDir(), "baton.db")
	file := filepath.Join(t.TempDir(), "big.json")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	size := int64(maxWorkflowBytes + 1)
	if err := os.Truncate(file, size); err != nil { // sparse: takes no room
		t.Fatal(err)
	}
	r := baton(t, "run", file, "--store", db).want(t, exitError)
	contains(t, "stderr", r.stderr, fmt.Sprintf("baton: workflow file %s is %d bytes; workflow files are limited to 16 MiB", file, size))

	r = baton(t, "run", "--help").want(t, exitOK)
	contains(t, "help", r.stdout, "limited to 16 MiB", "FILE is -")
}

func TestRunFromStdin(t *testing.T) {
	db := filepath.Join(t.TempDir(), "baton.db")
	r := batonStdin(t, strings.NewReader(helloJSON), "run", "-", "--store", db).want(t, exitOK)
	contains(t, "stdout", r.stdout, "par[0]#1: a\n", " succeeded: 5/6 actions settled")
	id := regexp.MustCompile(`(?m)^job (\S+) succeeded: `).FindStringSubmatch(r.stdout)
	if id == nil || !regexp.MustCompile(`^stdin-\d{8}T\d{6}\.\d{3}Z$`).MatchString(id[1]) {
		t.Errorf("default job ID for standard input %q, want stdin-YYYYMMDDTHHMMSS.mmmZ", id)
	}

	r = batonStdin(t, strings.NewReader(`{"version":1,"root":{"seq":[]}}`), "run", "-", "--store", db).want(t, exitError)
	contains(t, "stderr", r.stderr, "baton: standard input: workflow: ")

	r = batonStdin(t, endless{}, "run", "-", "--store", db).want(t, exitError)
	contains(t, "stderr", r.stderr, "baton: standard input holds more than 16 MiB; workflows are limited to 16 MiB")
}
