package zk

import (
	"maps"
	"sync"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/placement"
)

// loadTracker is a worker's exact load: the actions it runs, in total
// and per name, and its counters per name since it started. Runner.perform
// is the one place every action runs, whether claimed from the queue or in
// a transition, and keeps it. The live node publishes it (publishLoop);
// the work loop's decisions take it as Self's load.
type loadTracker struct {
	mu       sync.Mutex
	running  int
	names    map[string]placement.NameLoad
	finished int64 // actions ended, since the worker started
	changes  notifier
}

// started records that an action of the given name started.
func (t *loadTracker) started(name string) {
	t.mu.Lock()
	if t.names == nil {
		t.names = map[string]placement.NameLoad{}
	}
	n := t.names[name]
	n.Running++
	t.names[name] = n
	t.running++
	t.mu.Unlock()
	t.changes.notify()
}

// ended records that an action of the given name ended with the
// outcome: a success counts in Succeeded, a counted failure
// (placement.Outcome.Counts) in Failed.
func (t *loadTracker) ended(name string, o placement.Outcome) {
	t.mu.Lock()
	n := t.names[name]
	n.Running--
	switch {
	case o == placement.Succeeded:
		n.Succeeded++
	case o.Counts():
		n.Failed++
	}
	t.names[name] = n
	t.running--
	t.finished++
	t.mu.Unlock()
	t.changes.notify()
}

// load returns the load now: a new map the caller owns.
func (t *loadTracker) load() placement.Load {
	t.mu.Lock()
	defer t.mu.Unlock()
	return placement.Load{Running: t.running, Names: maps.Clone(t.names)}
}

// counts returns the actions running now and those that ended so far.
func (t *loadTracker) counts() (running int, finished int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.running, t.finished
}

// outcome classifies how an attempt ended on this worker, for the load's
// counters and for quarantine: stopped (a stop, a cancel, a drain that
// handed it back: err set) or the result's kind.
func outcome(res job.Result, err error, stopped bool) placement.Outcome {
	switch {
	case stopped || err != nil:
		return placement.Stopped
	case !res.Failed():
		return placement.Succeeded
	}
	switch res.Kind {
	case job.KindTimeout:
		return placement.TimedOut
	case job.KindLost:
		return placement.Lost
	case job.KindDeadline, job.KindCancelled:
		return placement.Stopped
	}
	if res.Final {
		return placement.Permanent
	}
	return placement.Failed
}
