// Package ast is baton's workflow language: a small tree of four node kinds.
//
//   - Act: one action to perform, named by a handler name ("email.send") and
//     carrying a JSON payload.
//   - Seq: children in order; the first failure stops the sequence.
//   - Par: children at once; after a child fails nothing new starts under it
//     (finally blocks of tries already entered excepted), and it fails once
//     everything in flight under it has settled.
//   - Try: a body with an optional rescue and an optional finally.
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
// Node paths. Every node has a path from the root, written as edges joined
// by dots: seq[i] and par[i] for the i-th child of a sequence or parallel,
// body, rescue and finally for the parts of a try. The root's path is the
// empty string, written "root" in messages. The path "par[1].seq[0]" is the
// first child of the sequence that is the second child of the root par.
// Paths name nodes in errors, in action IDs and in job descriptions.
//
// The package imports only the standard library and has no global state.
// Nothing here evaluates code: an action name is only a name, looked up in a
// registry of Go handlers by the runner.
package ast
