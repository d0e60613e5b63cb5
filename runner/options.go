package runner

import (
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"time"
)

// Defaults of WorkerOptions.
const (
	// DefaultWorkers is how many actions a runner runs at once unless
	// WorkerOptions.Workers says otherwise: the same 8 in every runner.
	// Not a multiple of the CPUs: a handler mostly waits (an HTTP call, a
	// payment, a database), so the CPU count says nothing about how many
	// can run at once, and on ZooKeeper and Kafka each slot is a claim
	// another worker cannot take, so a modest default spreads the work
	// over the workers of a cluster.
	DefaultWorkers = 8
	// DefaultDrainTimeout is how long actions in flight may finish once
	// Run's context ends, unless WorkerOptions.DrainTimeout says otherwise.
	DefaultDrainTimeout = 10 * time.Second
)

// WorkerOptions are the options every runner shares: what runs the
// actions, how many at once, for how long, what it tells, and the clock.
// Each runner embeds them in its own Options, beside what is its own (a
// store, a name, a role), and fills them in with WithDefaults, so the
// defaults are the same everywhere:
//
//	inmem.New(inmem.Options{WorkerOptions: runner.WorkerOptions{Registry: reg}, Store: st})
type WorkerOptions struct {
	// Registry holds the handlers of the actions the runner runs. Whether
	// a runner without one makes sense is the runner's to say (runner/inmem
	// requires one; on ZooKeeper and Kafka a runner with none submits,
	// cancels and waits, and runs no actions).
	Registry *Registry
	// Workers bounds how many actions run at once; 0 means
	// DefaultWorkers. Negative is an error.
	Workers int
	// ActionTimeout bounds each action; 0 means no limit (a leaf's own
	// timeout still applies). Negative is an error. It is measured on the
	// real clock, as a deadline of the handler's context.
	ActionTimeout time.Duration
	// DrainTimeout is how long actions in flight may finish once Run's
	// context ends; 0 means DefaultDrainTimeout, negative hands them back
	// at once (their handlers' contexts are cancelled).
	DrainTimeout time.Duration
	// Logger receives the runner's logs; nil discards them (runner/zk and
	// runner/kafka use their store's logger instead).
	Logger *slog.Logger
	// Hooks observes actions and steps; may be nil.
	Hooks *Hooks
	// Clock stamps results and starts jobs, and arms the timers of
	// retries and deadlines; nil means the real clock (RealClock). A test
	// gives a clock it moves by hand (runnertest.Clock), so that a timer
	// falls due when the test says, not after a sleep.
	Clock Clock
	// Name is the worker's name: every result it makes carries it
	// (job.Result.Worker, so a job's history says where each attempt
	// ran), and runner/zk and runner/kafka name the worker by it in their
	// claims, their list of workers and their logs. "" means DefaultName():
	// HOST-PID-RANDOM, the same rule in every runner, which differs for
	// every process (and every runner in one process) whatever the host.
	// A runner may refuse a name it cannot store (runner/zk: one with '/').
	Name string
}

// DefaultName returns a worker name for a runner given none:
// "HOST-PID-RANDOM", the host's name (os.Hostname; "host" if it has
// none), the process ID, and 4 random hex digits, so that two runners of
// one process differ too.
func DefaultName() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "host"
	}
	return fmt.Sprintf("%s-%d-%04x", host, os.Getpid(), rand.Uint32()&0xffff)
}

// WithDefaults returns o with every zero field that has a default set to
// it (Workers, DrainTimeout, Clock, Name, and a Logger that discards), or an
// error naming the first field whose value is invalid.
func (o WorkerOptions) WithDefaults() (WorkerOptions, error) {
	switch {
	case o.Workers < 0:
		return o, fmt.Errorf("runner: WorkerOptions.Workers is %d; want 0 (the default, %d) or more", o.Workers, DefaultWorkers)
	case o.ActionTimeout < 0:
		return o, fmt.Errorf("runner: WorkerOptions.ActionTimeout is %v; want 0 (no limit) or more", o.ActionTimeout)
	}
	if o.Workers == 0 {
		o.Workers = DefaultWorkers
	}
	if o.DrainTimeout == 0 {
		o.DrainTimeout = DefaultDrainTimeout
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Clock == nil {
		o.Clock = RealClock()
	}
	if o.Name == "" {
		o.Name = DefaultName()
	}
	return o, nil
}

// ExecOptions returns what Execute needs of o to run one action: the
// timeout, the logger, the hooks, the clock that stamps the result and
// the worker's name.
func (o WorkerOptions) ExecOptions() ExecOptions {
	var now func() time.Time
	if o.Clock != nil {
		now = o.Clock.Now
	}
	return ExecOptions{Timeout: o.ActionTimeout, Logger: o.Logger, Hooks: o.Hooks, Now: now, Worker: o.Name}
}
