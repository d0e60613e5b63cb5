// Package runner holds what every baton runner shares: the loop that turns
// results into stored jobs and dispatched actions, written once (Engine);
// the registry of Go handlers that perform actions (Registry, Handle); the
// worker side that runs one action safely (Execute); and hooks for metrics.
//
// The loop, in the order the reducer demands:
//
//	receive results -> load job -> job.Restart -> save (CAS) -> dispatch -> ack
//
// A job is saved BEFORE its actions are dispatched, and results are
// acknowledged to the transport only AFTER the job that applied them is
// saved, so a crash at any point loses nothing: unsaved results are
// delivered again, and saved-but-undispatched actions are dispatched again
// by recovery (job.Restart(stored, nil)).
//
// Transports (runner/inmem, runner/zk, runner/kafka) implement Dispatcher
// to move actions to workers and feed results to Engine.Apply. They hold no
// workflow logic, which is why they are interchangeable.
//
// # Delivery
//
// Actions are delivered at least once: a worker that dies after performing
// an action but before its result is saved has its action performed again.
// Handlers must therefore be idempotent (use the action's Key as an
// idempotency key with external systems). Job transitions are exactly
// once: the store's optimistic concurrency and the reducer's idempotence
// ensure each result changes a job at most once.
//
// # Handlers
//
// Handlers are plain Go functions registered by action name. Nothing is
// ever evaluated from data: an action whose name has no handler fails with
// a clear message. A handler that panics fails its action (the panic and
// stack are logged); it never crashes the worker.
package runner
