package jobtest_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/job/jobtest"
)

// run runs a script and returns what it printed, or the first error.
func run(t *testing.T, env *jobtest.Env, script string) (string, error) {
	t.Helper()
	s, err := jobtest.ParseScript("t.txt", []byte(script))
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	for _, c := range s.Cases() {
		got, err := env.Run(c)
		if err != nil {
			return out.String(), err
		}
		out.WriteString(got)
	}
	return out.String(), nil
}

// TestPackageExample runs the example in the package documentation, so
// that it stays true.
func TestPackageExample(t *testing.T) {
	got, err := run(t, &jobtest.Env{}, `new j1
par(log a, seq(log b, log c))
----

ok par[0]#1 par[1].seq[0]#1
----
`)
	if err != nil {
		t.Fatal(err)
	}
	want := `dispatch par[0]#1 log "a"
dispatch par[1].seq[0]#1 log "b"
job j1 v1: running, 2 outstanding, 0/3 actions settled
par[0]: succeeded
par[1].seq[0]: succeeded
dispatch par[1].seq[1]#1 log "c"
job j1 v2: running, 1 outstanding, 2/3 actions settled
`
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

func TestRunErrors(t *testing.T) {
	for _, tc := range []struct{ script, want string }{
		{"describe\n----\n", "t.txt:1: describe: no job yet"},
		{"new j1\nlog a\n----\n\nfrobnicate\n----\n", "t.txt:5: frobnicate: unknown command"},
		{"new j1\n\tseq(log a,\n\t  log b c(d))\n----\n", "t.txt:3:11: workflow syntax: unexpected '(' in a payload"},
		{"new j1\nlog a\n----\n\ndup root#1\n----\n", "t.txt:5: dup: no result was sent for root#1"},
		{"new j1\nlog a\n----\n\nok out=1\n----\n", "t.txt:5: ok: option out= before any action ID"},
		{"new j1\nlog a\n----\n\nfail root#1 a b\n----\n", "t.txt:5: fail: fail takes one action ID and one message"},
		{"new j1\nlog a\n----\n\nok root#1; crash\n----\n", `t.txt:5: ok: clause starts with "crash"`},
		{"new j1\nlog a\n----\n\nok root#1 \"x\"y\n----\n", "t.txt:5: quoted string"},
		{"new j1\nlog a\n----\n\nreplay from=2\n----\n", "t.txt:5: replay: from=2: want a version from 1 to 1"},
		{"new j1\n----\n", "t.txt:1: new: no workflow"},
		{"new\nlog a\n----\n", "t.txt:1: new: usage"},
		{"new j1\nlog a\n----\n\ndescribe\nmore\n----\n", "t.txt:5: describe takes no input lines"},
		// Time, kinds, firings and cancels.
		{"new j1 start=yesterday\nlog a\n----\n", "t.txt:1: new: start=yesterday: want an RFC 3339 time"},
		{"new j1 failures=yes\nlog a\n----\n", `t.txt:1: new: usage: new ID [start=TIME] [failures=on], got "failures=yes"`},
		{"new j1\nlog a\n----\n\nok root#1 at=+1s\n----\n", "t.txt:5: ok: at=+1s: a time after the start needs a start time"},
		{"new j1 start=2026-01-01T00:00:00Z\nlog a\n----\n\nok root#1 at=soon\n----\n", "t.txt:5: ok: at=soon: want +DURATION"},
		{"new j1\nlog a\n----\n\nfail root#1 x final=yes\n----\n", "t.txt:5: fail: unknown option final= for fail (want kind=, final=true, at= or job=)"},
		{"new j1\nlog a\n----\n\nok root#1 kind=x\n----\n", "t.txt:5: ok: unknown option kind= for ok"},
		{"new j1\nlog a\n----\n\nfire root@deadline\n----\n", "t.txt:5: fire: no transition asked for a timer root@deadline; give its time with at="},
		{"new j1\nlog a\n----\n\nfire\n----\n", "t.txt:5: fire: fire needs an action ID"},
		{"new j1\nlog a\n----\n\ncancel a b\n----\n", "t.txt:5: cancel: cancel takes one reason"},
		{"new j1\nlog a\n----\n\ncancel x; cancel y\n----\n", "t.txt:5: cancel: usage: cancel [REASON]"},
		{"new j1\nlog a\n----\n\ntimers now\n----\n", `t.txt:5: timers: takes no arguments, got "now"`},
	} {
		_, err := run(t, &jobtest.Env{}, tc.script)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("script %q: error %v, want one containing %q", tc.script, err, tc.want)
		}
	}
}

// TestCheck checks that Env calls Check after every step and that its
// failure is an error, not output.
func TestCheck(t *testing.T) {
	calls := 0
	env := &jobtest.Env{Check: func(j job.Job) error {
		calls++
		if j.Version() == 2 {
			return errors.New("broken on purpose")
		}
		return nil
	}}
	_, err := run(t, env, "new j1\nseq(log a, log b)\n----\n\nok seq[0]#1\n----\n")
	if err == nil || !strings.Contains(err.Error(), "t.txt:5: ok: invariant check failed: broken on purpose") {
		t.Errorf("error %v, want the check's failure at t.txt:5", err)
	}
	if calls != 2 {
		t.Errorf("Check called %d times, want 2", calls)
	}
}

// TestHistoryReadsBack checks that history prints steps in the syntax of
// the result commands, so that a history can be pasted back into a script.
func TestHistoryReadsBack(t *testing.T) {
	script := `new j1
par(log a, log b, log c, log d)
----

batch ok par[0]#1 out={"a":"x y"}; fail par[1]#1 "two words"; ok par[2]#1 out="quoted \"it\""; fail par[3]#1 job=x
----
`
	env := &jobtest.Env{}
	if _, err := run(t, env, strings.Replace(script, " job=x", "", 1)); err != nil {
		t.Fatal(err)
	}
	hist, err := run(t, env, "history\n----\n")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(hist, "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("history:\n%s", hist)
	}
	step, ok := strings.CutPrefix(lines[1], "v2 ")
	if !ok {
		t.Fatalf("history:\n%s", hist)
	}
	replayed := &jobtest.Env{}
	if _, err := run(t, replayed, "new j1\npar(log a, log b, log c, log d)\n----\n\nbatch "+step+"\n----\n"); err != nil {
		t.Fatal(err)
	}
	a, _ := job.Encode(env.Job())
	b, _ := job.Encode(replayed.Job())
	if string(a) != string(b) {
		t.Errorf("history line %q does not replay to the same job:\n%s\nwant:\n%s", step, job.Describe(replayed.Job()), job.Describe(env.Job()))
	}
}

// TestInputsPrinted checks that a dispatched action shows its inputs,
// null for an inner node, and that output prints what job.Output gives.
func TestInputsPrinted(t *testing.T) {
	got, err := run(t, &jobtest.Env{}, `new j1
seq(@p par(@a x, @b y), merge<a p b> 7)
----

ok seq[0].par[0]#1 out={"n":1} seq[0].par[1]#1
----

output a b p nope
----
`)
	if err != nil {
		t.Fatal(err)
	}
	want := `dispatch seq[0].par[0]#1 x
dispatch seq[0].par[1]#1 y
job j1 v1: running, 2 outstanding, 0/3 actions settled
seq[0].par[0]: succeeded -> {"n":1}
seq[0].par[1]: succeeded
seq[0] par: succeeded
dispatch seq[1]#1 merge <a={"n":1} p=null b=null> 7
job j1 v2: running, 1 outstanding, 2/3 actions settled
a = {"n":1}
b = null
p: no output
nope: no output
`
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	if _, err := run(t, &jobtest.Env{}, "new j1\nlog\n----\n\noutput\n----\n"); err == nil || !strings.Contains(err.Error(), "usage: output NAME [NAME...]") {
		t.Errorf("output with no name: error %v", err)
	}
}

// TestTimedHistoryReadsBack: history writes firings, cancels, kinds,
// finality and times so that the history pasted back as batches makes the
// same job, step for step.
func TestTimedHistoryReadsBack(t *testing.T) {
	const workflow = `{"version": 1, "root": {"par": [
  {"act": "a", "retry": {"attempts": 3, "initial": "1s", "jitter": 0.5}},
  {"act": "b", "retry": {"attempts": 3, "initial": "1s"}},
  {"try": {"act": "c"}, "finally": {"act": "f"}, "deadline": "1m"}]}}`
	script := "new j1 start=2026-01-01T00:00:00Z\n" + workflow + `
----

batch fail par[0]#1 "two words" kind=k at=+1s; ok par[2].body#1 out={"n":1} at=+2s
----

fire par[0]@retry#2
----

fail par[1]#1 x kind=card_declined final=true at=2026-01-01T00:00:03.5Z
----

batch cancel "stop it"; fail par[0]#2 y
----
`
	env := &jobtest.Env{}
	if _, err := run(t, env, script); err != nil {
		t.Fatal(err)
	}
	hist, err := run(t, env, "history\n----\n")
	if err != nil {
		t.Fatal(err)
	}
	// par[0] fails at +1s and waits 1s × 1.3709767761220015, its jitter's
	// factor (FNV-1a over "j1\x00par[0]\x00" + "2", splitmix64, worked
	// out outside Go): the firing is at +2.370976776s.
	want := `v1 new j1
v2 fail par[0]#1 "two words" kind=k at=+1s; ok par[2].body#1 out={"n":1} at=+2s
v3 fire par[0]@retry#2 at=+2.370976776s
v4 fail par[1]#1 x kind=card_declined final=true at=+3.5s
v5 fail par[0]#2 y; cancel "stop it"
`
	if hist != want {
		t.Fatalf("history:\n%s\nwant:\n%s", hist, want)
	}
	replay := "new j1 start=2026-01-01T00:00:00Z\n" + workflow + "\n----\n"
	for _, l := range strings.Split(strings.TrimSuffix(hist, "\n"), "\n")[1:] {
		_, step, _ := strings.Cut(l, " ")
		replay += "\nbatch " + step + "\n----\n"
	}
	replayed := &jobtest.Env{}
	if _, err := run(t, replayed, replay); err != nil {
		t.Fatal(err)
	}
	a, _ := job.Encode(env.Job())
	b, _ := job.Encode(replayed.Job())
	if string(a) != string(b) || env.Job().Version() != 5 {
		t.Errorf("the history does not replay to the same job:\n%s\nwant:\n%s", job.Describe(replayed.Job()), job.Describe(env.Job()))
	}
}
