package bolt

import "github.com/batonwf/baton/job"

// FaultPoint is where a fault hook is asked (faultPoint).
type FaultPoint = faultPoint

// The fault points.
const (
	FaultRequest   = faultRequest
	FaultCommit    = faultCommit
	FaultCommitted = faultCommitted
)

// InjectFaults makes f the fault hook of st: every operation asks it
// first (FaultRequest), and every write transaction of Creates and Saves
// asks it for each of them before it commits (FaultCommit: an error
// aborts the transaction) and once it committed (FaultCommitted: an
// error is the write's, which stays). step is nil for a Create. Call it
// before st is used.
func InjectFaults(st *Store, f func(p FaultPoint, j job.Job, step *job.Step) error) {
	st.faults = f
}
