package live

import (
	"fmt"
	"time"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/store"
)

// Step is one version of a job as its history tells it: how it was made
// and where the job stood after. Its slices belong to the hub and are
// shared by every stream: read them, never modify them.
//
// A store's journal keeps the results a step applied, never the ones its
// Restart ignored, so a Step read from it has none to tell (runners report
// those to Hooks.Ignored as they happen).
type Step struct {
	Version uint64
	// Time is the latest time stamped on its results (Result.At); for
	// the version New made, the job's start. Zero when none was stamped.
	Time time.Time
	// Created marks the version New made (no results).
	Created bool
	// Results are the results it applied, in the order it applied them,
	// the cancel request aside.
	Results []job.Result
	// Cancel is the reason of the cancel request it applied, if
	// Cancelled.
	Cancel    string
	Cancelled bool
	// Dispatched are the IDs of the actions it dispatched.
	Dispatched []string
	// The job after it: its status and how many of its actions are
	// settled, of how many.
	Status         job.Status
	Settled, Total int
}

// cancelID is the action ID of the result job.Cancel applies.
var cancelID = job.CancelResult("-", "-").ActionID

// recentJobs is how many of the newest versions a snap keeps as jobs, to
// give streams that are a few steps behind the job they last saw without
// a replay.
const recentJobs = 16

// snap is what a watcher read of a job, once: immutable after publish,
// shared by every stream of the job.
type snap struct {
	err    error // why the job could not be read; the rest is zero then
	origin job.Job
	hist   []job.Step // the journal as read: hist[i].Version == base+1+i
	steps  []Step     // steps[i].Version == base+i
	latest job.Job
	recent []job.Job // the jobs of the newest versions, oldest first; the last is latest
	memo   *memo
}

func (s *snap) base() uint64    { return s.origin.Version() }
func (s *snap) version() uint64 { return s.latest.Version() }

// stepsAfter returns the steps after version v (all when v is before the
// origin).
func (s *snap) stepsAfter(v uint64) []Step {
	if v < s.base() {
		return s.steps
	}
	if v >= s.version() {
		return nil
	}
	return s.steps[v-s.base()+1:]
}

// jobAt returns the job at version v, which must be one the snap holds.
func (s *snap) jobAt(v uint64) (job.Job, error) {
	if n := s.version() - v; n < uint64(len(s.recent)) {
		return s.recent[len(s.recent)-1-int(n)], nil
	}
	if v == s.base() {
		return s.origin, nil
	}
	return job.Replay(s.origin, s.hist[:v-s.base()])
}

// changed returns the nodes changed from version from to the latest,
// computed once for every stream that asks the same.
func (s *snap) changed(from uint64, diff func(old, new job.Job) []job.NodeInfo) ([]job.NodeInfo, error) {
	key := [2]uint64{from, s.version()}
	if c, ok := s.memo.get(key); ok {
		return c, nil
	}
	old, err := s.jobAt(from)
	if err != nil {
		return nil, err
	}
	c := diff(old, s.latest)
	s.memo.put(key, c)
	return c, nil
}

// extend returns the snap of history h, built on prev when h continues it
// (same incarnation, a journal at least as long): only the new steps are
// replayed. prev may be nil.
func extend(prev *snap, h store.History) (*snap, error) {
	if h.Origin.ID() == "" {
		return nil, fmt.Errorf("live: a history without its origin")
	}
	s := &snap{origin: h.Origin, hist: h.Steps}
	if prev != nil && prev.err == nil && prev.origin.Incarnation() == h.Origin.Incarnation() &&
		prev.base() == h.Origin.Version() && len(prev.hist) <= len(h.Steps) {
		// Appending to prev.steps is safe: no reader of prev looks past
		// its length, and only the watcher's goroutine extends.
		s.steps, s.latest, s.recent, s.memo = prev.steps, prev.latest, prev.recent, prev.memo
	} else {
		o := h.Origin
		settled, total := o.Progress()
		first := Step{Version: o.Version(), Time: o.Clock(), Created: true, Status: o.Status(), Settled: settled, Total: total}
		for _, a := range o.Outstanding() {
			first.Dispatched = append(first.Dispatched, a.ID)
		}
		s.steps, s.latest, s.recent, s.memo = []Step{first}, o, []job.Job{o}, &memo{}
	}
	j := s.latest
	for _, st := range h.Steps[j.Version()-s.base():] {
		tr, err := job.Restart(j, st.Results)
		if err != nil {
			return nil, fmt.Errorf("job %s: replay step v%d: %w", j.ID(), st.Version, err)
		}
		if tr.Job.Version() != st.Version || len(tr.Ignored) > 0 {
			return nil, fmt.Errorf("job %s: step v%d does not replay as recorded (%w)", j.ID(), st.Version, job.ErrCorrupt)
		}
		j = tr.Job
		s.steps = append(s.steps, stepOf(st, tr))
		s.recent = append(s.recent[max(0, len(s.recent)+1-recentJobs):len(s.recent):len(s.recent)], j)
	}
	s.latest = j
	return s, nil
}

// stepOf describes the step st, which made tr.
func stepOf(st job.Step, tr job.Transition) Step {
	settled, total := tr.Job.Progress()
	out := Step{Version: st.Version, Status: tr.Job.Status(), Settled: settled, Total: total}
	for _, r := range st.Results {
		if r.At.After(out.Time) {
			out.Time = r.At
		}
		if r.ActionID == cancelID {
			out.Cancelled, out.Cancel = true, r.Error
			continue
		}
		out.Results = append(out.Results, r)
	}
	for _, a := range tr.Actions {
		out.Dispatched = append(out.Dispatched, a.ID)
	}
	return out
}
