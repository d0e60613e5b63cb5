package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestRunVerbose: 'baton run --verbose' shows what ran: each action's
// start and success, each failed attempt at WARN with its job, action,
// attempt, kind and message, and the job's end with its reason; the log
// action's lines name the job. Without --verbose, only the failures are
// logged.
func TestRunVerbose(t *testing.T) {
	db := filepath.Join(t.TempDir(), "baton.db")
	file := writeWorkflow(t, "retry.json", `{"version":1,"root":{"seq":[
		{"act":"log","payload":"hello"},
		{"act":"fail","payload":"card declined","retry":{"attempts":2,"initial":"1ms"}}
	]}}`)
	r := baton(t, "run", file, "--store", db, "--id", "v-1", "--verbose").want(t, exitFailed)
	contains(t, "stdout", r.stdout, "v-1 seq[0]#1: hello\n")
	for _, re := range []string{
		`(?m)^baton: DEBUG action started job=v-1 action=seq\[0\]#1 attempt=1 name=log$`,
		`(?m)^baton: DEBUG action succeeded job=v-1 action=seq\[0\]#1 attempt=1 name=log took=\S+$`,
		`(?m)^baton: WARN action failed job=v-1 action=seq\[1\]#1 attempt=1 name=fail kind="" message="card declined" took=\S+$`,
		`(?m)^baton: DEBUG timer armed job=v-1 timer=seq\[1\]@retry#2 due=\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`,
		`(?m)^baton: WARN action failed job=v-1 action=seq\[1\]#2 attempt=2 name=fail kind="" message="card declined" took=\S+$`,
		`(?m)^baton: INFO job finished job=v-1 status=failed version=\d+ failed_at=seq\[1\] name=fail kind="" message="card declined"$`,
	} {
		if !regexp.MustCompile(re).MatchString(r.stderr) {
			t.Errorf("stderr does not match %s:\n%s", re, r.stderr)
		}
	}

	r = baton(t, "run", file, "--store", db, "--id", "v-2").want(t, exitFailed)
	if strings.Contains(r.stderr, "DEBUG") || strings.Contains(r.stderr, "INFO") {
		t.Errorf("without --verbose, DEBUG or INFO lines:\n%s", r.stderr)
	}
	contains(t, "stderr", r.stderr, `baton: WARN action failed job=v-2 action=seq[1]#2 attempt=2 name=fail kind="" message="card declined" took=`)
}
