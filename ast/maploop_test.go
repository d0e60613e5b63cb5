package ast_test

import (
	"strings"
	"testing"

	"github.com/batonwf/baton/ast"
)

// TestMapLoopRoundTrip: a map and a loop write canonically, read back
// equal and make the document version 3.
func TestMapLoopRoundTrip(t *testing.T) {
	w := ast.Seq(
		ast.Act("list", nil).Named("xs"),
		ast.Map("xs", ast.Act("each", nil).WithInputs("item", "index")).WithLimit(4).WithNeed(2).Named("m"),
		ast.Loop(ast.Seq(ast.Act("poll", nil).Named("p"), ast.Act("log", nil)), "p", map[string]any{"done": true}, 10),
	)
	b, err := ast.Encode(w)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"version":3,"root":{"seq":[{"act":"list","name":"xs"},` +
		`{"map":{"over":"xs","do":{"act":"each","inputs":["item","index"]},"limit":4,"need":2},"name":"m"},` +
		`{"loop":{"do":{"seq":[{"act":"poll","name":"p"},{"act":"log"}]},"until":{"output":"p","equals":{"done":true}},"max":10}}]}}`
	if string(b) != want {
		t.Fatalf("Encode:\n got %s\nwant %s", b, want)
	}
	n, err := ast.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if !ast.Equal(n, w) {
		t.Fatalf("Decode(Encode(w)) differs from w")
	}
	if ast.Equal(n, ast.Seq(w.Children[0], w.Children[1], ast.Loop(w.Children[2].Children[0], "p", true, 10))) {
		t.Fatalf("Equal ignores until's value")
	}
	var paths []string
	ast.Walk(w, func(path string, _ *ast.Node) bool { paths = append(paths, path); return true })
	if got := strings.Join(paths, " "); got != " seq[0] seq[1] seq[1].map[0] seq[2] seq[2].loop[0] seq[2].loop[0].seq[0] seq[2].loop[0].seq[1]" {
		t.Fatalf("Walk's paths: %s", got)
	}
	for _, p := range []string{"map[12]", "loop[3]"} {
		if e, _, _, ok := ast.CutEdge(p); !ok || e.String() != p {
			t.Errorf("CutEdge(%s) = %v, %v", p, e, ok)
		}
	}
}

// TestMapLoopRefused: the bad input of maps and loops, each refused
// naming what and where.
func TestMapLoopRefused(t *testing.T) {
	seq := func(nodes ...string) string {
		return `{"version":3,"root":{"seq":[` + strings.Join(nodes, ",") + `]}}`
	}
	const xs = `{"act":"list","name":"xs"}`
	loop := func(do, until, max string) string {
		return `{"loop":{"do":` + do + `,"until":` + until + `,"max":` + max + `}}`
	}
	const poll = `{"act":"poll","name":"p"}`
	for _, tc := range []struct{ doc, want string }{
		{`{"version":2,"root":{"seq":[` + xs + `,{"map":{"over":"xs","do":{"act":"x"}}}]}}`, `seq[1]: "map" needs workflow version 3 (this document is version 2)`},
		{`{"version":1,"root":{"loop":{"do":{"act":"p","name":"p"},"until":{"output":"p","equals":1},"max":2}}}`, `root: "loop" needs workflow version 3 (this document is version 1)`},
		{seq(xs, `{"map":{"do":{"act":"x"}}}`), `seq[1]: map has no "over"`},
		{seq(xs, `{"map":{"over":"xs"}}`), `seq[1]: map has no "do"`},
		{seq(xs, `{"map":{"over":"xs","do":{"act":"x"},"each":1}}`), `seq[1]: unknown field "each" in map (allowed: over, do, limit, need)`},
		{seq(xs, `{"map":{"over":"xs","do":{"act":"x"},"limit":0}}`), `seq[1]: limit 0 is out of range (at least 1; leave it out for none)`},
		{seq(xs, `{"map":{"over":"xs","do":{"act":"x"},"need":0}}`), `seq[1]: need 0 is out of range`},
		{seq(xs, `{"map":{"over":"xs","do":{"act":"x"},"need":10001}}`), `seq[1]: need 10001 is out of range (1 to 10000, the most copies a map makes)`},
		{`{"version":3,"root":{"par":[` + xs + `,{"map":{"over":"xs","do":{"act":"x"}}}]}}`,
			`par[1]: over "xs" (par[0]) is a sibling in a par: not sure to have succeeded when the map starts`},
		{seq(`{"seq":[{"act":"l"}],"name":"xs"}`, `{"map":{"over":"xs","do":{"act":"x"}}}`), `seq[1]: over "xs" (seq[0]) is a seq, not a leaf`},
		{seq(xs, `{"map":{"over":"item","do":{"act":"x"}}}`), `seq[1]: over "item": item and index are inputs of a leaf inside a map, not names of nodes`},
		{seq(xs, `{"map":{"over":"xs","do":{"act":"x","name":"in"}}}`, `{"act":"y","inputs":["in"]}`),
			`seq[2]: input "in" (seq[1].map[0]) is inside the map at seq[1], whose nodes exist once per copy: not sure to have succeeded`},
		{seq(`{"act":"x","name":"item"}`), `seq[0]: name "item" is reserved`},
		{seq(`{"act":"x","name":"index"}`), `seq[0]: name "index" is reserved`},
		{seq(`{"act":"x","inputs":["item"]}`), `seq[0]: input "item" is only for a leaf inside a map`},
		{seq(xs, `{"loop":{"do":{"act":"x","inputs":["index"]},"until":{"output":"xs","equals":1},"max":2}}`), `seq[1].loop[0]: input "index" is only for a leaf inside a map`},
		{seq(loop(poll, `{"output":"p","equals":1}`, "0")), `seq[0]: loop max 0 is out of range (1 to 10000`},
		{seq(loop(poll, `{"output":"p","equals":1}`, "10001")), `seq[0]: loop max 10001 is out of range (1 to 10000)`},
		{seq(loop(poll, `{"output":"p","equals":1}`, "1.5")), `seq[0]: max must be a whole number, got 1.5`},
		{seq(`{"loop":{"do":` + poll + `,"until":{"output":"p","equals":1}}}`), `seq[0]: loop max 0 is out of range (1 to 10000; a loop must have one)`},
		{seq(`{"loop":{"do":` + poll + `,"max":3}}`), `seq[0]: loop has no "until"`},
		{seq(loop(poll, `{"output":"p"}`, "3")), `seq[0]: "until" has no "equals"`},
		{seq(xs, loop(poll, `{"output":"xs","equals":1}`, "3")), `seq[1]: until "xs" (seq[0]) is not inside this loop's body`},
		{seq(loop(`{"seq":[{"act":"a"}],"name":"s"}`, `{"output":"s","equals":1}`, "3")), `seq[0]: until "s" (seq[0].loop[0]) is a seq, not a leaf`},
		{seq(xs, loop(`{"choice":{"on":"xs","cases":[{"when":1,"do":`+poll+`}],"else":{"act":"e"}}}`, `{"output":"p","equals":1}`, "3")),
			`seq[1]: until "p" (seq[1].loop[0].choice[0]) is inside the choice at seq[1].loop[0], whose success says nothing of any one case: not sure to have succeeded when an iteration has`},
		{seq(loop(poll, `{"output":"p","equals":1}`, "3"), `{"act":"y","inputs":["p"]}`),
			`seq[1]: input "p" (seq[0].loop[0]) is inside the loop at seq[0], whose nodes exist once per iteration`},
	} {
		_, err := ast.Decode([]byte(tc.doc))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Decode(%s):\n got %v\nwant %q", tc.doc, err, tc.want)
		}
	}
	// The DSL's nodes are held to the same rules by Validate.
	for _, tc := range []struct {
		n    ast.Node
		want string
	}{
		{ast.Loop(ast.Act("p", nil).Named("p"), "p", 1, 0), "root: loop max 0 is out of range"},
		{ast.Loop(ast.Act("p", nil).Named("p"), "p", 1, ast.MaxIterations+1), "root: loop max 10001 is out of range (1 to 10000)"},
		{ast.Loop(ast.Act("p", nil).Named("p"), "p", func() {}, 2), "root: value does not marshal to JSON"},
		{ast.Seq(ast.Act("l", nil).Named("xs"), ast.Map("xs", ast.Act("x", nil)).WithNeed(ast.MaxCopies+1)), "seq[1]: need 10001 is out of range"},
		{ast.Seq(ast.Act("l", nil).Named("xs"), ast.Map("", ast.Act("x", nil))), "seq[1]: map has no over"},
		{ast.Node{Kind: ast.KindMap, Over: "xs"}, "root: map has 0 nodes to run (want one: its template)"},
		{ast.Act("x", nil).WithLimit(2), "root: limit on a act node (only a par or a map has it)"},
	} {
		err := ast.Validate(tc.n)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Validate: got %v\nwant %q", err, tc.want)
		}
	}
	// Inside a map, item and index are inputs, and names resolve in the copy.
	ok := ast.Seq(ast.Act("l", nil).Named("xs"),
		ast.Map("xs", ast.Seq(ast.Act("a", nil).Named("a").WithInputs("item"), ast.Act("b", nil).WithInputs("a", "index", "xs"))))
	if err := ast.Validate(ok); err != nil {
		t.Fatalf("Validate of a map reading item, index, its copy's node and one outside: %v", err)
	}
}

// TestElements: what a map runs a copy for, and its failures.
func TestElements(t *testing.T) {
	for _, tc := range []struct{ out, want, failure string }{
		{`[1, "a", {"b" : [ 2 ]}, null]`, `1|"a"|{"b":[2]}|null`, ""},
		{`[]`, ``, ""},
		{``, ``, "not_an_array"},
		{`null`, ``, "not_an_array"},
		{`{"a":1}`, ``, "not_an_array"},
		{`[1,`, ``, "not_an_array"},
		{`[` + strings.Repeat(`0,`, ast.MaxCopies-1) + `0]`, strings.TrimSuffix(strings.Repeat("0|", ast.MaxCopies), "|"), ""},
		{`[` + strings.Repeat(`0,`, ast.MaxCopies) + `0]`, ``, "map_too_large"},
	} {
		elems, failure := ast.Elements([]byte(tc.out))
		var got []string
		for _, e := range elems {
			got = append(got, string(e))
		}
		if failure != tc.failure || strings.Join(got, "|") != tc.want {
			t.Errorf("Elements(%.40s): %q (%d), %q; want %.40q, %q", tc.out, strings.Join(got, "|"), len(got), failure, tc.want, tc.failure)
		}
	}
}
