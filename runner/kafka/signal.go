package kafka

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/segmentio/kafka-go"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
)

// Signal sends job id the signal name with ID sigID and a JSON payload
// (nil for null): a wait of that name takes it, or the job keeps it for
// one (see job.Signal). It is a message on the restarter topic, keyed by
// the job, which the restarter owning the job's partition applies with
// its batch; it is idempotent by name and ID for the job's whole life, so
// sending it again, or a restarter reading it twice, changes nothing.
//
// A bad signal is an error wrapping runner.ErrBadSignal, and so is one
// whose message is over the topics' limit (MaxMessageBytes); a job not
// stored wraps store.ErrNotFound, a finished one runner.ErrFinished
// unless it applied this very signal (runner.CheckSignal: sending it
// again is no error, and sends nothing).
// Signal returns once the signal is applied here, or durable in the
// restarter topic (as Deliver).
func (r *Runner) Signal(ctx context.Context, id job.ID, name, sigID string, payload json.RawMessage) error {
	if err := r.usable(); err != nil {
		return err
	}
	if err := id.Check(); err != nil {
		return err
	}
	s, err := runner.NewSignal(id, name, sigID, payload, r.o.Clock.Now())
	if err != nil {
		return err
	}
	m := signalMessage(id, s)
	if n := size(m); n > r.st.limit {
		return fmt.Errorf("job %s: %w: signal %s/%s is %d bytes as a message, over the limit of %d bytes (MaxMessageBytes, the topics' max.message.bytes)",
			id, runner.ErrBadSignal, s.Name, s.ID, n, r.st.limit)
	}
	if seen, err := runner.CheckSignal(ctx, r.st, id, s.Name, s.ID, "signal"); err != nil || seen {
		return err
	}
	in := input{in: inbound{id: id, kind: typeSignal, result: job.SignalResult(id, s)}, offset: -1}
	if err := r.send(ctx, []input{in}, []kafka.Message{m}); err != nil {
		return fmt.Errorf("job %s: signal %s/%s: %w", id, s.Name, s.ID, err)
	}
	return nil
}

// CancelNode stops the running node called name in job id with a reason
// (job.CancelNode): the node fails with kind cancelled, which a try
// around it may rescue; its actions in flight are told to stop. It is a
// cancel message naming the node on the restarter topic; a node that is
// not running when the restarter applies it is left as it is. A job not
// stored, or one that has finished (wrapping runner.ErrFinished), is an
// error, and so are a bad name and an empty reason. CancelNode returns
// once the cancel is applied here, or durable in the restarter topic.
func (r *Runner) CancelNode(ctx context.Context, id job.ID, name, reason string) error {
	if err := r.usable(); err != nil {
		return err
	}
	if err := id.Check(); err != nil {
		return err
	}
	res, err := runner.NewCancelNode(id, name, reason, r.o.Clock.Now())
	if err != nil {
		return err
	}
	m := cancelNodeMessage(res, name)
	if n := size(m); n > r.st.limit {
		return fmt.Errorf("job %s: the cancel of node %s is %d bytes as a message, over the limit of %d (its reason is too long)", id, name, n, r.st.limit)
	}
	if err := runner.CheckLive(ctx, r.st, id, "cancel node "+name+" of"); err != nil {
		return err
	}
	in := input{in: inbound{id: id, kind: typeCancel, result: res}, offset: -1}
	if err := r.send(ctx, []input{in}, []kafka.Message{m}); err != nil {
		return fmt.Errorf("job %s: cancel node %s: %w", id, name, err)
	}
	return nil
}
