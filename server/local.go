package server

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/batonwf/baton/api"
	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
)

// Local is the Runner option of a server whose jobs run in its own
// process (runner/inmem): it submits and cancels through the runner and
// tells its registry's actions and its one pool of workers.
type Local struct {
	// Runner submits, cancels, signals and cancels nodes (an *inmem.Runner).
	Runner interface {
		Submitter
		Canceller
		Signaller
		NodeCanceller
	}
	// Registry holds the handlers the runner runs.
	Registry *runner.Registry
	// Name and Capacity describe the pool in the workers listing.
	Name     string
	Capacity int
	// Since is when the pool started.
	Since time.Time
}

var (
	_ Submitter     = Local{}
	_ JobSubmitter  = Local{}
	_ Canceller     = Local{}
	_ Signaller     = Local{}
	_ NodeCanceller = Local{}
	_ ActionLister  = Local{}
	_ WorkerLister  = Local{}
)

// Submit submits through the runner.
func (l Local) Submit(ctx context.Context, id job.ID, root ast.Node) error {
	return l.Runner.Submit(ctx, id, root)
}

// SubmitJob submits through the runner and returns the job it created:
// its own, when the runner is a JobSubmitter (runner/inmem's is), else
// the job as job.New makes it (the same version and first actions: the
// reducer is deterministic).
func (l Local) SubmitJob(ctx context.Context, id job.ID, root ast.Node) (job.Job, error) {
	if js, ok := l.Runner.(JobSubmitter); ok {
		return js.SubmitJob(ctx, id, root)
	}
	if err := l.Runner.Submit(ctx, id, root); err != nil {
		return job.Job{}, err
	}
	tr, err := job.New(id, root)
	if err != nil {
		return job.Job{}, fmt.Errorf("job %s: submitted, but: %w", id, err)
	}
	return tr.Job, nil
}

// Cancel cancels through the runner.
func (l Local) Cancel(ctx context.Context, id job.ID, reason string) error {
	return l.Runner.Cancel(ctx, id, reason)
}

// Signal signals through the runner.
func (l Local) Signal(ctx context.Context, id job.ID, name, sigID string, payload json.RawMessage) error {
	return l.Runner.Signal(ctx, id, name, sigID, payload)
}

// CancelNode cancels a node through the runner.
func (l Local) CancelNode(ctx context.Context, id job.ID, name, reason string) error {
	return l.Runner.CancelNode(ctx, id, name, reason)
}

// Actions returns the registry's action names.
func (l Local) Actions(context.Context) ([]string, error) { return l.Registry.Names(), nil }

// actionChecker is an ActionLister that tells which actions of a tree it
// does not run without listing the ones it does: a submit's check reads
// the tree alone.
type actionChecker interface {
	missingActions(root ast.Node) []string
}

var _ actionChecker = Local{}

// missingActions returns the actions of root the registry has no
// handler for, sorted, each once.
func (l Local) missingActions(root ast.Node) []string { return l.Registry.Missing(root) }

// Workers returns the one pool. Its busy count is not known here: 0.
func (l Local) Workers(context.Context) ([]api.Worker, error) {
	w := api.Worker{Name: l.Name, Capacity: l.Capacity, Actions: l.Registry.Names()}
	if w.Name == "" {
		w.Name = "local"
	}
	if !l.Since.IsZero() {
		s := l.Since.UTC()
		w.Since = &s
	}
	return []api.Worker{w}, nil
}
