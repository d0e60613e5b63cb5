// Package runner holds what every baton runner shares: the loop that turns
// results into stored jobs and dispatched actions, written once (Engine);
// the seam a runner implements (Transport); the registry of Go handlers
// that perform actions (Registry, Handle); the worker side that runs one
// action safely (Execute, ActionFrom); and hooks for metrics.
//
// # The loop
//
// In the order the reducer demands:
//
//	results in -> load job -> job.Restart -> Transport.Commit -> ack results
//
// job.Restart returns one value, a job.Transition (raft's Ready): the new
// job, the step that made it, the actions to dispatch and the results it
// ignored. Engine.Apply hands the whole transition to Transport.Commit in
// one call, so a transport that can write the state and the actions
// atomically does (runner/zk: one ZooKeeper multi-op that checks the
// job's version, writes the state, deletes the consumed results and
// creates the queue entries), and a transport whose store and queues are
// apart saves, then dispatches (SaveThenDispatch). Either way the job is
// durable BEFORE its actions are dispatched, and a transport acknowledges
// results only AFTER Apply returned, so a crash at any point loses
// nothing:
//
//   - results not yet committed are delivered again, and applied then;
//   - a commit that saved the state but did not dispatch all its actions
//     (a crash, or ErrNotDispatched) is mended when its results are
//     delivered again: they are all ignored as duplicates, and Apply then
//     dispatches the job's outstanding actions (job.Job.Outstanding) once
//     more; Transport.Dispatch is idempotent where the transport can make
//     it so (one queue entry per action key), at-least-once elsewhere;
//   - a runner taking over jobs (at start, or a partition's jobs after a
//     rebalance) calls Engine.Recover with their IDs, which dispatches
//     each job's outstanding actions again. Recovery is scoped: one job, a
//     chosen set, never necessarily the whole store.
//
// Conflicts are expected: two runners may load the same job. The store's
// compare-and-swap lets one commit win; the other gets store.ErrConflict,
// reloads, and finds its results applied (ignored as duplicates). Retries
// stop at EngineOptions.ConflictRetries and when the context ends; other
// errors are never retried by the engine: a transport decides what a
// failing store means (runner/inmem stops and reports it).
//
// Errors name the job. A result routed to the wrong job wraps
// job.ErrWrongJob; a missing job store.ErrNotFound; a workflow naming
// actions without a handler ErrUnknownActions (Submit and Create refuse
// it, Recover leaves such a stored job untouched rather than fail its
// actions; CheckHandlers is that check, for a runner that makes it where
// a job is submitted rather than where it is created).
//
// # The kit
//
// What every runner needs besides the loop is written once here, and each
// runner keeps only its own transport:
//
//   - Lifecycle: Run once; Close before Run, twice or concurrently; Stop
//     for a runner that stops on its own. Each runner's ErrClosed and
//     ErrRunning wrap ErrClosed and ErrRunning.
//   - Applier: the per-job applier. Results for a job queue up; one
//     goroutine at a time applies a job's results, a batch at a time (at
//     most MaxBatch, and a byte bound if asked); results added while it
//     applies a batch join the next, so a job's backlog costs one Restart
//     and one commit per batch, never one per result, and the applies of
//     one job never overlap. runner/inmem applies in the goroutine that
//     handed the result in (Add), runner/zk in one of its own (Go).
//   - Drain: on shutdown, the actions in flight get the drain timeout to
//     finish, then are handed back (negative: at once).
//   - RecoverAll: resume every unfinished job when a runner starts,
//     listing the store a page at a time into Engine.Recover, so memory
//     does not grow with the store.
//   - Backoff: capped, jittered exponential retries of I/O.
//
// runner/kafka uses Lifecycle, Drain and Backoff, but neither Applier nor
// RecoverAll, because its shape is another: a restarter owns a partition
// and applies what it reads from it in batches of messages, each batch
// grouped by job and applied with a bounded number of jobs at once, and
// the partition's offset is committed only once the whole batch is
// applied (a barrier per batch, submits and deletes applied in their
// place between a job's results, failed jobs retried after the partition
// is claimed again), so the coalescing is the batch read from the
// partition itself. Its recovery is per partition, of the jobs its claim
// read found unfinished in the state partition, not a listing of the
// store.
//
// # Delivery
//
// Actions are delivered at least once: a worker that dies after performing
// an action but before its result is saved has its action performed again.
// Handlers must therefore be idempotent: key side effects with
// job.Action.IdempotencyKey (the same for every attempt of a leaf, new for
// a job made again under a deleted job's ID), which a typed handler gets
// with ActionFrom(ctx). Job transitions are exactly once: the store's
// compare-and-swap and the reducer's idempotence ensure each result
// changes a job at most once.
//
// # Handlers
//
// Handlers are plain Go functions registered by action name. Nothing is
// ever evaluated from data: an action whose name has no handler fails with
// a clear message (and Submit refuses such workflows up front). A handler
// that panics fails its action (the panic and stack are logged); it never
// crashes the worker.
//
// # Logs
//
// What a runner did is logged in one place for all runners (log.go), to
// the logger each is given: every action's start and success at DEBUG,
// every failed attempt at WARN (the job, the action ID, the attempt, the
// action's name, the failure's kind and its message clipped to 200
// bytes), each timer armed at DEBUG, and each job's end at INFO with what
// made a failed job fail or why a cancelled one was cancelled. LogClaimed
// writes the DEBUG line of a claim, for the runners that claim actions
// before they run them.
//
// # Options and the clock
//
// Every runner embeds WorkerOptions in its own Options (the handlers, how
// many actions at once, the action and drain timeouts, the logger, the
// hooks, the clock, the worker's name) and fills them in with
// WorkerOptions.WithDefaults, so the defaults are the same in every
// runner: DefaultWorkers (8), DefaultDrainTimeout (10s) and DefaultName
// (HOST-PID-RANDOM). Execute stamps the name on every result it makes
// (job.Result.Worker), so a job's history says where each attempt ran.
//
// The clock (Clock; nil means RealClock) is a small interface, Now and
// AfterFunc, rather than a Now function alone: a runner reads the time
// from it wherever a job records a time (a result's At, a timer's firing,
// a job's start, a lost at-most-once attempt) and arms every timer of a
// retry or deadline on it, for the time left until it is due by it
// (due minus Now, at least 0). With Now alone, a timer armed on the real
// clock would fire after a real wait whatever the test's clock said; with
// AfterFunc too, a clock the test moves by hand (runnertest.Clock) makes
// the timer fall due exactly when the test moves it past its due time,
// and never before, with no sleep. runner/zk's timer loop reads due times
// by the clock and looks again at least once per back-off, so there a
// clock moved past a due time fires the timer at the next look.
//
// Durations measured for their own sake stay on the real clock: how long
// an action took (Hooks, logs), back-offs, connection and session
// timeouts, the drain, and an action's timeout, which is its handler's
// context deadline.
//
// # Conformance
//
// runner/runnertest is the suite every runner passes: success, failure,
// rescue, finally, a fan-out of 1,000, 100 concurrent jobs, a panicking
// handler, an unknown action, duplicate results, a runner stopped mid-job
// and resumed, killed with no drain, two runners on one store, a crash
// after the save and before dispatch, a crash before a result was saved,
// and redelivery after lost dispatch; signals (to a running wait, before
// it starts, twice with one ID, refused) and a cancelled node; every
// finished job's history holds each step once.
//
// # Signals
//
// Signals and node cancels are results (job.SignalResult,
// job.CancelNodeResult) that each runner carries as it carries its
// workers' (signal.go): what every runner checks before it accepts one is
// written once (NewSignal, wrapping ErrBadSignal; NewCancelNode;
// CheckLive, wrapping ErrFinished; CheckSignal, which answers a signal
// the job applied already as sent, finished or not, and sends nothing),
// and Engine.CancelNode applies a node
// cancel as Engine.Cancel does the job's.
package runner
