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

		// Names, afters, inputs and dags.
		{"dag(@a fetch 1, @b fetch 2, @c[a b] merge<a b>)", ast.Dag(
			ast.Act("fetch", 1).Named("a"), ast.Act("fetch", 2).Named("b"),
			ast.Act("merge", nil).Named("c").WithAfter("a", "b").WithInputs("a", "b"))},
		{"@x log", ast.Act("log", nil).Named("x")},
		{"@x[] log", ast.Act("log", nil).Named("x")},
		{"@x[ a\n b ]log<>", ast.Act("log", nil).Named("x").WithAfter("a", "b")},
		{"@x log<a> {\"n\": [1, 2]}", ast.Act("log", json.RawMessage(`{"n":[1,2]}`)).Named("x").WithInputs("a")},
		{"log<a.b _c-d> hello world", ast.Act("log", "hello world").WithInputs("a.b", "_c-d")},
		{"log <a>", ast.Act("log", "<a>")},
		{"log a<b>", ast.Act("log", "a<b>")},
		{"email a@b.c", ast.Act("email", "a@b.c")},
		{"seq(@p par(@a x, @b y), merge<a b p>)", ast.Seq(
			ast.Par(ast.Act("x", nil).Named("a"), ast.Act("y", nil).Named("b")).Named("p"),
			ast.Act("merge", nil).WithInputs("a", "b", "p"))},
		{"dag(@t[s] try(@b a, rescue: @r b, finally: @f c), @s seq(d))", ast.Dag(
			ast.Try(ast.Act("a", nil).Named("b"), ast.Rescue(ast.Act("b", nil).Named("r")), ast.Finally(ast.Act("c", nil).Named("f"))).Named("t").WithAfter("s"),
			ast.Seq(ast.Act("d", nil)).Named("s"))},
		// Parsed, for Validate to refuse: an after outside a dag, a dag child
		// without a name, a name that is not one.
		{"seq(@a[b] x, y)", ast.Seq(ast.Act("x", nil).Named("a").WithAfter("b"), ast.Act("y", nil))},
		{"dag(x)", ast.Dag(ast.Act("x", nil))},
		{"@1a x", ast.Act("x", nil).Named("1a")},
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
		{"@ log", 1, 2},
		{"@", 1, 2},
		{"@a @b log", 1, 4},
		{"@a[b log", 1, 9},
		{"@a[b,c] log", 1, 5},
		{"log<a", 1, 6},
		{"log<a,b> x", 1, 6},
		{"seq<a>(log)", 1, 7},
		{"dag(@a x,\n  @b[a)", 2, 7},
		{"dog(@a x)", 1, 1},
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
		ast.Act("log", "<b>"),
		ast.Act("log", "@x"),
		ast.Act("log", "<b>").Named("l").WithInputs("x", "y"),
		ast.Seq(
			ast.Dag(
				ast.Act("fetch", 1).Named("a"),
				ast.Par(ast.Act("x", nil).Named("x"), ast.Act("y", nil)).Named("b").WithAfter("a"),
				ast.Try(ast.Act("merge", "a b").WithInputs("a", "x"), ast.Finally(ast.Act("z", nil))).Named("c").WithAfter("a", "b"),
			).Named("d"),
			ast.Act("done", nil).WithInputs("d", "x", "a"),
		),
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
	if got, want := jobtest.FormatWorkflow(ast.Dag(ast.Act("fetch", 1).Named("a"), ast.Act("fetch", 2).Named("b"),
		ast.Act("merge", nil).Named("c").WithAfter("a", "b").WithInputs("a", "b"))),
		`dag(@a fetch 1, @b fetch 2, @c[a b] merge<a b>)`; got != want {
		t.Errorf("FormatWorkflow = %s, want %s", got, want)
	}
}
