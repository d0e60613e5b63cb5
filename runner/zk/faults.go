package zk

import "github.com/batonwf/baton/job"

// faultPoint is where a fault hook (client.faults) is asked whether the
// process dies.
type faultPoint int

const (
	// faultRequest: before every request to ZooKeeper (tr is nil).
	faultRequest faultPoint = iota
	// faultCommit: before a transition's multi-op is sent.
	faultCommit
	// faultCommitted: once a transition's multi-op was applied, before
	// the runner acts on it (runs the actions it claimed, caches the
	// job, queues what did not fit).
	faultCommitted
)

// fault asks the connection's fault hook about point p: nil, or the
// error the request or commit fails with. Production sets no hook; the
// package's tests set one (export_test.go) to crash the runner at the
// commit production runs.
func (c *client) fault(p faultPoint, tr *job.Transition) error {
	if c.faults == nil {
		return nil
	}
	return c.faults(p, tr)
}
