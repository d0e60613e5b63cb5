package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/batonwf/baton/job"
)

// Errors returned by stores, wrapped with the job ID; test with errors.Is.
var (
	ErrNotFound = errors.New("store: job not found")
	ErrExists   = errors.New("store: job already exists")
	ErrConflict = errors.New("store: conflict: job changed since it was loaded")
	ErrClosed   = errors.New("store: closed")
	ErrNoStep   = errors.New("store: job has no step to save")
)

// Store keeps jobs and their history. All methods may be called
// concurrently. Methods that take a context return its error, wrapped, if
// it ends first; a write that returns an error other than ErrConflict may or
// may not have been applied, and is safe to retry after a Load.
type Store interface {
	// Create stores a job made by job.New (version 1). It fails with
	// ErrExists if a job with that ID is stored.
	Create(ctx context.Context, j job.Job) error

	// Save stores j, a job returned by job.Restart, by appending j.Step()
	// to the job's journal. It fails with ErrConflict unless the stored
	// job is at version j.Version()-1, with ErrNotFound if there is no such
	// job, and with ErrNoStep if j carries no step with results (a job
	// from Decode or New, or a Restart that applied nothing). A job from
	// Load may still carry the step that made it; saving it again is
	// ErrConflict.
	Save(ctx context.Context, j job.Job) error

	// Load returns the newest version of a job, or ErrNotFound.
	Load(ctx context.Context, id job.ID) (job.Job, error)

	// History returns the job's origin and every step since, from which
	// any past version can be rebuilt.
	History(ctx context.Context, id job.ID) (History, error)

	// List returns every stored job, sorted by ID.
	List(ctx context.Context) ([]Info, error)

	// Delete removes a job and its history. Deleting a missing job is
	// ErrNotFound.
	Delete(ctx context.Context, id job.ID) error

	// Close releases the store. Calls after Close fail with ErrClosed;
	// calling Close twice is safe.
	Close() error
}

// Info is what List tells about a job without loading it.
type Info struct {
	ID      job.ID
	Version uint64
	Status  job.Status
}

// History is a job's full record: the job as New made it, and every step
// applied since, in order.
type History struct {
	Origin job.Job
	Steps  []job.Step
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

// CheckSave returns ErrNoStep (wrapped) unless j can be saved: it carries
// a step with results whose version is j's.
func CheckSave(j job.Job) error {
	st := j.Step()
	if len(st.Results) == 0 || st.Version != j.Version() || j.Version() < 2 {
		return fmt.Errorf("%w: job %s v%d", ErrNoStep, j.ID(), j.Version())
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
