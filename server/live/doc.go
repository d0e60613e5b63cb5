// Package live serves the live updates of jobs over HTTP: a job's event
// stream (server-sent events: snapshot, step, end, shutdown), the list
// stream (jobs created, statuses changed), and the long poll that is the
// streams' fallback. Package server mounts it; docs/live.md describes
// the guarantees for the API's users.
//
// # How it learns of changes
//
// A Hub keeps one watcher per watched job, whatever the number of its
// streams and waiters. Notify (called by the runner's Hooks.Step in the
// same process, or by a store's change feed) and, for jobs nothing
// notifies, a poll of the store (Options.Poll; with notices, a safety
// poll every Options.SafetyPoll) make the watcher look again. Each is a
// hint only: the state always comes from the store (the job's history,
// store.LoadHistory), so a lost or doubled notice can delay an update and
// never shows a wrong one.
//
// # Contracts
//
//   - One read per change. A watcher reads a job's history once per
//     notice (a poll first states the job, store.Stat, and reads the
//     history only if it moved), at most MaxRate times a second, and
//     every stream of the job takes its events from that one read: N
//     streams cost one store read per step, not N.
//   - Every step once, in order. A stream's events carry, after its
//     snapshot, every version of the job exactly once and in order; its
//     event IDs are versions, so a client that reconnects with
//     Last-Event-ID gets exactly the steps it missed. A job deleted and
//     made again under the same ID gets a new snapshot.
//   - Coalesced. At most MaxRate events a second per stream; an event
//     carries every step since the previous one and the latest state of
//     every node they changed (Options.Changed).
//   - Bounded memory. A stream holds no queue: it takes the newest state
//     from the watcher when it can write, so a slow client costs a longer
//     event, not memory; a write blocked for SlowClient drops the client.
//     A watcher holds the job's history as last read.
//   - Settled jobs hold no connection: their stream sends snapshot, then
//     end, and closes; a client that has the last version gets 204.
package live
