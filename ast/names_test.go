package ast_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/batonwf/baton/ast"
)

// leaf returns an act named name.
func leaf(name string) ast.Node { return ast.Act("do", nil).Named(name) }

// take returns an unnamed act taking inputs.
func take(inputs ...string) ast.Node { return ast.Act("take", nil).WithInputs(inputs...) }

// notSure is the end of every message about an input not sure to have
// succeeded.
const notSure = ": not sure to have succeeded before this leaf starts"

// TestValidateNames checks every rule about names, inputs, after and dags
// on trees built with the DSL: valid trees pass, and each invalid one
// gives exactly its problems, in tree order, at their paths.
func TestValidateNames(t *testing.T) {
	tests := []struct {
		name     string
		n        ast.Node
		problems []ast.Problem // nil: valid
	}{
		// Names.
		{name: "names everywhere", n: ast.Seq(leaf("a"), ast.Par(leaf("b")).Named("p"), ast.Try(leaf("c"), ast.Rescue(leaf("r")), ast.Finally(leaf("f"))).Named("t")).Named("root_1")},
		{name: "name syntax", n: ast.Par(leaf("a"), leaf("Z"), leaf("_"), leaf("_tmp"), leaf("step-2.v1"), leaf("A9_-."), leaf(strings.Repeat("x", 100)))},
		{name: "bad names", n: ast.Par(leaf("1a"), leaf("-a"), leaf(".a"), leaf("a b"), leaf("a/b"), leaf("é"), leaf("a\x00"), leaf(strings.Repeat("x", 101))),
			problems: []ast.Problem{
				{"par[0]", `name "1a" starts with '1' (a name starts with a letter or '_')`},
				{"par[1]", `name "-a" starts with '-' (a name starts with a letter or '_')`},
				{"par[2]", `name ".a" starts with '.' (a name starts with a letter or '_')`},
				{"par[3]", `name "a b" has ' ' at byte 1 (allowed: letters, digits, '_', '-', '.')`},
				{"par[4]", `name "a/b" has '/' at byte 1 (allowed: letters, digits, '_', '-', '.')`},
				{"par[5]", `name "é" has 'Ã' at byte 0 (allowed: letters, digits, '_', '-', '.')`},
				{"par[6]", `name "a\x00" has '\x00' at byte 1 (allowed: letters, digits, '_', '-', '.')`},
				{"par[7]", `name is 101 bytes long (at most 100)`},
			}},
		{name: "duplicate names, at the second with the first's path", n: ast.Seq(leaf("a"), ast.Par(leaf("b"), leaf("a")), ast.Dag(leaf("a")).Named("b")),
			problems: []ast.Problem{
				{"seq[1].par[1]", `name "a" is already the name of seq[0]`},
				{"seq[2]", `name "b" is already the name of seq[1].par[0]`},
				{"seq[2].dag[0]", `name "a" is already the name of seq[0]`},
			}},
		{name: "duplicate of the root's name", n: ast.Seq(leaf("w")).Named("w"),
			problems: []ast.Problem{{"seq[0]", `name "w" is already the name of root`}}},

		// Inputs: what is sure.
		{name: "fan-in after a par", n: ast.Seq(ast.Par(leaf("a"), leaf("b")), ast.Act("merge", nil).WithInputs("a", "b"))},
		{name: "earlier in a seq", n: ast.Seq(leaf("a"), leaf("b"), take("a", "b"))},
		{name: "earlier in an enclosing seq", n: ast.Seq(leaf("a"), ast.Par(ast.Seq(take("a"))))},
		{name: "inner node, and nodes it implies", n: ast.Seq(ast.Seq(leaf("a"), ast.Par(leaf("b"))).Named("s"), take("s", "a", "b"))},
		{name: "try without rescue: body and finally", n: ast.Seq(ast.Try(ast.Seq(leaf("a")), ast.Finally(leaf("f"))).Named("t"), take("t", "a", "f"))},
		{name: "try with rescue: finally only", n: ast.Seq(ast.Try(leaf("a"), ast.Rescue(leaf("r")), ast.Finally(ast.Seq(leaf("f")))), take("f"))},
		{name: "inside a try body, earlier", n: ast.Try(ast.Seq(leaf("a"), take("a")), ast.Rescue(leaf("r")))},
		{name: "inside a rescue, earlier", n: ast.Try(leaf("a"), ast.Rescue(leaf("r"), take("r")))},
		{name: "dag: after, directly or not", n: ast.Dag(leaf("a"), leaf("b").WithAfter("a"), take("a", "b").Named("c").WithAfter("b"))},
		{name: "dag: under a child after", n: ast.Dag(ast.Seq(leaf("a"), leaf("x")).Named("s"), ast.Par(take("a", "x", "s")).Named("p").WithAfter("s"))},
		{name: "dag: inside a child, earlier in its seq", n: ast.Dag(ast.Seq(leaf("a"), take("a")).Named("s"))},
		{name: "dag in a seq: all of a finished dag", n: ast.Seq(ast.Dag(leaf("a"), leaf("b")).Named("d"), take("a", "b", "d"))},
		{name: "nested dags", n: ast.Dag(ast.Dag(leaf("a"), leaf("b").WithAfter("a")).Named("d1"), ast.Dag(take("a", "b", "d1").Named("c")).Named("d2").WithAfter("d1"))},

		// Inputs: what is not.
		{name: "sibling in a par", n: ast.Par(leaf("a"), take("a").Named("b")),
			problems: []ast.Problem{{"par[1]", `input "a" (par[0]) is a sibling in a par` + notSure}}},
		{name: "beside in a par, deeper", n: ast.Seq(ast.Par(ast.Seq(leaf("a")), ast.Seq(take("a")))),
			problems: []ast.Problem{{"seq[0].par[1].seq[0]", `input "a" (seq[0].par[0].seq[0]) runs beside this leaf in the par at seq[0]` + notSure}}},
		{name: "later sibling in a seq", n: ast.Seq(take("a"), leaf("a")),
			problems: []ast.Problem{{"seq[0]", `input "a" (seq[1]) is a later sibling in a seq` + notSure}}},
		{name: "later in a seq, deeper", n: ast.Seq(ast.Par(take("a")), ast.Seq(leaf("a"))),
			problems: []ast.Problem{{"seq[0].par[0]", `input "a" (seq[1].seq[0]) comes after this leaf in the seq at root` + notSure}}},
		{name: "try with rescue: not its body", n: ast.Seq(ast.Try(leaf("a"), ast.Rescue(leaf("r"))), take("a")),
			problems: []ast.Problem{{"seq[1]", `input "a" (seq[0].body) is in the body of the try at seq[0], which has a rescue (the try can succeed through its rescue with it failed)` + notSure}}},
		{name: "try: never its rescue", n: ast.Seq(ast.Try(leaf("a"), ast.Rescue(ast.Seq(leaf("r")))), take("r")),
			problems: []ast.Problem{{"seq[1]", `input "r" (seq[0].rescue.seq[0]) is in the rescue of the try at seq[0], which runs only when its body fails` + notSure}}},
		{name: "the outermost try that breaks the chain", n: ast.Seq(ast.Try(ast.Try(leaf("a"), ast.Rescue(leaf("r1"))), ast.Rescue(leaf("r2"))), take("a")),
			problems: []ast.Problem{{"seq[1]", `input "a" (seq[0].body.body) is in the body of the try at seq[0], which has a rescue (the try can succeed through its rescue with it failed)` + notSure}}},
		{name: "try: body from the finally", n: ast.Try(leaf("a"), ast.Finally(take("a"))),
			problems: []ast.Problem{{"finally", `input "a" (body) is in the body of the try at root, and this leaf in its finally` + notSure}}},
		{name: "try: body from the rescue", n: ast.Try(leaf("a"), ast.Rescue(take("a"))),
			problems: []ast.Problem{{"rescue", `input "a" (body) is in the body of the try at root, and this leaf in its rescue` + notSure}}},
		{name: "an enclosing node", n: ast.Seq(ast.Par(take("p")).Named("p")),
			problems: []ast.Problem{{"seq[0].par[0]", `input "p" (seq[0]) encloses this leaf` + notSure}}},
		{name: "dag: a sibling not after", n: ast.Dag(leaf("a"), take("a").Named("b")),
			problems: []ast.Problem{{"dag[1]", `input "a" (dag[0]) is a sibling in a dag that this leaf is not after, directly or through others` + notSure}}},
		{name: "dag: the other way round", n: ast.Dag(take("b").Named("a"), leaf("b").WithAfter("a")),
			problems: []ast.Problem{{"dag[0]", `input "b" (dag[1]) is a sibling in a dag that this leaf is not after, directly or through others` + notSure}}},
		{name: "dag: under children not after", n: ast.Dag(ast.Seq(leaf("a")).Named("s"), ast.Par(take("a")).Named("p"), leaf("x").WithAfter("s")),
			problems: []ast.Problem{{"dag[1].par[0]", `input "a" (dag[0].seq[0]) is under the dag child "s", which "p" (holding this leaf) is not after, directly or through others` + notSure}}},
		{name: "dag: after a try with a rescue", n: ast.Dag(ast.Try(leaf("a"), ast.Rescue(leaf("r"))).Named("t"), take("a").Named("b").WithAfter("t")),
			problems: []ast.Problem{{"dag[1]", `input "a" (dag[0].body) is in the body of the try at dag[0], which has a rescue (the try can succeed through its rescue with it failed)` + notSure}}},

		// Inputs: the other rules.
		{name: "unknown, twice, itself", n: ast.Seq(leaf("a"), take("a", "zz", "a", "me", "a").Named("me")),
			problems: []ast.Problem{
				{"seq[1]", `input "zz": no node has this name`},
				{"seq[1]", `input "a" is listed twice`},
				{"seq[1]", `input "me" is the name of this leaf itself`},
			}},
		{name: "an unknown name listed twice", n: take("x", "x"),
			problems: []ast.Problem{{"", `input "x": no node has this name`}, {"", `input "x" is listed twice`}}},
		{name: "a long list with repeats", n: ast.Seq(ast.Par(astLeaves(40)...), take(append(astNames(40), "n3", "n3", "n39")...)),
			problems: []ast.Problem{{"seq[1]", `input "n3" is listed twice`}, {"seq[1]", `input "n39" is listed twice`}}},
		{name: "inputs on non-acts", n: ast.Seq(leaf("a"), ast.Seq(leaf("b")).WithInputs("a"), ast.Try(leaf("c")).WithInputs("a"), ast.Dag(leaf("d")).WithInputs("a"), ast.Par(leaf("e")).WithInputs("a")),
			problems: []ast.Problem{
				{"seq[1]", `inputs on a seq node (only an act takes inputs)`},
				{"seq[2]", `inputs on a try node (only an act takes inputs)`},
				{"seq[3]", `inputs on a dag node (only an act takes inputs)`},
				{"seq[4]", `inputs on a par node (only an act takes inputs)`},
			}},

		// Dags.
		{name: "a dag", n: ast.Dag(leaf("a"), leaf("b"), leaf("c").WithAfter("a", "b"), ast.Seq(leaf("x")).Named("d").WithAfter("c"))},
		{name: "a name listed twice in after", n: ast.Dag(leaf("a"), leaf("b").WithAfter("a", "a"))},
		{name: "empty dag", n: ast.Seq(leaf("a"), ast.Dag()),
			problems: []ast.Problem{{"seq[1]", "dag has no children"}}},
		{name: "unnamed children", n: ast.Dag(ast.Act("a", nil), leaf("b"), ast.Seq(leaf("c"))),
			problems: []ast.Problem{
				{"dag[0]", "dag child has no name (every child of a dag is named)"},
				{"dag[2]", "dag child has no name (every child of a dag is named)"},
			}},
		{name: "dag with fields of another kind", n: func() ast.Node { n := ast.Dag(leaf("a")); n.Action = "x"; return n }(),
			problems: []ast.Problem{{"", "dag node has fields of another kind (action, payload or try parts)"}}},
		{name: "after outside a dag", n: ast.Seq(leaf("a"), leaf("b").WithAfter("a"), ast.Par(leaf("c").WithAfter("a")), ast.Try(leaf("d").WithAfter("a"))).WithAfter("a"),
			problems: []ast.Problem{
				{"", "after on a node that is not a child of a dag"},
				{"seq[1]", "after on a node that is not a child of a dag"},
				{"seq[2].par[0]", "after on a node that is not a child of a dag"},
				{"seq[3].body", "after on a node that is not a child of a dag"},
			}},
		{name: "after inside a dag child, not on it", n: ast.Dag(leaf("a"), ast.Seq(leaf("b").WithAfter("a")).Named("s")),
			problems: []ast.Problem{{"dag[1].seq[0]", "after on a node that is not a child of a dag"}}},
		{name: "after not a sibling", n: ast.Seq(leaf("a"), ast.Dag(leaf("b").WithAfter("a", "zz", "d", "b2"), ast.Seq(leaf("b2")).Named("s")).Named("d")),
			problems: []ast.Problem{
				{"seq[1].dag[0]", `after "a": the node with this name (seq[0]) is not a sibling in this dag`},
				{"seq[1].dag[0]", `after "zz": no node has this name`},
				{"seq[1].dag[0]", `after "d": the node with this name (seq[1]) is not a sibling in this dag`},
				{"seq[1].dag[0]", `after "b2": the node with this name (seq[1].dag[1].seq[0]) is not a sibling in this dag`},
			}},
		{name: "after a child of another dag", n: ast.Dag(ast.Dag(leaf("a")).Named("d1"), ast.Dag(leaf("b").WithAfter("a")).Named("d2")),
			problems: []ast.Problem{{"dag[1].dag[0]", `after "a": the node with this name (dag[0].dag[0]) is not a sibling in this dag`}}},
		{name: "cycle of 1", n: ast.Dag(leaf("a").WithAfter("a")),
			problems: []ast.Problem{{"", "cycle in after: a -> a (each is after the one before it)"}}},
		{name: "cycle of 2", n: ast.Seq(ast.Dag(leaf("a").WithAfter("b"), leaf("b").WithAfter("a"))),
			problems: []ast.Problem{{"seq[0]", "cycle in after: a -> b -> a (each is after the one before it)"}}},
		{name: "cycle of 3, written each after the one before", n: ast.Dag(leaf("a").WithAfter("c"), leaf("b").WithAfter("a"), leaf("c").WithAfter("b"), leaf("d").WithAfter("c")),
			problems: []ast.Problem{{"", "cycle in after: a -> b -> c -> a (each is after the one before it)"}}},
		{name: "the shortest cycle through the first child", n: ast.Dag(leaf("a").WithAfter("b", "c"), leaf("b").WithAfter("d"), leaf("c").WithAfter("a"), leaf("d").WithAfter("a")),
			problems: []ast.Problem{{"", "cycle in after: a -> c -> a (each is after the one before it)"}}},
		{name: "one cycle per strongly connected part, in child order", n: ast.Dag(leaf("x"), leaf("e").WithAfter("f"), leaf("b").WithAfter("c", "x"), leaf("c").WithAfter("b"), leaf("f").WithAfter("e"), leaf("g").WithAfter("g"), leaf("h").WithAfter("c")),
			problems: []ast.Problem{
				{"", "cycle in after: e -> f -> e (each is after the one before it)"},
				{"", "cycle in after: b -> c -> b (each is after the one before it)"},
				{"", "cycle in after: g -> g (each is after the one before it)"},
			}},
		{name: "a cycle and an input through it", n: ast.Dag(leaf("a").WithAfter("b"), take("a").Named("b").WithAfter("a")),
			problems: []ast.Problem{{"", "cycle in after: a -> b -> a (each is after the one before it)"}}},
		{name: "cycles in two dags, with other problems, in tree order", n: ast.Seq(ast.Dag(leaf("a").WithAfter("a"), ast.Act("", nil).Named("b")), ast.Dag(leaf("c").WithAfter("d"), leaf("d").WithAfter("c"))),
			problems: []ast.Problem{
				{"seq[0]", "cycle in after: a -> a (each is after the one before it)"},
				{"seq[0].dag[1]", "action name is empty"},
				{"seq[1]", "cycle in after: c -> d -> c (each is after the one before it)"},
			}},

		// Everything at once, in tree order.
		{name: "every kind of problem, in tree order", n: ast.Seq(
			ast.Par(leaf("a"), take("a")),
			ast.Dag(ast.Act("x", nil), leaf("a").WithAfter("q")),
			leaf("bad name").WithAfter("a"),
		),
			problems: []ast.Problem{
				{"seq[0].par[1]", `input "a" (seq[0].par[0]) is a sibling in a par` + notSure},
				{"seq[1].dag[0]", "dag child has no name (every child of a dag is named)"},
				{"seq[1].dag[1]", `name "a" is already the name of seq[0].par[0]`},
				{"seq[1].dag[1]", `after "q": no node has this name`},
				{"seq[2]", `name "bad name" has ' ' at byte 3 (allowed: letters, digits, '_', '-', '.')`},
				{"seq[2]", "after on a node that is not a child of a dag"},
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := ast.Validate(tc.n)
			if tc.problems == nil {
				if err != nil {
					t.Fatalf("Validate = %v, want nil", err)
				}
				astRoundTrip(t, tc.n)
				return
			}
			var ae *ast.Error
			if !errors.As(err, &ae) {
				t.Fatalf("Validate = %v, want an *ast.Error", err)
			}
			if diff := cmp.Diff(tc.problems, ae.Problems); diff != "" {
				t.Fatalf("problems (-want +got):\n%s", diff)
			}
			if _, encErr := ast.Encode(tc.n); encErr == nil || encErr.Error() != err.Error() {
				t.Fatalf("Encode error = %v, want Validate's %v", encErr, err)
			}
		})
	}
}

// astRoundTrip checks that the valid tree n encodes, decodes to an equal
// tree, and encodes again to the same bytes.
func astRoundTrip(t *testing.T, n ast.Node) []byte {
	t.Helper()
	enc, err := ast.Encode(n)
	if err != nil {
		t.Fatalf("Encode: %v", err)
	}
	back, err := ast.Decode(enc)
	if err != nil {
		t.Fatalf("Decode(Encode(n)): %v\n%s", err, enc)
	}
	if !ast.Equal(back, n) {
		t.Fatalf("Decode(Encode(n)) = %s, want %s", astShow(back), astShow(n))
	}
	again, err := ast.Encode(back)
	if err != nil || string(again) != string(enc) {
		t.Fatalf("Encode(Decode(Encode(n))) = %s, %v; want %s", again, err, enc)
	}
	return enc
}

func astNames(k int) []string {
	names := make([]string, k)
	for i := range names {
		names[i] = fmt.Sprintf("n%d", i)
	}
	return names
}

func astLeaves(k int) []ast.Node {
	leaves := make([]ast.Node, k)
	for i, name := range astNames(k) {
		leaves[i] = leaf(name)
	}
	return leaves
}

// TestNamesJSON checks the canonical JSON of names, inputs and dags, and
// that it round-trips.
func TestNamesJSON(t *testing.T) {
	tests := []struct {
		name string
		n    ast.Node
		want string
	}{
		{"named act", ast.Act("a", 1).Named("x"), `{"act":"a","payload":1,"name":"x"}`},
		{"act with inputs", ast.Seq(leaf("x"), ast.Act("a", "p").Named("y").WithInputs("x")),
			`{"seq":[{"act":"do","name":"x"},{"act":"a","payload":"p","name":"y","inputs":["x"]}]}`},
		{"inputs without a name or payload", ast.Seq(leaf("x"), take("x")),
			`{"seq":[{"act":"do","name":"x"},{"act":"take","inputs":["x"]}]}`},
		{"named seq and par", ast.Seq(ast.Par(leaf("a")).Named("p")).Named("s"),
			`{"seq":[{"par":[{"act":"do","name":"a"}],"name":"p"}],"name":"s"}`},
		{"named try", ast.Try(leaf("a"), ast.Rescue(leaf("r")), ast.Finally(leaf("f"))).Named("t"),
			`{"try":{"act":"do","name":"a"},"rescue":{"act":"do","name":"r"},"finally":{"act":"do","name":"f"},"name":"t"}`},
		{"dag", ast.Dag(leaf("a"), ast.Act("b", 2).Named("b").WithAfter("a").WithInputs("a")).Named("d"),
			`{"dag":[{"name":"a","do":{"act":"do"}},{"name":"b","after":["a"],"do":{"act":"b","payload":2,"inputs":["a"]}}],"name":"d"}`},
		{"after kept as written", ast.Dag(leaf("a"), leaf("b"), leaf("c").WithAfter("b", "a", "b")),
			`{"dag":[{"name":"a","do":{"act":"do"}},{"name":"b","do":{"act":"do"}},{"name":"c","after":["b","a","b"],"do":{"act":"do"}}]}`},
		{"dags in dags", ast.Dag(ast.Dag(leaf("a")).Named("d1"), ast.Seq(ast.Dag(leaf("b"))).Named("s").WithAfter("d1")),
			`{"dag":[{"name":"d1","do":{"dag":[{"name":"a","do":{"act":"do"}}]}},{"name":"s","after":["d1"],"do":{"seq":[{"dag":[{"name":"b","do":{"act":"do"}}]}]}}]}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, astShow(tc.n)); diff != "" {
				t.Fatalf("node JSON (-want +got):\n%s", diff)
			}
			enc := astRoundTrip(t, tc.n)
			if want := `{"version":1,"root":` + tc.want + `}`; string(enc) != want {
				t.Fatalf("Encode = %s, want %s", enc, want)
			}
			if got := string(ast.AppendJSON([]byte("x"), tc.n)); got != "x"+tc.want {
				t.Fatalf("AppendJSON = %s, want x%s", got, tc.want)
			}
		})
	}
}

// TestNamesJSONSpellings checks that other spellings of names, inputs and
// dags decode to the same tree as the canonical one.
func TestNamesJSONSpellings(t *testing.T) {
	canonical := `{"version":1,"root":{"seq":[{"dag":[{"name":"a","do":{"act":"x"}},{"name":"b","after":["a"],"do":{"act":"y","inputs":["a"]}}]},{"act":"z","name":"z","inputs":["a","b"]}],"name":"s"}}`
	spellings := map[string]string{
		"canonical":       canonical,
		"keys reordered":  `{"root":{"name":"s","seq":[{"dag":[{"do":{"act":"x"},"name":"a"},{"do":{"inputs":["a"],"act":"y"},"after":["a"],"name":"b"}]},{"inputs":["a","b"],"name":"z","act":"z"}]},"version":1}`,
		"spaces":          "{\"version\": 1, \"root\": {\"seq\": [{\"dag\": [ {\"name\": \"a\", \"do\": {\"act\": \"x\"}} , {\"name\": \"b\", \"after\": [ \"a\" ], \"do\": {\"act\": \"y\", \"inputs\": [ \"a\" ]}}\n]}, {\"act\": \"z\", \"name\": \"z\", \"inputs\": [\"a\", \"b\"]}], \"name\": \"s\"}}",
		"nulls and empty": `{"version":1,"root":{"seq":[{"dag":[{"name":"a","after":null,"do":{"act":"x","name":null,"inputs":null}},{"name":"b","after":["a"],"do":{"act":"y","inputs":["a"]}}],"name":null},{"act":"z","name":"z","inputs":["a","b"]}],"name":"s"}}`,
		"empty lists":     `{"version":1,"root":{"seq":[{"dag":[{"name":"a","after":[],"do":{"act":"x","inputs":[]}},{"name":"b","after":["a"],"do":{"act":"y","inputs":["a"]}}]},{"act":"z","name":"z","inputs":["a","b"]}],"name":"s"}}`,
		"name in do":      `{"version":1,"root":{"seq":[{"dag":[{"do":{"act":"x","name":"a"}},{"after":["a"],"do":{"name":"b","act":"y","inputs":["a"]}}]},{"act":"z","name":"z","inputs":["a","b"]}],"name":"s"}}`,
		"escaped":         `{"version":1,"root":{"seq":[{"dag":[{"name":"\u0061","do":{"act":"x"}},{"name":"b","after":["\u0061"],"do":{"act":"y","inputs":["a"]}}]},{"act":"z","name":"z","inputs":["a","b"]}],"name":"s"}}`,
	}
	want := ast.Seq(
		ast.Dag(ast.Act("x", nil).Named("a"), ast.Act("y", nil).Named("b").WithAfter("a").WithInputs("a")),
		ast.Act("z", nil).Named("z").WithInputs("a", "b"),
	).Named("s")
	for name, doc := range spellings {
		t.Run(name, func(t *testing.T) {
			n, err := ast.Decode([]byte(doc))
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if !ast.Equal(n, want) {
				t.Fatalf("Decode = %s, want %s", astShow(n), astShow(want))
			}
			b, err := ast.Encode(n)
			if err != nil || string(b) != canonical {
				t.Fatalf("Encode(Decode(doc)) = %s, %v; want %s", b, err, canonical)
			}
		})
	}
}

// TestDecodeNamesErrors checks the problems of the JSON form of names,
// inputs and dags, in JSON's words and at their paths.
func TestDecodeNamesErrors(t *testing.T) {
	const notSureDoc = ": not sure to have succeeded before this leaf starts"
	tests := []struct {
		name     string
		root     string // the root node; the envelope is added
		problems []ast.Problem
	}{
		{"name not a string", `{"seq":[{"act":"a","name":5}]}`,
			[]ast.Problem{{"seq[0]", `"name" must be a string, got a number`}}},
		{"name empty", `{"seq":[{"act":"a","name":""}],"name":""}`,
			[]ast.Problem{{"", "name is empty"}, {"seq[0]", "name is empty"}}},
		{"bad name", `{"act":"a","name":"9lives"}`,
			[]ast.Problem{{"", `name "9lives" starts with '9' (a name starts with a letter or '_')`}}},
		{"duplicate name", `{"par":[{"act":"a","name":"x"},{"seq":[{"act":"b"}],"name":"x"}]}`,
			[]ast.Problem{{"par[1]", `name "x" is already the name of par[0]`}}},
		{"inputs not an array", `{"act":"a","inputs":"x"}`,
			[]ast.Problem{{"", `"inputs" must be an array of strings (node names), got a string`}}},
		{"inputs not strings", `{"act":"a","inputs":["x",{"y":1}]}`,
			[]ast.Problem{{"", `"inputs" must be an array of strings (node names), got an object at index 1`}}},
		{"inputs holding null", `{"act":"a","inputs":[null]}`,
			[]ast.Problem{{"", `"inputs" must be an array of strings (node names), got null at index 0`}}},
		{"inputs on a seq", `{"seq":[{"act":"a","name":"a"}],"inputs":["a"]}`,
			[]ast.Problem{{"", `unknown field "inputs" in seq node (only an act takes inputs)`}}},
		{"inputs on a dag", `{"dag":[{"name":"a","do":{"act":"a"}}],"inputs":["a"]}`,
			[]ast.Problem{{"", `unknown field "inputs" in dag node (only an act takes inputs)`}}},
		{"after on a node", `{"seq":[{"act":"a","name":"a"},{"act":"b","after":["a"]}]}`,
			[]ast.Problem{{"seq[1]", `unknown field "after" in act node (after belongs in a dag entry, beside name and do)`}}},
		{"after in a do node", `{"dag":[{"name":"a","do":{"act":"a"}},{"name":"b","do":{"act":"b","after":["a"]}}]}`,
			[]ast.Problem{{"dag[1]", `unknown field "after" in act node (after belongs in a dag entry, beside name and do)`}}},
		{"unknown field in act", `{"act":"a","retries":1}`,
			[]ast.Problem{{"", `unknown field "retries" in act node (allowed: act, payload, name, inputs, retry, timeout, deadline, delivery, priority)`}}},
		{"unknown field in dag", `{"dag":[{"name":"a","do":{"act":"a"}}],"after":[],"x":1}`,
			[]ast.Problem{
				{"", `unknown field "after" in dag node (after belongs in a dag entry, beside name and do)`},
				{"", `unknown field "x" in dag node (allowed: dag, name, deadline, limit)`},
			}},
		{"dag not an array", `{"dag":{"name":"a"}}`,
			[]ast.Problem{{"", `"dag" must be an array of entries like {"name":"a","after":["b"],"do":{...}}, got an object`}}},
		{"dag null", `{"seq":[{"dag":null}]}`,
			[]ast.Problem{{"seq[0]", `"dag" must be an array of entries like {"name":"a","after":["b"],"do":{...}}, got null`}}},
		{"dag empty", `{"dag":[]}`,
			[]ast.Problem{{"", "dag has no children"}}},
		{"entry not an object", `{"dag":[{"name":"a","do":{"act":"a"}},["b"],"c"]}`,
			[]ast.Problem{
				{"dag[1]", `want a dag entry like {"name":"a","after":["b"],"do":{...}}, got an array`},
				{"dag[2]", `want a dag entry like {"name":"a","after":["b"],"do":{...}}, got a string`},
			}},
		{"entry with unknown keys", `{"dag":[{"name":"a","when":"x","do":{"act":"a"},"act":"b"}]}`,
			[]ast.Problem{
				{"dag[0]", `unknown field "act" in dag entry (allowed: name, after, when, do)`},
				{"dag[0]", `"when" needs workflow version 3 (this document is version 1)`},
			}},
		{"entry without do", `{"dag":[{"name":"a"},{"name":"b","do":null}]}`,
			[]ast.Problem{{"dag[0]", `dag entry has no "do" (the node to run)`}, {"dag[1]", `dag entry has no "do" (the node to run)`}}},
		{"entry without a name", `{"dag":[{"do":{"act":"a"}},{"name":null,"do":{"act":"b","name":null}}]}`,
			[]ast.Problem{
				{"dag[0]", "dag child has no name (every child of a dag is named)"},
				{"dag[1]", "dag child has no name (every child of a dag is named)"},
			}},
		{"entry with two names", `{"dag":[{"name":"a","do":{"act":"a","name":"b"}}]}`,
			[]ast.Problem{{"dag[0]", `dag entry has two names: "a", and "b" in its "do" node`}}},
		{"entry name not a string", `{"dag":[{"name":["a"],"do":{"act":"a"}},{"name":"","do":{"act":"b"}}]}`,
			[]ast.Problem{{"dag[0]", `"name" must be a string, got an array`}, {"dag[1]", "name is empty"}}},
		{"after not an array", `{"dag":[{"name":"a","do":{"act":"a"}},{"name":"b","after":"a","do":{"act":"b"}}]}`,
			[]ast.Problem{{"dag[1]", `"after" must be an array of strings (names of siblings), got a string`}}},
		{"after not strings", `{"dag":[{"name":"a","do":{"act":"a"}},{"name":"b","after":["a",true],"do":{"act":"b"}}]}`,
			[]ast.Problem{{"dag[1]", `"after" must be an array of strings (names of siblings), got a boolean at index 1`}}},
		{"after unknown and elsewhere", `{"seq":[{"act":"x","name":"x"},{"dag":[{"name":"a","after":["x","y"],"do":{"act":"a"}}]}]}`,
			[]ast.Problem{
				{"seq[1].dag[0]", `after "x": the node with this name (seq[0]) is not a sibling in this dag`},
				{"seq[1].dag[0]", `after "y": no node has this name`},
			}},
		{"cycle", `{"dag":[{"name":"a","after":["c"],"do":{"act":"a"}},{"name":"b","after":["a"],"do":{"act":"b"}},{"name":"c","after":["b"],"do":{"act":"c"}}]}`,
			[]ast.Problem{{"", "cycle in after: a -> b -> c -> a (each is after the one before it)"}}},
		{"input not sure", `{"par":[{"act":"a","name":"a"},{"act":"b","inputs":["a"]}]}`,
			[]ast.Problem{{"par[1]", `input "a" (par[0]) is a sibling in a par` + notSureDoc}}},
		{"bad do node, named entry still checked", `{"dag":[{"name":"1a","after":["b"],"do":{"nope":1}},{"name":"b","do":{"act":"b"}}]}`,
			[]ast.Problem{
				{"dag[0]", "node has none of the keys act, seq, par, try, dag, race, choice, end, map, loop, wait, sleep (has: nope)"},
				{"dag[0]", `name "1a" starts with '1' (a name starts with a letter or '_')`},
			}},
		{"structural and naming problems, in tree order", `{"seq":[{"act":"a","name":"a","inputs":["b"]},{"dag":[{"name":"b","do":{"act":"b","x":1}}]}]}`,
			[]ast.Problem{
				{"seq[0]", `input "b" (seq[1].dag[0]) comes after this leaf in the seq at root` + notSureDoc},
				{"seq[1].dag[0]", `unknown field "x" in act node (allowed: act, payload, name, inputs, retry, timeout, deadline, delivery, priority)`},
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n, err := ast.Decode([]byte(`{"version":1,"root":` + tc.root + `}`))
			if err == nil {
				t.Fatalf("Decode succeeded with %s", astShow(n))
			}
			var ae *ast.Error
			if !errors.As(err, &ae) {
				t.Fatalf("error %v is not an *ast.Error", err)
			}
			if diff := cmp.Diff(tc.problems, ae.Problems); diff != "" {
				t.Fatalf("problems (-want +got):\n%s\nmessage: %s", diff, err)
			}
			for _, goWords := range []string{"Go ", "struct", "[]string", "json.", "json: ", "RawMessage"} {
				if strings.Contains(err.Error(), goWords) {
					t.Errorf("error %q contains %q", err, goWords)
				}
			}
		})
	}
}

// The counter-examples of the language, as the reducer's author will read
// them: each must be refused, and its fixed form accepted.
func TestSureExamples(t *testing.T) {
	valid := ast.Seq(ast.Par(leaf("a"), leaf("b")), ast.Act("merge", nil).Named("m").WithInputs("a", "b"))
	if err := ast.Validate(valid); err != nil {
		t.Errorf("fan-in: %v", err)
	}
	for _, bad := range []ast.Node{
		ast.Par(leaf("a"), ast.Act("b", nil).Named("b").WithInputs("a")),
		ast.Seq(ast.Try(leaf("a"), ast.Rescue(leaf("r"))), ast.Act("m", nil).Named("m").WithInputs("a")),
	} {
		if err := ast.Validate(bad); err == nil || !strings.Contains(err.Error(), `input "a"`) {
			t.Errorf("%s: Validate = %v, want the input a refused", astShow(bad), err)
		}
	}
}

// TestCheckNameBounds checks the name's length bounds exactly.
func TestCheckNameBounds(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"a", true}, {"_", true}, {"Z", true}, {strings.Repeat("a", 100), true}, {"_" + strings.Repeat("9", 99), true},
		{strings.Repeat("a", 101), false}, {"0", false}, {"-", false}, {".", false}, {"a:b", false}, {"a b", false},
	} {
		err := ast.Validate(leaf(tc.name))
		if (err == nil) != tc.ok {
			t.Errorf("name %q: Validate = %v, want ok %v", tc.name, err, tc.ok)
		}
	}
}

// astWidePar returns a par of k unnamed leaves.
func astWidePar(k int) ast.Node {
	kids := make([]ast.Node, k)
	for i := range kids {
		kids[i] = ast.Act("a", nil)
	}
	return ast.Par(kids...)
}

// astFanIn returns seq(par(n0 ... n(k-1)), merge[inputs: n0 ... n(k-1)]).
func astFanIn(k int) ast.Node {
	return ast.Seq(ast.Par(astLeaves(k)...), take(astNames(k)...).Named("merge"))
}

// astDagChain returns a dag of k children, each after the one before and
// taking the output of the first.
func astDagChain(k int) ast.Node {
	kids := make([]ast.Node, k)
	kids[0] = leaf("n0")
	for i := 1; i < k; i++ {
		kids[i] = take("n0").Named(fmt.Sprintf("n%d", i)).WithAfter(fmt.Sprintf("n%d", i-1))
	}
	return ast.Dag(kids...)
}

// TestValidateWideParCheap: a par of 100,000 leaves without names is
// validated without allocating (the workflow-wide checks do not run), and
// large trees with names are valid.
func TestValidateWideParCheap(t *testing.T) {
	wide := astWidePar(100_000)
	if allocs := testing.AllocsPerRun(5, func() {
		if err := ast.Validate(wide); err != nil {
			t.Fatal(err)
		}
	}); allocs != 0 {
		t.Errorf("Validate of a 100,000-leaf par: %v allocations, want 0", allocs)
	}
	if err := ast.Validate(astFanIn(100_000)); err != nil {
		t.Errorf("fan-in of 100,000 leaves: %v", err)
	}
	if err := ast.Validate(astDagChain(2_000)); err != nil {
		t.Errorf("dag chain: %v", err)
	}
	// A dag of many children in one long cycle: one problem, its cycle
	// written shortened.
	const k = 1000
	kids := make([]ast.Node, k)
	for i := range kids {
		kids[i] = leaf(fmt.Sprintf("n%d", i)).WithAfter(fmt.Sprintf("n%d", (i+k-1)%k))
	}
	err := ast.Validate(ast.Dag(kids...))
	want := "workflow: root: cycle in after: n0 -> n1 -> n2 -> n3 -> n4 -> n5 -> n6 -> n7 -> n8 -> n9 -> n10 -> n11 -> n12 -> n13 -> n14 -> n15 -> n16 -> n17 -> n18 -> ... (981 more) -> n0 (each is after the one before it)"
	if err == nil || err.Error() != want {
		t.Errorf("long cycle: %v\nwant %s", err, want)
	}
}

func BenchmarkValidate(b *testing.B) {
	for _, bc := range []struct {
		name string
		n    ast.Node
	}{
		{"par100k", astWidePar(100_000)},
		{"fanin100k", astFanIn(100_000)},
		{"dagchain1k", astDagChain(1_000)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := ast.Validate(bc.n); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
