package ast_test

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/batonwf/baton/ast"
)

// TestPriorityCanonical checks the canonical JSON of a priority, last of
// an act's keys and left out when 0, and that it round-trips: Decode gives
// back the DSL's tree, Encode the same bytes.
func TestPriorityCanonical(t *testing.T) {
	a := ast.Act("a", nil)
	tests := []struct {
		name string
		n    ast.Node
		want string
	}{
		{"priority", a.WithPriority(5), `{"act":"a","priority":5}`},
		{"negative", a.WithPriority(-3), `{"act":"a","priority":-3}`},
		{"the highest", a.WithPriority(ast.MaxPriority), `{"act":"a","priority":1000}`},
		{"the lowest", a.WithPriority(ast.MinPriority), `{"act":"a","priority":-1000}`},
		{"0 is the default, left out", a.WithPriority(0), `{"act":"a"}`},
		{"after every other key", ast.Seq(ast.Act("cart", nil).Named("cart"), timingFull().WithPriority(7)),
			`{"seq":[{"act":"cart","name":"cart"},` + strings.TrimSuffix(timingFullJSON, "}") + `,"priority":7}]}`},
		{"leaves of every kind of node", ast.Try(
			ast.Seq(a.WithPriority(1), ast.Par(a, a.WithPriority(-1))),
			ast.Rescue(a.WithPriority(2)),
			ast.Finally(ast.Dag(a.Named("x").WithPriority(3).WithDeadline(time.Second))),
		),
			`{"try":{"seq":[{"act":"a","priority":1},{"par":[{"act":"a"},{"act":"a","priority":-1}]}]},` +
				`"rescue":{"act":"a","priority":2},"finally":{"dag":[{"name":"x","do":{"act":"a","deadline":"1s","priority":3}}]}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := ast.Validate(tc.n); err != nil {
				t.Fatalf("Validate: %v", err)
			}
			if diff := cmp.Diff(tc.want, astShow(tc.n)); diff != "" {
				t.Fatalf("node JSON (-want +got):\n%s", diff)
			}
			doc := `{"version":1,"root":` + tc.want + `}`
			back, err := ast.Decode([]byte(doc))
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if !ast.Equal(back, tc.n) {
				t.Fatalf("Decode(Encode(n)) = %s, want %s", astShow(back), astShow(tc.n))
			}
			enc, err := ast.Encode(back)
			if err != nil || string(enc) != doc {
				t.Fatalf("Encode(Decode(doc)) = %s, %v; want %s", enc, err, doc)
			}
		})
	}
}

// TestPrioritySpellings checks that every spelling Decode reads of a
// priority is encoded in the one canonical form.
func TestPrioritySpellings(t *testing.T) {
	for want, docs := range map[string][]string{
		`{"version":1,"root":{"act":"a","priority":5}}`: {
			`{"version":1,"root":{"act":"a","priority":5}}`,
			`{"version":1,"root":{"priority":5,"act":"a"}}`,
			`{"version":1,"root":{"act":"a","priority":5.0}}`,
			`{"version":1,"root":{"act":"a","priority":5e0}}`,
			`{"version":1,"root":{"act":"a","priority":50E-1}}`,
			`{"version":1,"root":{"act":"a", "priority" : 5 }}`,
		},
		`{"version":1,"root":{"act":"a","priority":-1000}}`: {
			`{"version":1,"root":{"act":"a","priority":-1e3}}`,
			`{"version":1,"root":{"act":"a","priority":-1000.000}}`,
		},
		`{"version":1,"root":{"act":"a"}}`: {
			`{"version":1,"root":{"act":"a","priority":0}}`,
			`{"version":1,"root":{"act":"a","priority":-0}}`,
			`{"version":1,"root":{"act":"a","priority":0.0}}`,
			`{"version":1,"root":{"act":"a","priority":null}}`,
		},
	} {
		for _, doc := range docs {
			n, err := ast.Decode([]byte(doc))
			if err != nil {
				t.Errorf("Decode(%s): %v", doc, err)
				continue
			}
			if b, err := ast.Encode(n); err != nil || string(b) != want {
				t.Errorf("Encode(Decode(%s)) = %s, %v; want %s", doc, b, err, want)
			}
		}
	}
}

// TestPriorityValidate checks where a priority may be and its range, on
// trees built with the DSL or by hand: the exact problems, in tree order,
// each at its path.
func TestPriorityValidate(t *testing.T) {
	a := ast.Act("a", nil)
	root := func(msgs ...string) []ast.Problem {
		ps := make([]ast.Problem, len(msgs))
		for i, m := range msgs {
			ps[i] = ast.Problem{Msg: m}
		}
		return ps
	}
	tests := []struct {
		name     string
		n        ast.Node
		problems []ast.Problem // nil: valid
	}{
		{"on a leaf", a.WithPriority(1), nil},
		{"the range, both ends", ast.Seq(a.WithPriority(1000), a.WithPriority(-1000)), nil},
		{"0 anywhere", ast.Seq(ast.Par(a).WithPriority(0)).WithPriority(0), nil},

		// Where it may be.
		{"on a seq", ast.Seq(a).WithPriority(1), root("priority on a seq node (only an act's actions have a priority)")},
		{"on a par", ast.Par(a).WithPriority(-1), root("priority on a par node (only an act's actions have a priority)")},
		{"on a try", ast.Try(a, ast.Finally(a)).WithPriority(5), root("priority on a try node (only an act's actions have a priority)")},
		{"on a dag", ast.Dag(a.Named("x")).WithPriority(1000), root("priority on a dag node (only an act's actions have a priority)")},
		{"out of range on a seq: only its place is reported", ast.Seq(a).WithPriority(5000),
			root("priority on a seq node (only an act's actions have a priority)")},
		{"nested, with their paths, in tree order", ast.Seq(
			a,
			ast.Try(ast.Par(a).WithPriority(2), ast.Rescue(ast.Seq(a).WithPriority(3)), ast.Finally(a.WithPriority(2000))),
			ast.Dag(ast.Seq(a).Named("x").WithPriority(4), a.Named("y").WithAfter("x").WithPriority(-1001)),
		).WithPriority(1),
			[]ast.Problem{
				{Path: "", Msg: "priority on a seq node (only an act's actions have a priority)"},
				{Path: "seq[1].body", Msg: "priority on a par node (only an act's actions have a priority)"},
				{Path: "seq[1].rescue", Msg: "priority on a seq node (only an act's actions have a priority)"},
				{Path: "seq[1].finally", Msg: "priority 2000 is out of range (-1000 to 1000)"},
				{Path: "seq[2].dag[0]", Msg: "priority on a seq node (only an act's actions have a priority)"},
				{Path: "seq[2].dag[1]", Msg: "priority -1001 is out of range (-1000 to 1000)"},
			}},
		{"after the timing fields, as in JSON", ast.Seq(a).WithPriority(1).WithTimeout(time.Second),
			root("timeout on a seq node (only an act's attempts time out; a deadline bounds any node)",
				"priority on a seq node (only an act's actions have a priority)")},
		{"on an unknown kind: only the kind is reported", ast.Node{Kind: 99, Priority: 5},
			root("unknown node kind 99 (want act, seq, par, try, dag, race, choice, end, map, loop, wait or sleep)")},

		// The range.
		{"1001", a.WithPriority(1001), root("priority 1001 is out of range (-1000 to 1000)")},
		{"-1001", a.WithPriority(-1001), root("priority -1001 is out of range (-1000 to 1000)")},
		{"the largest int", a.WithPriority(math.MaxInt), root("priority 9223372036854775807 is out of range (-1000 to 1000)")},
		{"the smallest int", a.WithPriority(math.MinInt), root("priority -9223372036854775808 is out of range (-1000 to 1000)")},
		{"after the leaf's other problems", a.WithPriority(1001).WithTimeout(-time.Second),
			root("timeout -1s is less than 1ms", "priority 1001 is out of range (-1000 to 1000)")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := ast.Validate(tc.n)
			if tc.problems == nil {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			var ae *ast.Error
			if !errors.As(err, &ae) {
				t.Fatalf("Validate = %v, want an *ast.Error", err)
			}
			if diff := cmp.Diff(tc.problems, ae.Problems); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
			// Encode refuses what Validate refuses.
			if _, err := ast.Encode(tc.n); err == nil {
				t.Errorf("Encode accepted an invalid tree")
			}
		})
	}
}

// TestPriorityDecodeErrors checks every problem Decode reports about a
// "priority" key, in JSON's words, each with its path.
func TestPriorityDecodeErrors(t *testing.T) {
	doc := func(root string) string { return `{"version":1,"root":` + root + `}` }
	act := func(priority string) string { return doc(`{"act":"a","priority":` + priority + `}`) }
	root := func(msgs ...string) []ast.Problem {
		ps := make([]ast.Problem, len(msgs))
		for i, m := range msgs {
			ps[i] = ast.Problem{Msg: m}
		}
		return ps
	}
	tests := []struct {
		name     string
		doc      string
		problems []ast.Problem
	}{
		// Where the key may be.
		{"on a seq", doc(`{"seq":[{"act":"a"}],"priority":1}`), root("priority on a seq node (only an act's actions have a priority)")},
		{"on a par", doc(`{"par":[{"act":"a"}],"priority":1}`), root("priority on a par node (only an act's actions have a priority)")},
		{"on a try", doc(`{"try":{"act":"a"},"priority":1}`), root("priority on a try node (only an act's actions have a priority)")},
		{"on a dag", doc(`{"dag":[{"name":"a","do":{"act":"a"}}],"priority":1}`),
			root("priority on a dag node (only an act's actions have a priority)")},
		{"0 and null on a seq too, the value unread", doc(`{"seq":[{"seq":[{"act":"a"}],"priority":0},{"par":[{"act":"a"}],"priority":null},{"seq":[{"act":"a"}],"priority":"x"}]}`),
			[]ast.Problem{
				{Path: "seq[0]", Msg: "priority on a seq node (only an act's actions have a priority)"},
				{Path: "seq[1]", Msg: "priority on a par node (only an act's actions have a priority)"},
				{Path: "seq[2]", Msg: "priority on a seq node (only an act's actions have a priority)"},
			}},
		{"after the timing keys on a seq", doc(`{"seq":[{"act":"a"}],"priority":1,"delivery":"at-most-once","retry":{"attempts":2}}`),
			root("retry on a seq node (only an act is retried)",
				"delivery on a seq node (only an act's attempts are delivered)",
				"priority on a seq node (only an act's actions have a priority)")},
		{"on a dag entry", doc(`{"dag":[{"name":"a","priority":3,"do":{"act":"a"}}]}`),
			[]ast.Problem{{Path: "dag[0]", Msg: `unknown field "priority" in dag entry (allowed: name, after, when, do; priority belongs in the "do" node)`}}},
		{"misspelt key", doc(`{"act":"a","prio":3}`),
			root(`unknown field "prio" in act node (allowed: act, payload, name, inputs, retry, timeout, deadline, delivery, priority)`)},

		// Not an integer.
		{"a string", act(`"5"`), root("priority must be a number, got a string")},
		{"a word", act(`"high"`), root("priority must be a number, got a string")},
		{"a boolean", act(`true`), root("priority must be a number, got a boolean")},
		{"an array", act(`[5]`), root("priority must be a number, got an array")},
		{"an object", act(`{"p":5}`), root("priority must be a number, got an object")},
		{"a fraction", act(`2.5`), root("priority must be a whole number, got 2.5")},
		{"a negative fraction", act(`-0.5`), root("priority must be a whole number, got -0.5")},
		{"a small fraction", act(`1e-3`), root("priority must be a whole number, got 1e-3")},

		// Out of range, and large numbers.
		{"1001", act(`1001`), root("priority 1001 is out of range (-1000 to 1000)")},
		{"-1001", act(`-1001`), root("priority -1001 is out of range (-1000 to 1000)")},
		{"1e9", act(`1e9`), root("priority 1000000000 is out of range (-1000 to 1000)")},
		{"beyond an int32", act(`2147483648`), root("priority 2147483648 is out of range (-1000 to 1000)")},
		{"beyond an int64", act(`12345678901234567890`), root("priority 12345678901234567890 is out of range (-1000 to 1000)")},
		{"huge", act(`1e30`), root("priority 1e30 is out of range (-1000 to 1000)")},
		{"huge fraction", act(`1.5e300`), root("priority 1.5e300 is out of range (-1000 to 1000)")},
		{"beyond a float", act(`1e999`), root("priority 1e999 is out of range (-1000 to 1000)")},
		{"below a float", act(`-1e999`), root("priority -1e999 is out of range (-1000 to 1000)")},
		{"long number, shortened", act(strings.Repeat("9", 60)),
			root("priority " + strings.Repeat("9", 40) + "... is out of range (-1000 to 1000)")},

		// With their paths, in tree order.
		{"nested", doc(`{"try":{"seq":[{"act":"a","priority":7},{"act":"b","priority":7.5}]},"rescue":{"par":[{"act":"r","priority":-2000}]},` +
			`"finally":{"dag":[{"name":"x","do":{"act":"f","priority":"1"}}]}}`),
			[]ast.Problem{
				{Path: "body.seq[1]", Msg: "priority must be a whole number, got 7.5"},
				{Path: "rescue.par[0]", Msg: "priority -2000 is out of range (-1000 to 1000)"},
				{Path: "finally.dag[0]", Msg: "priority must be a number, got a string"},
			}},
		{"after the timing keys on an act", doc(`{"act":"a","priority":0.5,"timeout":"x"}`),
			root(`timeout "x" is not a duration (want one like "30s", "1m30s" or "250ms")`, "priority must be a whole number, got 0.5")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n, err := ast.Decode([]byte(tc.doc))
			if err == nil {
				t.Fatalf("Decode succeeded with %s", astShow(n))
			}
			msg := err.Error()
			for _, goWords := range []string{"Go ", "float", "int", "json", "strconv", "Priority"} {
				if strings.Contains(msg, goWords) && !strings.Contains(tc.doc, goWords) {
					t.Errorf("error %q contains %q", msg, goWords)
				}
			}
			var ae *ast.Error
			if !errors.As(err, &ae) {
				t.Fatalf("error %q is not an *ast.Error", msg)
			}
			if diff := cmp.Diff(tc.problems, ae.Problems); diff != "" {
				t.Errorf("problems (-want +got):\n%s\nmessage: %s", diff, msg)
			}
		})
	}
}

// TestPriorityEqualAndDSL: Equal compares priorities, and WithPriority
// sets the field on a copy.
func TestPriorityEqualAndDSL(t *testing.T) {
	a := ast.Act("a", nil)
	b := a.WithPriority(3)
	if a.Priority != 0 || b.Priority != 3 {
		t.Errorf("WithPriority: the node called on has %d, the result %d", a.Priority, b.Priority)
	}
	if ast.Equal(a, b) || ast.Equal(b, a) || ast.Equal(ast.Seq(a), ast.Seq(b)) {
		t.Errorf("Equal reports trees with different priorities as equal")
	}
	if !ast.Equal(b, ast.Act("a", nil).WithPriority(3)) || !ast.Equal(a, a.WithPriority(0)) {
		t.Errorf("Equal reports the same trees as different")
	}
	if ast.MinPriority != -1000 || ast.MaxPriority != 1000 {
		t.Errorf("the range is %d to %d", ast.MinPriority, ast.MaxPriority)
	}
}
