package server

import (
	"context"
	"log/slog"
	"time"

	"github.com/batonwf/baton/api"
	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/store"
)

// Defaults of Options' limits.
const (
	DefaultMaxBodyBytes  = 8 << 20
	DefaultMaxUnfinished = 100_000
	// MaxWait bounds a history long poll.
	MaxWait = 25 * time.Second
	// MaxCancelReason bounds a cancel's reason, in bytes of UTF-8.
	MaxCancelReason = 1 << 10
	// AuthFailures is how many failed authentications a client address
	// may have in AuthWindow before it is refused for the rest of it.
	AuthFailures = 20
	AuthWindow   = time.Minute
)

// Options configure New.
type Options struct {
	// Store keeps the jobs; required. Its optional capabilities add
	// routes: store.Lister the listing, store.Historian the history and
	// past versions, store.Deleter deletion.
	Store store.Store
	// Runner runs the jobs; nil for a read-only server. Its abilities are
	// found by type assertion: Submitter, Canceller, ActionLister,
	// WorkerLister, Readier.
	Runner any
	// Tokens are the bearer tokens the API takes; nil means no
	// authentication (for a server on a loopback address only: 'baton
	// serve' refuses any other address without tokens).
	Tokens *Tokens
	// Logger gets one line per request; nil discards.
	Logger *slog.Logger
	// Now is the clock (IDs the server names, the auth window); nil
	// means time.Now.
	Now func() time.Time
	// MaxBodyBytes bounds request bodies; 0 means DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// MaxUnfinished bounds the unfinished jobs a submit may add to; 0
	// means DefaultMaxUnfinished, negative no bound. Past it, submits are
	// refused with 429 too_many_jobs. The count comes from the store's
	// listing of unfinished jobs (at most MaxUnfinished of them read),
	// at most once a second.
	MaxUnfinished int
	// PollInterval is how often a history long poll looks at the store
	// when no Notifier wakes it earlier; 0 means 250ms.
	PollInterval time.Duration
	// Notifier, when not nil, wakes long polls when a job may have
	// changed (a hint: the state always comes from the store).
	Notifier Notifier
	// Closing, once closed, makes the server refuse writes with 503
	// shutting_down and end long polls: close it when shutting down,
	// before http.Server.Shutdown waits for the requests in flight.
	Closing <-chan struct{}

	// Coming with the later parts, not here yet: a Prometheus
	// registerer (package metrics) and event streams (their limit).
}

// Submitter is a runner that starts jobs: it stores the job (failing with
// an error wrapping store.ErrExists when the ID is taken, and
// runner.ErrUnknownActions when no worker runs an action) and dispatches
// its first actions.
type Submitter interface {
	Submit(ctx context.Context, id job.ID, root ast.Node) error
}

// Canceller is a runner that cancels jobs (job.Cancel), returning once
// the cancel is saved; a finished job is an error wrapping
// runner.ErrFinished.
type Canceller interface {
	Cancel(ctx context.Context, id job.ID, reason string) error
}

// ActionLister is a runner that knows the actions its workers run. A
// submit naming another action is refused (422 unknown_action).
type ActionLister interface {
	Actions(ctx context.Context) ([]string, error)
}

// WorkerLister is a runner that knows its live workers.
type WorkerLister interface {
	Workers(ctx context.Context) ([]api.Worker, error)
}

// Readier is a runner that can tell whether it runs (for /readyz).
type Readier interface {
	Ready(ctx context.Context) error
}

// Notifier tells of changes to jobs.
type Notifier interface {
	// Watch returns a channel closed when job id may have changed since
	// Watch was called, and a func that stops the watch (safe to call
	// twice). It is a hint: a change may come without it, or it without
	// a change.
	Watch(id job.ID) (changed <-chan struct{}, stop func())
}
