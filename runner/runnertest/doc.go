// Package runnertest is the conformance suite every baton runner passes,
// in the manner of testing/fstest: a runner's own test calls Run with a
// factory, and gets the same scenarios as every other runner: success,
// failure, rescue, finally, a parallel fan-out of 1,000 actions, 100
// concurrent jobs, a handler that panics, an unknown action name, a
// result delivered twice, and a runner stopped mid-job and started again
// on the same store, finishing without re-running actions whose results
// were stored.
package runnertest
