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
// job.MaxSignalPayload) is an error wrapping runner.ErrBadSignal, and so
// is a job not in the store,
// or one that has finished (wrapping runner.ErrFinished) without applying
// this very signal: sending an applied signal again is no error, even
// once the job has finished, and sends nothing (runner.CheckSignal). Like Deliver,
// Signal returns once the signal is handed to the job's pending results,
// which apply it (a job that finishes meanwhile ignores it, reason job
// settled).
func (r *Runner) Signal(ctx context.Context, id job.ID, name, sigID string, payload json.RawMessage) error {
	if err := r.usable(); err != nil {
		return err
	}
	s, err := runner.NewSignal(id, name, sigID, payload, r.o.Clock.Now())
	if err != nil {
		return fmt.Errorf("inmem: signal %w", err)
	}
	if seen, err := runner.CheckSignal(ctx, r.o.Store, id, s.Name, s.ID, "inmem: signal"); err != nil || seen {
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
	res, err := runner.NewCancelNode(id, name, reason, r.o.Clock.Now())
	if err != nil {
		return fmt.Errorf("inmem: %w", err)
	}
	if err := runner.CheckLive(ctx, r.o.Store, id, "inmem: cancel node "+name+" of"); err != nil {
		return err
	}
	r.results.Add(context.WithoutCancel(ctx), r.applyR, inHand{res: res})
	return nil
}
