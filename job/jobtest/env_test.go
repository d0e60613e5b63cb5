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
