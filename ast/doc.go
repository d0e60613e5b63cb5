// Package ast is baton's workflow language: a small tree of five node kinds.
//
//   - Act: one action to perform, named by a handler name ("email.send") and
//     carrying a JSON payload.
//   - Seq: children in order; the first failure stops the sequence.
//   - Par: children at once; after a child fails nothing new starts under it
//     (finally blocks of tries already entered excepted), and it fails once
//     everything in flight under it has settled.
//   - Try: a body with an optional rescue and an optional finally.
//   - Dag: named children, each starting once the siblings it is after
//     have succeeded (those after nothing start with the dag); on a failure
//     it stops starting children and fails like a par.
//
// Trees are built with the Go DSL:
//
//	ast.Seq(
//		ast.Act("log", "b"),
//		ast.Try(ast.Act("charge", order),
//			ast.Rescue(ast.Act("refund", order)),
//			ast.Finally(ast.Act("release", order))),
//	)
//
// or decoded from the versioned JSON form (see [Decode] and [Encode]):
//
//	{"version":1,"root":{"seq":[{"act":"log","payload":"b"}, ...]}}
//
// JSON round-trips exactly: Encode(Decode(b)) is the canonical form of b and
// Decode(Encode(n)) equals n. Payloads are kept as compact JSON.
//
// Names, inputs and dags. Any node may have a name ([Node.Named]), unique
// in the workflow: 1 to 100 bytes of letters, digits, '_', '-' and '.',
// starting with a letter or '_'. A leaf takes the outputs of named nodes
// with [Node.WithInputs]; its actions carry them, by name. A dag's children
// are all named and list with [Node.WithAfter] the siblings they wait for:
//
//	ast.Seq(
//		ast.Dag(
//			ast.Act("user.fetch", id).Named("user"),
//			ast.Act("cart.fetch", id).Named("cart"),
//			ast.Act("cart.price", nil).Named("price").WithAfter("cart").WithInputs("cart"),
//		),
//		ast.Act("receipt.send", nil).WithInputs("user", "price"),
//	)
//
// In JSON a dag's children are entries that carry the name and the after:
//
//	{"dag":[{"name":"user","do":{"act":"user.fetch","payload":7}},
//	        {"name":"price","after":["cart"],"do":{"act":"cart.price","inputs":["cart"]}}, ...]}
//
// An input must name a node sure to have succeeded before the leaf
// starts, so that its output is there. Going up from the leaf: at each
// enclosing seq, the children before the one holding the leaf are sure; at
// each enclosing dag, the siblings that the child holding the leaf is
// after, directly or through others, are sure. And a sure node's success
// makes more nodes sure: all the children of a seq, par or dag; the
// finally of a try; the body of a try without a rescue; and so on down.
// Never a rescue (it runs only when the body failed), nor the body of a try
// with a rescue (the try succeeds when the body failed and the rescue
// succeeded), nor anything beside the leaf in a par, nor a node enclosing
// the leaf. So seq(par(a, b), merge) may give merge the inputs a and b, but
// in par(a, b) the leaf b may not take a. A sure node that is not a leaf
// is a valid input, with a null output. [Validate] checks all of this and
// says, for each input refused, why it is not sure.
//
// Node paths. Every node has a path from the root, written as edges joined
// by dots: seq[i], par[i] and dag[i] for the i-th child of a sequence,
// parallel or dag, body, rescue and finally for the parts of a try. The
// root's path is the empty string, written "root" in messages. The path
// "par[1].seq[0]" is the first child of the sequence that is the second
// child of the root par. Paths name nodes in errors, in action IDs and in
// job descriptions.
//
// The package imports only the standard library and has no global state.
// Nothing here evaluates code: an action name is only a name, looked up in a
// registry of Go handlers by the runner.
package ast
