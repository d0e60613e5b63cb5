package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/store"
)

// Signals and node cancels reach a job as results (job.SignalResult,
// job.CancelNodeResult): each runner carries them the way it carries its
// workers' results (runner/inmem hands them to its applier, runner/zk
// writes a signal node that the transition applying it deletes,
// runner/kafka sends them to the restarter topic). What every runner
// checks before it accepts one is written here, once.

// ErrBadSignal is wrapped by the error of a signal that is refused before
// it is sent: a name that is not a valid name, an ID that is empty, too
// long or unprintable, a payload that is not JSON or is over
// job.MaxSignalPayload (the message says which).
var ErrBadSignal = errors.New("runner: bad signal")

// NewSignal returns the signal name with ID sigID and payload (nil for
// null) received at now, checked (job.Signal.Check): a bad one is an
// error wrapping ErrBadSignal that names the job.
func NewSignal(id job.ID, name, sigID string, payload json.RawMessage, now time.Time) (job.Signal, error) {
	s := job.Signal{Name: name, ID: sigID, Payload: payload, At: now.UTC()}
	if err := s.Check(); err != nil {
		return job.Signal{}, fmt.Errorf("job %s: %w: %w", id, ErrBadSignal, err)
	}
	return s, nil
}

// CheckLive returns nil if job id is stored and has not finished; else an
// error naming the job and what was to be done to it (what: "signal",
// "cancel node N of"), wrapping store.ErrNotFound or ErrFinished (with
// the job's status). A job that finishes after the check ignores what
// was sent (reason job settled, or not running): the check is the
// sender's courtesy, the reducer's rule is the guarantee.
func CheckLive(ctx context.Context, st store.Store, id job.ID, what string) error {
	j, err := st.Load(ctx, id)
	if err != nil {
		return fmt.Errorf("%s job %s: %w", what, id, err)
	}
	if j.Done() {
		return fmt.Errorf("%s job %s: %w (%s)", what, id, ErrFinished, j.Status())
	}
	return nil
}

// CheckSignal is CheckLive for the signal name/sigID: it also reports
// whether job id has applied that very signal already (job.SignalSeen),
// finished or not. Sending it again would change nothing, so the sender
// sends nothing and answers as for the first send: a retry of a signal
// whose answer was lost (perhaps the signal that finished the job) is no
// error. A name no wait of the job takes (job.SignalNames) is an error
// wrapping ErrBadSignal that names the job's waits: the job would keep
// the signal for ever.
func CheckSignal(ctx context.Context, st store.Store, id job.ID, name, sigID string, what string) (seen bool, err error) {
	j, err := st.Load(ctx, id)
	if err != nil {
		return false, fmt.Errorf("%s job %s: %w", what, id, err)
	}
	return CheckSignalTo(j, name, sigID, what)
}

// CheckSignalTo is CheckSignal on job j as loaded.
func CheckSignalTo(j job.Job, name, sigID string, what string) (seen bool, err error) {
	id := j.ID()
	if j.SignalSeen(name, sigID) {
		return true, nil
	}
	if j.Done() {
		return false, fmt.Errorf("%s job %s: %w (%s)", what, id, ErrFinished, j.Status())
	}
	if names := j.SignalNames(); !slices.Contains(names, name) {
		// Kept, it would wait for ever: a misspelt name, or the wrong job.
		waits := "it has no wait"
		if len(names) > 0 {
			waits = "its waits take " + strings.Join(names, ", ")
		}
		return false, fmt.Errorf("%s job %s: %w: no wait of the job takes signal %s (%s)", what, id, ErrBadSignal, name, waits)
	}
	return false, nil
}

// BadSignalReason returns what err, an error wrapping ErrBadSignal, says
// is wrong with the signal: the text after "bad signal: ", without what
// comes before it (the runner's and the job's names, which a caller
// showing the job says its own way); err's whole text if it has none.
func BadSignalReason(err error) string {
	msg := err.Error()
	if _, after, ok := strings.Cut(msg, ErrBadSignal.Error()+": "); ok {
		return after
	}
	return msg
}

// NewCancelNode returns the result by which the node called name in job
// id is cancelled with reason at now (job.CancelNodeResult), after
// checking them: a reason is required, and name must be a valid node
// name.
func NewCancelNode(id job.ID, name, reason string, now time.Time) (job.Result, error) {
	if msg := ast.CheckSignalName(name); msg != "" {
		return job.Result{}, fmt.Errorf("cancel node of job %s: node %s", id, msg)
	}
	if reason == "" {
		return job.Result{}, fmt.Errorf("cancel node %q of job %s: a reason is required", name, id)
	}
	res := job.CancelNodeResult(id, name, reason)
	res.At = now.UTC()
	return res, nil
}

// CancelNode cancels the running node called name in job id with reason
// (job.CancelNode) through Apply, as Cancel does the job: the node fails
// with kind cancelled once everything under it settles, which a try
// around it may rescue; its actions in flight are told to stop. A node
// that is not running is left as it is (the cancel is ignored, and the
// transition returned changed nothing). A job not stored, or finished
// (wrapping ErrFinished), is an error, and so are a bad name and an
// empty reason.
//
// A runner that serialises the results of a job (runner/inmem) hands in
// NewCancelNode's result like any result instead.
func (e *Engine[R]) CancelNode(ctx context.Context, id job.ID, name, reason string) (job.Transition, error) {
	res, err := NewCancelNode(id, name, reason, e.o.Now())
	if err != nil {
		return job.Transition{}, err
	}
	if err := CheckLive(ctx, e.o.Store, id, "cancel node "+name+" of"); err != nil {
		return job.Transition{}, err
	}
	return e.Apply(ctx, id, []job.Result{res})
}
