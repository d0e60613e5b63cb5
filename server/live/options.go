package live

import (
	"errors"
	"log/slog"
	"time"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/store"
)

// Defaults of Options.
const (
	DefaultPoll       = 250 * time.Millisecond
	DefaultSafetyPoll = 2 * time.Second
	DefaultMaxStreams = 1000
	DefaultMaxRate    = 10
	DefaultSlowClient = 30 * time.Second
	DefaultHeartbeat  = 15 * time.Second
)

// Errors of the hub, for the server to map to its answers; test with
// errors.Is.
var (
	// ErrTooManyStreams: MaxStreams streams are open (429 too_many_streams).
	ErrTooManyStreams = errors.New("live: too many open streams")
	// ErrShutdown: the hub is shutting down (503 shutting_down).
	ErrShutdown = errors.New("live: shutting down")
	// ErrSettled: the job is settled and the client already has its last
	// version. ServeJob answers it with 204 itself; Subscribe returns it.
	ErrSettled = errors.New("live: job settled and the client has its last version")
)

// Options configure a Hub. Zero durations and limits mean their defaults.
type Options struct {
	// Store keeps the jobs; required, and it must keep history
	// (store.Historian): the steps of events are read from it.
	Store store.Store
	// Now stamps the changes of the list feed; nil means time.Now.
	// Rates, heartbeats and write deadlines use the real clock, as the
	// network does.
	Now func() time.Time
	// Logger gets the hub's own troubles (a store read that failed, a
	// dropped client) at DEBUG and WARN; nil discards.
	Logger *slog.Logger
	// Notified says that Notify is called for every change of every job
	// (an in-process runner's Hooks.Step, a store's change feed): a
	// watched job is then read on each notice and polled only every
	// SafetyPoll. Otherwise it is polled every Poll.
	Notified bool
	// Poll is how often a watched job is looked at when nothing notifies
	// the hub (one store.Stat of that job, then its history if it moved).
	Poll time.Duration
	// SafetyPoll bounds how late a lost notice can make an update, when
	// Notified.
	SafetyPoll time.Duration
	// MaxStreams bounds the open streams (job and list streams together,
	// and Subscriptions); past it ServeJob, ServeList and Subscribe fail
	// with ErrTooManyStreams.
	MaxStreams int
	// MaxRate bounds the events per second of each stream: the steps of a
	// burst are coalesced into fewer events.
	MaxRate float64
	// SlowClient is how long one write may block: a client that reads
	// nothing for that long is dropped, and resumes with its last version.
	SlowClient time.Duration
	// Heartbeat is the longest a stream stays silent: a comment line is
	// sent then, so that proxies keep it open.
	Heartbeat time.Duration
	// Changed returns the nodes that differ between two versions of a
	// job, as new has them. nil means FullDiff, which walks both whole
	// trees; job.Changed, whose cost follows the step, is the one to
	// give.
	Changed func(old, new job.Job) []job.NodeInfo
}

func (o Options) withDefaults() Options {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Poll <= 0 {
		o.Poll = DefaultPoll
	}
	if o.SafetyPoll <= 0 {
		o.SafetyPoll = DefaultSafetyPoll
	}
	if o.MaxStreams <= 0 {
		o.MaxStreams = DefaultMaxStreams
	}
	if o.MaxRate <= 0 {
		o.MaxRate = DefaultMaxRate
	}
	if o.SlowClient <= 0 {
		o.SlowClient = DefaultSlowClient
	}
	if o.Heartbeat <= 0 {
		o.Heartbeat = DefaultHeartbeat
	}
	if o.Changed == nil {
		o.Changed = FullDiff
	}
	return o
}

// Encoder makes the data of a job stream's events; the hub marshals what
// it returns with encoding/json, one line each. Its methods may be called
// concurrently, from many streams.
type Encoder interface {
	// Snapshot is the job as it stands: summary and every node.
	Snapshot(j job.Job) any
	// Step is the steps since the stream's previous event, oldest first,
	// and the latest state of every node they changed.
	Step(steps []Step, changed []job.NodeInfo) any
	// End is the settled job.
	End(j job.Job) any
}

// ListEncoder makes the data of a list stream's events.
type ListEncoder interface {
	// Changes is the changes since the stream's previous event, oldest
	// first.
	Changes(cs []Change) any
}
