package ast_test

import (
	"strings"
	"testing"

	"github.com/batonwf/baton/ast"
)

func TestRaceValidate(t *testing.T) {
	for _, c := range []struct {
		name string
		n    ast.Node
		want string // "" for valid
	}{
		{"a race's output", ast.Seq(ast.Race(ast.Act("a", nil), ast.Act("b", nil)).Named("r"), ast.Act("c", nil).WithInputs("r")), ""},
		{"inside a race", ast.Seq(ast.Race(ast.Act("a", nil).Named("a"), ast.Act("b", nil)), ast.Act("c", nil).WithInputs("a")),
			`seq[1]: input "a" (seq[0].race[0]) is inside the race at seq[0], whose success says nothing of any one child`},
		{"beside in a race", ast.Race(ast.Act("a", nil).Named("a"), ast.Act("b", nil).WithInputs("a")),
			`race[1]: input "a" (race[0]) runs beside this leaf in the race at root`},
		{"before the race", ast.Seq(ast.Act("a", nil).Named("a"), ast.Race(ast.Act("b", nil).WithInputs("a"), ast.Act("c", nil))), ""},
		{"inside its own copy", ast.Seq(ast.Seq(ast.Act("a", nil).Named("a"), ast.Act("b", nil).WithInputs("a")).WithReplicas(3)), ""},
		{"inside a node with replicas", ast.Seq(ast.Seq(ast.Act("a", nil).Named("a"), ast.Act("b", nil)).WithReplicas(2), ast.Act("c", nil).WithInputs("a")),
			`seq[1]: input "a" (seq[0].seq[0]) is inside the node with replicas at seq[0], a race of its copies, whose success says nothing of any one copy`},
		{"the node with replicas itself", ast.Seq(ast.Act("a", nil).Named("a").WithReplicas(2), ast.Act("c", nil).WithInputs("a")), ""},
		{"one child", ast.Race(ast.Act("a", nil)), "race has 1 child (a race needs at least 2; for copies of one node, use replicas)"},
		{"no children", ast.Race(), "race has no children"},
		{"one replica", ast.Act("a", nil).WithReplicas(1), "root: replicas 1 is out of range (2 to 32; leave it out for one copy)"},
		{"too many replicas", ast.Act("a", nil).WithReplicas(33), "root: replicas 33 is out of range (2 to 32)"},
		{"after on a race child", ast.Race(ast.Act("a", nil).Named("a"), ast.Act("b", nil).WithAfter("a")), "after on a node that is not a child of a dag"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := ast.Validate(c.n)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("Validate: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("Validate: %v, want %q", err, c.want)
			}
		})
	}
}

// A workflow is written in the oldest version that holds it, and a
// version-1 document that uses a key of version 2 is refused, naming it.
func TestRaceVersion(t *testing.T) {
	b, err := ast.Encode(ast.Seq(ast.Act("a", nil), ast.Act("b", nil)))
	if err != nil || !strings.HasPrefix(string(b), `{"version":1,`) {
		t.Fatalf("Encode without races: %s, %v", b, err)
	}
	w := ast.Seq(ast.Race(ast.Act("a", nil), ast.Act("b", nil)), ast.Act("c", nil).WithReplicas(3))
	b, err = ast.Encode(w)
	if want := `{"version":2,"root":{"seq":[{"race":[{"act":"a"},{"act":"b"}]},{"act":"c","replicas":3}]}}`; err != nil || string(b) != want {
		t.Fatalf("Encode: %s, %v, want %s", b, err, want)
	}
	back, err := ast.Decode(b)
	if err != nil || !ast.Equal(back, w) {
		t.Fatalf("Decode: %v, %v", back, err)
	}
	_, err = ast.Decode([]byte(strings.Replace(string(b), `"version":2`, `"version":1`, 1)))
	for _, want := range []string{`seq[0]: "race" needs workflow version 2 (this document is version 1)`, `seq[1]: "replicas" needs workflow version 2 (this document is version 1)`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("version 1: %v, want %q", err, want)
		}
	}
}

// Expand runs replicas as races of copies whose inner names are their own.
func TestExpand(t *testing.T) {
	w := ast.Seq(ast.Seq(ast.Act("a", nil).Named("a"), ast.Act("b", nil).WithInputs("a", "x")).WithReplicas(2).Named("r").WithDeadline(5e9), ast.Act("c", nil).WithInputs("r"))
	w = ast.Seq(ast.Act("x", nil).Named("x"), w)
	got, err := ast.Expand(w).MarshalJSON()
	if err == nil {
		t.Fatalf("an expanded tree with copies' names validates: %s", got)
	}
	e := ast.Expand(w)
	var b []byte
	b = ast.AppendJSON(b, e)
	want := `{"seq":[{"act":"x","name":"x"},{"seq":[{"race":[{"seq":[{"act":"a","name":"a#0"},{"act":"b","inputs":["a#0","x"]}]},{"seq":[{"act":"a","name":"a#1"},{"act":"b","inputs":["a#1","x"]}]}],"name":"r","deadline":"5s","replicas":2},{"act":"c","inputs":["r"]}]}]}`
	if string(b) != want {
		t.Fatalf("Expand:\n got %s\nwant %s", b, want)
	}
	if ast.WrittenName("a#1#0") != "a" || ast.WrittenName("a") != "a" {
		t.Fatal("WrittenName")
	}
}
