package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
)

// ErrHandedBack is returned by Execute when the worker's context ended
// while the handler ran and the handler failed: the action was interrupted,
// not failed, so no result must be reported. The action stays outstanding
// and recovery dispatches it again.
var ErrHandedBack = errors.New("runner: action interrupted by shutdown; handed back")

// ExecOptions tunes Execute.
type ExecOptions struct {
	// Timeout bounds one action; 0 means none. A leaf's own timeout
	// (job.Action.Timeout) applies too: the shorter wins. An action that
	// overruns fails with "timed out after ..." and kind job.KindTimeout.
	Timeout time.Duration
	// Logger receives the action's start and success (DEBUG), its
	// failure (WARN) and a panic with its stack (ERROR); nil discards.
	Logger *slog.Logger
	// Hooks, if not nil, hears of the action's start and end.
	Hooks *Hooks
	// Now stamps the result (job.Result.At, the time the job's clock
	// moves to); nil means time.Now. How long the action took is
	// measured on the real clock.
	Now func() time.Time
	// Worker is the name of the worker that runs the action
	// (WorkerOptions.Name): every result Execute makes carries it
	// (job.Result.Worker), a failure as a success.
	Worker string
}

// Execute performs action a with its handler from reg and returns the
// result to report, naming o.Worker. It never panics: a missing handler
// or a panicking handler is the action's failure.
//
// ctx is the worker's context. If it ends while the handler runs and the
// handler returns an error, Execute returns ErrHandedBack and no result:
// the caller must not report one. A Stoppable that carries no action yet
// is given a and is the handler's context itself.
func Execute(ctx context.Context, reg *Registry, a job.Action, o ExecOptions) (job.Result, error) {
	h, ok := reg.Lookup(a.Name)
	if !ok {
		r := a.Fail(fmt.Sprintf("no handler registered for action %q", a.Name))
		r.Worker = o.Worker
		logEnded(ctx, o.Logger, a, r, 0)
		return r, nil
	}
	var actx context.Context
	if st, ok := ctx.(*Stoppable); ok && st.bind(a) {
		actx = st // it carries the action itself: one allocation, not two
	} else {
		actx = &actionCtx{Context: ctx, a: a}
	}
	timeout := o.Timeout
	if a.Timeout > 0 && (timeout == 0 || a.Timeout < timeout) {
		timeout = a.Timeout
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		actx, cancel = context.WithTimeout(actx, timeout)
		defer cancel()
	}
	o.Hooks.actionStarted(a)
	logStarted(ctx, o.Logger, a)
	start := time.Now()
	out, panicked, err := call(actx, h, a, o.Logger)
	end := time.Now()
	d := end.Sub(start)
	if err != nil && ctx.Err() != nil {
		o.Hooks.actionHandedBack(a)
		return job.Result{}, ErrHandedBack
	}
	var r job.Result
	switch {
	case err == nil:
		r = a.Succeed(out)
	case timeout > 0 && errors.Is(actx.Err(), context.DeadlineExceeded):
		// A handler that returns the context's error, wrapped or not, has
		// nothing to add to "timed out": "context deadline exceeded" would
		// only say it twice.
		msg := fmt.Sprintf("action %q timed out after %s", a.Name, timeout)
		if !errors.Is(err, context.DeadlineExceeded) {
			msg += ": " + err.Error()
		}
		r = a.Fail(msg)
		r.Kind = job.KindTimeout
	default:
		r = a.Fail(err.Error())
		var k *kindError
		if errors.As(err, &k) {
			r.Kind, r.Final = k.kind, k.final
			if r.Kind != "" {
				if kerr := ast.CheckKind(r.Kind); kerr != nil {
					// A kind no retry policy could name: say so where
					// the failure is read, rather than drop it silently.
					r.Error += " (the handler's " + kerr.Error() + "; the failure has no kind)"
					r.Kind = ""
				}
			}
		}
	}
	if o.Now != nil {
		r.At = o.Now()
	} else {
		r.At = end // when the handler returned: no second read of the clock
	}
	r.Worker = o.Worker
	if panicked {
		o.Hooks.actionPanicked(a)
	}
	o.Hooks.actionFinished(a, r, d)
	logEnded(ctx, o.Logger, a, r, d)
	return r, nil
}

// kindError gives a handler's error a kind, or marks it final.
type kindError struct {
	err   error
	kind  string
	final bool
}

func (e *kindError) Error() string { return e.err.Error() }
func (e *kindError) Unwrap() error { return e.err }

// WithKind returns err with a failure kind (job.Result.Kind): a retry
// policy lists the kinds it never retries ("card_declined"). A kind is 1
// to 100 bytes of letters, digits, '_', '-' and '.'.
func WithKind(err error, kind string) error {
	if err == nil {
		return nil
	}
	k := &kindError{err: err, kind: kind}
	var prev *kindError
	if errors.As(err, &prev) {
		k.final = prev.final
	}
	return k
}

// Final returns err marked as a failure no retry can mend: the leaf fails
// at once, whatever its retry policy.
func Final(err error) error {
	if err == nil {
		return nil
	}
	k := &kindError{err: err, final: true}
	var prev *kindError
	if errors.As(err, &prev) {
		k.kind = prev.kind
	}
	return k
}

// call runs h, turning a panic into an error, and reports whether it
// panicked.
func call(ctx context.Context, h Handler, a job.Action, log *slog.Logger) (out []byte, panicked bool, err error) {
	defer func() {
		if p := recover(); p != nil {
			stack := debug.Stack()
			if log != nil {
				log.Error("handler panicked", "job", a.JobID, "action", a.ID, "name", a.Name,
					"panic", fmt.Sprint(p), "stack", string(stack))
			}
			out, panicked, err = nil, true, fmt.Errorf("handler for action %q panicked: %v", a.Name, p)
		}
	}()
	out, err = h(ctx, a)
	return out, false, err
}

// actionKey is the key under which the context Execute gives a handler
// holds the action it performs.
type actionKey struct{}

// actionCtx is the context Execute gives a handler: ctx, with the action.
// It is what context.WithValue(ctx, actionKey{}, a) would be, in one
// allocation instead of two (WithValue boxes the action, then wraps it).
// Done, Err, Deadline and every other value are ctx's, so contexts derived
// from it, and context.Cause, see ctx's cancellation as they would
// through a WithValue.
type actionCtx struct {
	context.Context
	a job.Action
}

// Value returns a pointer to the action for actionKey (no allocation;
// ActionFrom copies it), and ctx's value for any other key.
func (c *actionCtx) Value(key any) any {
	if _, ok := key.(actionKey); ok {
		return &c.a
	}
	return c.Context.Value(key)
}

// ActionFrom returns the action that the handler called with ctx performs:
// its job, its ID and attempt, and its idempotency key
// (job.Action.IdempotencyKey), which typed handlers (Handle) need to key
// their side effects. ok is false outside a handler run by Execute.
func ActionFrom(ctx context.Context) (a job.Action, ok bool) {
	p, ok := ctx.Value(actionKey{}).(*job.Action)
	if !ok {
		return job.Action{}, false
	}
	return *p, true
}

// InputAs decodes into a T the input called name (ast.Node.WithInputs) of
// the action that the handler called with ctx performs: the output of an
// earlier leaf. It fails, naming the input, outside a handler, for a name
// the action does not take, when the input has no output (it names an
// inner node, or a leaf that succeeded with none: a.Input gives nil), and
// when the output does not decode.
func InputAs[T any](ctx context.Context, name string) (T, error) {
	var v T
	a, ok := ActionFrom(ctx)
	if !ok {
		return v, fmt.Errorf("runner: input %q: no action in the context (call InputAs from a handler)", name)
	}
	out, ok := a.Input(name)
	if !ok {
		return v, fmt.Errorf("action %q takes no input %q", a.Name, name)
	}
	if len(out) == 0 {
		return v, fmt.Errorf("input %q of action %q has no output (an inner node, or a leaf that returned none)", name, a.Name)
	}
	if err := json.Unmarshal(out, &v); err != nil {
		return v, fmt.Errorf("input %q of action %q: %v", name, a.Name, err)
	}
	return v, nil
}
