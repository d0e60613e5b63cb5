package jobtest_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job/jobtest"
)

func TestParseWorkflow(t *testing.T) {
	for _, tc := range []struct {
		text string
		want ast.Node
	}{
		{"log", ast.Act("log", nil)},
		{"log a", ast.Act("log", "a")},
		{"  log   hello world  ", ast.Act("log", "hello world")},
		{"log 3", ast.Act("log", 3)},
		{`log "3"`, ast.Act("log", "3")},
		{"log null", ast.Act("log", nil)},
		{`http.get {"url": "x,y)", "n": [1, 2]}`, ast.Act("http.get", json.RawMessage(`{"url":"x,y)","n":[1,2]}`))},
		{"seq(log a, log b)", ast.Seq(ast.Act("log", "a"), ast.Act("log", "b"))},
		{"par (log a,\n  seq(log b, log c))", ast.Par(ast.Act("log", "a"), ast.Seq(ast.Act("log", "b"), ast.Act("log", "c")))},
		{"try(log a)", ast.Try(ast.Act("log", "a"))},
		{"try(log d, rescue: log e, finally: log f)", ast.Try(ast.Act("log", "d"), ast.Rescue(ast.Act("log", "e")), ast.Finally(ast.Act("log", "f")))},
		{"try(log d, finally: log f, rescue: log e)", ast.Try(ast.Act("log", "d"), ast.Rescue(ast.Act("log", "e")), ast.Finally(ast.Act("log", "f")))},
		{"try(log d, rescue:seq(log e, log e2))", ast.Try(ast.Act("log", "d"), ast.Rescue(ast.Act("log", "e"), ast.Act("log", "e2")))},
	} {
		got, err := jobtest.ParseWorkflow(tc.text)
		if err != nil {
			t.Errorf("ParseWorkflow(%q): %v", tc.text, err)
			continue
		}
		if !ast.Equal(got, tc.want) {
			t.Errorf("ParseWorkflow(%q) = %s, want %s", tc.text, jobtest.FormatWorkflow(got), jobtest.FormatWorkflow(tc.want))
		}
	}
}

func TestParseWorkflowErrors(t *testing.T) {
	for _, tc := range []struct {
		text      string
		line, col int
	}{
		{"", 1, 1},
		{"seq(log a", 1, 10},
		{"seq(log a,)", 1, 11},
		{"seq(log a) log b", 1, 12},
		{"par(log a,\n  bad(log b))", 2, 3},
		{"try(log a, log b)", 1, 12},
		{"try(log a, rescue: log b, rescue: log c)", 1, 27},
		{"log {\"a\": 1", 1, 5},
		{"log a]", 1, 6},
		{"seq(log (a))", 1, 5},
	} {
		_, err := jobtest.ParseWorkflow(tc.text)
		var se *jobtest.SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("ParseWorkflow(%q) = %v, want a *SyntaxError", tc.text, err)
			continue
		}
		if se.Line != tc.line || se.Col != tc.col {
			t.Errorf("ParseWorkflow(%q): error at %d:%d, want %d:%d (%v)", tc.text, se.Line, se.Col, tc.line, tc.col, err)
		}
	}
}

// TestFormatWorkflow checks that FormatWorkflow writes what ParseWorkflow
// reads back as the same tree, payloads included.
func TestFormatWorkflow(t *testing.T) {
	for _, n := range []ast.Node{
		ast.Act("log", nil),
		ast.Act("log", "a"),
		ast.Act("log", "hello world"),
		ast.Act("log", " padded "),
		ast.Act("log", "a,b"),
		ast.Act("log", "f(x)"),
		ast.Act("log", "1"),
		ast.Act("log", "true"),
		ast.Act("log", `say "hi"`),
		ast.Act("log", "a<b"),
		ast.Act("log", "line\nbreak"),
		ast.Act("log", ""),
		ast.Act("log", 42),
		ast.Act("log", map[string]any{"k": []int{1, 2}}),
		ast.Act("log", json.RawMessage(`"\u0061"`)),
		ast.Par(ast.Act("a", nil), ast.Seq(ast.Act("b", "x"), ast.Act("c", nil)),
			ast.Try(ast.Act("d", nil), ast.Rescue(ast.Act("e", nil)), ast.Finally(ast.Act("f", nil), ast.Act("g", nil)))),
	} {
		text := jobtest.FormatWorkflow(n)
		back, err := jobtest.ParseWorkflow(text)
		if err != nil {
			t.Errorf("ParseWorkflow(FormatWorkflow(...) = %q): %v", text, err)
			continue
		}
		if !ast.Equal(back, n) {
			a, _ := ast.Encode(n)
			b, _ := ast.Encode(back)
			t.Errorf("FormatWorkflow wrote %q, which reads back as %s, want %s", text, b, a)
		}
	}
	if got, want := jobtest.FormatWorkflow(ast.Seq(ast.Act("log", "a"), ast.Act("log", "a b"), ast.Act("log", "1"))),
		`seq(log a, log a b, log "1")`; got != want {
		t.Errorf("FormatWorkflow = %s, want %s", got, want)
	}
}
