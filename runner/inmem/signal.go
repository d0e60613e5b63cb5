package inmem

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
)

// Signal sends job id the signal name with an ID and a JSON payload (nil
// for null): a wait of that name takes it, or the job keeps it for one
// (see job.Signal). It is idempotent by name and ID for the job's whole
// life: sending it again changes nothing. A bad signal (a name that is
// not a valid name, an empty ID, a payload that is not JSON or is over
// job.MaxSignalPayload) is an error, and so is a job not in the store,
// or one that has finished (wrapping runner.ErrFinished). Like Deliver,
// Signal returns once the signal is handed to the job's pending results,
// which apply it (a job that finishes meanwhile ignores it, reason job
// settled).
func (r *Runner) Signal(ctx context.Context, id job.ID, name, sigID string, payload json.RawMessage) error {
	if err := r.usable(); err != nil {
		return err
	}
	s := job.Signal{Name: name, ID: sigID, Payload: payload, At: r.o.Clock.Now().UTC()}
	if err := s.Check(); err != nil {
		return fmt.Errorf("inmem: signal job %s: %w", id, err)
	}
	if err := r.live(ctx, id, "signal"); err != nil {
		return err
	}
	r.results.Add(context.WithoutCancel(ctx), r.applyR, inHand{res: job.SignalResult(id, s)})
	return nil
}

// CancelNode stops the running node called name in job id (job.CancelNode)
// with a reason: it fails with kind cancelled, which a try around it may
// rescue. A node that is not running is left as it is. A job not in the
// store, or one that has finished (wrapping runner.ErrFinished), is an
// error. CancelNode returns once the cancel is handed to the job's
// pending results, which apply it.
func (r *Runner) CancelNode(ctx context.Context, id job.ID, name, reason string) error {
	if err := r.usable(); err != nil {
		return err
	}
	if reason == "" {
		return fmt.Errorf("inmem: cancel node %q of job %s: a reason is required", name, id)
	}
	if err := r.live(ctx, id, "cancel node "+name+" of"); err != nil {
		return err
	}
	res := job.CancelNodeResult(id, name, reason)
	res.At = r.o.Clock.Now().UTC()
	r.results.Add(context.WithoutCancel(ctx), r.applyR, inHand{res: res})
	return nil
}

// live returns an error if job id is not in the store or has finished.
func (r *Runner) live(ctx context.Context, id job.ID, what string) error {
	j, err := r.o.Store.Load(ctx, id)
	if err != nil {
		return fmt.Errorf("inmem: %s job %s: %w", what, id, err)
	}
	if j.Done() {
		return fmt.Errorf("inmem: %s job %s: %w (%s)", what, id, runner.ErrFinished, j.Status())
	}
	return nil
}
