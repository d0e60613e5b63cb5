package ast_test

import (
	"strings"
	"testing"

	"github.com/batonwf/baton/ast"
)

// TestLang3RoundTrip: every node and key of version 3 writes canonically,
// reads back equal, and makes the document version 3; a tree without
// them stays at its older version.
func TestLang3RoundTrip(t *testing.T) {
	w := ast.Seq(
		ast.Act("check", nil).Named("c"),
		ast.Choice("c",
			ast.When("a", ast.Act("x", 1)),
			ast.WhenAny([]any{1, 2.5, nil}, ast.Act("y", nil)),
			ast.Else(ast.Act("z", nil))).AllMatching(),
		ast.Dag(ast.Act("p", nil).Named("p"), ast.Act("q", nil).Named("q").WithAfter("p").WithWhen("c", map[string]any{"ok": true})),
		ast.Par(ast.Act("r", nil), ast.Act("s", nil)).WithLimit(1),
		ast.Race(ast.Act("a", nil), ast.Act("b", nil), ast.Act("c", nil)).WithNeed(2),
		ast.End("done"),
	)
	b, err := ast.Encode(w)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"version":3,"root":{"seq":[{"act":"check","name":"c"},` +
		`{"choice":{"on":"c","cases":[{"when":"a","do":{"act":"x","payload":1}},{"when":{"any":[1,2.5,null]},"do":{"act":"y"}}],"else":{"act":"z"},"multi":true}},` +
		`{"dag":[{"name":"p","do":{"act":"p"}},{"name":"q","after":["p"],"when":{"output":"c","equals":{"ok":true}},"do":{"act":"q"}}]},` +
		`{"par":[{"act":"r"},{"act":"s"}],"limit":1},` +
		`{"race":[{"act":"a"},{"act":"b"},{"act":"c"}],"need":2},{"end":"done"}]}}`
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
	if v := ast.VersionOf(ast.Race(ast.Act("a", nil), ast.Act("b", nil))); v != 2 {
		t.Fatalf("VersionOf a race: %d, want 2", v)
	}
}

// TestLang3Refused: a key of version 3 in an older document is refused
// naming the version that has it; bad values are refused naming what and
// where.
func TestLang3Refused(t *testing.T) {
	for _, tc := range []struct{ doc, want string }{
		{`{"version":2,"root":{"seq":[{"act":"c","name":"c"},{"choice":{"on":"c","cases":[{"when":1,"do":{"act":"x"}}]}}]}}`,
			`seq[1]: "choice" needs workflow version 3 (this document is version 2)`},
		{`{"version":1,"root":{"par":[{"act":"x"}],"limit":2}}`, `root: "limit" needs workflow version 3 (this document is version 1)`},
		{`{"version":2,"root":{"race":[{"act":"x"},{"act":"y"}],"need":1}}`, `root: "need" needs workflow version 3`},
		{`{"version":2,"root":{"end":"stop"}}`, `root: "end" needs workflow version 3`},
		{`{"version":3,"root":{"seq":[{"act":"c","name":"c"},{"choice":{"on":"c","cases":[]}}]}}`, "seq[1]: choice has no cases"},
		{`{"version":3,"root":{"seq":[{"act":"c","name":"c"},{"choice":{"cases":[{"when":1,"do":{"act":"x"}}]}}]}}`, `seq[1]: choice has no "on"`},
		{`{"version":3,"root":{"par":[{"act":"c","name":"c"},{"choice":{"on":"c","cases":[{"when":1,"do":{"act":"x"}}]}}]}}`,
			`par[1]: on "c" (par[0]) is a sibling in a par: not sure to have succeeded when the choice starts`},
		{`{"version":3,"root":{"seq":[{"seq":[{"act":"c"}],"name":"c"},{"choice":{"on":"c","cases":[{"when":1,"do":{"act":"x"}}]}}]}}`,
			`seq[1]: on "c" (seq[0]) is a seq, not a leaf`},
		{`{"version":3,"root":{"seq":[{"act":"c"},{"choice":{"on":"nope","cases":[{"when":1,"do":{"act":"x"}}]}}]}}`,
			`seq[1]: on "nope": no node has this name`},
		{`{"version":3,"root":{"seq":[{"act":"c","name":"c"},{"choice":{"on":"c","cases":[{"when":1,"do":{"act":"x","name":"in"}}]}},{"act":"u","inputs":["in"]}]}}`,
			`seq[2]: input "in" (seq[1].choice[0]) is inside the choice at seq[1], whose success says nothing of any one case`},
		{`{"version":3,"root":{"par":[{"act":"x"}],"limit":0}}`, "root: limit 0 is out of range (at least 1; leave it out for none)"},
		{`{"version":3,"root":{"dag":[{"name":"x","do":{"act":"x"}}],"limit":1}}`, "root: limit on a dag is not supported yet"},
		{`{"version":3,"root":{"race":[{"act":"x"},{"act":"y"}],"need":3}}`, "root: need 3 is out of range (1 to the race's 2 children)"},
		{`{"version":3,"root":{"seq":[{"act":"x"}],"limit":2}}`, `root: unknown field "limit" in seq node`},
		{`{"version":3,"root":{"end":""}}`, "root: end has no reason"},
		{`{"version":3,"root":{"seq":[{"act":"c","name":"c"},{"dag":[{"name":"a","do":{"act":"a"}},{"name":"b","when":{"output":"c","equals":1},"do":{"act":"b"}},{"name":"d","after":["b"],"do":{"act":"d","inputs":["b"]}}]}]}}`,
			`seq[1].dag[2]: input "b" (seq[1].dag[1]) is under the dag child "b", which has a guard (when) and may be skipped`},
		{`{"version":3,"root":{"dag":[{"name":"a","do":{"act":"a","name":"x"}},{"name":"b","when":{"output":"a","equals":1},"do":{"act":"b"}}]}}`,
			`dag[1]: when "a" (dag[0]) is a sibling in a dag that this node is not after, directly or through others: not sure to have succeeded when this dag child is ready`},
		{`{"version":3,"root":{"dag":[{"name":"a","do":{"act":"a"}},{"name":"b","after":["a"],"when":{"output":"a"},"do":{"act":"b"}}]}}`,
			`dag[1]: "when" has no "equals"`},
	} {
		_, err := ast.Decode([]byte(tc.doc))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Decode(%s):\n got %v\nwant %q", tc.doc, err, tc.want)
		}
	}
}

// TestEqualJSON: canonical equality, numbers exactly.
func TestEqualJSON(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		eq   bool
	}{
		{`1`, `1.0`, true}, {`1`, `1e0`, true}, {`100`, `1e2`, true}, {`0.5`, `5e-1`, true}, {`-0`, `0`, true},
		{`{"a":1,"b":[true,null]}`, `{ "b" : [true, null], "a" : 1.00 }`, true},
		{`12345678901234567890`, `12345678901234567891`, false},
		{`1`, `"1"`, false}, {`[1,2]`, `[2,1]`, false}, {`{"a":1}`, `{"a":1,"b":2}`, false},
		{`not json`, `not json`, false}, {`1 2`, `1`, false},
	} {
		if got := ast.EqualJSON([]byte(tc.a), []byte(tc.b)); got != tc.eq {
			t.Errorf("EqualJSON(%s, %s) = %v", tc.a, tc.b, got)
		}
	}
}

// TestExpandMovesGuardToRace: a guarded dag child with replicas is a race
// of copies, and the guard is the race's (the dag's child), not each
// copy's. (Expand left it on every copy: TestOracleChoiceLockstep failed.)
func TestExpandMovesGuardToRace(t *testing.T) {
	w := ast.Seq(ast.Act("k", nil).Named("k"),
		ast.Dag(ast.Act("a", nil).Named("a").WithWhen("k", 1).WithReplicas(2)))
	e := ast.Expand(w)
	race := e.Children[1].Children[0]
	if race.Kind != ast.KindRace || race.When == nil || race.When.Output != "k" {
		t.Fatalf("the race has no guard: %+v", race.When)
	}
	for i, c := range race.Children {
		if c.When != nil {
			t.Fatalf("copy %d keeps the guard", i)
		}
	}
}
