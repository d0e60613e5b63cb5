package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/batonwf/baton/job"
)

// Errors returned by stores, wrapped with the job ID; test with errors.Is.
var (
	ErrNotFound = errors.New("store: job not found")
	ErrExists   = errors.New("store: job already exists")
	ErrConflict = errors.New("store: conflict: job changed since it was loaded")
	ErrClosed   = errors.New("store: closed")
	ErrNoStep   = errors.New("store: no step to save")
)

// Store keeps jobs. It is what every store must do; listing, a job's Info
// without loading it, history, deletion and retention are optional
// capabilities (Lister, Stater, Historian, Deleter, Sweeper), found the
// io/fs way with List, Stat, LoadHistory, Delete and Sweep.
//
// All methods may be called concurrently. Methods that take a context
// return its error, wrapped, if it ends first. A write that returns an
// error other than ErrConflict, ErrExists, ErrNotFound or ErrNoStep may or
// may not have been applied; it is safe to retry after a Load.
type Store interface {
	// Create stores a job made by job.New (version 1). It fails with
	// ErrExists if a job with that ID is stored.
	Create(ctx context.Context, j job.Job) error

	// Save stores j, made by the Restart whose step is step, by appending
	// step to the job's journal. It fails with ErrConflict unless the
	// stored job is the one j was made from (the same incarnation, at
	// version j.Version()-1), with ErrNotFound if there is no such job,
	// and with ErrNoStep unless step has results and j's version.
	Save(ctx context.Context, j job.Job, step job.Step) error

	// Load returns the newest version of a job, or ErrNotFound.
	Load(ctx context.Context, id job.ID) (job.Job, error)

	// Close releases the store. Calls after Close fail with ErrClosed;
	// calling Close twice is safe.
	Close() error
}

// Commit stores what a transition changed: Create for a job New made,
// Save for a step. A transition that changed nothing is not written.
func Commit(ctx context.Context, s Store, tr job.Transition) error {
	switch {
	case tr.Created():
		return s.Create(ctx, tr.Job)
	case tr.Changed():
		return s.Save(ctx, tr.Job, tr.Step)
	}
	return nil
}

// Lister is a store that can list the jobs it holds.
type Lister interface {
	Store
	// List returns the jobs q selects, sorted by ID, without loading them.
	List(ctx context.Context, q Query) ([]Info, error)
}

// Stater is a store that tells a job's Info without loading the job.
type Stater interface {
	Store
	// Stat returns the Info of job id, or ErrNotFound. It reads that job
	// alone: its cost does not grow with the other jobs the store holds.
	Stat(ctx context.Context, id job.ID) (Info, error)
}

// Historian is a store that keeps every step of a job.
type Historian interface {
	Store
	// History returns the job's origin and every step since, from which
	// any past version can be rebuilt.
	History(ctx context.Context, id job.ID) (History, error)
}

// Deleter is a store that can remove jobs.
type Deleter interface {
	Store
	// Delete removes a job and its history. Deleting a missing job is
	// ErrNotFound.
	Delete(ctx context.Context, id job.ID) error
}

// Sweeper is a store that keeps settled jobs only for a while (its
// retention) and deletes them after that, when asked to sweep. The
// process that runs a runner on the store sweeps it now and then; a store
// sweeps nothing on its own, and never in the path of a transition.
type Sweeper interface {
	Store
	// Sweep deletes settled jobs whose clock (job.Job.Clock: the time of
	// the last result they applied) is older than the retention: at most a
	// bounded number of them, looking at a bounded number of jobs, so that
	// one call costs bounded work however many jobs the store holds. A
	// store whose retention is off returns an error wrapping
	// errors.ErrUnsupported.
	Sweep(ctx context.Context) (SweepResult, error)
}

// Instant is a store whose writes never wait for a disk or a server
// (store.Memory): a commit costs CPU time alone. A runner may then apply
// results in the worker's slot it holds, where with any other store it
// gives the slot back first so that other actions run while the commit
// waits (runner/inmem). A wrapper forwards its store's answer.
type Instant interface {
	Store
	// Instant reports whether the store's writes never wait for I/O.
	Instant() bool
}

// IsInstant reports whether s is an Instant store that says so.
func IsInstant(s Store) bool {
	in, ok := s.(Instant)
	return ok && in.Instant()
}

// SweepResult is what one Sweep did.
type SweepResult struct {
	// Deleted counts the jobs deleted.
	Deleted int
	// Next is how long to wait before the next Sweep: 0 when this one
	// stopped at its bound and more jobs may be due now.
	Next time.Duration
}

// Sweep sweeps s, if s is a Sweeper; otherwise an error wrapping
// errors.ErrUnsupported.
func Sweep(ctx context.Context, s Store) (SweepResult, error) {
	if sw, ok := s.(Sweeper); ok {
		return sw.Sweep(ctx)
	}
	return SweepResult{}, fmt.Errorf("store: %T keeps every job: %w", s, errors.ErrUnsupported)
}

// List returns the jobs q selects, if s is a Lister; otherwise an error
// wrapping errors.ErrUnsupported.
func List(ctx context.Context, s Store, q Query) ([]Info, error) {
	if l, ok := s.(Lister); ok {
		return l.List(ctx, q)
	}
	return nil, fmt.Errorf("store: %T cannot list jobs: %w", s, errors.ErrUnsupported)
}

// Stat returns the Info of job id: through Stat if s is a Stater,
// otherwise from Load. Either way it reads that job alone, never a
// listing, so that a wait polling one job costs the same however many
// jobs the store holds.
func Stat(ctx context.Context, s Store, id job.ID) (Info, error) {
	if st, ok := s.(Stater); ok {
		return st.Stat(ctx, id)
	}
	j, err := s.Load(ctx, id)
	if err != nil {
		return Info{}, err
	}
	return InfoOf(j), nil
}

// LoadHistory returns a job's history, if s is a Historian; otherwise an
// error wrapping errors.ErrUnsupported.
func LoadHistory(ctx context.Context, s Store, id job.ID) (History, error) {
	if h, ok := s.(Historian); ok {
		return h.History(ctx, id)
	}
	return History{}, fmt.Errorf("store: %T keeps no history (job %s): %w", s, id, errors.ErrUnsupported)
}

// Delete removes a job, if s is a Deleter; otherwise an error wrapping
// errors.ErrUnsupported.
func Delete(ctx context.Context, s Store, id job.ID) error {
	if d, ok := s.(Deleter); ok {
		return d.Delete(ctx, id)
	}
	return fmt.Errorf("store: %T cannot delete jobs (job %s): %w", s, id, errors.ErrUnsupported)
}

// Query selects jobs to list. The zero Query selects every job.
type Query struct {
	// Prefix keeps the IDs that start with it.
	Prefix string
	// After keeps the IDs sorted after it: pass the last ID of a page to
	// get the next page.
	After job.ID
	// Limit keeps at most this many; 0 means no limit.
	Limit int
	// Unfinished keeps the jobs still running.
	Unfinished bool
}

// Match reports whether q selects the job in, limit aside. Stores use it
// to filter what their index cannot.
func (q Query) Match(in Info) bool {
	return strings.HasPrefix(string(in.ID), q.Prefix) && (q.After == "" || in.ID > q.After) &&
		(!q.Unfinished || !in.Status.Settled())
}

// Info is what List tells about a job without loading it.
type Info struct {
	ID      job.ID
	Version uint64
	Status  job.Status
	// Settled and Total count the job's actions: settled so far, and in
	// the tree (job.Progress).
	Settled, Total int
	// Created and Updated are when the store wrote the job first and
	// last, by its own clock (a bolt file's writer, a ZooKeeper server,
	// a Kafka broker, the memory store's process), in UTC; zero where
	// the store cannot tell (a record written before it kept them).
	Created, Updated time.Time
	// Damaged, when not nil, is why the store could not read the job's
	// record (a damaged one wraps job.ErrCorrupt). A store that lists such a job
	// (runner/zk) instead of failing the whole listing knows its ID only:
	// the other fields are zero, so Query.Unfinished keeps it (it is not
	// known to have finished), and loading it fails.
	Damaged error
}

// InfoOf returns the Info of a job: all a job tells of itself, so its
// Created and Updated are zero (a store adds them).
func InfoOf(j job.Job) Info {
	settled, total := j.Progress()
	return Info{ID: j.ID(), Version: j.Version(), Status: j.Status(), Settled: settled, Total: total}
}

// History is a job's full record: the job as New made it, and every step
// applied since, in order.
type History struct {
	Origin job.Job
	Steps  []job.Step
	// Ignored are the newest results the job's transitions ignored (at
	// most MaxIgnored), oldest first, from a store that journals them
	// (IgnoreJournal); nil from one that does not.
	Ignored []Ignored
}

// Latest returns the newest version of the job the history holds.
func (h History) Latest() (job.Job, error) {
	return job.Replay(h.Origin, h.Steps)
}

// At returns the job as it was at version v (1 is the origin).
func (h History) At(v uint64) (job.Job, error) {
	if v < h.Origin.Version() || v > h.Origin.Version()+uint64(len(h.Steps)) {
		return job.Job{}, fmt.Errorf("store: job %s has versions %d to %d, not %d",
			h.Origin.ID(), h.Origin.Version(), h.Origin.Version()+uint64(len(h.Steps)), v)
	}
	return job.Replay(h.Origin, h.Steps[:v-h.Origin.Version()])
}

// CheckSave returns ErrNoStep (wrapped) unless step can be saved as the
// step that made j: it has results and j's version.
func CheckSave(j job.Job, step job.Step) error {
	if len(step.Results) == 0 || step.Version != j.Version() || j.Version() < 2 {
		return fmt.Errorf("%w: job %s v%d, step v%d with %d results", ErrNoStep, j.ID(), j.Version(), step.Version, len(step.Results))
	}
	return nil
}

// CheckCreate returns an error unless j is a job fresh from job.New.
func CheckCreate(j job.Job) error {
	if j.ID() == "" {
		return errors.New("store: Create of a zero Job")
	}
	if j.Version() != 1 {
		return fmt.Errorf("store: Create of job %s at version %d; only a new job (version 1) can be created", j.ID(), j.Version())
	}
	return nil
}

// SnapshotDue is the rule every journal store follows to bound what a load
// replays while keeping the bytes written per step O(results): write a
// snapshot (job.Encode) when the step records written since the last one
// weigh at least as much as it does (sinceBytes >= snapBytes), or, when
// every > 0, once every steps have been written since it. Each snapshot is
// then paid for by at least as many bytes of steps, and a load replays a
// journal no larger than the snapshot it starts from.
func SnapshotDue(sinceSteps, sinceBytes, snapBytes, every uint64) bool {
	return sinceBytes >= snapBytes || (every > 0 && sinceSteps >= every)
}
