package job

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/batonwf/baton/ast"
)

// Action is one unit of work for a runner to perform: call the handler
// registered under Name with Payload, then report a Result.
//
// ID is derived from the leaf's path and the attempt ("par[1].seq[0]#1"), so
// a result finds its node without any global counter, and the same job
// always names the same action the same way.
type Action struct {
	JobID       ID
	Incarnation uint64 // the job's incarnation (WithIncarnation)
	ID          string // path#attempt
	Name        string // the action name in the workflow
	Payload     []byte // JSON from the workflow, or nil; shared, do not modify
	Attempt     int    // 1 for the first dispatch
	// Inputs are the outputs the leaf takes (ast.Node.WithInputs), in the
	// order it lists them; shared, do not modify.
	Inputs []Input `json:",omitempty"`
	// Timeout bounds each attempt (ast.Node.WithTimeout): the runner gives
	// the handler a context with this deadline, and reports an overrun as
	// a failure of kind KindTimeout. 0: no limit.
	Timeout time.Duration `json:",omitempty"`
	// AtMostOnce is set for a leaf delivered at most once: a runner that
	// cannot tell whether an attempt ran reports it failed with kind
	// KindLost instead of running it again.
	AtMostOnce bool `json:",omitempty"`
	// Priority is the leaf's priority (ast.Node.WithPriority), from
	// ast.MinPriority to ast.MaxPriority, 0 by default; every attempt of
	// the leaf carries it, and so does its action recovered by
	// Job.Outstanding. A runner that orders its queue runs higher
	// priorities first. runner/inmem does not: it ignores the priority and
	// runs actions in the order they are queued.
	Priority int `json:",omitempty"`
	// Failure is, for an action in a try's rescue or finally, the failure
	// that part follows: for a rescue, what made the body fail; for a
	// finally, the failure the try is carrying, which it reports unless
	// the finally fails too: the rescue's if the rescue failed, the
	// body's if the body failed and no rescue ran. It is nil in a finally
	// after a body that succeeded, a failure a rescue handled, or a body
	// that was stopped (a cancel, a frozen par). The nearest enclosing
	// rescue or finally decides. Nil for every other action.
	Failure *Failure `json:",omitempty"`
	// Replica is, for an action inside a copy of a node with replicas
	// (ast.Node.WithReplicas), which copy of which group it runs in; nil
	// for every other action. It is placement's plain data: the reducer
	// gives it no meaning, and runner/inmem ignores it.
	Replica *Replica `json:",omitempty"`
	// Placement is the leaf's placement hint (ast.Node.WithAffinity, the
	// nearest to the leaf deciding), resolved; nil when it has none.
	// Plain data, as Replica.
	Placement *Placement `json:",omitempty"`
}

// Replica says which copy of a node with replicas an action runs in: the
// copies of one group (the same job and Race) are the ones to spread
// over distinct workers.
type Replica struct {
	Race string // the path of the race the node with replicas became ("" for the root)
	Copy int    // the copy's index, 0 to Of-1: the race's child the action is under
	Of   int    // the number of copies
}

// Input is a named output an action takes.
type Input struct {
	Name   string
	Output json.RawMessage // the named leaf's output; nil (null) for an inner node or an empty output
}

// Input returns the output of the input called name, and whether the
// action takes one by that name.
func (a Action) Input(name string) (json.RawMessage, bool) {
	for _, in := range a.Inputs {
		if in.Name == name {
			return in.Output, true
		}
	}
	return nil, false
}

// Key returns "jobID/actionID": unique across the jobs of a store, and
// different for every attempt. Runners use it to dispatch an action once.
func (a Action) Key() string { return string(a.JobID) + "/" + a.ID }

// IdempotencyKey returns a key for the side effects of this action's leaf:
// "jobID/incarnation/path", the incarnation in 16 hex digits. It is the
// same for every attempt and every redelivery of the leaf, and differs for
// a job made under the same ID after this one was deleted (when runners
// give jobs an incarnation, as they do). Pass it to external systems that
// deduplicate requests, since actions are delivered at least once.
func (a Action) IdempotencyKey() string {
	const digits = "0000000000000000"
	inc := strconv.FormatUint(a.Incarnation, 16)
	return string(a.JobID) + "/" + digits[len(inc):] + inc + "/" + ast.ShowPath(a.Path())
}

// Path returns the path of the action's node ("" for the root).
func (a Action) Path() string {
	p, _, _ := SplitActionID(a.ID)
	return p
}

func (a Action) String() string {
	return fmt.Sprintf("%s %s %s", a.JobID, a.ID, a.Name)
}

// Succeed returns the result reporting that a succeeded with output.
func (a Action) Succeed(output []byte) Result {
	return Result{JobID: a.JobID, Incarnation: a.Incarnation, ActionID: a.ID, Output: output}
}

// Fail returns the result reporting that a failed with message. An empty
// message becomes "action failed", since an empty Error means success.
func (a Action) Fail(message string) Result {
	if message == "" {
		message = "action failed"
	}
	return Result{JobID: a.JobID, Incarnation: a.Incarnation, ActionID: a.ID, Error: message}
}

// ErrWrongJob is wrapped by the error Restart returns for a result whose
// JobID names another job: a runner routed it wrongly. Nothing is applied.
var ErrWrongJob = errors.New("job: result belongs to another job")

type wrongJobError struct{ msg string }

func (e *wrongJobError) Error() string        { return e.msg }
func (e *wrongJobError) Is(target error) bool { return target == ErrWrongJob }

// Failure kinds the reducer and the runners give. A handler may give its
// own (runner.WithKind); a retry policy lists the kinds it never retries.
const (
	KindTimeout   = "timeout"   // the attempt overran its timeout (retryable unless listed)
	KindLost      = "lost"      // the runner cannot tell whether an at-most-once attempt ran (retryable unless listed)
	KindDeadline  = "deadline"  // a node's deadline ran out (never an attempt's failure; never retried)
	KindCancelled = "cancelled" // the job was cancelled (never an attempt's failure; never retried)
)

// Result reports how an action ended, or that a timer fired (Timer.Fire).
// It failed when Error is not empty.
type Result struct {
	JobID ID
	// Incarnation is that of the job the action was dispatched for
	// (Action.Incarnation; Succeed and Fail copy it). Restart ignores a
	// result of another incarnation than the job's, as stale: a job
	// deleted and made again under the same ID has the same action IDs,
	// and a handler of the old one may still report. 0 names none and
	// matches any.
	Incarnation uint64 `json:",omitempty"`
	ActionID    string
	Output      []byte `json:",omitempty"`
	Error       string `json:",omitempty"`
	// Kind classifies a failure: "" for a plain one, KindTimeout,
	// KindLost, or a kind the handler gave.
	Kind string `json:",omitempty"`
	// Final marks a failure the handler says no retry can mend.
	Final bool `json:",omitempty"`
	// At is when the runner saw the action end (or the timer fire). The
	// job's clock is the latest At applied; a retry waits from its
	// failure's At. The zero time means the job's clock.
	At time.Time `json:",omitempty"`
	// Worker is the name of the worker that ran the action and made this
	// result (runner.WorkerOptions.Name, stamped by runner.Execute); ""
	// for a result no worker made: a timer's firing, a cancel, a result a
	// test or a client built, and a lost attempt (runner.LostResult), which
	// the runner that reports it did not run. The reducer gives it no
	// meaning; stores journal it with the step (EncodeStep), so that a
	// job's history says where each attempt ran.
	Worker string `json:",omitempty"`
}

// Failed reports whether r reports a failure.
func (r Result) Failed() bool { return r.Error != "" }

func (r Result) String() string {
	if r.Failed() {
		return fmt.Sprintf("%s %s failed: %s", r.JobID, r.ActionID, r.Error)
	}
	return fmt.Sprintf("%s %s ok", r.JobID, r.ActionID)
}

// IgnoreReason says why Restart did not apply a result.
type IgnoreReason uint8

// Why a result was not applied. Each is normal under at-least-once
// delivery except Unknown, which points at a runner routing results wrongly.
const (
	IgnoredUnknown       IgnoreReason = iota + 1 // the ID names no action of this workflow
	IgnoredNotDispatched                         // the action was never dispatched
	IgnoredStale                                 // the result is for an earlier attempt (whether the leaf was stopped since or not)
	IgnoredDuplicate                             // the action already has a result
	IgnoredJobDone                               // the job had already finished
	IgnoredTimer                                 // a firing of a timer not pending: never asked for, fired or withdrawn
	IgnoredStopped                               // the attempt was told to stop in flight (a deadline, its leaf's own included, or a cancel): its result changes nothing
	IgnoredJobSettled                            // a signal to a job that had settled
	IgnoredQueueFull                             // a signal no wait took, beyond the MaxKeptSignals the job keeps: dropped, yet its ID is seen (the step holds it)
)

var ignoreNames = [...]string{"", "unknown action", "not dispatched", "stale attempt", "duplicate", "job done", "timer not pending", "stopped", "job settled", "signal queue full"}

func (r IgnoreReason) String() string {
	if int(r) < len(ignoreNames) && r > 0 {
		return ignoreNames[r]
	}
	return fmt.Sprintf("IgnoreReason(%d)", uint8(r))
}

// Ignored is a result that Restart did not apply.
type Ignored struct {
	Result Result
	Reason IgnoreReason
	Detail string // more about Unknown: what in the ID did not match
}

func (ig Ignored) String() string {
	s := fmt.Sprintf("%s: %s", ig.Result.ActionID, ig.Reason)
	if ig.Detail != "" {
		s += " (" + ig.Detail + ")"
	}
	return s
}

// ActionID returns the ID of attempt of the action at path.
func ActionID(path string, attempt int) string {
	return ast.ShowPath(path) + "#" + strconv.Itoa(attempt)
}

// SplitActionID splits an action ID into the node path ("" for the root)
// and the attempt.
func SplitActionID(id string) (path string, attempt int, err error) {
	i := strings.LastIndexByte(id, '#')
	if i < 0 {
		return "", 0, fmt.Errorf("action ID %q has no '#attempt'", id)
	}
	n, ok := atoi(id[i+1:])
	if !ok || n < 1 {
		return "", 0, fmt.Errorf("action ID %q has a bad attempt %q", id, id[i+1:])
	}
	path = id[:i]
	if path == ast.RootPath {
		path = ""
	} else if path == "" {
		return "", 0, fmt.Errorf("action ID %q has an empty path", id)
	}
	return path, n, nil
}

// atoi parses an attempt: a canonical decimal (no sign, no leading zero)
// of at most 9 digits.
func atoi(s string) (int, bool) {
	if s == "" || len(s) > 9 || (len(s) > 1 && s[0] == '0') {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil && n >= 0
}
