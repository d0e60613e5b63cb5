package metrics

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
)

// Hooks returns runner hooks that feed the metrics of jobs, steps and
// actions, each then calling the same hook of next (which may be nil).
// Give them to a runner (its Options.Hooks). They never panic, whatever
// the IDs and names they see; they take a lock only to pair an action's
// dispatch with its start and to keep the set of running jobs. A nil
// *Metrics returns next.
func (m *Metrics) Hooks(next *runner.Hooks) *runner.Hooks {
	if m == nil {
		return next
	}
	if next == nil {
		next = &runner.Hooks{}
	}
	return &runner.Hooks{
		ActionStarted: func(a job.Action) {
			label := m.actionLabel(a.Name)
			m.actionsInFlight.WithLabelValues(label).Inc()
			if waited, ok := m.waits.started(keyOf(a), time.Now()); ok {
				m.actionWait.WithLabelValues(label).Observe(waited.Seconds())
			}
			if next.ActionStarted != nil {
				next.ActionStarted(a)
			}
		},
		ActionFinished: func(a job.Action, r job.Result, took time.Duration) {
			label := m.actionLabel(a.Name)
			m.actionsInFlight.WithLabelValues(label).Dec()
			outcome := outcomeSucceeded
			switch _, panicked := m.panicked.LoadAndDelete(keyOf(a)); {
			case panicked:
				outcome = outcomePanicked
			case r.Kind == job.KindTimeout:
				outcome = outcomeTimedOut
			case r.Failed():
				outcome = outcomeFailed
			}
			m.actionsFinished.WithLabelValues(label, outcome).Inc()
			observeWithExemplar(m.actionDuration.WithLabelValues(label), took.Seconds(), exemplar(a.JobID, a.ID))
			if next.ActionFinished != nil {
				next.ActionFinished(a, r, took)
			}
		},
		ActionHandedBack: func(a job.Action) {
			m.actionsInFlight.WithLabelValues(m.actionLabel(a.Name)).Dec()
			if next.ActionHandedBack != nil {
				next.ActionHandedBack(a)
			}
		},
		ActionPanicked: func(a job.Action) {
			m.panicked.Store(keyOf(a), struct{}{})
			if next.ActionPanicked != nil {
				next.ActionPanicked(a)
			}
		},
		Committed: func(tr job.Transition, took time.Duration) {
			m.steps.Inc()
			observeWithExemplar(m.stepDuration, took.Seconds(), exemplar(tr.Job.ID(), ""))
			if tr.Job.Version() == 1 {
				m.jobsSubmitted.Inc()
			} else {
				m.stepResults.Observe(float64(len(tr.Step.Results)))
			}
			m.running.set(tr.Job, !tr.Job.Done(), m.jobsRunning)
			if next.Committed != nil {
				next.Committed(tr, took)
			}
		},
		Dispatched: func(acts []job.Action) {
			now := time.Now()
			for _, a := range acts {
				label := m.actionLabel(a.Name)
				m.actionsDispatched.WithLabelValues(label).Inc()
				if waited, ok := m.waits.dispatched(keyOf(a), now); ok {
					m.actionWait.WithLabelValues(label).Observe(waited.Seconds())
				}
			}
			if next.Dispatched != nil {
				next.Dispatched(acts)
			}
		},
		Step: next.Step,
		Ignored: func(id job.ID, ig job.Ignored) {
			m.ignored.WithLabelValues(reasonLabel(ig.Reason)).Inc()
			if next.Ignored != nil {
				next.Ignored(id, ig)
			}
		},
		Placement: func(e runner.PlacementEvent) {
			m.placed(e)
			if next.Placement != nil {
				next.Placement(e)
			}
		},
		JobDone: func(j job.Job) {
			m.jobsFinished.WithLabelValues(statusLabel(j.Status())).Inc()
			m.running.set(j, false, m.jobsRunning)
			m.waits.forget(j.ID())
			if next.JobDone != nil {
				next.JobDone(j)
			}
		},
	}
}

// ignoreReasons are the reason label's values, by job.IgnoreReason.
var ignoreReasons = map[job.IgnoreReason]string{
	job.IgnoredUnknown:       "unknown",
	job.IgnoredNotDispatched: "not_dispatched",
	job.IgnoredStale:         "stale",
	job.IgnoredDuplicate:     "duplicate",
	job.IgnoredJobDone:       "settled",
	job.IgnoredTimer:         "timer",
	job.IgnoredStopped:       "stopped",
	0:                        "other", // any reason a later job package adds
}

func reasonLabel(r job.IgnoreReason) string {
	if s, ok := ignoreReasons[r]; ok {
		return s
	}
	return ignoreReasons[0]
}

func statusLabel(s job.Status) string {
	if s.Settled() {
		return s.String()
	}
	return "other" // JobDone is only called for settled jobs
}

// actionKey names one attempt of one action of one job.
type actionKey struct {
	job job.ID
	inc uint64
	id  string
}

func keyOf(a job.Action) actionKey { return actionKey{a.JobID, a.Incarnation, a.ID} }

// runningJobs is the set of jobs seen running and not seen finish.
type runningJobs struct {
	mu   sync.Mutex
	jobs map[jobKey]uint64 // running: the newest version seen
	// done remembers the jobs seen finish lately, with their final
	// versions, in the order they finished (a bounded ring): the hook of
	// a job's creation may come after its end (the engine tells of a
	// commit once it returns, by when a quick job may have finished), and
	// must not count the job as running again.
	done     map[jobKey]uint64
	doneRing []jobKey
	next     int
}

// jobKey is one incarnation of a job: a job made again under the same ID
// is another job, its versions counted from 1 again.
type jobKey struct {
	id  job.ID
	inc uint64
}

// maxDone bounds the finished jobs runningJobs remembers.
const maxDone = 10_000

// set records whether job j runs (at its version), and sets g to how many
// do (under the lock, so that concurrent calls cannot leave g stale).
// News older than what is known of the job are ignored.
func (r *runningJobs) set(j job.Job, running bool, g prometheus.Gauge) {
	id, v := jobKey{j.ID(), j.Incarnation()}, j.Version()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.jobs == nil {
		r.jobs, r.done = map[jobKey]uint64{}, map[jobKey]uint64{}
	}
	if final, ok := r.done[id]; ok && v <= final {
		return // late news of a job seen finish
	}
	if running {
		if seen, ok := r.jobs[id]; !ok || v >= seen {
			r.jobs[id] = v
		}
	} else {
		delete(r.jobs, id)
		if len(r.doneRing) < maxDone {
			r.doneRing = append(r.doneRing, id)
		} else {
			delete(r.done, r.doneRing[r.next])
			r.doneRing[r.next] = id
			r.next = (r.next + 1) % maxDone
		}
		r.done[id] = v
	}
	g.Set(float64(len(r.jobs)))
}

// Bounds of dispatchTimes.
const (
	// maxTracked bounds the actions whose dispatch (or start) waits for
	// its other half: past it, new ones are not timed.
	maxTracked = 100_000
	// maxHalfAge is how long a half waits before a purge drops it: an
	// action dispatched here and run by another process never starts
	// here, and one started here was dispatched by another process. The
	// top bucket of the wait is an hour.
	maxHalfAge = time.Hour
	// purgeEvery spaces the purges, each O(tracked).
	purgeEvery = time.Minute
)

// dispatchTimes pairs the dispatch of an action with its start, in
// either order: the engine tells of a dispatch once its commit returns,
// by when a worker of the same process may have started the action.
type dispatchTimes struct {
	mu        sync.Mutex
	halves    map[actionKey]half
	byJob     map[job.ID][]actionKey // to forget a finished job's; may name halves met since
	keys      int                    // in byJob
	lastPurge time.Time
}

type half struct {
	at      time.Time
	started bool // the start came first
}

// dispatched records a's dispatch at now, or, if a has started already,
// returns the wait, which was shorter than the engine could tell: 0.
func (d *dispatchTimes) dispatched(k actionKey, now time.Time) (time.Duration, bool) {
	return d.meet(k, now, false)
}

// started records a's start at now, or returns the wait since its
// dispatch.
func (d *dispatchTimes) started(k actionKey, now time.Time) (time.Duration, bool) {
	return d.meet(k, now, true)
}

func (d *dispatchTimes) meet(k actionKey, now time.Time, start bool) (time.Duration, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if h, ok := d.halves[k]; ok && h.started != start {
		delete(d.halves, k)
		if start {
			return max(0, now.Sub(h.at)), true
		}
		return 0, true
	}
	if now.Sub(d.lastPurge) > purgeEvery || d.keys >= 2*maxTracked {
		d.purge(now)
	}
	if len(d.halves) >= maxTracked {
		return 0, false
	}
	if d.halves == nil {
		d.halves, d.byJob = map[actionKey]half{}, map[job.ID][]actionKey{}
	}
	d.halves[k] = half{at: now, started: start}
	d.byJob[k.job] = append(d.byJob[k.job], k)
	d.keys++
	return 0, false
}

// purge drops the halves older than maxHalfAge, and the keys of byJob
// whose halves have met.
func (d *dispatchTimes) purge(now time.Time) {
	d.lastPurge, d.keys = now, 0
	for id, ks := range d.byJob {
		kept := ks[:0]
		for _, k := range ks {
			if h, ok := d.halves[k]; ok && now.Sub(h.at) > maxHalfAge {
				delete(d.halves, k)
			} else if ok {
				kept = append(kept, k)
			}
		}
		if len(kept) == 0 {
			delete(d.byJob, id)
		} else {
			d.byJob[id] = kept
			d.keys += len(kept)
		}
	}
}

// forget drops the dispatches of job id, which has finished, that no
// start met: those actions will not start now. Starts still waiting for
// their dispatch stay: the engine tells of a creation's dispatch once its
// commit returns, by when the job's actions may have run and the job
// finished (a job of one quick action does on a busy machine); that late
// dispatch must still meet its start. Starts that never meet one (their
// action dispatched by another process) go at a purge.
func (d *dispatchTimes) forget(id job.ID) {
	d.mu.Lock()
	defer d.mu.Unlock()
	kept := d.byJob[id][:0]
	for _, k := range d.byJob[id] {
		if h, ok := d.halves[k]; ok && !h.started {
			delete(d.halves, k)
		} else if ok {
			kept = append(kept, k)
		}
	}
	d.keys -= len(d.byJob[id]) - len(kept)
	if len(kept) == 0 {
		delete(d.byJob, id)
	} else {
		d.byJob[id] = kept
	}
}
