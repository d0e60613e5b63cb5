package placement

import (
	"fmt"
	"time"
)

// Outcome is how one attempt of an action ended on a worker, as far as
// quarantine is concerned.
type Outcome uint8

const (
	// Succeeded: the handler succeeded.
	Succeeded Outcome = iota + 1
	// Failed: the handler returned a retryable error or panicked.
	Failed
	// TimedOut: the handler outlived the action's timeout on this worker.
	TimedOut
	// Permanent: the handler returned a non-retryable error: the input's
	// fault, not the worker's.
	Permanent
	// Stopped: a stop, a cancel or a deadline ended it.
	Stopped
	// SessionLost: the worker lost its session (ZooKeeper) or its group
	// (Kafka) while it ran.
	SessionLost
	// Lost: an at-most-once attempt nobody could vouch for.
	Lost
)

var outcomeNames = [...]string{"", "succeeded", "failed", "timed-out", "permanent", "stopped", "session-lost", "lost"}

func (o Outcome) String() string {
	if o > 0 && int(o) < len(outcomeNames) {
		return outcomeNames[o]
	}
	return fmt.Sprintf("Outcome(%d)", o)
}

// Counts reports whether the outcome counts toward quarantine: only
// failures that may be the worker's own (Failed, TimedOut). Stops,
// cancels, deadlines, lost sessions, lost attempts and non-retryable
// errors never count: a worker is not blamed for what others did or for
// its input.
func (o Outcome) Counts() bool { return o == Failed || o == TimedOut }

// Quarantine is the policy by which a worker stops taking one action name
// for a while: after After consecutive counted failures of that name,
// while another live worker has succeeded at it within PeerWindow, for
// First, doubling with each quarantine in a row up to Max, the doubling
// reset by Reset successes after it returns. At most SharePercent percent
// of the live workers that handle the name (at least one) are quarantined
// for it at once, and never the last one able to run it. A zero field
// means its default (DefaultQuarantine).
type Quarantine struct {
	After        int           // consecutive counted failures: 5
	PeerWindow   time.Duration // a peer's success this recent: 10 minutes
	First        time.Duration // the first back-off: 1 minute
	Max          time.Duration // the longest back-off: 30 minutes
	Reset        int           // successes after a return that reset the back-off: 3
	SharePercent int           // the cap, in percent of the name's live workers: 20
}

// DefaultQuarantine returns the default policy.
func DefaultQuarantine() Quarantine {
	return Quarantine{After: 5, PeerWindow: 10 * time.Minute, First: time.Minute, Max: 30 * time.Minute, Reset: 3, SharePercent: 20}
}

// WithDefaults returns q with every zero field set to its default.
func (q Quarantine) WithDefaults() Quarantine {
	d := DefaultQuarantine()
	if q.After <= 0 {
		q.After = d.After
	}
	if q.PeerWindow <= 0 {
		q.PeerWindow = d.PeerWindow
	}
	if q.First <= 0 {
		q.First = d.First
	}
	if q.Max <= 0 {
		q.Max = d.Max
	}
	if q.Reset <= 0 {
		q.Reset = d.Reset
	}
	if q.SharePercent <= 0 {
		q.SharePercent = d.SharePercent
	}
	return q
}

// Backoff returns the length of a worker's quarantine for a name after
// strikes quarantines in a row already: First × 2^strikes, at most Max
// (1, 2, 4, 8, 16, 30, 30, ... minutes by default).
func (q Quarantine) Backoff(strikes int) time.Duration {
	q = q.WithDefaults()
	d := q.First
	for i := 0; i < strikes && d < q.Max; i++ {
		d *= 2
	}
	return min(d, q.Max)
}

// Limit returns how many of handlers live workers that handle a name may
// be quarantined for it at once: SharePercent of them, at least one, and
// never all of them.
func (q Quarantine) Limit(handlers int) int {
	q = q.WithDefaults()
	return min(max(handlers*q.SharePercent/100, 1), handlers-1)
}

// Tally is one worker's quarantine record for one action name. The zero
// value is a worker with no history.
type Tally struct {
	Failures  int       // consecutive counted failures since the last success or quarantine
	Strikes   int       // quarantines in a row, not yet reset by successes
	Until     time.Time // when the last quarantine ends (or ended); zero: never quarantined
	Successes int       // consecutive successes since the last quarantine ended
}

// Active reports whether t is quarantined at now.
func (t Tally) Active(now time.Time) bool { return now.Before(t.Until) }

// Peers is what a worker knows of the others for one action name when it
// observes an outcome, on its own clock.
type Peers struct {
	// LastSuccess is when this worker last saw another live worker's
	// published success count for the name grow; zero: never.
	LastSuccess time.Time
	// Handlers is the number of live workers that handle the name, this
	// one included.
	Handlers int
	// Quarantined is how many of the others are quarantined for it now.
	Quarantined int
}

// Sentence is what Observe decides: whether the worker quarantines itself.
type Sentence struct {
	// Start says the worker quarantines itself for the name now, until
	// Until. On ZooKeeper the runner writes the quarantine node and bumps
	// the name's versioned counter in one multi-op; if the counter moved
	// meanwhile, it observes again with fresh Peers.
	Start  bool
	Until  time.Time
	Reason string
}

// Observe applies one outcome of an attempt of the name on this worker at
// now to its tally, and says whether it quarantines itself. Outcomes that
// do not count (Outcome.Counts) and failures that end while a quarantine
// is active change nothing. Observe is pure; the caller keeps the tally.
func (q Quarantine) Observe(t Tally, o Outcome, peers Peers, now time.Time) (Tally, Sentence) {
	q = q.WithDefaults()
	switch {
	case o == Succeeded:
		t.Failures = 0
		if !t.Until.IsZero() && !t.Active(now) && t.Strikes > 0 {
			t.Successes++
			if t.Successes >= q.Reset {
				t.Strikes, t.Successes = 0, 0
			}
		}
		return t, Sentence{Reason: "succeeded"}
	case !o.Counts():
		return t, Sentence{Reason: o.String() + " does not count"}
	case t.Active(now):
		return t, Sentence{Reason: "already quarantined"}
	}
	t.Failures++
	t.Successes = 0
	if t.Failures < q.After {
		return t, Sentence{Reason: fmt.Sprintf("%d of %d failures", t.Failures, q.After)}
	}
	if peers.LastSuccess.IsZero() || now.Sub(peers.LastSuccess) > q.PeerWindow {
		return t, Sentence{Reason: fmt.Sprintf("%d failures, but no other worker succeeded in the last %v", t.Failures, q.PeerWindow)}
	}
	if lim := q.Limit(peers.Handlers); peers.Quarantined >= lim {
		if lim <= 0 || peers.Handlers-peers.Quarantined <= 1 {
			return t, Sentence{Reason: fmt.Sprintf("%d failures, but it is the last worker able to run it", t.Failures)}
		}
		return t, Sentence{Reason: fmt.Sprintf("%d failures, but %d of %d workers are quarantined for it already (cap %d)", t.Failures, peers.Quarantined, peers.Handlers, lim)}
	}
	d := q.Backoff(t.Strikes)
	t = Tally{Strikes: t.Strikes + 1, Until: now.Add(d)}
	return t, Sentence{Start: true, Until: t.Until, Reason: fmt.Sprintf("%d failures while a peer succeeds: quarantined for %v", q.After, d)}
}
