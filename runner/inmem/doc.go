// Package inmem is baton's single-process runner: an in-memory queue moves
// actions to a bounded pool of workers, and the workers apply the results
// through the shared loop (runner.Engine): load, job.Restart, commit. Its
// Transport saves the transition in the store, then queues the actions.
//
// With store.NewMemory it is a fast engine for tests; with store/bolt every
// transition is on disk before its actions run, so jobs survive a crash or
// a restart of the process: a new Runner on the same store resumes every
// unfinished job when Run starts, listing a page of them at a time
// (runner.RecoverAll; unless Options.NoResume; Resume picks jobs),
// without repeating actions whose results were saved.
//
//	r, err := inmem.New(inmem.Options{WorkerOptions: runner.WorkerOptions{Registry: reg}, Store: st})
//	go r.Run(ctx)
//	err = r.Submit(ctx, "order-7", workflow)
//	j, err := r.Wait(ctx, "order-7")
//
// The runner does not own the store: closing the runner leaves it open.
// It does sweep it while Run runs, when the store deletes settled jobs
// after a retention (store.Sweeper; store/bolt's Options.Retention): one
// bounded sweep at a time, never in the path of a transition.
//
// The queue is first in, first out: the runner ignores the priority of a
// leaf's actions (ast.Node.WithPriority, job.Action.Priority), which a
// runner that orders its queue uses to run higher priorities first. It
// ignores placement hints too (ast.Node.WithAffinity, job.Action.Placement,
// job.Action.Replica): its workers are one process's goroutines, so a
// workflow with affinities runs here as it is, and the copies of a node
// with replicas run side by side; their race is the reducer's.
//
// # Results
//
// A worker takes one action at a time, and applies its result as soon as
// the action ends: no finished result waits for another action. Results
// are combined per job (runner.Applier): while one goroutine applies a
// job's results, the others leave theirs with it, and it applies everything that piled up in
// one Restart and one commit (a backlog becomes large batches, which keeps
// the cost per action low with a durable store). A worker keeps for itself
// the first action its own commit dispatched when no other action waits,
// so a sequence runs on one worker without a hand-off between goroutines;
// a worker whose result another goroutine applies goes on to the next
// queued action with the slot it holds. Before it applies results itself,
// a worker gives its slot back, so that a commit waiting for an fsync
// holds up no action, unless the store never waits for I/O
// (store.Instant, as store.Memory): then it keeps it, and a commit costs
// no hand-off either.
//
// Dispatch is idempotent: the runner knows every action it has in hand
// (queued, kept, running, or finished with its result not yet applied)
// and never queues one twice, whether a recovery, a redelivered result or
// a second Resume asks for it. A recovery never runs between a commit and
// the queueing of its actions.
//
// # Failures
//
// A handler that panics, or an action with no handler, fails that action.
// A job whose stored state cannot be loaded or applied (damaged, deleted)
// is that job's problem: its Wait returns the error, the other jobs go on.
// Any other store error (a full disk, an I/O error, a closed store) stops
// the runner: Run returns the error, Wait and Submit return ErrClosed
// wrapping it, and the jobs stay as last saved, to be resumed once the
// store is usable. A store that failed once is not trusted with retries.
//
// # Shutdown
//
// When Run's context ends (or Close is called), workers take no new
// action; actions in flight get Options.DrainTimeout to finish and their
// results are saved (runner.Drain); after that their contexts are cancelled, and an
// action that then fails is handed back, not failed: it stays outstanding
// in the store and runs again when a runner resumes the job. After Run
// returns the runner is closed (runner.Lifecycle: Close before Run makes
// Run return at once, Close twice does nothing): Submit, Deliver and
// Resume return ErrClosed, which wraps runner.ErrClosed, and Wait returns
// at once for a job that has not finished.
package inmem
