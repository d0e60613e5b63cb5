package ast_test

import (
	"fmt"
	"time"

	"github.com/batonwf/baton/ast"
)

// A workflow built with the Go DSL and written in its JSON wire form.
func Example() {
	order := map[string]any{"id": 7}
	w := ast.Seq(
		ast.Act("check.stock", order),
		ast.Try(ast.Act("charge", order),
			ast.Rescue(ast.Act("notify", "payment failed")),
			ast.Finally(ast.Act("release", order))),
	)
	b, err := ast.Encode(w)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(b))
	// Output:
	// {"version":1,"root":{"seq":[{"act":"check.stock","payload":{"id":7}},{"try":{"act":"charge","payload":{"id":7}},"rescue":{"act":"notify","payload":"payment failed"},"finally":{"act":"release","payload":{"id":7}}}]}}
}

// Decode reads the JSON form, spaces and all, into the same tree the DSL
// builds; Encode writes it back in canonical form.
func ExampleDecode() {
	n, err := ast.Decode([]byte(`{
		"version": 1,
		"root": {"par": [
			{"act": "log", "payload": "a"},
			{"seq": [{"act": "log", "payload": "b"}, {"act": "log", "payload": "c"}]}
		]}
	}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	same := ast.Par(ast.Act("log", "a"), ast.Seq(ast.Act("log", "b"), ast.Act("log", "c")))
	fmt.Println(n.Kind, len(n.Children), "children,", ast.Count(n), "nodes; equal to the DSL tree:", ast.Equal(n, same))
	b, _ := ast.Encode(n)
	fmt.Println(string(b))
	// Output:
	// par 2 children, 5 nodes; equal to the DSL tree: true
	// {"version":1,"root":{"par":[{"act":"log","payload":"a"},{"seq":[{"act":"log","payload":"b"},{"act":"log","payload":"c"}]}]}}
}

// Decode reports every problem in a workflow, each at its node's path.
func ExampleDecode_errors() {
	_, err := ast.Decode([]byte(`{"version":1,"root":{"seq":[{"act":"log"},{"par":[]},{"act":"send email"}]}}`))
	fmt.Println(err)
	// Output:
	// workflow: 2 problems:
	//	seq[1]: par has no children
	//	seq[2]: action name "send email" has ' ' at byte 4 (allowed: letters, digits, '.', '_', '-')
}

// Validate checks a tree built in Go: every problem, with its path.
func ExampleValidate() {
	w := ast.Par(
		ast.Act("send email", nil),
		ast.Seq(),
		ast.Try(ast.Act("a", nil), ast.Rescue(ast.Act("b", nil)), ast.Rescue(ast.Act("c", nil))),
	)
	fmt.Println(ast.Validate(w))
	// Output:
	// workflow: 3 problems:
	//	par[0]: action name "send email" has ' ' at byte 4 (allowed: letters, digits, '.', '_', '-')
	//	par[1]: seq has no children
	//	par[2]: try has more than one rescue
}

// A dag runs each child once the siblings it is after have succeeded; a
// named leaf's output goes to the later leaves that take it as an input.
// Validate refuses an input that may not have succeeded when its taker
// starts, and says why.
func ExampleDag() {
	w := ast.Seq(
		ast.Dag(
			ast.Act("user.fetch", 7).Named("user"),
			ast.Act("cart.fetch", 7).Named("cart"),
			ast.Act("cart.price", nil).Named("price").WithAfter("cart").WithInputs("cart"),
		),
		ast.Act("receipt.send", nil).WithInputs("user", "price"),
	)
	b, err := ast.Encode(w)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(b))

	// The price is not after the user: the user may still be running.
	bad := ast.Dag(
		ast.Act("user.fetch", 7).Named("user"),
		ast.Act("cart.price", nil).Named("price").WithInputs("user"),
	)
	fmt.Println(ast.Validate(bad))
	// Output:
	// {"version":1,"root":{"seq":[{"dag":[{"name":"user","do":{"act":"user.fetch","payload":7}},{"name":"cart","do":{"act":"cart.fetch","payload":7}},{"name":"price","after":["cart"],"do":{"act":"cart.price","inputs":["cart"]}}]},{"act":"receipt.send","inputs":["user","price"]}]}}
	// workflow: dag[1]: input "user" (dag[0]) is a sibling in a dag that this leaf is not after, directly or through others: not sure to have succeeded before this leaf starts
}

// A leaf retried with exponential backoff, each attempt bounded by a
// timeout, in a sequence that must settle within ten minutes of starting.
// A declined card is final: that failure is not retried.
func ExampleNode_WithRetry() {
	w := ast.Seq(
		ast.Act("card.charge", map[string]any{"order": 7}).
			WithRetry(ast.Retry{
				Attempts:     5,
				Initial:      time.Second,
				Multiplier:   2,
				Max:          time.Minute,
				Jitter:       0.2,
				NonRetryable: []string{"card_declined"},
			}).
			WithTimeout(30*time.Second),
		ast.Act("receipt.send", nil).AtMostOnce(),
	).WithDeadline(10 * time.Minute)
	b, err := ast.Encode(w)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(b))

	// A multiplier below 1 would shrink the waits.
	bad := ast.Act("card.charge", nil).WithRetry(ast.Retry{Attempts: 5, Initial: time.Second, Multiplier: 0.5})
	fmt.Println(ast.Validate(bad))
	// Output:
	// {"version":1,"root":{"seq":[{"act":"card.charge","payload":{"order":7},"retry":{"attempts":5,"initial":"1s","multiplier":2,"max":"1m0s","jitter":0.2,"non_retryable":["card_declined"]},"timeout":"30s"},{"act":"receipt.send","delivery":"at-most-once"}],"deadline":"10m0s"}}
	// workflow: root: retry.multiplier 0.5 is below 1, which would shrink the waits (1 to 100, or 0 for 1)
}

// Leaves with priorities: a runner that orders its queue runs the fraud
// check before the other actions ready with it, and the report last. Only
// a leaf has a priority.
func ExampleNode_WithPriority() {
	w := ast.Par(
		ast.Act("fraud.check", "o-7").WithPriority(10),
		ast.Act("stock.reserve", "o-7"),
		ast.Act("report.update", "o-7").WithPriority(-5),
	)
	b, err := ast.Encode(w)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(b))

	fmt.Println(ast.Validate(ast.Seq(ast.Act("a", nil).WithPriority(1001)).WithPriority(1)))
	// Output:
	// {"version":1,"root":{"par":[{"act":"fraud.check","payload":"o-7","priority":10},{"act":"stock.reserve","payload":"o-7"},{"act":"report.update","payload":"o-7","priority":-5}]}}
	// workflow: 2 problems:
	// 	root: priority on a seq node (only an act's actions have a priority)
	// 	seq[0]: priority 1001 is out of range (-1000 to 1000)
}
