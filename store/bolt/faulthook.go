package bolt

import "github.com/batonwf/baton/job"

// faultPoint is where the fault hook (Store.faults) is asked whether the
// process dies.
type faultPoint int

const (
	// faultRequest: as every operation starts (j is zero, step nil).
	faultRequest faultPoint = iota
	// faultCommit: in a write transaction, for each Create (step nil)
	// and Save it holds, once all are made and before the transaction
	// commits. An error aborts the transaction: none of its writes is
	// stored, and each fails with the error.
	faultCommit
	// faultCommitted: once the transaction committed, for each of its
	// writes, before its caller hears of it (and before the cache holds
	// it). An error is that write's error; the write stays.
	faultCommitted
)

// fault asks the store's fault hook about point p for the write that
// makes j (from step; nil for a Create): nil, or the error the operation
// fails with. Production sets no hook; the package's tests set one
// (export_test.go) to crash a runner at the commit production runs.
func (s *Store) fault(p faultPoint, j job.Job, step *job.Step) error {
	if s.faults == nil {
		return nil
	}
	return s.faults(p, j, step)
}
