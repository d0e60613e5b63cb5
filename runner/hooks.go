package runner

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/batonwf/baton/job"
)

// Hooks lets a program observe a runner, for metrics and tracing. Every
// field is optional. Hooks are called synchronously from the runner's
// goroutines, possibly concurrently: keep them fast and safe for
// concurrent use. A nil *Hooks is valid and calls nothing.
type Hooks struct {
	ActionStarted    func(a job.Action)
	ActionFinished   func(a job.Action, r job.Result, took time.Duration)
	ActionHandedBack func(a job.Action)
	// Step is called after a transition was committed (its state saved
	// and its actions dispatched), with the number of actions.
	Step func(j job.Job, dispatched int)
	// Ignored is called for results the reducer did not apply.
	Ignored func(id job.ID, ig job.Ignored)
	// JobDone is called once the job that finished was saved.
	JobDone func(j job.Job)
	// Committed is called after a transition was committed, before Step,
	// with how long the engine took from the start of the Apply (or of the
	// Submit or Create) to the end of the commit: the load, Restart and
	// commit, reloads after conflicts included. A transition whose job is
	// at version 1 created the job.
	Committed func(tr job.Transition, took time.Duration)
	// Dispatched is called after actions were handed to the transport: a
	// transition's new actions once it was committed, and the outstanding
	// actions dispatched again (Engine.Recover, redelivery). A worker may
	// have started some of them already.
	Dispatched func(acts []job.Action)
	// ActionPanicked is called when an action's handler panicked, before
	// ActionFinished reports the failure the panic became.
	ActionPanicked func(a job.Action)
	// Placement is called when a worker's placement did something: a
	// claim, a spill, a pin, a broken lease, a quarantine, a drain (see
	// PlacementKind for which runner tells which). Runners call it through
	// Hooks.Placed.
	Placement func(e PlacementEvent)
}

// PlacementEvent is what a worker's placement did once.
type PlacementEvent struct {
	Kind PlacementKind
	// Action is the name of the action the event is about (a claim, a
	// spill, a pin's allocation or move, a quarantine), or "".
	Action string
}

// PlacementKind says what a PlacementEvent is.
type PlacementKind uint8

// The placement events. ZooKeeper's runner tells every kind but
// PlacementWedged; Kafka's tells PlacementQuarantined, PlacementWedged,
// PlacementDraining and PlacementUnreadable (a control record or a
// member's user data that did not parse).
const (
	// PlacementClaimed: the worker claimed an action from the queue, with
	// a request of its own.
	PlacementClaimed PlacementKind = iota + 1
	// PlacementClaimedInTransition: the transition that made the action
	// claimed it for this worker (no request of its own).
	PlacementClaimedInTransition
	// PlacementClaimLost: another worker claimed the action first.
	PlacementClaimLost
	// PlacementSpilled: the worker claimed a soft key's action whose
	// holder is another worker, busy past the key's wait.
	PlacementSpilled
	// PlacementPinAllocated: a claim allocated a pin to this worker;
	// PlacementPinMoved: and the pin was another worker's (each move also
	// tells PlacementPinAllocated).
	PlacementPinAllocated
	PlacementPinMoved
	// PlacementLeaseRenewed: the worker renewed one of its claims' lease;
	// PlacementLeaseBroken: it broke another worker's claim, whose lease
	// had expired.
	PlacementLeaseRenewed
	PlacementLeaseBroken
	// PlacementQuarantined: the worker quarantined itself for an action.
	PlacementQuarantined
	// PlacementWedged: the worker left its group for making no progress
	// for a claim lease (Kafka).
	PlacementWedged
	// PlacementDraining: the worker saw itself marked draining;
	// PlacementUndrained: and then no longer (ZooKeeper).
	PlacementDraining
	PlacementUndrained
	// PlacementUnreadable: the worker found a placement record garbled (a
	// registration, live node, settings or quarantine node; a control
	// record or a member's user data), and skipped it.
	PlacementUnreadable
)

var placementKinds = [...]string{"", "claimed", "claimed_in_transition", "claim_lost", "spilled", "pin_allocated", "pin_moved",
	"lease_renewed", "lease_broken", "quarantined", "wedged", "draining", "undrained", "unreadable"}

// String returns the kind's name in snake case ("pin_moved"), or
// "PlacementKind(N)" for a kind unknown to this version.
func (k PlacementKind) String() string {
	if k > 0 && int(k) < len(placementKinds) {
		return placementKinds[k]
	}
	return fmt.Sprintf("PlacementKind(%d)", k)
}

// Placed calls the Placement hook with an event of kind k about the
// action called action ("" for none), if h and the hook are not nil: the
// way runners tell of their placement.
func (h *Hooks) Placed(k PlacementKind, action string) {
	if h != nil && h.Placement != nil {
		h.Placement(PlacementEvent{Kind: k, Action: action})
	}
}

func (h *Hooks) actionStarted(a job.Action) {
	if h != nil && h.ActionStarted != nil {
		h.ActionStarted(a)
	}
}

func (h *Hooks) actionFinished(a job.Action, r job.Result, d time.Duration) {
	if h != nil && h.ActionFinished != nil {
		h.ActionFinished(a, r, d)
	}
}

func (h *Hooks) actionHandedBack(a job.Action) {
	if h != nil && h.ActionHandedBack != nil {
		h.ActionHandedBack(a)
	}
}

func (h *Hooks) step(j job.Job, n int) {
	if h != nil && h.Step != nil {
		h.Step(j, n)
	}
}

func (h *Hooks) ignored(id job.ID, ig job.Ignored) {
	if h != nil && h.Ignored != nil {
		h.Ignored(id, ig)
	}
}

func (h *Hooks) jobDone(j job.Job) {
	if h != nil && h.JobDone != nil {
		h.JobDone(j)
	}
}

func (h *Hooks) committed(tr job.Transition, took time.Duration) {
	if h != nil && h.Committed != nil {
		h.Committed(tr, took)
	}
}

// commitStart returns the time a Submit, Create or Apply begins, which
// Committed is told the duration from; the zero time, and no read of the
// clock, when there is no Committed hook.
func (h *Hooks) commitStart() time.Time {
	if h != nil && h.Committed != nil {
		return time.Now()
	}
	return time.Time{}
}

func (h *Hooks) dispatched(acts []job.Action) {
	if h != nil && h.Dispatched != nil && len(acts) > 0 {
		h.Dispatched(acts)
	}
}

func (h *Hooks) actionPanicked(a job.Action) {
	if h != nil && h.ActionPanicked != nil {
		h.ActionPanicked(a)
	}
}

// Counters counts what a runner did. Its Hooks method returns hooks that
// feed it; read it with Snapshot. Safe for concurrent use.
type Counters struct {
	actionsStarted, actionsSucceeded, actionsFailed, actionsHandedBack atomic.Int64
	steps, dispatched, ignored, jobsSucceeded, jobsFailed              atomic.Int64
}

// CounterValues is a snapshot of Counters.
type CounterValues struct {
	ActionsStarted, ActionsSucceeded, ActionsFailed, ActionsHandedBack int64
	Steps, Dispatched, Ignored, JobsSucceeded, JobsFailed              int64
}

// Hooks returns hooks that count into c, chaining to next (may be nil).
func (c *Counters) Hooks(next *Hooks) *Hooks {
	h := &Hooks{
		ActionStarted: func(a job.Action) {
			c.actionsStarted.Add(1)
			next.actionStarted(a)
		},
		ActionFinished: func(a job.Action, r job.Result, d time.Duration) {
			if r.Failed() {
				c.actionsFailed.Add(1)
			} else {
				c.actionsSucceeded.Add(1)
			}
			next.actionFinished(a, r, d)
		},
		ActionHandedBack: func(a job.Action) {
			c.actionsHandedBack.Add(1)
			next.actionHandedBack(a)
		},
		Step: func(j job.Job, n int) {
			c.steps.Add(1)
			c.dispatched.Add(int64(n))
			next.step(j, n)
		},
		Ignored: func(id job.ID, ig job.Ignored) {
			c.ignored.Add(1)
			next.ignored(id, ig)
		},
		JobDone: func(j job.Job) {
			if j.Status() == job.StatusSucceeded {
				c.jobsSucceeded.Add(1)
			} else {
				c.jobsFailed.Add(1)
			}
			next.jobDone(j)
		},
	}
	// What Counters does not count is next's alone: left nil when next
	// has none, so that the runner skips its work (a commit's timing).
	if next != nil {
		h.Committed, h.Dispatched = next.Committed, next.Dispatched
		h.ActionPanicked, h.Placement = next.ActionPanicked, next.Placement
	}
	return h
}

// Snapshot returns the current counts.
func (c *Counters) Snapshot() CounterValues {
	return CounterValues{
		ActionsStarted: c.actionsStarted.Load(), ActionsSucceeded: c.actionsSucceeded.Load(),
		ActionsFailed: c.actionsFailed.Load(), ActionsHandedBack: c.actionsHandedBack.Load(),
		Steps: c.steps.Load(), Dispatched: c.dispatched.Load(), Ignored: c.ignored.Load(),
		JobsSucceeded: c.jobsSucceeded.Load(), JobsFailed: c.jobsFailed.Load(),
	}
}
