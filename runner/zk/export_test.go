package zk

import "github.com/batonwf/baton/job"

// FaultPoint is where a fault hook is asked (faultPoint).
type FaultPoint = faultPoint

// The fault points.
const (
	FaultRequest   = faultRequest
	FaultCommit    = faultCommit
	FaultCommitted = faultCommitted
)

// InjectFaults makes f the fault hook of st's connection: every request
// to ZooKeeper asks it first (FaultRequest), and a transition's commit
// asks it before its multi-op is sent (FaultCommit) and once it was
// applied (FaultCommitted); an error it returns is the request's or the
// commit's. Call it before st or a runner on it is used.
func InjectFaults(st *Store, f func(FaultPoint, *job.Transition) error) {
	st.c.faults = f
}
