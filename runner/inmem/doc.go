// Package inmem is baton's single-process runner: goroutines and
// unbounded in-memory queues move actions to a bounded pool of workers and
// results back to one restarter, which runs the shared loop
// (runner.Engine): load, job.Restart, save, dispatch.
//
// With store.NewMemory it is a fast engine for tests; with store/bolt every
// transition is on disk before its actions run, so jobs survive a crash or
// a restart of the process: a new Runner on the same store resumes every
// unfinished job when Run starts, without repeating actions whose results
// were saved.
//
//	r, err := inmem.New(inmem.Options{Store: st, Registry: reg})
//	go r.Run(ctx)
//	err = r.Submit(ctx, "order-7", workflow)
//	j, err := r.Wait(ctx, "order-7")
//
// The runner does not own the store: closing the runner leaves it open.
//
// Shutdown. When Run's context ends (or Close is called), workers take no
// new action; actions in flight get Options.DrainTimeout to finish and
// their results are saved; after that their contexts are cancelled, and an
// action that then fails is handed back, not failed: it stays outstanding
// in the store and runs again when a runner resumes the job.
//
// Results are applied by the workers themselves, combined per job: while
// one worker applies a job's results, the others leave theirs with it, and
// it applies all that piled up in one Restart and one save. So a backlog
// turns into large batches (which keeps the cost per action low with a
// durable store), and a sequence runs without any hand-off between
// goroutines. When the queue holds a backlog (more than two actions per
// worker), a worker takes a share of up to eight at once and reports their
// results together, so the actions of one job become one step; without a
// backlog it takes one at a time, so a slow action never holds up another
// that a free worker could run.
package inmem
