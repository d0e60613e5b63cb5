package kafka

import (
	"testing"

	"github.com/batonwf/baton/job"
)

// Brokers returns the brokers the package's tests use (TestMain).
func Brokers() []string { return testBrokers }

// NewPrefix returns a topic prefix no other test uses.
func NewPrefix(t testing.TB) string { return testPrefix(t) }

// WithCrash returns o with a crash hook: at each crash point the runner
// asks f whether it dies there.
func WithCrash(o Options, f func(point string, id job.ID) bool) Options {
	o.crash = f
	return o
}

// Crash points, for tests.
const (
	CrashSaved      = crashSaved
	CrashDispatched = crashDispatched
	CrashApplied    = crashApplied
	CrashRan        = crashRan
	CrashDelivered  = crashDelivered
)

// Kill kills the runner as a crash would.
func (r *Runner) Kill() { r.kill() }
