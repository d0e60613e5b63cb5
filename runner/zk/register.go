package zk

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/batonwf/baton/placement"
)

// DefaultGrace is Options.Grace's default: how long a down worker's pins
// wait for it before they move.
const DefaultGrace = 30 * time.Second

// loadEvery is the least time between two writes of a worker's live node
// for its load: 100 busy workers write at most 100 times a second.
const loadEvery = time.Second

// checkPlacement checks the placement options: the grace, and each
// limit against the handlers and the capacity.
func (o Options) checkPlacement() error {
	if o.Grace < 0 {
		return fmt.Errorf("zk: Options.Grace is %v; want 0 (the default, %v) or more", o.Grace, DefaultGrace)
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range o.Limits {
			if !yield(n) {
				return
			}
		}
	})
	for _, name := range names {
		n := o.Limits[name]
		switch {
		case o.Registry == nil:
			return fmt.Errorf("zk: limit %s=%d: this runner has no handlers (Options.Registry is nil)", name, n)
		case !slices.Contains(o.Registry.Names(), name):
			return fmt.Errorf("zk: limit %s=%d: no handler for action %q here (it has: %s)", name, n, name, strings.Join(o.Registry.Names(), ", "))
		case n < 1 || n > o.Workers:
			return fmt.Errorf("zk: limit %s=%d: want 1 to the capacity (%d)", name, n, o.Workers)
		}
	}
	return nil
}

// grace returns Options.Grace or its default.
func (o Options) grace() time.Duration {
	if o.Grace == 0 {
		return DefaultGrace
	}
	return o.Grace
}

// batonVersion is the version of baton a registration names: the main
// module's, "(devel)" in a build from a work tree.
func batonVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		return bi.Main.Version
	}
	return ""
}

// NameTakenError is Run's error when a live process already runs a
// worker of the same name on the root. It wraps placement.ErrNameTaken.
type NameTakenError struct {
	Name    string
	Host    string // the live process's host, as its live node says
	PID     int
	Started time.Time
}

func (e *NameTakenError) Error() string {
	return fmt.Sprintf("zk: worker name %q is taken by a live process (host %s, pid %d, started %s): give another --name, or stop that one first",
		e.Name, cmpOrS(e.Host, "?"), e.PID, e.Started.Format(time.RFC3339))
}

func (e *NameTakenError) Unwrap() error { return placement.ErrNameTaken }

func cmpOrS(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// liveData returns the live node's data for the load now, and the load.
func (r *Runner) liveData() []byte {
	data, _ := json.Marshal(liveNode{Host: r.host, PID: os.Getpid(), Started: r.started, Load: publishedLoad(r.load.load())})
	return data
}

// register registers the worker (placement.EventRegister): it creates
// its registration, or moves the one it finds by a compare-and-swap on
// its version (a restart under the same name keeps the admin state the
// registration holds: a draining worker stays draining), together with
// its ephemeral live node and its pins index, in one multi-op. A live
// node of another session means a live process has the name: that is a
// NameTakenError, and nothing is written. A registration that does not
// parse is overwritten.
func (r *Runner) register(ctx context.Context) error {
	l := r.c.l
	name := r.o.Name
	for {
		data, st, err := r.c.get(ctx, l.worker(name))
		found := err == nil
		if err != nil && !errors.Is(err, zk.ErrNoNode) {
			return fmt.Errorf("zk: register worker %s: %w", name, err)
		}
		from := placement.StateNone
		var old registration
		if found {
			if old, from, err = decodeRegistration(data); err != nil {
				r.log.Warn("the worker's registration does not parse: registering afresh", "node", l.worker(name), "err", err)
			}
		}
		ldata, lst, err := r.c.get(ctx, l.live(name))
		live := err == nil
		if err != nil && !errors.Is(err, zk.ErrNoNode) {
			return fmt.Errorf("zk: register worker %s: %w", name, err)
		}
		if live && lst.EphemeralOwner == r.c.c.SessionID() {
			live = false // ours: a retry after a lost reply, or a registration again
		}
		to, _, err := placement.Transition(from, live, placement.EventRegister)
		if errors.Is(err, placement.ErrNameTaken) {
			n, _ := decodeLive(ldata)
			return &NameTakenError{Name: name, Host: n.Host, PID: n.PID, Started: n.Started}
		}
		if err != nil {
			return fmt.Errorf("zk: register worker %s: %w", name, err)
		}
		reg := registration{State: to.String(), Capacity: r.o.Workers, Limits: r.o.Limits, GraceMs: r.o.grace().Milliseconds(),
			Actions: r.o.Registry.Names(), Baton: batonVersion()}
		if to == placement.StateDraining {
			reg.DrainTimeoutMs = old.DrainTimeoutMs
		}
		slices.Sort(reg.Actions)
		rdata, _ := json.Marshal(reg)
		var ops []any
		if found {
			ops = append(ops, &zk.SetDataRequest{Path: l.worker(name), Data: rdata, Version: st.Version})
		} else {
			ops = append(ops, r.c.createOp(l.worker(name), rdata, 0))
		}
		hasPins := false
		if found {
			if hasPins, err = r.c.exists(ctx, l.pins(name)); err != nil {
				return fmt.Errorf("zk: register worker %s: %w", name, err)
			}
		}
		if !hasPins {
			ops = append(ops, r.c.createOp(l.pins(name), nil, 0))
		}
		ld := r.liveData()
		if lst != nil && lst.EphemeralOwner == r.c.c.SessionID() {
			ops = append(ops, &zk.SetDataRequest{Path: l.live(name), Data: ld, Version: -1})
		} else {
			ops = append(ops, r.c.createOp(l.live(name), ld, zk.FlagEphemeral))
		}
		r.liveMu.Lock()
		_, _, err = r.c.multi(ctx, "register worker "+name, ops)
		if err == nil {
			r.lastLive = ld
		}
		r.liveMu.Unlock()
		switch {
		case err == nil:
			r.log.Info("worker registered", "state", to.String(), "capacity", r.o.Workers, "root", l.root)
			return nil
		case errors.Is(err, zk.ErrBadVersion), errors.Is(err, zk.ErrNodeExists), errors.Is(err, zk.ErrNoNode):
			// Changed meanwhile (a drain, another process, our own
			// retried write): read again.
			if err := ctx.Err(); err != nil {
				return err
			}
			continue
		default:
			return fmt.Errorf("zk: register worker %s: %w", name, err)
		}
	}
}

// unregisterLive deletes the worker's live node as its process stops
// (SIGTERM, Close): its registration stays, and its pins wait for it for
// its grace, counted by every worker from when it saw the node vanish.
func (r *Runner) unregisterLive() {
	p := r.c.l.live(r.o.Name)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, st, err := r.c.get(ctx, p)
	if err != nil || st.EphemeralOwner != r.c.c.SessionID() {
		return // gone, or another process's (never ours to delete)
	}
	if err := r.c.delete(ctx, p, st.Version); err != nil && !errors.Is(err, zk.ErrNoNode) {
		r.log.Debug("could not delete the worker's live node", "err", err)
	}
}

// publishLoop writes the worker's load into its live node when it
// changed, at most once every loadEvery, until ctx ends.
func (r *Runner) publishLoop(ctx context.Context) {
	ch := r.load.changes.sub()
	var last time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-ch:
		}
		if wait := loadEvery - time.Since(last); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
		}
		r.publish(ctx)
		last = time.Now()
	}
}

// publish writes the live node if what it would hold changed since the
// last write.
func (r *Runner) publish(ctx context.Context) {
	data := r.liveData()
	r.liveMu.Lock()
	defer r.liveMu.Unlock()
	if bytes.Equal(data, r.lastLive) {
		return
	}
	_, st, err := r.c.get(ctx, r.c.l.live(r.o.Name))
	if err != nil || st.EphemeralOwner != r.c.c.SessionID() {
		return // not registered in this session (yet): register writes the load
	}
	err = r.c.do(ctx, "publish the load", func() error {
		_, err := r.c.c.Set(r.c.l.live(r.o.Name), data, st.Version)
		return err
	})
	switch {
	case err == nil:
		r.lastLive = data
	case ctx.Err() == nil && !errors.Is(err, zk.ErrBadVersion) && !errors.Is(err, zk.ErrNoNode):
		r.log.Warn("could not publish the worker's load", "err", err)
	}
}
