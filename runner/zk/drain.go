package zk

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/batonwf/baton/placement"
	"github.com/batonwf/baton/runner"
)

// Drain is a state, not a signal (see the package doc, Placement): Store.Drain
// marks a worker draining in its registration; the worker, seeing it
// through its registry, claims nothing but its pins' actions, and once
// nothing runs and it holds no pin it deletes its registration and Run
// returns nil. Store.Undrain makes it available again.

// Errors of Drain and Undrain.
var (
	// ErrLastWorker is wrapped by a LastWorkerError.
	ErrLastWorker = errors.New("zk: the drain would leave actions with no available worker")
)

// UnknownWorkerError is the error of Drain and Undrain for a name with no
// registration on the root. It wraps placement.ErrUnknownWorker.
type UnknownWorkerError struct {
	Name  string
	Known []string // the registered workers, sorted
}

func (e *UnknownWorkerError) Error() string {
	if len(e.Known) == 0 {
		return fmt.Sprintf("zk: no worker %q on this root (no worker is registered)", e.Name)
	}
	return fmt.Sprintf("zk: no worker %q on this root (registered: %s)", e.Name, strings.Join(e.Known, ", "))
}

func (e *UnknownWorkerError) Unwrap() error { return placement.ErrUnknownWorker }

// LastWorkerError is Drain's refusal, without DrainOptions.Force, to
// leave action names that live workers run today with no available
// worker. It wraps ErrLastWorker.
type LastWorkerError struct {
	Name    string
	Actions []string // the names only this worker runs among the available live ones
}

func (e *LastWorkerError) Error() string {
	return fmt.Sprintf("zk: worker %s is the only available worker for %s: draining it would leave them with none (force it, or start another worker first)",
		e.Name, strings.Join(e.Actions, ", "))
}

func (e *LastWorkerError) Unwrap() error { return ErrLastWorker }

// DrainOptions are Drain's.
type DrainOptions struct {
	// Force drains even when no other available worker runs some of the
	// worker's actions.
	Force bool
	// Timeout, when > 0, releases the draining worker's pins (they move
	// to other workers) once it has drained that long, measured by the
	// worker on its own clock from when it sees the drain; it then exits
	// when its running actions end.
	Timeout time.Duration
}

// DrainResult is what Drain did.
type DrainResult struct {
	// Removed says the worker was down and its registration is deleted
	// (placement.EffectRemove); PinsReleased counts the pins it held
	// then, now free to move.
	Removed      bool
	PinsReleased int
	// Already says it was draining already (its timeout is updated).
	Already bool
}

// Drain drains the worker name (placement.EventDrain): a live worker is
// marked draining, a down one is removed at once and its pins released.
// A name with no registration is an UnknownWorkerError; without
// o.Force, a drain that would leave an action name that live workers run
// today with no available worker is a LastWorkerError. Every change is a
// compare-and-swap on the registration's version, retried on a
// conflict.
func (s *Store) Drain(ctx context.Context, name string, o DrainOptions) (DrainResult, error) {
	if err := s.usable("drain"); err != nil {
		return DrainResult{}, err
	}
	if o.Timeout < 0 {
		return DrainResult{}, fmt.Errorf("zk: drain %s: timeout %v is negative", name, o.Timeout)
	}
	for {
		g, rw, err := s.worker(ctx, name)
		if err != nil {
			return DrainResult{}, err
		}
		from := rw.w.State
		if from == placement.StateNone && !rw.w.Live {
			// An unreadable registration of a worker that is down:
			// the operator removes it as any down worker.
			from = placement.StateAvailable
		}
		to, eff, err := placement.Transition(from, rw.w.Live, placement.EventDrain)
		if err != nil {
			return DrainResult{}, fmt.Errorf("zk: drain %s: %w", name, err)
		}
		if !o.Force && rw.w.Live && from == placement.StateAvailable {
			if names := leftAlone(g.view("", time.Time{}), name); len(names) > 0 {
				return DrainResult{}, &LastWorkerError{Name: name, Actions: names}
			}
		}
		if eff&placement.EffectRemove != 0 {
			n, err := s.c.releasePins(ctx, name)
			if err != nil {
				return DrainResult{}, fmt.Errorf("zk: drain %s: release its pins: %w", name, err)
			}
			err = s.c.removeWorker(ctx, name, rw.regVer)
			if errors.Is(err, zk.ErrBadVersion) || errors.Is(err, zk.ErrNotEmpty) {
				continue // it changed, or came back: decide again
			}
			if err != nil && !errors.Is(err, zk.ErrNoNode) {
				return DrainResult{}, fmt.Errorf("zk: drain %s: %w", name, err)
			}
			return DrainResult{Removed: true, PinsReleased: n}, nil
		}
		reg := rw.reg
		reg.State = to.String()
		reg.DrainTimeoutMs = o.Timeout.Milliseconds()
		err = s.c.setRegistration(ctx, name, reg, rw.regVer)
		if errors.Is(err, zk.ErrBadVersion) {
			continue
		}
		if err != nil {
			return DrainResult{}, fmt.Errorf("zk: drain %s: %w", name, err)
		}
		return DrainResult{Already: from == placement.StateDraining}, nil
	}
}

// Undrain makes the worker name available again and lifts its
// quarantines (placement.EventUndrain), live or down. It returns the
// number of quarantines lifted.
func (s *Store) Undrain(ctx context.Context, name string) (int, error) {
	if err := s.usable("undrain"); err != nil {
		return 0, err
	}
	for {
		g, rw, err := s.worker(ctx, name)
		if err != nil {
			return 0, err
		}
		to, eff, err := placement.Transition(rw.w.State, rw.w.Live, placement.EventUndrain)
		if err != nil {
			return 0, fmt.Errorf("zk: undrain %s: %w", name, err)
		}
		if rw.w.State != to || rw.reg.DrainTimeoutMs != 0 {
			reg := rw.reg
			reg.State, reg.DrainTimeoutMs = to.String(), 0
			err = s.c.setRegistration(ctx, name, reg, rw.regVer)
			if errors.Is(err, zk.ErrBadVersion) {
				continue
			}
			if err != nil {
				return 0, fmt.Errorf("zk: undrain %s: %w", name, err)
			}
		}
		lifted := 0
		if eff&placement.EffectLiftQuarantines != 0 {
			if lifted, err = s.c.liftQuarantines(ctx, g, name); err != nil {
				return lifted, fmt.Errorf("zk: undrain %s: lift its quarantines: %w", name, err)
			}
		}
		return lifted, nil
	}
}

// worker reads the registry once and returns it with worker name's
// entry, or an UnknownWorkerError.
func (s *Store) worker(ctx context.Context, name string) (*registry, regWorker, error) {
	g, err := snapshot(ctx, s.c, nil, nil)
	if err != nil {
		return nil, regWorker{}, err
	}
	rw, ok := g.lookup(name)
	if !ok || !rw.regFound {
		var known []string
		for _, w := range g.view("", time.Time{}).Workers {
			known = append(known, w.Name)
		}
		return nil, regWorker{}, &UnknownWorkerError{Name: name, Known: known}
	}
	return g, rw, nil
}

// leftAlone returns the action names that worker name runs and that no
// other live, available worker does.
func leftAlone(v placement.View, name string) []string {
	var self placement.Worker
	for _, w := range v.Workers {
		if w.Name == name {
			self = w
		}
	}
	var out []string
	for _, a := range self.Actions {
		if !slices.ContainsFunc(v.Workers, func(w placement.Worker) bool {
			return w.Name != name && w.Live && w.State == placement.StateAvailable && w.Handles(a)
		}) {
			out = append(out, a)
		}
	}
	return out
}

// setRegistration writes a worker's registration at its version.
func (c *conn) setRegistration(ctx context.Context, name string, reg registration, version int32) error {
	data, err := jsonMarshal(reg)
	if err != nil {
		return err
	}
	return c.do(ctx, "set "+c.l.worker(name), func() error {
		_, err := c.c.Set(c.l.worker(name), data, version)
		return err
	})
}

// removeWorker deletes a worker's registration at its version, with its
// empty pins index, in one multi-op: a worker that came back meanwhile
// (its live node) or holds pins again makes it fail with ErrNotEmpty.
func (c *conn) removeWorker(ctx context.Context, name string, version int32) error {
	ops := []any{&zk.DeleteRequest{Path: c.l.worker(name), Version: version}}
	if ok, err := c.exists(ctx, c.l.pins(name)); err != nil {
		return err
	} else if ok {
		ops = append([]any{&zk.DeleteRequest{Path: c.l.pins(name), Version: -1}}, ops...)
	}
	_, _, err := c.multi(ctx, "remove worker "+name, ops)
	return err
}

// releasePins deletes the pins worker name holds (placement.EffectReleasePins):
// each pin's allocation, if it still names the worker, and its entry in
// the worker's index. It returns how many allocations it deleted.
func (c *conn) releasePins(ctx context.Context, name string) (int, error) {
	ids, err := c.children(ctx, c.l.pins(name))
	if errors.Is(err, zk.ErrNoNode) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	released := 0
	for _, id := range ids {
		ops := []any{&zk.DeleteRequest{Path: c.l.pin(name, id), Version: -1}}
		data, st, err := c.get(ctx, c.l.alloc(id))
		switch {
		case errors.Is(err, zk.ErrNoNode):
		case err != nil:
			return released, err
		default:
			if a, derr := decodeAlloc(data); derr != nil || a.Worker == name {
				ops = append(ops, &zk.DeleteRequest{Path: c.l.alloc(id), Version: st.Version})
			}
		}
		_, _, err = c.multi(ctx, "release pin "+id, ops)
		switch {
		case err == nil:
			if len(ops) > 1 {
				released++
			}
		case errors.Is(err, zk.ErrNoNode), errors.Is(err, zk.ErrBadVersion):
			// Moved or deleted meanwhile: drop the index entry alone.
			if err := c.delete(ctx, c.l.pin(name, id), -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
				return released, err
			}
		default:
			return released, err
		}
	}
	return released, nil
}

// liftQuarantines deletes the quarantines of worker name that g read,
// each with its action's count lowered by one in the same multi-op when
// the count parses (the count keeps workers from taking the last
// quarantine slot of a name).
func (c *conn) liftQuarantines(ctx context.Context, g *registry, name string) (int, error) {
	g.mu.Lock()
	var actions []string
	for a, ws := range g.quar {
		if _, ok := ws[name]; ok {
			actions = append(actions, a)
		}
	}
	g.mu.Unlock()
	slices.Sort(actions)
	lifted := 0
	for _, a := range actions {
		for attempt := 0; ; attempt++ {
			ops := []any{&zk.DeleteRequest{Path: c.l.quarantine(a, name), Version: -1}}
			data, st, err := c.get(ctx, c.l.quarantineAction(a))
			if err == nil {
				if n, ok := parseCount(data); ok && n > 0 && attempt < 10 {
					ops = append(ops, &zk.SetDataRequest{Path: c.l.quarantineAction(a), Data: []byte(fmt.Sprint(n - 1)), Version: st.Version})
				}
			}
			_, _, err = c.multi(ctx, "lift quarantine "+a+"/"+name, ops)
			if errors.Is(err, zk.ErrBadVersion) {
				continue
			}
			if err == nil {
				lifted++
			} else if !errors.Is(err, zk.ErrNoNode) {
				return lifted, err
			}
			break
		}
	}
	return lifted, nil
}

// DrainReport is what a worker that drained did from when it saw the
// drain: the actions it finished, and the pins it released at the
// drain's timeout.
type DrainReport struct {
	Finished     int64
	PinsReleased int
}

// Drained reports whether Run returned because the worker drained
// (deregistered), and what it did meanwhile.
func (r *Runner) Drained() (DrainReport, bool) {
	r.drainMu.Lock()
	defer r.drainMu.Unlock()
	return r.drained, r.drainedOK
}

// drainLoop follows the worker's own registration until ctx ends: while
// it is draining, the work loop claims nothing new (r.draining); at the
// drain's timeout its pins are released (placement.EventDrainTimeout);
// once nothing runs and it holds no pin, it deletes its registration
// (placement.EventDrained) and calls stop, which ends Run.
func (r *Runner) drainLoop(ctx context.Context, stop context.CancelFunc) {
	regCh := r.reg.subscribe()
	loadCh := r.load.changes.sub()
	expired := make(chan struct{}, 1)
	var (
		since    time.Time // when this worker saw itself draining, on its clock
		base     int64     // actions finished before that
		timedOut bool
		released int
		timer    runner.Timer
		pinsW    <-chan zk.Event
	)
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		rw, ok := r.reg.lookup(r.o.Name)
		if !ok || rw.w.State != placement.StateDraining {
			if r.draining.Swap(false) {
				r.o.Hooks.Placed(runner.PlacementUndrained, "")
				r.log.Info("undrained: taking work again")
				since, timedOut = time.Time{}, false
			}
		} else {
			now := r.o.Clock.Now()
			if !r.draining.Swap(true) {
				r.o.Hooks.Placed(runner.PlacementDraining, "")
				since = now
				_, base = r.load.counts()
				r.log.Info("draining: claiming nothing new but the actions of the pins it holds; it deregisters once nothing runs and it holds no pin",
					"timeout", ms(rw.reg.DrainTimeoutMs))
			}
			if t := ms(rw.reg.DrainTimeoutMs); t > 0 && !timedOut {
				if left := since.Add(t).Sub(now); left > 0 {
					if timer != nil {
						timer.Stop()
					}
					timer = r.o.Clock.AfterFunc(left, func() {
						select {
						case expired <- struct{}{}:
						default:
						}
					})
				} else if _, eff, err := placement.Transition(placement.StateDraining, true, placement.EventDrainTimeout); err == nil && eff&placement.EffectReleasePins != 0 {
					n, err := r.c.releasePins(ctx, r.o.Name)
					if err != nil {
						if ctx.Err() != nil {
							return
						}
						r.log.Error("releasing the pins at the drain's timeout", "err", err)
					} else {
						timedOut = true
						released += n
						r.log.Info("drain timed out: pins released; it exits once its running actions end", "pins_released", n)
					}
				}
			}
			if running, _ := r.load.counts(); running == 0 {
				var pins []string
				err := r.c.do(ctx, "watch the pins index", func() (err error) {
					pins, _, pinsW, err = r.c.c.ChildrenW(r.c.l.pins(r.o.Name))
					return err
				})
				if errors.Is(err, zk.ErrNoNode) {
					pins, err = nil, nil
				}
				if err == nil && len(pins) == 0 {
					if _, _, err := placement.Transition(placement.StateDraining, true, placement.EventDrained); err == nil && r.deregister(ctx, rw.regVer) {
						_, finished := r.load.counts()
						rep := DrainReport{Finished: finished - base, PinsReleased: released}
						r.drainMu.Lock()
						r.drained, r.drainedOK = rep, true
						r.drainMu.Unlock()
						r.log.Info("drained: registration deleted", "actions_finished", rep.Finished, "pins_released", rep.PinsReleased)
						stop()
						return
					}
				} else if err != nil && ctx.Err() == nil {
					r.log.Warn("reading the worker's pins index", "err", err)
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-regCh:
		case <-loadCh:
		case <-expired:
		case <-pinsW:
			pinsW = nil
		}
	}
}

// deregister deletes the drained worker's registration at the version
// its registry read, with its live node and empty pins index, in one
// multi-op: a registration changed meanwhile (an undrain) or a pin taken
// meanwhile makes it fail, and the drain loop decides again.
func (r *Runner) deregister(ctx context.Context, version int32) bool {
	l := r.c.l
	_, _, err := r.c.multi(ctx, "deregister "+r.o.Name, []any{
		&zk.DeleteRequest{Path: l.live(r.o.Name), Version: -1},
		&zk.DeleteRequest{Path: l.pins(r.o.Name), Version: -1},
		&zk.DeleteRequest{Path: l.worker(r.o.Name), Version: version},
	})
	if err != nil && ctx.Err() == nil && !errors.Is(err, zk.ErrBadVersion) && !errors.Is(err, zk.ErrNotEmpty) {
		r.log.Warn("could not delete the drained worker's registration", "err", err)
	}
	return err == nil
}

// WaitDeregistered blocks until worker name has no registration (a drain
// ended with its deregistering, or it was removed), or ctx ends. It
// watches the registration: no poll.
func (s *Store) WaitDeregistered(ctx context.Context, name string) error {
	if err := s.usable("drain"); err != nil {
		return err
	}
	polls := 0
	for {
		var ch <-chan zk.Event
		var ok bool
		err := s.c.do(ctx, "watch "+s.c.l.worker(name), func() (err error) {
			ok, _, ch, err = s.c.c.ExistsW(s.c.l.worker(name))
			return err
		})
		if err != nil {
			return err
		}
		if !ok {
			return nil
		}
		// The watch is the signal; a slow poll backs it up (a watch can
		// be lost with the connection).
		polls++
		t := time.NewTimer(s.c.backoff.Wait(polls))
		select {
		case <-ch:
			polls = 0
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
		t.Stop()
	}
}
