package jobtest_test

import (
	"strings"
	"testing"

	"github.com/batonwf/baton/job/jobtest"
)

const sample = `# A comment.

new j1
par(log a,
    log b)
----
dispatch par[0]#1 log "a"
job j1 v1: running

# Two blank lines follow.


describe
----
----
line one

line three
----
----

crash
----
`

func TestParseScript(t *testing.T) {
	s, err := jobtest.ParseScript("sample.txt", []byte(sample))
	if err != nil {
		t.Fatal(err)
	}
	cs := s.Cases()
	if len(cs) != 3 {
		t.Fatalf("got %d cases, want 3", len(cs))
	}
	want := []struct {
		line  int
		cmd   string
		input []string
		want  string
	}{
		{3, "new j1", []string{"par(log a,", "    log b)"}, "dispatch par[0]#1 log \"a\"\njob j1 v1: running\n"},
		{13, "describe", nil, "line one\n\nline three\n"},
		{22, "crash", nil, ""},
	}
	for i, w := range want {
		c := cs[i]
		if c.Pos.Line != w.line || c.Pos.File != "sample.txt" || c.Cmd != w.cmd || strings.Join(c.Input, "|") != strings.Join(w.input, "|") || c.Want != w.want {
			t.Errorf("case %d = %+v, want %+v", i, *c, w)
		}
	}
	if got := string(s.Bytes()); got != sample {
		t.Errorf("Bytes() does not give back the file:\n%s\nwant:\n%s", got, sample)
	}

	// Rewriting: outputs with and without blank lines switch forms.
	cs[0].Want = "one\n\ntwo\n"
	cs[1].Want = "plain\n"
	cs[2].Want = "last"
	out := string(s.Bytes())
	for _, frag := range []string{"----\n----\none\n\ntwo\n----\n----\n", "describe\n----\nplain\n\n", "crash\n----\nlast\n"} {
		if !strings.Contains(out, frag) {
			t.Errorf("rewritten script lacks %q:\n%s", frag, out)
		}
	}
	again, err := jobtest.ParseScript("sample.txt", []byte(out))
	if err != nil {
		t.Fatal(err)
	}
	if got := again.Cases()[0].Want; got != "one\n\ntwo\n" {
		t.Errorf("rewritten output reads back as %q", got)
	}
}

func TestParseScriptErrors(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"new j1\nlog a\n", "f.txt:1: command \"new j1\" has no ---- line"},
		{"new j1\nlog a\n\n----\n", "f.txt:3: blank line after command"},
		{"# c\n----\n", "f.txt:2: ---- with no command"},
		{"describe\n----\n----\nout\n", "f.txt:3: output opened with a doubled ---- is not closed"},
		{"describe\n----\n----\nout\n----\n----\nmore\n", "f.txt:7: want a blank line after the closing"},
	} {
		_, err := jobtest.ParseScript("f.txt", []byte(tc.text))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseScript(%q) = %v, want an error containing %q", tc.text, err, tc.want)
		}
	}
}
