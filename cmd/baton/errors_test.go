package main

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestErrorMessages runs each command with bad inputs and checks that the
// message names what is wrong, says it once (no "open PATH: open PATH:",
// no phrase of two words twice) and shows no Go package prefix.
func TestErrorMessages(t *testing.T) {
	tmp := t.TempDir()
	db := filepath.Join(tmp, "baton.db")
	good := writeWorkflow(t, "ok.json", helloJSON)
	ran := baton(t, "run", good, "--store", db, "--id", "j1").want(t, exitOK)
	// How many steps a run takes depends on how results happened to
	// arrive together; the run says which version it ended at.
	last := regexp.MustCompile(`actions settled, v(\d+)`).FindStringSubmatch(ran.stdout)
	if last == nil {
		t.Fatalf("run printed no final version:\n%s", ran.stdout)
	}
	missing := filepath.Join(tmp, "missing.json")
	notDB := writeWorkflow(t, "notdb.db", "this is not a store\n")
	noDir := filepath.Join(tmp, "nope", "x.db")
	underFile := filepath.Join(good, "x.db")

	type tc struct {
		args []string
		want string // the message must contain this
		code int    // the exit status; 0 means exitError
	}
	cases := []tc{
		{args: []string{"run", missing, "--store", db}, want: "workflow file " + missing + " does not exist"},
		{args: []string{"run", tmp, "--store", db}, want: "workflow file " + tmp + " is not a regular file"},
		{args: []string{"run", good, "--store", noDir}, want: "directory " + filepath.Dir(noDir) + " does not exist"},
		{args: []string{"run", good, "--store", notDB}, want: "cannot open store " + notDB + ": not a bbolt database", code: exitStore},
		{args: []string{"run", good, "--store", underFile}, want: "cannot open store " + underFile + ": not a directory"},
		{args: []string{"run", good, "--store", db, "--id", "a b"}, want: `job ID "a b" has ' ' at byte 1`},
		{args: []string{"run", good, "--store", db, "--id", "j1"}, want: "job j1 already exists in " + db},
		{args: []string{"run", good, "--store", db, "--workers", "x"}, want: `invalid value "x" for flag -workers`},
		{args: []string{"run", good, "--store", db, "--timeout", "soon"}, want: `invalid value "soon" for flag -timeout`},
		{args: []string{"run", good, "--store", db, "--timeout", "-1s"}, want: "--timeout must not be negative, got -1s"},
		{args: []string{"resume", "--store", noDir}, want: "no store at " + noDir},
		{args: []string{"resume", "--store", notDB}, want: "cannot open store " + notDB + ": not a bbolt database", code: exitStore},
		{args: []string{"status", "--store", underFile}, want: "cannot open store " + underFile + ": not a directory"},
		{args: []string{"status", "j9", "--store", db}, want: "job j9 not found in " + db},
		{args: []string{"history", "a/b", "--store", db}, want: `job ID "a/b" has '/' at byte 1`},
		{args: []string{"history", "j1", "--store", notDB}, want: "cannot open store " + notDB + ": not a bbolt database", code: exitStore},
		{args: []string{"inspect", "", "--store", db}, want: "empty job ID"},
		{args: []string{"inspect", "j1", "--version", "99", "--store", db}, want: "job j1 in " + db + " has versions 1 to " + last[1] + ", not 99"},
		{args: []string{"inspect", "j1", "--version", "x", "--store", db}, want: `invalid value "x" for flag -version`},
		{args: []string{"inspect", "j1", "--format", "png", "--store", db}, want: `unknown --format "png"`},
	}
	// /proc/self/mem is a regular file whose first bytes cannot be read.
	if _, err := os.Stat("/proc/self/mem"); err == nil {
		cases = append(cases, tc{args: []string{"run", "/proc/self/mem", "--store", db}, want: "cannot read workflow file /proc/self/mem: input/output error"})
	}
	if os.Geteuid() != 0 { // root reads anything
		unreadable := writeWorkflow(t, "unreadable.json", helloJSON)
		if err := os.Chmod(unreadable, 0); err != nil {
			t.Fatal(err)
		}
		cases = append(cases, tc{args: []string{"run", unreadable, "--store", db}, want: "cannot read workflow file " + unreadable + ": permission denied"})
	}
	for _, c := range cases {
		code := c.code
		if code == 0 {
			code = exitError
		}
		r := baton(t, c.args...).want(t, code)
		msg, _, _ := strings.Cut(r.stderr, "\n") // a usage error adds the usage after the first line
		if !strings.HasPrefix(msg, "baton: ") || !strings.Contains(msg, c.want) {
			t.Errorf("baton %q: message %q, want one containing %q", c.args, msg, c.want)
		}
		for _, p := range []string{c.args[1], db, notDB, noDir, underFile, missing} {
			if strings.Count(msg, "open "+p+":") > 0 {
				t.Errorf("baton %q: message %q repeats the os package's \"open PATH:\"", c.args, msg)
			}
		}
		if w := repeatedPair(msg); w != "" {
			t.Errorf("baton %q: message %q says %q twice", c.args, msg, w)
		}
		for _, pkg := range []string{"store/bolt:", "store:", "job:", "json:"} {
			if strings.Contains(msg, pkg) {
				t.Errorf("baton %q: message %q has the Go package prefix %q", c.args, msg, pkg)
			}
		}
	}
	if _, err := os.Stat(filepath.Dir(noDir)); err == nil {
		t.Error("a command made the directory of a --store path")
	}
}

// repeatedPair returns the first pair of consecutive words that occurs
// twice in msg, ignoring punctuation around words, or "".
func repeatedPair(msg string) string {
	words := strings.Fields(msg)
	for i := range words {
		words[i] = strings.Trim(words[i], `:;,.()'"`)
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(words); i++ {
		pair := words[i] + " " + words[i+1]
		if seen[pair] {
			return pair
		}
		seen[pair] = true
	}
	return ""
}

// TestSubmitFailedSaysJobAndPlaceOnce: a failed submit names the job and
// the store once: a store's error names both already (a full disk:
// "store/bolt: PATH: job ID: write: no space left on device"); one that
// does not gets them from the command.
func TestSubmitFailedSaysJobAndPlaceOnce(t *testing.T) {
	for _, c := range []struct{ err, want string }{
		{"store/bolt: /s/b.db: job j1: write: no space left on device", "f.json: submit: store/bolt: /s/b.db: job j1: write: no space left on device"},
		{"job j1: the connection was lost", "f.json: submit to /s/b.db: job j1: the connection was lost"},
		{"the connection was lost", "f.json: submit job j1 to /s/b.db: the connection was lost"},
		{"job j10: not this one", "f.json: submit job j1 to /s/b.db: job j10: not this one"},
	} {
		if got := submitFailed("f.json", "j1", "/s/b.db", errors.New(c.err)).Error(); got != c.want {
			t.Errorf("submitFailed of %q = %q, want %q", c.err, got, c.want)
		}
	}
}
