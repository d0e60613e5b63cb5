package main

// How the commands reach a store. The flags choose a backend (openBackend);
// from there a command calls the backend interface only. Each backend
// lives in its own file with everything that names its runner package:
// boltbackend.go (and store.go, opening the file), zkbackend.go (and
// zk.go, its flags), kafkabackend.go (and kafka.go, its flags and
// connection), serverbackend.go ('baton serve' at a URL, through package
// client: --server). 'baton serve' reuses the same interface. The
// commands read jobs as the API's values through view(b) (view.go), so
// that a server, which gives no store.Store, is read like a store.
//
// What a backend does that needs a runner comes back as a small value
// made once per command (canceller, deleter, submitter, workerRunner)
// rather than as one flat method per operation: on ZooKeeper and Kafka
// each is a runner that must be made, warned about ("no restarter runs")
// and closed once, not per job, and a server will hold them for its
// lifetime. resume is a method of its own because the three do different
// things: a store file runs the jobs here, ZooKeeper queues again what
// they miss, Kafka refuses (its restarters resume by themselves).
//
// Exit statuses: a command's error carries its status (codeError, made by
// withCode or exitWith); main maps it once (cli.exit). A backend wraps the
// failures of opening it and of its operations with the status they mean
// (exitStore when the store cannot be used); what a command reads through
// jobs() is classified by storeExit (store.go), the one list of the
// errors that mean a store cannot be used.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/batonwf/baton/api"
	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	"github.com/batonwf/baton/store"
)

// backend is where a command's jobs are: a bolt store file (boltBackend),
// a ZooKeeper root (zkBackend) or the topics under a Kafka prefix
// (kafkaBackend). The commands reach a store through it only, and never
// ask which one it is: what differs between the three (who writes a
// cancel, what status shows besides the jobs) is a method here, each
// implementation in its own file. Its errors carry their exit status
// (see codeError): a backend knows which of its failures mean the store
// cannot be used.
type backend interface {
	// where names the store in messages: the file, the root on the
	// servers, the prefix on the brokers.
	where() string
	// hint is the flags that name the store again, for the commands a
	// message suggests: "--store PATH", "--zk HOST:PORT ...".
	hint() string
	// jobs is the store the commands read: jobs, listings, histories;
	// nil behind a server (serverBackend). The commands that take
	// --server read through view(b) instead.
	jobs() store.Store
	// canceller returns what cancels jobs here; close it once done.
	canceller(ctx context.Context) (canceller, error)
	// deleter returns what deletes jobs here; close it once done.
	deleter(ctx context.Context) (deleter, error)
	// submitter returns what submits jobs here, for the workers to run,
	// and follows them; close it once done. A store file has none: 'baton
	// run' runs its job itself.
	submitter(ctx context.Context) (submitter, error)
	// worker returns a runner of o's actions here, until its Run's
	// context ends (on Kafka a restarter too).
	worker(o workerOptions) (workerRunner, error)
	// resume finishes the unfinished jobs named, or all of them: a store
	// file runs them here, ZooKeeper queues again what they miss for the
	// workers. It prints a line per job; its error carries the exit
	// status. Kafka has none: there the restarters resume by themselves.
	resume(ctx context.Context, c *cli, named []job.ID, o resumeOptions) error
	// writeStatus prints, after status's list of jobs, what the store
	// holds besides jobs: the live workers and the queue, the restarters
	// and the action topics. Nothing for a store file.
	writeStatus(ctx context.Context, w io.Writer) error
	// Close closes the store and its connections.
	Close() error
}

// canceller cancels the jobs of a backend and their nodes, and sends
// them signals.
type canceller interface {
	// cancel cancels job id, seen unfinished, and returns the line that
	// says so.
	cancel(ctx context.Context, id job.ID, reason string) (string, error)
	// signal sends job id, seen unfinished, the signal name with ID sigID
	// and payload (checked), and returns the line that says what became
	// of it (signalLine). A job that finished meanwhile wraps
	// runner.ErrFinished.
	signal(ctx context.Context, id job.ID, name, sigID string, payload json.RawMessage) (string, error)
	// cancelNode cancels the node called name in job id, both seen
	// running, with reason (job.CancelNode), and returns the line that
	// says what was done (nodeCancelLine). A job that finished meanwhile
	// wraps runner.ErrFinished.
	cancelNode(ctx context.Context, id job.ID, name, reason string) (string, error)
	close()
}

// deleter deletes the jobs of a backend; store.ErrNotFound when there is
// no such job.
type deleter interface {
	delete(ctx context.Context, id job.ID) error
	close()
}

// submitter submits jobs for the workers of a backend to run.
type submitter interface {
	// submit stores root as job id and queues its first actions; an
	// error wrapping store.ErrExists when the ID is taken.
	submit(ctx context.Context, id job.ID, root ast.Node) error
	// status returns the job's summary as stored; wait returns the job
	// once it has finished, or an error that names the job and where it
	// is (a server, ZooKeeper, Kafka) and carries the exit status.
	status(ctx context.Context, id job.ID) (api.Summary, error)
	wait(ctx context.Context, id job.ID) (api.Job, error)
	// unserved is a warning line when an action of root has no worker
	// to run it yet, or "" (also when it cannot tell).
	unserved(ctx context.Context, root ast.Node) string
	close()
}

// workerOptions are the settings of the runners that run actions ('baton
// worker', and 'baton run' and 'baton resume' on a store file): what every
// runner shares, built once by the command from its flags and handed to
// the backend's runner as it is (the worker's name among them:
// runner.WorkerOptions.Name).
type workerOptions struct {
	runner.WorkerOptions
	// timed wraps the store a local runner commits to ('baton serve':
	// metrics.Store); nil: none.
	timed func(store.Store) store.Store
	// capacity, limits, grace and claimLease are baton worker's
	// --capacity (Kafka weighs the worker's share of the partitions by
	// it), --limit, --grace (ZooKeeper's) and --claim-lease.
	capacity   int
	limits     map[string]int
	grace      time.Duration
	claimLease time.Duration
}

// resumeOptions are the settings of 'baton resume' for a store file.
type resumeOptions struct {
	workers int
	verbose bool
}

// workerRunner runs actions (and on Kafka makes transitions) until the
// context of Run ends.
type workerRunner interface {
	Run(ctx context.Context) error
	Close() error
	// role says, after "serving ACTIONS on WHERE", what else it is.
	role() string
	// skipped lists what it skipped or failed on the way, or "".
	skipped() string
}

// openOptions say how a command opens its backend.
type openOptions struct {
	mode openMode
	// retain, for a store file: the runner on it deletes the settled
	// jobs older than that (0: none). ZooKeeper's and Kafka's come with
	// their flags.
	retain time.Duration
	// stderr gets the backend's warnings, log its connections' and
	// runners' records: a console's for the commands that show progress
	// (nil: the command's standard error and runnerLogger).
	stderr io.Writer
	log    *slog.Logger
	// server, when on, says that the jobs are behind 'baton serve'
	// (--server): the command reaches them through it.
	server *serverFlags
}

// openBackend opens the store the flags choose: a server with --server
// (or $BATON_SERVER), ZooKeeper with --zk, Kafka with --kafka, else the
// store file (--store). With the create mode,
// ZooKeeper's root and Kafka's topics are made when missing, and so is
// the store file; otherwise ZooKeeper and Kafka are only read until a
// command writes (a missing root is an error; a prefix without topics has
// no jobs). The flags were checked. The error carries its exit status.
func (c *cli) openBackend(ctx context.Context, storeArg string, z *zkFlags, k *kafkaFlags, o openOptions) (backend, error) {
	if o.stderr == nil {
		o.stderr = c.stderr
	}
	if o.log == nil {
		o.log = runnerLogger(o.stderr)
	}
	switch {
	case o.server.on():
		return openServerBackend(o.server, o.mode != readOnly)
	case k.on():
		return openKafkaBackend(ctx, k, o.mode == create, o.stderr, o.log)
	case z.on():
		return openZKBackend(ctx, z, o.mode != create, o.log)
	}
	return c.openBoltBackend(storeArg, o.mode, o.retain)
}

// loadJob loads a job, with a message that names the job and the store.
func loadJob(ctx context.Context, b backend, id job.ID) (job.Job, error) {
	j, err := b.jobs().Load(ctx, id)
	return j, jobError(b, err, id)
}

// loadHistory loads a job's history, with a message that names the job
// and the store.
func loadHistory(ctx context.Context, b backend, id job.ID) (store.History, error) {
	h, err := store.LoadHistory(ctx, b.jobs(), id)
	return h, jobError(b, err, id)
}

// jobError names the job and the store in err, and says how to list the
// jobs when there is no such job.
func jobError(b backend, err error, id job.ID) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, store.ErrNotFound):
		return fmt.Errorf("job %s not found in %s (run 'baton status %s' for the list)", id, b.where(), b.hint())
	default:
		return fmt.Errorf("job %s in %s: %w", id, b.where(), err)
	}
}

// plainError is err without the name of the package that made it at the
// start of its message ("kafka: "), which a command's message says in its
// own words; errors.Is and errors.As still see err.
type plainError struct {
	prefix string
	err    error
}

func (e plainError) Error() string { return strings.TrimPrefix(e.err.Error(), e.prefix) }
func (e plainError) Unwrap() error { return e.err }

// runnerCanceller cancels jobs through a runner (ZooKeeper's, Kafka's),
// which returns once the cancel is saved, and sends signals through it.
type runnerCanceller struct {
	r interface {
		Cancel(ctx context.Context, id job.ID, reason string) error
		Signal(ctx context.Context, id job.ID, name, sigID string, payload json.RawMessage) error
		CancelNode(ctx context.Context, id job.ID, name, reason string) error
	}
	st store.Store
	// saves says that the runner's Cancel and CancelNode return once the
	// cancel is applied and saved (ZooKeeper's); else once it is on its
	// way (Kafka's restarter topic).
	saves bool
	stop  func()
}

func (rc *runnerCanceller) cancel(ctx context.Context, id job.ID, reason string) (string, error) {
	if err := rc.r.Cancel(ctx, id, reason); err != nil {
		return "", err
	}
	j, err := rc.st.Load(ctx, id)
	switch {
	case err != nil:
		return fmt.Sprintf("job %s cancelled", id), nil
	case j.Done():
		return fmt.Sprintf("job %s cancelled: %s at v%d", id, j.Status(), j.Version()), nil
	}
	return fmt.Sprintf("job %s cancelled at v%d; the workers run its finally blocks, then it ends cancelled", id, j.Version()), nil
}

// signal sends the signal through the runner, then reads the job to say
// what became of it (on Kafka it may not be applied yet).
func (rc *runnerCanceller) signal(ctx context.Context, id job.ID, name, sigID string, payload json.RawMessage) (string, error) {
	if err := rc.r.Signal(ctx, id, name, sigID, payload); err != nil {
		return "", err
	}
	j, err := rc.st.Load(ctx, id)
	if err != nil {
		return fmt.Sprintf("signal %s (id %s) sent to job %s", name, sigID, id), nil
	}
	return signalLine(j, name, sigID), nil
}

// cancelNode cancels the node through the runner, then reads the job to
// say what became of it (on Kafka the cancel may not be applied yet).
func (rc *runnerCanceller) cancelNode(ctx context.Context, id job.ID, name, reason string) (string, error) {
	if tc, ok := rc.r.(transitionCanceller); ok {
		tr, err := tc.CancelNodeTransition(ctx, id, name, reason)
		if err != nil {
			return "", err
		}
		return cancelNodeOutcome(id, name, tr), nil
	}
	if err := rc.r.CancelNode(ctx, id, name, reason); err != nil {
		return "", err
	}
	j, err := rc.st.Load(ctx, id)
	if err != nil {
		return fmt.Sprintf("cancel of node %s sent to job %s", name, id), nil
	}
	n, _ := findNode(api.JobOf(j, true), name)
	return nodeCancelLine(id, n, j.Version(), rc.saves), nil
}

// transitionCanceller is a runner whose node cancel returns the
// transition it saved (ZooKeeper's), so that a cancel the job ignored
// is told apart from one applied.
type transitionCanceller interface {
	CancelNodeTransition(ctx context.Context, id job.ID, name, reason string) (job.Transition, error)
}

// cancelNodeOutcome is the line of a node's cancel that tr saved, or
// ignored (the node left as it is, and why).
func cancelNodeOutcome(id job.ID, name string, tr job.Transition) string {
	n, _ := findNode(api.JobOf(tr.Job, true), name)
	if !tr.Changed() {
		for _, ig := range tr.Ignored {
			if ig.Detail != "" {
				return fmt.Sprintf("node %s at %s of job %s left as it is: %s", name, ast.ShowPath(n.Path), id, ig.Detail)
			}
		}
		return notRunningLine(id, n)
	}
	return nodeCancelLine(id, n, tr.Job.Version(), true)
}

func (rc *runnerCanceller) close() { rc.stop() }

// storeDeleter deletes jobs from a store that does it all (bolt's and
// ZooKeeper's: queue entries and timers go with the job).
type storeDeleter struct{ st store.Deleter }

func (d storeDeleter) delete(ctx context.Context, id job.ID) error {
	err := d.st.Delete(ctx, id)
	return withCode(storeExit(err), err)
}

func (storeDeleter) close() {}
