package server

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/batonwf/baton/api"
	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/server/live"
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
	// Runner runs the jobs; nil for a read-only server. Its abilities
	// are found by type assertion: Submitter (or JobSubmitter),
	// Canceller, Signaller, NodeCanceller, Deleter, ActionLister,
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
	// taken again at most once a second, and no sooner than 100 times
	// the last listing's duration after it (a listing reads every job
	// the store holds), plus the submits this server made since.
	MaxUnfinished int
	// Hub serves the event streams and the history's long polls (one
	// watcher per job for both); give one notified by the runner in this
	// process (live.Options.Notified, its Hooks.Step calling Notify) so
	// that they wake at each step. nil means a hub of the server's own,
	// which polls the store every PollInterval and takes at most
	// MaxStreams streams. The server calls its Shutdown when Closing
	// closes. The hub must be over Store; a store without history
	// (store.Historian) has neither streams nor the history route.
	Hub *live.Hub
	// PollInterval is how often the server's own hub looks at a watched
	// job; 0 means live.DefaultPoll.
	PollInterval time.Duration
	// MaxStreams bounds the open event streams of the server's own hub;
	// 0 means live.DefaultMaxStreams. Past it, 429 too_many_streams.
	MaxStreams int
	// Closing, once closed, makes the server refuse writes with 503
	// shutting_down, and shuts the Hub down (open streams get a shutdown
	// event, long polls end): close it when shutting down, before
	// http.Server.Shutdown waits for the requests in flight.
	Closing <-chan struct{}

	// SessionKey signs the pages' session cookies (at least 16 bytes);
	// nil means a random key of the server's own, so sessions end when
	// the process does. Servers behind one address share one key.
	SessionKey []byte
	// SessionTTL is how long a session lasts from its login; 0 means
	// DefaultSessionTTL.
	SessionTTL time.Duration

	// Metrics, when not nil, is served at GET /metrics, behind a read
	// token (package metrics' Handler).
	Metrics http.Handler
	// Middleware, when not nil, wraps the handling of every request
	// inside the server, where the request's Pattern is its route (set by
	// the ServeMux; "" for a request no route takes): package metrics'
	// Middleware.
	Middleware func(http.Handler) http.Handler
	// Streams, when not nil, counts the open event streams (package
	// metrics' Streams).
	Streams Gauge
	// AuthFailures, when not nil, counts the requests refused for a
	// missing or unknown token (package metrics' AuthFailures).
	AuthFailures Counter
}

// Submitter is a runner that starts jobs: it stores the job (failing with
// an error wrapping store.ErrExists when the ID is taken, and
// runner.ErrUnknownActions when no worker runs an action) and dispatches
// its first actions.
type Submitter interface {
	Submit(ctx context.Context, id job.ID, root ast.Node) error
}

// JobSubmitter is a Submitter that returns the job it created (version 1,
// as job.New made it), so that the answer to a submit is made from it
// and not from a job.New of the server's own. runner/inmem's Runner is
// one, and so is Local over it.
type JobSubmitter interface {
	Submitter
	SubmitJob(ctx context.Context, id job.ID, root ast.Node) (job.Job, error)
}

// Canceller is a runner that cancels jobs (job.Cancel), returning once
// the cancel is saved; a finished job is an error wrapping
// runner.ErrFinished.
type Canceller interface {
	Cancel(ctx context.Context, id job.ID, reason string) error
}

// Deleter is a runner through which a settled job is deleted, for a
// store whose own Delete cannot do it everywhere (runner/kafka's: only
// the restarter that owns a job's partition deletes it). The server
// deletes through it when the runner is one, else through the store's
// store.Deleter. A missing job is an error wrapping store.ErrNotFound.
type Deleter interface {
	Delete(ctx context.Context, id job.ID) error
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

// Gauge is a count that goes up and down (a prometheus.Gauge is one).
type Gauge interface {
	Inc()
	Dec()
}

// Counter is a count that only goes up (a prometheus.Counter is one).
type Counter interface {
	Inc()
}
