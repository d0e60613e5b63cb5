// Package storetest is the conformance suite for store.Store, in the
// manner of testing/fstest and log/slog/slogtest: every store calls it in a
// few lines and passes the same checks.
//
//	func TestMemory(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) store.Store { return store.NewMemory() })
//	}
//
// Run checks the contract written on store.Store: Create and Load; ErrExists,
// ErrNotFound, ErrConflict, ErrNoStep and ErrClosed; optimistic concurrency
// under racing savers (exactly one wins); History and History.At against
// every live version; List order and contents; the times List tells
// (Info.Created, Updated); Delete; a cancelled context;
// a long run of small steps (2,000 one-result Saves, which makes durable
// stores take and replay snapshots); and many jobs and runners at once
// (run the suite with -race). RunDurable adds what a store that keeps its
// data in a file must do: everything survives Close and a new Open of the
// same path. RunDamaged checks that one job whose record is damaged is
// listed as damaged and hides no other job.
//
// Jobs are compared by their canonical encoding (job.Encode), byte for
// byte; a mismatch is reported as a diff of job.Describe.
//
// # Contracts
//
//   - Run and RunDurable call newStore (or open) once per subtest, from the
//     subtest's goroutine, and Close every store they get (Close twice must
//     be safe, so newStore may register its own cleanup too).
//   - Each store handed to Run must start empty.
//   - Subtests are sequential; some start goroutines of their own and wait
//     for them before returning.
//   - A Save of a job that was already saved (a Loaded job, or a Restart
//     that applied nothing to a saved job) may fail with ErrNoStep or with
//     ErrConflict: a job keeps the step that produced it, so stores cannot
//     tell it apart from a stale save. Either way nothing may change.
//   - A write made with a context that is already cancelled must return an
//     error wrapping context.Canceled; the suite does not check whether it
//     was applied, since store.Store allows either.
package storetest
