package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
)

// TestMain lets the test binary run the example itself: with the variable
// set, it is the example, which the test starts in subprocesses.
func TestMain(m *testing.M) {
	if os.Getenv("BATON_RESUME_EXAMPLE") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// example runs the example in a subprocess and returns its output, exit
// status and the steps it ran.
func example(t *testing.T, args ...string) (out string, code int, ran []string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "BATON_RESUME_EXAMPLE=1")
	b, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`(?m)^ran: (\S+) `).FindAllStringSubmatch(string(b), -1) {
		ran = append(ran, m[1])
	}
	return string(b), code, ran
}

func TestCrashThenResume(t *testing.T) {
	db := filepath.Join(t.TempDir(), "resume.db")
	out1, code, first := example(t, "-store", db, "-crash-after", "2", "-step", "20ms")
	if code != crashStatus || !slices.Equal(first, []string{"fetch", "transform"}) {
		t.Fatalf("crash run: exit %d, ran %q, want %d and the first two steps\n%s", code, first, crashStatus, out1)
	}

	out2, code, second := example(t, "-store", db, "-step", "20ms")
	if code != 0 || !slices.Equal(second, []string{"load", "verify", "notify"}) {
		t.Fatalf("resume run: exit %d, ran %q, want 0 and the last three steps\nfirst run:\n%s\nsecond run:\n%s", code, second, out1, out2)
	}
	if !regexp.MustCompile(`2 of 5 steps already done`).MatchString(out2) ||
		!regexp.MustCompile(`job resume-demo v6: succeeded, 5/5`).MatchString(out2) {
		t.Errorf("resume run output:\n%s", out2)
	}
	for _, s := range first {
		if slices.Contains(second, s) {
			t.Errorf("step %s ran twice", s)
		}
	}
}
