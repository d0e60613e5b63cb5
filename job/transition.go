package job

// Transition is what New and Restart return: the job's new state and the
// work it implies, as one value beside the state (raft's Ready). A runner
// hands the whole Transition to its transport in one call, so a transport
// that can write the state and the actions atomically (one ZooKeeper
// multi-op) does, and the others save, then dispatch.
//
// Ordering contract: Job must be stored durably BEFORE Actions are
// dispatched, so a crash can never leave a dispatched action whose job
// does not know it was dispatched.
type Transition struct {
	// Job is the new state. When nothing applied it is the job given to
	// Restart, unchanged.
	Job Job

	// Step records the change: the results applied, in the order they
	// applied, and the version they produced (Job.Version()). New's step
	// has version 1 and no results; a Restart that applied nothing returns
	// the zero Step. Stores append steps.
	Step Step

	// Actions are the actions to dispatch once Job is durable, in a
	// canonical order. They are the caller's.
	Actions []Action

	// Timers are the waits to arm once Job is durable (retries of failed
	// attempts; deadlines of nodes that started), in a canonical order. A
	// runner delivers each timer's firing (Timer.Fire) when it is due.
	Timers []Timer

	// Stops are the actions in flight told to stop (a deadline ran out,
	// the leaf's own included, or the job was cancelled): the runner
	// cancels their handlers if it can. Their results, if they come,
	// change nothing (IgnoredStopped; a result for an earlier attempt of a
	// stopped leaf is IgnoredStale). A finally block that had started is
	// never stopped. Every action stopped was outstanding before this
	// transition: none is in Actions too.
	Stops []Action

	// Ignored lists the results that did not apply, each with the reason,
	// in a canonical order. Normal under at-least-once delivery, except
	// IgnoredUnknown, which points at a runner routing results wrongly.
	Ignored []Ignored
}

// Created reports whether the transition made the job (New): a store
// creates it rather than saving a step.
func (t Transition) Created() bool { return t.Step.Version == 1 && len(t.Step.Results) == 0 }

// Changed reports whether the transition changed the job: it was created,
// or at least one result applied. A transition that did not change the job
// has nothing to store and no actions.
func (t Transition) Changed() bool { return t.Step.Version != 0 }

// Option adjusts a job made by New.
type Option func(*origin)

// origin is what New takes besides the ID and the tree.
type origin struct {
	incarnation uint64
	start       int64 // Unix nanoseconds; 0: none given
}

// WithIncarnation sets the job's incarnation: a number that tells apart
// jobs made one after another under the same ID (the first deleted, a new
// one created). Runners draw it at random when they submit a job; it is
// part of every action's IdempotencyKey, so a handler's side effects for a
// deleted job are never mistaken for those of its successor. The default,
// 0, means none.
func WithIncarnation(n uint64) Option {
	return func(o *origin) { o.incarnation = n }
}
