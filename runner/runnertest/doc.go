// Package runnertest is the conformance suite every baton runner passes,
// in the manner of testing/fstest: a runner's own test calls Run with a
// factory, and gets the same scenarios as every other runner.
//
// The plain ones: success, failure, rescue, finally, a parallel fan-out of
// 1,000 actions, 100 concurrent jobs, a handler that panics, an unknown
// action name, a result delivered twice (and once more after the job
// finished), and a runner stopped mid-job and started again on the same
// store, finishing without re-running actions whose results were stored.
//
// The signals: a signal that releases a running wait, one sent before its
// wait starts (kept, then taken), one sent twice with one ID (applied
// once), one kept across a runner's restart, and what a runner must
// refuse to a sender (a finished or
// missing job, a bad name or ID, a payload that is not JSON or is over
// job.MaxSignalPayload); and a running node cancelled by name.
//
// The maps and loops: a map of 1,000 copies with a limit of 10 (each
// copy's handler called once with its element and index, never more than
// 10 running at once, the copies' outputs in index order), a map that
// needs 3 of its 10 copies (the rest stopped, their late results
// ignored), a map over an empty array and over something that is not an
// array, a loop that runs until its leaf says so and one that reaches
// its limit, a map and a loop carried across a runner's restart, and a
// running map cancelled by name.
//
// The faults: a runner killed mid-action with no drain, whose job a second
// runner finishes; two runners on one store at once; a crash after a step
// is saved and before its actions are dispatched; a crash after an action
// ran and before its result is saved; and a step whose dispatch was lost,
// rescued by its result delivered again. A crash (Crash) happens at the
// commit of a chosen step, before or after its write, and then every
// request of the runner fails, as a dead process's would. A runner's
// factory injects it at the real write seam (InjectsCrashes: ZooKeeper's
// one multi-op, Kafka's state write and producer, bolt's transaction
// commit), and a factory that says so must crash there: a runner that
// finishes the job instead fails the scenario. Otherwise the suite
// injects it through a wrapper of the store it hands the runner, whose
// Save crashes: the real seam of a store whose Save is its commit
// (store.Memory's).
//
// Wherever the store keeps history (store.Historian), the suite checks
// that every step was applied once and that the history replays to the
// final job byte for byte. Scenarios wait by polling a condition under a
// deadline, never for a fixed time.
package runnertest
