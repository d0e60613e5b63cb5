// Package ast is baton's workflow language: a small tree of six node kinds.
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
//   - Race: children at once; the first to succeed wins and the others
//     are stopped; it fails when every child has failed. "replicas": N on
//     any node runs it as a race of N copies of itself (Expand).
//
// Any node may carry an Affinity, a placement hint the reducer copies
// onto its leaves' actions. Races, replicas and affinities are version 2
// of the JSON form; a tree without them is written as version 1.
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
// Retry, timeouts, deadlines and delivery. A leaf may carry a retry
// policy ([Node.WithRetry]), a timeout ([Node.WithTimeout]) and a delivery
// ([Node.AtMostOnce]); any node may carry a deadline ([Node.WithDeadline]):
//
//	ast.Seq(
//		ast.Act("card.charge", order).
//			WithRetry(ast.Retry{Attempts: 5, Initial: time.Second, Multiplier: 2,
//				Max: time.Minute, Jitter: 0.2, NonRetryable: []string{"card_declined"}}).
//			WithTimeout(30 * time.Second),
//		ast.Act("receipt.send", nil),
//	).WithDeadline(10 * time.Minute)
//
// in JSON
//
//	{"seq":[{"act":"card.charge","payload":...,
//	         "retry":{"attempts":5,"initial":"1s","multiplier":2,"max":"1m0s","jitter":0.2,"non_retryable":["card_declined"]},
//	         "timeout":"30s"},
//	        {"act":"receipt.send"}],
//	 "deadline":"10m0s"}
//
// As the reducer runs them:
//
//   - Retry. The leaf runs at most Attempts times, the first included. A
//     failed attempt with attempts left, whose kind is not listed in
//     NonRetryable (nor marked final by its handler), waits and runs again
//     as the next attempt: after attempt k the wait is
//     Initial * Multiplier^(k-1) (a Multiplier of 0 counts as 1), capped at
//     Max when Max is not 0, then moved by up to ±Jitter of itself, drawn
//     deterministically (from the job, the leaf and the attempt), so that
//     replaying a job waits the same. Attempts of 1 is allowed: the leaf
//     is not retried, and the policy still names its NonRetryable kinds.
//   - Timeout bounds each attempt of a leaf. An attempt that overruns fails
//     with kind "timeout", which is retried like any failure unless
//     "timeout" is listed in NonRetryable.
//   - Deadline bounds a node from when it starts. When it runs out before
//     the node settles, the node fails with kind "deadline": nothing new
//     starts under it, except the finally blocks of tries already entered,
//     and its actions in flight are stopped. A deadline is never retried:
//     it is not the failure of an attempt, and neither is "cancelled" (a
//     cancelled node never runs), so listing either in NonRetryable is
//     refused as a mistake.
//   - Delivery says what a runner does with an attempt it cannot tell ran
//     or not (its process crashed, its worker was lost). AtLeastOnce, the
//     default, runs it again under the same action ID. AtMostOnce fails
//     the attempt with kind "lost" instead of running it again, and the
//     retry policy decides, explicitly, whether a next attempt runs ("lost"
//     in NonRetryable: never).
//
// Durations are Go durations; in JSON they are strings time.ParseDuration
// reads ("30s", "1m30s", "250ms"), written canonically by
// time.Duration's String ("10m0s"). A timeout or deadline is from 1ms to
// 10000 hours. See [Validate] for every rule.
//
// Priority. A leaf may carry a priority ([Node.WithPriority]), a whole
// number from MinPriority to MaxPriority (-1000 to 1000, 0 by default),
// written "priority":5 in JSON. Its actions carry it, for runners: one
// that orders its queue runs higher priorities first. It orders only
// actions that are ready at the same time (a seq still runs its children
// one after the other); the reducer gives it no other meaning.
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
