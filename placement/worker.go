package placement

import (
	"slices"
	"time"
)

// Worker is one registered worker as a deciding process sees it: its
// registration (admin state, capacity, limits, handled actions, grace),
// whether its live node exists, the load it last published, and its
// quarantines. Every time in it is on the viewer's own clock (when this
// process saw a change), never a time read from another machine.
//
// A Worker is a value: placement never modifies one, nor its maps and
// slices, which the caller may share between views.
type Worker struct {
	// Name is the worker's durable name (its --name): a process
	// restarted under the same name is the same worker.
	Name string
	// State is the admin state of its registration: StateAvailable or
	// StateDraining. Anything else (StateNone: no registration, or one
	// that did not parse) makes it ineligible for everything.
	State State
	// Live says its live node exists (on ZooKeeper an ephemeral node of
	// its session). A worker that is not live is down.
	Live bool
	// DownSince is when the viewer saw it stop being live (its own
	// clock). Zero while live; for a worker already down when the viewer
	// started, the time the viewer first saw it.
	DownSince time.Time
	// Grace is how long its pins wait for it once it is down.
	Grace time.Duration
	// Capacity is the most actions it runs at once. Zero or less: none.
	Capacity int
	// Limits bounds, per action name, how many actions of that name it
	// runs at once, below Capacity. A name not listed has only Capacity.
	Limits map[string]int
	// Actions lists the action names it has handlers for, sorted.
	Actions []string
	// Load is what it last published (its own exact load for the viewer
	// itself).
	Load Load
	// Quarantined maps an action name to when the worker's quarantine
	// for it ends, on the viewer's clock. A name absent, or whose time
	// has passed, is not quarantined.
	Quarantined map[string]time.Time
}

// Load is a worker's published load: what it runs, and its counters.
type Load struct {
	// Running is the number of actions it runs now, in total.
	Running int
	// Names holds, per action name, what it runs and its counters.
	Names map[string]NameLoad
}

// NameLoad is a worker's load and counters for one action name.
type NameLoad struct {
	Running   int    // actions of this name it runs now
	Succeeded uint64 // successes since it started, ever growing
	Failed    uint64 // counted failures since it started (see Outcome.Counts)
}

// Handles reports whether w has a handler for the action name.
func (w Worker) Handles(name string) bool {
	_, ok := slices.BinarySearch(w.Actions, name)
	return ok
}

// Free returns how many more actions of the given name w can start now by
// its load: the least of its free capacity and its free limit for the
// name, and never less than zero.
func (w Worker) Free(name string) int {
	free := w.Capacity - w.Load.Running
	if lim, ok := w.Limits[name]; ok {
		free = min(free, lim-w.Load.Names[name].Running)
	}
	return max(free, 0)
}

// QuarantinedFor reports whether w is quarantined for the action name at
// now.
func (w Worker) QuarantinedFor(name string, now time.Time) bool {
	until, ok := w.Quarantined[name]
	return ok && now.Before(until)
}

// Status is what `baton status` shows for w at now: StateDown if it is not
// live (whatever its admin state), else StateDraining if draining, else
// StateQuarantined if quarantined for some action name, else its State.
func (w Worker) Status(now time.Time) State {
	switch {
	case !w.Live:
		return StateDown
	case w.State == StateDraining:
		return StateDraining
	}
	for name := range w.Quarantined {
		if w.QuarantinedFor(name, now) {
			return StateQuarantined
		}
	}
	return w.State
}

// GraceLeft returns how long w's pins still wait for it at now: zero
// while it is live or once its grace has run out.
func (w Worker) GraceLeft(now time.Time) time.Duration {
	if w.Live {
		return 0
	}
	return max(w.DownSince.Add(w.Grace).Sub(now), 0)
}

// eligible reports whether w may take actions of the given names at now,
// leaving its load aside: registered, available, live, with capacity, a
// handler for each name and no quarantine for any. why says what rules it
// out.
func (w Worker) eligible(names []string, now time.Time) (ok bool, why string) {
	if ok, why := w.canRun(names, now); !ok {
		return false, why
	}
	if w.State == StateDraining {
		return false, "draining"
	}
	return true, ""
}

// canRun is eligible without the admin state's draining: whether a pin's
// holder can still run the pin's names (a draining holder runs its pins).
func (w Worker) canRun(names []string, now time.Time) (ok bool, why string) {
	switch {
	case w.State != StateAvailable && w.State != StateDraining:
		return false, "unregistered"
	case !w.Live:
		return false, "down"
	case w.Capacity <= 0:
		return false, "capacity 0"
	}
	for _, n := range names {
		if !w.Handles(n) {
			return false, "no handler for " + n
		}
		if w.QuarantinedFor(n, now) {
			return false, "quarantined for " + n
		}
	}
	return true, ""
}
