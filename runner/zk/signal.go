package zk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	"github.com/batonwf/baton/store"
)

// Signals. A signal is written as a node under /signals (layout.signal)
// before anything applies it, so that once Signal returns it is durable:
// a sender that dies after writing it, or whose transition kept losing
// the job's record to the workers, leaves it to the workers' signal loop.
// The transition that applies a signal deletes its node in its own
// multi-op (a consumed with no claim), so a node is applied once; a node
// written again after it was applied (the same name and ID sent again)
// is ignored by the reducer as a duplicate and deleted.

// signalGrace is how long a worker leaves a signal node it sees for the
// first time to its sender, which applies it at once: a node older than
// that (on the worker's own clock) was left behind.
const signalGrace = time.Second

// signalNode is a signal node's data.
type signalNode struct {
	Name    string          `json:"name"`
	ID      string          `json:"id"`
	Payload json.RawMessage `json:"payload,omitempty"`
	At      time.Time       `json:"at"`
}

func encodeSignal(s job.Signal) []byte {
	b, _ := json.Marshal(signalNode{Name: s.Name, ID: s.ID, Payload: s.Payload, At: s.At})
	return b
}

// decodeSignal reads a signal node's data, checked (job.Signal.Check).
func decodeSignal(data []byte) (job.Signal, error) {
	var n signalNode
	if err := json.Unmarshal(data, &n); err != nil {
		return job.Signal{}, fmt.Errorf("not a signal: %w", err)
	}
	s := job.Signal{Name: n.Name, ID: n.ID, Payload: n.Payload, At: n.At}
	if err := s.Check(); err != nil {
		return job.Signal{}, err
	}
	return s, nil
}

// Signal sends job id the signal name with ID sigID and a JSON payload
// (nil for null): a wait of that name takes it, or the job keeps it for
// one (see job.Signal). It is idempotent by name and ID for the job's
// whole life: sending it again changes nothing, and is no error even once
// the job has finished (runner.CheckSignal). A bad signal is an error
// wrapping runner.ErrBadSignal; a job not stored wraps store.ErrNotFound,
// a finished one that has not applied the signal runner.ErrFinished.
//
// Signal writes the signal's node (durable from then on), then applies
// it in a transition that deletes the node in its multi-op, and returns.
// If that transition fails (the job's record kept moving under the
// workers, the connection went away), the node stays and a worker's
// signal loop applies it: Signal returns nil once the node is written.
func (r *Runner) Signal(ctx context.Context, id job.ID, name, sigID string, payload json.RawMessage) error {
	if err := r.usable(); err != nil {
		return err
	}
	s, err := runner.NewSignal(id, name, sigID, payload, r.o.Clock.Now())
	if err != nil {
		return err
	}
	if seen, err := runner.CheckSignal(ctx, r.st, id, s.Name, s.ID, "signal"); err != nil || seen {
		return err
	}
	p := r.c.l.signal(id, s)
	_, err = r.c.create(ctx, p, encodeSignal(s), 0)
	if errors.Is(err, zk.ErrNoNode) {
		// A root made before signals: the parent first.
		if err = r.c.ensure(ctx, r.c.l.signals()); err == nil {
			_, err = r.c.create(ctx, p, encodeSignal(s), 0)
		}
	}
	switch {
	case errors.Is(err, zk.ErrNodeExists):
		// Sent before and not applied yet (or a retry found its own
		// node): it is one signal, applied once, by whoever gets to it.
		return nil
	case err != nil:
		return fmt.Errorf("signal job %s: write %s: %w", id, p, err)
	}
	if err := r.applySignal(ctx, id, p, 0, s); err != nil && ctx.Err() == nil {
		r.log.Warn("a signal was written but not applied yet; the workers apply it", "job", id, "signal", s.Name, "id", s.ID, "err", err)
	}
	return nil
}

// applySignal applies signal s of job id, whose node p is at version
// ver, in a transition that deletes the node. A signal the job ignores
// (a duplicate, a settled job) or a job that is gone has its node
// deleted all the same; a node another runner applied meanwhile is done
// with. Other errors leave the node for later.
func (r *Runner) applySignal(ctx context.Context, id job.ID, p string, ver int32, s job.Signal) error {
	tr, err := r.eng.ApplyWith(ctx, id, []job.Result{job.SignalResult(id, s)}, []consumed{{entry: p, ver: ver}})
	switch {
	case err == nil && tr.Changed(), errors.Is(err, runner.ErrNotDispatched), errors.Is(err, errClaimLost):
		return nil // applied (by this transition, or another's)
	case err == nil, errors.Is(err, store.ErrNotFound):
		if err := r.c.delete(context.WithoutCancel(ctx), p, ver); err != nil && !errors.Is(err, zk.ErrNoNode) && !errors.Is(err, zk.ErrBadVersion) {
			return fmt.Errorf("delete %s: %w", p, err)
		}
		return nil
	}
	return err
}

// CancelNode stops the running node called name in job id (job.CancelNode)
// with a reason, and returns once the cancel is saved: the node fails
// with kind cancelled, which a try around it may rescue; its actions in
// flight are told to stop (in this process at once, in others when their
// workers see the job change). A node that is not running is left as it
// is. A job not stored, or one that has finished (wrapping
// runner.ErrFinished), is an error; so are a bad name and an empty
// reason.
func (r *Runner) CancelNode(ctx context.Context, id job.ID, name, reason string) error {
	_, err := r.CancelNodeTransition(ctx, id, name, reason)
	return err
}

// CancelNodeTransition is CancelNode, returning the transition saved: a
// node left as it is (not running, or stopping already) returns one
// that changed nothing, with the cancel in its Ignored and why, so that
// a caller can say so.
func (r *Runner) CancelNodeTransition(ctx context.Context, id job.ID, name, reason string) (job.Transition, error) {
	if err := r.usable(); err != nil {
		return job.Transition{}, err
	}
	return r.eng.CancelNode(ctx, id, name, reason)
}

// signalLoop applies the signals their senders left behind: every node
// under /signals that this runner has seen for signalGrace. It watches
// the parent, and looks again at most every back-off's cap.
func (r *Runner) signalLoop(ctx context.Context) {
	seen := map[string]time.Time{} // node -> first seen, on the real clock
	bad := map[string]bool{}       // nodes whose data does not parse, logged once
	polls, failures := 0, 0
	for ctx.Err() == nil {
		var names []string
		var ch <-chan zk.Event
		err := r.c.do(ctx, "list the signals", func() (err error) {
			names, _, ch, err = r.c.c.ChildrenW(r.c.l.signals())
			return err
		})
		if errors.Is(err, zk.ErrNoNode) {
			err = r.c.ensure(ctx, r.c.l.signals())
			if err == nil {
				continue
			}
		}
		if err != nil {
			if ctx.Err() == nil {
				r.log.Error("listing the signals", "err", err)
				failures++
				_ = r.c.backoff.Sleep(ctx, failures)
			}
			continue
		}
		failures = 0
		slices.Sort(names)
		now := time.Now()
		next := time.Duration(0)
		kept := make(map[string]time.Time, len(names))
		for _, name := range names {
			first, ok := seen[name]
			if !ok {
				first = now
			}
			kept[name] = first
			if wait := signalGrace - now.Sub(first); wait > 0 {
				if next == 0 || wait < next {
					next = wait
				}
				continue
			}
			r.pickUpSignal(ctx, name, bad)
		}
		seen = kept
		for name := range bad {
			if _, ok := kept[name]; !ok {
				delete(bad, name)
			}
		}
		polls++
		d := r.c.backoff.Wait(polls)
		if next > 0 {
			d = min(d, next)
		}
		sleep(ctx, max(d, time.Millisecond), ch)
	}
}

// pickUpSignal applies the signal node name, left by its sender. A node
// that does not parse is logged once (bad) and left for an operator.
func (r *Runner) pickUpSignal(ctx context.Context, name string, bad map[string]bool) {
	p := r.c.l.signals() + "/" + name
	id, ok := signalKey(name)
	if !ok {
		if !bad[name] {
			bad[name] = true
			r.log.Warn("a node under the signals is not a signal's (s-LEN-JOB-HASH): left as it is", "node", p)
		}
		return
	}
	data, st, err := r.c.get(ctx, p)
	if errors.Is(err, zk.ErrNoNode) {
		return // applied meanwhile
	}
	if err != nil {
		if ctx.Err() == nil {
			r.log.Error("reading a signal", "node", p, "err", err)
		}
		return
	}
	s, err := decodeSignal(data)
	if err != nil {
		if !bad[name] {
			bad[name] = true
			r.log.Warn("a signal node does not parse: left as it is", "node", p, "job", id, "err", err)
		}
		return
	}
	if err := r.applySignal(ctx, id, p, st.Version, s); err != nil && ctx.Err() == nil {
		r.log.Error("applying a signal failed; it is applied again later", "job", id, "signal", s.Name, "id", s.ID, "err", err)
		return
	}
	r.log.Debug("signal left by its sender applied", "job", id, "signal", s.Name, "id", s.ID)
}
