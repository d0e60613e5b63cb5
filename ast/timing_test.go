package ast_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/batonwf/baton/ast"
)

// timingNaN and timingInf are float64 values JSON cannot carry.
func timingNaN() float64 { zero := 0.0; return zero / zero }
func timingInf() float64 { zero := 0.0; return 1 / zero }

// timingFull is a leaf with every field of a retry policy, a timeout, a
// deadline and at-most-once delivery, and its canonical JSON.
func timingFull() ast.Node {
	return ast.Act("card.charge", map[string]int{"order": 7}).Named("charge").WithInputs("cart").
		WithRetry(ast.Retry{Attempts: 5, Initial: time.Second, Multiplier: 2, Max: time.Minute, Jitter: 0.2, NonRetryable: []string{"card_declined", "fraud"}}).
		WithTimeout(30 * time.Second).WithDeadline(10 * time.Minute).AtMostOnce()
}

const timingFullJSON = `{"act":"card.charge","payload":{"order":7},"name":"charge","inputs":["cart"],` +
	`"retry":{"attempts":5,"initial":"1s","multiplier":2,"max":"1m0s","jitter":0.2,"non_retryable":["card_declined","fraud"]},` +
	`"timeout":"30s","deadline":"10m0s","delivery":"at-most-once"}`

// TestTimingCanonical checks the canonical JSON of every field, and that
// it round-trips: Decode gives back the DSL's tree, Encode the same bytes.
func TestTimingCanonical(t *testing.T) {
	a := ast.Act("a", nil)
	retry := func(r ast.Retry) ast.Node { return a.WithRetry(r) }
	tests := []struct {
		name string
		n    ast.Node
		want string
	}{
		{"every field of a leaf", ast.Seq(ast.Act("cart", nil).Named("cart"), timingFull()),
			`{"seq":[{"act":"cart","name":"cart"},` + timingFullJSON + `]}`},
		{"attempts only", retry(ast.Retry{Attempts: 3}), `{"act":"a","retry":{"attempts":3}}`},
		{"attempts 1", retry(ast.Retry{Attempts: 1, NonRetryable: []string{"lost"}}), `{"act":"a","retry":{"attempts":1,"non_retryable":["lost"]}}`},
		{"the most attempts", retry(ast.Retry{Attempts: 1000}), `{"act":"a","retry":{"attempts":1000}}`},
		{"initial", retry(ast.Retry{Attempts: 2, Initial: 1500 * time.Millisecond}), `{"act":"a","retry":{"attempts":2,"initial":"1.5s"}}`},
		{"multiplier", retry(ast.Retry{Attempts: 2, Multiplier: 1.5}), `{"act":"a","retry":{"attempts":2,"multiplier":1.5}}`},
		{"multiplier 1", retry(ast.Retry{Attempts: 2, Multiplier: 1}), `{"act":"a","retry":{"attempts":2,"multiplier":1}}`},
		{"multiplier 100", retry(ast.Retry{Attempts: 2, Multiplier: 100}), `{"act":"a","retry":{"attempts":2,"multiplier":100}}`},
		{"max", retry(ast.Retry{Attempts: 2, Max: 90 * time.Second}), `{"act":"a","retry":{"attempts":2,"max":"1m30s"}}`},
		{"max equal to initial", retry(ast.Retry{Attempts: 2, Initial: time.Second, Max: time.Second}), `{"act":"a","retry":{"attempts":2,"initial":"1s","max":"1s"}}`},
		{"jitter", retry(ast.Retry{Attempts: 2, Jitter: 0.1}), `{"act":"a","retry":{"attempts":2,"jitter":0.1}}`},
		{"jitter 1", retry(ast.Retry{Attempts: 2, Jitter: 1}), `{"act":"a","retry":{"attempts":2,"jitter":1}}`},
		{"tiny jitter", retry(ast.Retry{Attempts: 2, Jitter: 1e-7}), `{"act":"a","retry":{"attempts":2,"jitter":1e-7}}`},
		{"non_retryable", retry(ast.Retry{Attempts: 2, NonRetryable: []string{"timeout", "lost", "A.b_c-9"}}),
			`{"act":"a","retry":{"attempts":2,"non_retryable":["timeout","lost","A.b_c-9"]}}`},
		{"empty non_retryable", retry(ast.Retry{Attempts: 2, NonRetryable: []string{}}), `{"act":"a","retry":{"attempts":2}}`},
		{"timeout", a.WithTimeout(250 * time.Millisecond), `{"act":"a","timeout":"250ms"}`},
		{"shortest timeout", a.WithTimeout(time.Millisecond), `{"act":"a","timeout":"1ms"}`},
		{"longest timeout", a.WithTimeout(10000 * time.Hour), `{"act":"a","timeout":"10000h0m0s"}`},
		{"deadline on a leaf", a.WithDeadline(time.Hour), `{"act":"a","deadline":"1h0m0s"}`},
		{"at-most-once", a.AtMostOnce(), `{"act":"a","delivery":"at-most-once"}`},
		{"at-least-once is the default", a.AtMostOnce().Named("x"), `{"act":"a","name":"x","delivery":"at-most-once"}`},
		{"deadline on a seq", ast.Seq(a).Named("s").WithDeadline(time.Minute), `{"seq":[{"act":"a"}],"name":"s","deadline":"1m0s"}`},
		{"deadline on a par", ast.Par(a).WithDeadline(time.Minute), `{"par":[{"act":"a"}],"deadline":"1m0s"}`},
		{"deadline on a try", ast.Try(a, ast.Rescue(ast.Act("r", nil)), ast.Finally(ast.Act("f", nil))).Named("t").WithDeadline(2 * time.Second),
			`{"try":{"act":"a"},"rescue":{"act":"r"},"finally":{"act":"f"},"name":"t","deadline":"2s"}`},
		{"deadline on a dag and its child", ast.Dag(a.Named("x").WithDeadline(time.Second).WithRetry(ast.Retry{Attempts: 2})).Named("d").WithDeadline(time.Minute),
			`{"dag":[{"name":"x","do":{"act":"a","retry":{"attempts":2},"deadline":"1s"}}],"name":"d","deadline":"1m0s"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
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

// TestTimingSpellings checks that every spelling Decode reads of the same
// fields is encoded in the one canonical form.
func TestTimingSpellings(t *testing.T) {
	canonical := `{"version":1,"root":{"seq":[{"act":"a","retry":{"attempts":3,"initial":"1m30s","multiplier":2,"max":"1h0m0s","jitter":0.5},"timeout":"1.5s"}],"deadline":"10m0s"}}`
	for name, doc := range map[string]string{
		"canonical":         canonical,
		"other key order":   `{"version":1,"root":{"deadline":"10m0s","seq":[{"timeout":"1.5s","retry":{"jitter":0.5,"max":"1h0m0s","multiplier":2,"initial":"1m30s","attempts":3},"act":"a"}]}}`,
		"other durations":   `{"version":1,"root":{"seq":[{"act":"a","retry":{"attempts":3,"initial":"90s","multiplier":2,"max":"60m","jitter":0.5},"timeout":"1500ms"}],"deadline":"0.1666666666666666666667h"}}`,
		"other numbers":     `{"version":1,"root":{"seq":[{"act":"a","retry":{"attempts":3.0,"initial":"1m30s","multiplier":2e0,"max":"1h","jitter":5E-1},"timeout":"1s500ms"}],"deadline":"600s"}}`,
		"nulls and default": `{"version":1,"root":{"seq":[{"act":"a","retry":{"attempts":3,"initial":"1m30s","multiplier":2,"max":"1h","jitter":0.5,"non_retryable":null},"timeout":"1.5s","delivery":"at-least-once"}],"deadline":"10m"}}`,
		"explicit zeros":    `{"version":1,"root":{"seq":[{"act":"a","retry":{"attempts":3,"initial":"1m30s","multiplier":2,"max":"1h","jitter":0.5,"non_retryable":[]},"timeout":"1.5s","delivery":null}],"deadline":"10m"}}`,
	} {
		t.Run(name, func(t *testing.T) {
			n, err := ast.Decode([]byte(doc))
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			b, err := ast.Encode(n)
			if err != nil {
				t.Fatalf("Encode: %v", err)
			}
			if diff := cmp.Diff(canonical, string(b)); diff != "" {
				t.Fatalf("Encode(Decode(doc)) (-want +got):\n%s", diff)
			}
		})
	}
	// Zero fields of a retry are none; null retry, timeout and deadline
	// are none.
	for _, doc := range []string{
		`{"version":1,"root":{"act":"a","retry":{"attempts":2,"initial":"0s","multiplier":0,"max":"0","jitter":0}}}`,
		`{"version":1,"root":{"act":"a","retry":{"attempts":2,"initial":null,"multiplier":null,"max":null,"jitter":null}}}`,
	} {
		n, err := ast.Decode([]byte(doc))
		if err != nil || !ast.Equal(n, ast.Act("a", nil).WithRetry(ast.Retry{Attempts: 2})) {
			t.Errorf("Decode(%s) = %s, %v", doc, astShow(n), err)
		}
	}
	n, err := ast.Decode([]byte(`{"version":1,"root":{"seq":[{"act":"a","retry":null,"timeout":null,"deadline":null}],"deadline":null}}`))
	if err != nil || !ast.Equal(n, ast.Seq(ast.Act("a", nil))) {
		t.Errorf("Decode of nulls = %s, %v", astShow(n), err)
	}
}

// TestTimingValidate checks every rule on trees built with the DSL or by
// hand: the exact problems, in tree order, each at its path.
func TestTimingValidate(t *testing.T) {
	a := ast.Act("a", nil)
	retry := func(r ast.Retry) ast.Node { return a.WithRetry(r) }
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
		// Where the fields may be.
		{"retry on a seq", ast.Seq(a).WithRetry(ast.Retry{Attempts: 2}), root("retry on a seq node (only an act is retried)")},
		{"retry on a par", ast.Par(a).WithRetry(ast.Retry{Attempts: 2}), root("retry on a par node (only an act is retried)")},
		{"bad retry on a try: only its place is reported", ast.Try(a).WithRetry(ast.Retry{}), root("retry on a try node (only an act is retried)")},
		{"timeout on a dag", ast.Dag(a.Named("a")).WithTimeout(time.Second),
			root("timeout on a dag node (only an act's attempts time out; a deadline bounds any node)")},
		{"at-most-once on a par", ast.Par(a).AtMostOnce(), root("delivery on a par node (only an act's attempts are delivered)")},
		{"all three on a seq, in key order", ast.Seq(a).AtMostOnce().WithTimeout(time.Second).WithRetry(ast.Retry{Attempts: 2}),
			root("retry on a seq node (only an act is retried)",
				"timeout on a seq node (only an act's attempts time out; a deadline bounds any node)",
				"delivery on a seq node (only an act's attempts are delivered)")},
		{"deadline anywhere", ast.Seq(ast.Par(ast.Try(a.WithDeadline(time.Second), ast.Finally(a)).WithDeadline(time.Second)).WithDeadline(time.Second),
			ast.Dag(a.Named("d").WithDeadline(time.Second)).WithDeadline(time.Second)).WithDeadline(time.Hour), nil},
		{"on an unknown kind: only the kind is reported", ast.Node{Kind: 99, Retry: &ast.Retry{}, Timeout: -1, Deadline: -1, Delivery: 9},
			root("unknown node kind 99 (want act, seq, par, try, dag, race, choice, end, map, loop, wait or sleep)")},

		// Attempts.
		{"attempts 1", retry(ast.Retry{Attempts: 1}), nil},
		{"attempts 1000", retry(ast.Retry{Attempts: 1000}), nil},
		{"attempts 0", retry(ast.Retry{}), root("retry.attempts 0 is out of range (1 to 1000)")},
		{"attempts negative", retry(ast.Retry{Attempts: -2}), root("retry.attempts -2 is out of range (1 to 1000)")},
		{"attempts 1001", retry(ast.Retry{Attempts: 1001}), root("retry.attempts 1001 is out of range (1 to 1000)")},

		// Initial and max.
		{"initial 0, max 0", retry(ast.Retry{Attempts: 2}), nil},
		{"initial 1ns", retry(ast.Retry{Attempts: 2, Initial: 1}), nil},
		{"max without initial", retry(ast.Retry{Attempts: 2, Max: time.Second}), nil},
		{"initial negative", retry(ast.Retry{Attempts: 2, Initial: -time.Second}), root("retry.initial -1s is negative")},
		{"max negative", retry(ast.Retry{Attempts: 2, Max: -time.Millisecond}), root("retry.max -1ms is negative")},
		{"max below initial", retry(ast.Retry{Attempts: 2, Initial: 2 * time.Second, Max: time.Second}),
			root("retry.max 1s is less than retry.initial 2s (max caps the waits; 0 for no cap)")},
		{"max below a negative initial: the initial is reported", retry(ast.Retry{Attempts: 2, Initial: -2 * time.Second, Max: time.Second}),
			root("retry.initial -2s is negative")},

		// Multiplier.
		{"multiplier 0", retry(ast.Retry{Attempts: 2, Multiplier: 0}), nil},
		{"multiplier 1", retry(ast.Retry{Attempts: 2, Multiplier: 1}), nil},
		{"multiplier 100", retry(ast.Retry{Attempts: 2, Multiplier: 100}), nil},
		{"multiplier below 1", retry(ast.Retry{Attempts: 2, Multiplier: 0.5}),
			root("retry.multiplier 0.5 is below 1, which would shrink the waits (1 to 100, or 0 for 1)")},
		{"multiplier negative", retry(ast.Retry{Attempts: 2, Multiplier: -2}), root("retry.multiplier -2 is out of range (1 to 100, or 0 for 1)")},
		{"multiplier above 100", retry(ast.Retry{Attempts: 2, Multiplier: 100.5}), root("retry.multiplier 100.5 is out of range (1 to 100, or 0 for 1)")},
		{"multiplier NaN", retry(ast.Retry{Attempts: 2, Multiplier: timingNaN()}), root("retry.multiplier NaN is out of range (1 to 100, or 0 for 1)")},
		{"multiplier infinite", retry(ast.Retry{Attempts: 2, Multiplier: timingInf()}), root("retry.multiplier +Inf is out of range (1 to 100, or 0 for 1)")},

		// Jitter.
		{"jitter 0 and 1", ast.Seq(retry(ast.Retry{Attempts: 2}), retry(ast.Retry{Attempts: 2, Jitter: 1})), nil},
		{"jitter negative", retry(ast.Retry{Attempts: 2, Jitter: -0.1}), root("retry.jitter -0.1 is out of range (0 to 1)")},
		{"jitter above 1", retry(ast.Retry{Attempts: 2, Jitter: 1.5}), root("retry.jitter 1.5 is out of range (0 to 1)")},
		{"jitter NaN", retry(ast.Retry{Attempts: 2, Jitter: timingNaN()}), root("retry.jitter NaN is out of range (0 to 1)")},

		// Non-retryable kinds.
		{"kinds", retry(ast.Retry{Attempts: 2, NonRetryable: []string{"timeout", "lost", "card_declined", "x.Y-9", strings.Repeat("k", 100)}}), nil},
		{"kind empty", retry(ast.Retry{Attempts: 2, NonRetryable: []string{"a", ""}}),
			root("retry.non_retryable[1] is empty (a failure kind is 1 to 100 bytes of letters, digits, '_', '-', '.')")},
		{"kind too long", retry(ast.Retry{Attempts: 2, NonRetryable: []string{strings.Repeat("k", 101)}}),
			root("retry.non_retryable[0] is 101 bytes long (at most 100)")},
		{"kind with a space", retry(ast.Retry{Attempts: 2, NonRetryable: []string{"card declined"}}),
			root(`retry.non_retryable[0] "card declined" has ' ' at byte 4 (allowed: letters, digits, '_', '-', '.')`)},
		{"kind not ASCII", retry(ast.Retry{Attempts: 2, NonRetryable: []string{"é"}}),
			root(`retry.non_retryable[0] "é" has 'Ã' at byte 0 (allowed: letters, digits, '_', '-', '.')`)},
		{"kind twice", retry(ast.Retry{Attempts: 2, NonRetryable: []string{"a", "b", "a", "a"}}),
			root(`retry.non_retryable[2] "a" is already listed at [0]`, `retry.non_retryable[3] "a" is already listed at [0]`)},
		{"kind deadline", retry(ast.Retry{Attempts: 2, NonRetryable: []string{"deadline"}}),
			root(`retry.non_retryable[0] "deadline" is never the failure of an attempt (a deadline fails the node it bounds, which is not retried): listing it is a mistake`)},
		{"kind cancelled", retry(ast.Retry{Attempts: 2, NonRetryable: []string{"cancelled"}}),
			root(`retry.non_retryable[0] "cancelled" is never the failure of an attempt (a cancelled node never runs): listing it is a mistake`)},
		{"a bad kind twice is reported twice, not as listed twice", retry(ast.Retry{Attempts: 2, NonRetryable: []string{"x y", "x y"}}),
			root(`retry.non_retryable[0] "x y" has ' ' at byte 1 (allowed: letters, digits, '_', '-', '.')`,
				`retry.non_retryable[1] "x y" has ' ' at byte 1 (allowed: letters, digits, '_', '-', '.')`)},

		// Timeouts and deadlines.
		{"timeout 1ms and 10000h", ast.Seq(a.WithTimeout(time.Millisecond), a.WithTimeout(10000*time.Hour)), nil},
		{"timeout below 1ms", a.WithTimeout(999 * time.Microsecond), root("timeout 999µs is less than 1ms")},
		{"timeout negative", a.WithTimeout(-time.Second), root("timeout -1s is less than 1ms")},
		{"timeout above 10000h", a.WithTimeout(10000*time.Hour + 1), root("timeout 10000h0m0.000000001s is more than 10000h")},
		{"deadline 1ms and 10000h", ast.Seq(a.WithDeadline(time.Millisecond)).WithDeadline(10000 * time.Hour), nil},
		{"deadline below 1ms", ast.Par(a).WithDeadline(1), root("deadline 1ns is less than 1ms")},
		{"deadline above 10000h", ast.Seq(a).WithDeadline(20000 * time.Hour), root("deadline 20000h0m0s is more than 10000h")},

		// Delivery.
		{"delivery not a delivery", ast.Node{Kind: ast.KindAct, Action: "a", Delivery: 7}, root("delivery Delivery(7) is neither AtLeastOnce nor AtMostOnce")},
		{"delivery not a delivery on a seq", ast.Node{Kind: ast.KindSeq, Children: []ast.Node{a}, Delivery: 2}, root("delivery Delivery(2) is neither AtLeastOnce nor AtMostOnce")},

		// A leaf's own problems come first, then its fields'.
		{"action name, then retry", ast.Act("", nil).WithDeadline(-1).WithRetry(ast.Retry{}),
			root("action name is empty", "retry.attempts 0 is out of range (1 to 1000)", "deadline -1ns is less than 1ms")},

		// Everything at once, in tree order and, on a node, in key order.
		{"every problem", ast.Seq(
			retry(ast.Retry{Attempts: 0, Initial: -1, Max: -1, Multiplier: 0.1, Jitter: 2, NonRetryable: []string{"", "cancelled"}}).WithTimeout(-1).WithDeadline(-1),
			ast.Try(ast.Act("", nil).AtMostOnce().WithTimeout(time.Second), ast.Rescue(a.WithTimeout(1))).WithRetry(ast.Retry{Attempts: 2}),
		).WithDeadline(1).WithTimeout(1),
			[]ast.Problem{
				{"", "timeout on a seq node (only an act's attempts time out; a deadline bounds any node)"},
				{"", "deadline 1ns is less than 1ms"},
				{"seq[0]", "retry.attempts 0 is out of range (1 to 1000)"},
				{"seq[0]", "retry.initial -1ns is negative"},
				{"seq[0]", "retry.max -1ns is negative"},
				{"seq[0]", "retry.multiplier 0.1 is below 1, which would shrink the waits (1 to 100, or 0 for 1)"},
				{"seq[0]", "retry.jitter 2 is out of range (0 to 1)"},
				{"seq[0]", "retry.non_retryable[0] is empty (a failure kind is 1 to 100 bytes of letters, digits, '_', '-', '.')"},
				{"seq[0]", `retry.non_retryable[1] "cancelled" is never the failure of an attempt (a cancelled node never runs): listing it is a mistake`},
				{"seq[0]", "timeout -1ns is less than 1ms"},
				{"seq[0]", "deadline -1ns is less than 1ms"},
				{"seq[1]", "retry on a try node (only an act is retried)"},
				{"seq[1].body", "action name is empty"},
				{"seq[1].rescue", "timeout 1ns is less than 1ms"},
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := ast.Validate(tc.n)
			if tc.problems == nil {
				if err != nil {
					t.Fatalf("Validate = %v, want nil", err)
				}
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

// TestTimingManyKinds: a long NonRetryable list is checked for repeats
// in linear time, with the same messages as a short one.
func TestTimingManyKinds(t *testing.T) {
	kinds := make([]string, 100000)
	for i := range kinds {
		kinds[i] = fmt.Sprintf("k%d", i)
	}
	kinds[99999] = "k7"
	kinds[5] = "k3"
	err := ast.Validate(ast.Act("a", nil).WithRetry(ast.Retry{Attempts: 2, NonRetryable: kinds}))
	want := "workflow: 2 problems:\n\troot: retry.non_retryable[5] \"k3\" is already listed at [3]\n\troot: retry.non_retryable[99999] \"k7\" is already listed at [7]"
	if err == nil || err.Error() != want {
		t.Fatalf("Validate = %v, want %q", err, want)
	}
}

// TestTimingDecodeErrors checks every problem Decode reports in the JSON
// form of the fields, in JSON's words, each with its path.
func TestTimingDecodeErrors(t *testing.T) {
	doc := func(root string) string { return `{"version":1,"root":` + root + `}` }
	act := func(fields string) string { return doc(`{"act":"a",` + fields + `}`) }
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
		// Where the keys may be.
		{"retry on a seq", doc(`{"seq":[{"act":"a"}],"retry":{"attempts":2}}`), root("retry on a seq node (only an act is retried)")},
		{"null retry on a par", doc(`{"par":[{"act":"a"}],"retry":null}`), root("retry on a par node (only an act is retried)")},
		{"timeout on a try", doc(`{"try":{"act":"a"},"timeout":"1s"}`),
			root("timeout on a try node (only an act's attempts time out; a deadline bounds any node)")},
		{"delivery on a dag", doc(`{"dag":[{"name":"a","do":{"act":"a"}}],"delivery":"at-least-once"}`),
			root("delivery on a dag node (only an act's attempts are delivered)")},
		{"all three on a seq, in key order, their values unread", doc(`{"seq":[{"act":"a"}],"delivery":5,"timeout":"x","retry":[]}`),
			root("retry on a seq node (only an act is retried)",
				"timeout on a seq node (only an act's attempts time out; a deadline bounds any node)",
				"delivery on a seq node (only an act's attempts are delivered)")},
		{"deadline on a dag entry", doc(`{"dag":[{"name":"a","deadline":"1s","do":{"act":"a"}}]}`),
			[]ast.Problem{{"dag[0]", `unknown field "deadline" in dag entry (allowed: name, after, when, do; deadline belongs in the "do" node)`}}},
		{"retry on a dag entry", doc(`{"dag":[{"name":"a","retry":{"attempts":2},"do":{"act":"a"}}]}`),
			[]ast.Problem{{"dag[0]", `unknown field "retry" in dag entry (allowed: name, after, when, do; retry belongs in the "do" node)`}}},
		{"misspelt key", act(`"retries":3`),
			root(`unknown field "retries" in act node (allowed: act, payload, name, inputs, retry, timeout, deadline, delivery, priority)`)},

		// Retry.
		{"retry not an object", act(`"retry":3`), root(`retry must be an object like {"attempts":3,"initial":"1s"}, got a number`)},
		{"retry an array", act(`"retry":[{"attempts":3}]`), root(`retry must be an object like {"attempts":3,"initial":"1s"}, got an array`)},
		{"retry empty", act(`"retry":{}`), root("retry has no attempts (the number of attempts, the first included: 1 to 1000)")},
		{"attempts null", act(`"retry":{"attempts":null}`), root("retry has no attempts (the number of attempts, the first included: 1 to 1000)")},
		{"unknown retry key", act(`"retry":{"attempts":2,"tries":3,"backoff":"1s"}`),
			root(`unknown field "backoff" in retry (allowed: attempts, initial, multiplier, max, jitter, non_retryable)`,
				`unknown field "tries" in retry (allowed: attempts, initial, multiplier, max, jitter, non_retryable)`)},
		{"attempts a string", act(`"retry":{"attempts":"3"}`), root("retry.attempts must be a number, got a string")},
		{"attempts a fraction", act(`"retry":{"attempts":2.5}`), root("retry.attempts must be a whole number, got 2.5")},
		{"attempts 0", act(`"retry":{"attempts":0}`), root("retry.attempts 0 is out of range (1 to 1000)")},
		{"attempts negative", act(`"retry":{"attempts":-1}`), root("retry.attempts -1 is out of range (1 to 1000)")},
		{"attempts 1001", act(`"retry":{"attempts":1001}`), root("retry.attempts 1001 is out of range (1 to 1000)")},
		{"attempts huge", act(`"retry":{"attempts":1e30}`), root("retry.attempts 1e30 is out of range (1 to 1000)")},
		{"attempts beyond a float", act(`"retry":{"attempts":1e999}`), root("retry.attempts 1e999 is out of range (1 to 1000)")},
		{"initial a number", act(`"retry":{"attempts":2,"initial":1000}`), root(`retry.initial must be a duration string like "1s", got a number`)},
		{"initial no unit", act(`"retry":{"attempts":2,"initial":"1000"}`),
			root(`retry.initial "1000" is not a duration (want one like "1s", "1m30s" or "250ms")`)},
		{"initial negative", act(`"retry":{"attempts":2,"initial":"-1s"}`), root("retry.initial -1s is negative")},
		{"max a word", act(`"retry":{"attempts":2,"max":"forever"}`),
			root(`retry.max "forever" is not a duration (want one like "1m", "1m30s" or "250ms")`)},
		{"max an object", act(`"retry":{"attempts":2,"max":{}}`), root(`retry.max must be a duration string like "1m", got an object`)},
		{"max below initial", act(`"retry":{"attempts":2,"initial":"1m","max":"30s"}`),
			root("retry.max 30s is less than retry.initial 1m0s (max caps the waits; 0 for no cap)")},
		{"multiplier a string", act(`"retry":{"attempts":2,"multiplier":"2"}`), root("retry.multiplier must be a number, got a string")},
		{"multiplier below 1", act(`"retry":{"attempts":2,"multiplier":0.9}`),
			root("retry.multiplier 0.9 is below 1, which would shrink the waits (1 to 100, or 0 for 1)")},
		{"multiplier above 100", act(`"retry":{"attempts":2,"multiplier":1000}`), root("retry.multiplier 1000 is out of range (1 to 100, or 0 for 1)")},
		{"multiplier beyond a float", act(`"retry":{"attempts":2,"multiplier":-1e400}`), root("retry.multiplier -1e400 is out of range (1 to 100, or 0 for 1)")},
		{"jitter a boolean", act(`"retry":{"attempts":2,"jitter":true}`), root("retry.jitter must be a number, got a boolean")},
		{"jitter above 1", act(`"retry":{"attempts":2,"jitter":20}`), root("retry.jitter 20 is out of range (0 to 1)")},
		{"jitter beyond a float", act(`"retry":{"attempts":2,"jitter":1e400}`), root("retry.jitter 1e400 is out of range (0 to 1)")},
		{"non_retryable a string", act(`"retry":{"attempts":2,"non_retryable":"timeout"}`),
			root("retry.non_retryable must be an array of strings (failure kinds), got a string")},
		{"non_retryable with a number", act(`"retry":{"attempts":2,"non_retryable":["timeout",5]}`),
			root("retry.non_retryable must be an array of strings (failure kinds), got a number at index 1")},
		{"non_retryable with null", act(`"retry":{"attempts":2,"non_retryable":[null]}`),
			root("retry.non_retryable must be an array of strings (failure kinds), got null at index 0")},
		{"non_retryable rules", act(`"retry":{"attempts":2,"non_retryable":["timeout","","timeout","deadline","card declined"]}`),
			root("retry.non_retryable[1] is empty (a failure kind is 1 to 100 bytes of letters, digits, '_', '-', '.')",
				`retry.non_retryable[2] "timeout" is already listed at [0]`,
				`retry.non_retryable[3] "deadline" is never the failure of an attempt (a deadline fails the node it bounds, which is not retried): listing it is a mistake`,
				`retry.non_retryable[4] "card declined" has ' ' at byte 4 (allowed: letters, digits, '_', '-', '.')`)},

		// Timeout and deadline.
		{"timeout a number", act(`"timeout":30`), root(`timeout must be a duration string like "30s", got a number`)},
		{"timeout no unit", act(`"timeout":"30"`), root(`timeout "30" is not a duration (want one like "30s", "1m30s" or "250ms")`)},
		{"timeout a word", act(`"timeout":"soon"`), root(`timeout "soon" is not a duration (want one like "30s", "1m30s" or "250ms")`)},
		{"timeout empty", act(`"timeout":""`), root(`timeout "" is not a duration (want one like "30s", "1m30s" or "250ms")`)},
		{"timeout long value, shortened", act(`"timeout":"` + strings.Repeat("9", 60) + `s"`),
			root(`timeout "` + strings.Repeat("9", 40) + `"... is not a duration (want one like "30s", "1m30s" or "250ms")`)},
		{"timeout 0", act(`"timeout":"0s"`), root("timeout 0s is less than 1ms (leave timeout out for no limit)")},
		{"timeout 0 unitless", act(`"timeout":"0"`), root("timeout 0s is less than 1ms (leave timeout out for no limit)")},
		{"timeout below 1ms", act(`"timeout":"500us"`), root("timeout 500µs is less than 1ms")},
		{"timeout negative", act(`"timeout":"-1m"`), root("timeout -1m0s is less than 1ms")},
		{"timeout above 10000h", act(`"timeout":"10001h"`), root("timeout 10001h0m0s is more than 10000h")},
		{"deadline an object", doc(`{"seq":[{"act":"a"}],"deadline":{"s":1}}`), root(`deadline must be a duration string like "30s", got an object`)},
		{"deadline a word", doc(`{"par":[{"act":"a"}],"deadline":"1 day"}`), root(`deadline "1 day" is not a duration (want one like "30s", "1m30s" or "250ms")`)},
		{"deadline 0", doc(`{"try":{"act":"a"},"deadline":"0h"}`), root("deadline 0s is less than 1ms (leave deadline out for no limit)")},
		{"deadline too long", doc(`{"dag":[{"name":"a","do":{"act":"a"}}],"deadline":"500000h"}`), root("deadline 500000h0m0s is more than 10000h")},
		{"deadline overflowing", act(`"deadline":"3000000h"`), root(`deadline "3000000h" is not a duration (want one like "30s", "1m30s" or "250ms")`)},

		// Delivery.
		{"delivery a word", act(`"delivery":"exactly-once"`), root(`delivery "exactly-once" is not a delivery (want "at-least-once" or "at-most-once")`)},
		{"delivery in Go's words", act(`"delivery":"AtMostOnce"`), root(`delivery "AtMostOnce" is not a delivery (want "at-least-once" or "at-most-once")`)},
		{"delivery a boolean", act(`"delivery":true`), root(`delivery must be a string, "at-least-once" or "at-most-once", got a boolean`)},

		// Every problem, in tree order, the structural ones of a node first.
		{"every problem", doc(`{"seq":[{"act":"a","retry":{"attempts":0,"jitter":"x"},"timeout":"1","delivery":1},{"seq":[{"act":"b","timeout":"1ns"}],"timeout":"1s","deadline":"2x"}],"deadline":"-1s"}`),
			[]ast.Problem{
				{"", "deadline -1s is less than 1ms"},
				{"seq[0]", "retry.jitter must be a number, got a string"},
				{"seq[0]", `timeout "1" is not a duration (want one like "30s", "1m30s" or "250ms")`},
				{"seq[0]", `delivery must be a string, "at-least-once" or "at-most-once", got a number`},
				{"seq[0]", "retry.attempts 0 is out of range (1 to 1000)"},
				{"seq[1]", "timeout on a seq node (only an act's attempts time out; a deadline bounds any node)"},
				{"seq[1]", `deadline "2x" is not a duration (want one like "30s", "1m30s" or "250ms")`},
				{"seq[1].seq[0]", "timeout 1ns is less than 1ms"},
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n, err := ast.Decode([]byte(tc.doc))
			if err == nil {
				t.Fatalf("Decode succeeded with %s", astShow(n))
			}
			msg := err.Error()
			for _, goWords := range []string{"Go ", "time:", "time.", "Duration", "float", "int", "json", "strconv", "Once(", "AtMostOnce nor"} {
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

// TestTimingEqual: Equal compares every new field, the retry policy by
// value.
func TestTimingEqual(t *testing.T) {
	base := timingFull
	same := base()
	same.Retry = &ast.Retry{Attempts: 5, Initial: time.Second, Multiplier: 2, Max: time.Minute, Jitter: 0.2, NonRetryable: []string{"card_declined", "fraud"}}
	if !ast.Equal(base(), same) {
		t.Fatalf("Equal of the same policy behind another pointer is false")
	}
	empty := ast.Act("a", nil).WithRetry(ast.Retry{Attempts: 2})
	emptyList := ast.Act("a", nil).WithRetry(ast.Retry{Attempts: 2, NonRetryable: []string{}})
	if !ast.Equal(empty, emptyList) {
		t.Fatalf("Equal of a nil and an empty NonRetryable is false (both are none)")
	}
	edit := func(f func(n *ast.Node)) ast.Node {
		n := base()
		r := *n.Retry
		r.NonRetryable = append([]string(nil), r.NonRetryable...)
		n.Retry = &r
		f(&n)
		return n
	}
	differ := map[string]ast.Node{
		"no retry":      edit(func(n *ast.Node) { n.Retry = nil }),
		"attempts":      edit(func(n *ast.Node) { n.Retry.Attempts = 4 }),
		"initial":       edit(func(n *ast.Node) { n.Retry.Initial = 2 * time.Second }),
		"multiplier":    edit(func(n *ast.Node) { n.Retry.Multiplier = 3 }),
		"max":           edit(func(n *ast.Node) { n.Retry.Max = 0 }),
		"jitter":        edit(func(n *ast.Node) { n.Retry.Jitter = 0 }),
		"kinds order":   edit(func(n *ast.Node) { n.Retry.NonRetryable[0], n.Retry.NonRetryable[1] = "fraud", "card_declined" }),
		"kinds fewer":   edit(func(n *ast.Node) { n.Retry.NonRetryable = n.Retry.NonRetryable[:1] }),
		"timeout":       edit(func(n *ast.Node) { n.Timeout = time.Second }),
		"no timeout":    edit(func(n *ast.Node) { n.Timeout = 0 }),
		"deadline":      edit(func(n *ast.Node) { n.Deadline = time.Hour }),
		"delivery":      edit(func(n *ast.Node) { n.Delivery = ast.AtLeastOnce }),
		"child's field": ast.Seq(edit(func(n *ast.Node) { n.Deadline = 0 })),
	}
	for name, n := range differ {
		if name == "child's field" {
			if ast.Equal(ast.Seq(base()), n) {
				t.Errorf("%s: Equal reports different trees as equal", name)
			}
			continue
		}
		if ast.Equal(base(), n) || ast.Equal(n, base()) {
			t.Errorf("%s: Equal reports different trees as equal", name)
		}
	}
	// Walk and Count see the same nodes whatever the fields.
	w := ast.Seq(base(), ast.Par(ast.Act("b", nil)).WithDeadline(time.Second))
	if got := ast.Count(w); got != 4 {
		t.Errorf("Count = %d, want 4", got)
	}
	var paths []string
	ast.Walk(w, func(p string, _ *ast.Node) bool { paths = append(paths, p); return true })
	if got := fmt.Sprint(paths); got != "[ seq[0] seq[1] seq[1].par[0]]" {
		t.Errorf("Walk visited %s", got)
	}
}

// TestTimingDSL: the DSL sets the fields on a copy, and WithRetry keeps
// its own copy of the policy.
func TestTimingDSL(t *testing.T) {
	a := ast.Act("a", nil)
	r := ast.Retry{Attempts: 3}
	b := a.WithRetry(r).WithTimeout(time.Second).WithDeadline(time.Minute).AtMostOnce()
	r.Attempts = 9
	if a.Retry != nil || a.Timeout != 0 || a.Deadline != 0 || a.Delivery != ast.AtLeastOnce {
		t.Errorf("the DSL changed the node it was called on: %+v", a)
	}
	if b.Retry == nil || b.Retry.Attempts != 3 || b.Timeout != time.Second || b.Deadline != time.Minute || b.Delivery != ast.AtMostOnce {
		t.Errorf("the DSL gave %+v", b)
	}
	for d, want := range map[ast.Delivery]string{ast.AtLeastOnce: "at-least-once", ast.AtMostOnce: "at-most-once", 5: "Delivery(5)"} {
		if got := d.String(); got != want {
			t.Errorf("Delivery(%d).String() = %q, want %q", uint8(d), got, want)
		}
	}
}
