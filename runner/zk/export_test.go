package zk

import (
	"context"

	"github.com/batonwf/baton/job"
)

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

// RecoverLoaded recovers j as loaded earlier, as Resume does for a job it
// has just loaded: what a worker's start-up resume does when the job moves
// on between its load and its dispatch.
func RecoverLoaded(ctx context.Context, r *Runner, j job.Job) (int, error) {
	return r.eng.RecoverJob(ctx, j)
}
