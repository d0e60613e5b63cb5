package zk

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/placement"
)

// WorkerInfo is a registered worker (see the package doc, Placement):
// its registration, whether a process runs it now and what that process
// published, and what it runs and holds.
type WorkerInfo struct {
	Name     string
	Capacity int      // actions it runs at once
	Actions  []string // the action names it has handlers for
	PID      int
	Host     string
	Started  time.Time
	Running  []Claim // the actions it holds claims on

	// State is its status at the time of the listing (placement's
	// Worker.Status): available, draining, down or quarantined; StateNone
	// for a registration that does not parse (Unreadable).
	State      placement.State
	Unreadable bool
	Live       bool
	// GraceLeft is, for a worker that is down, how long its pins still
	// wait for it, counted from when this listing first saw it down (so,
	// from a client that only lists: its whole grace).
	GraceLeft time.Duration
	Grace     time.Duration
	Limits    map[string]int
	// Load is what it last published: its running actions per name and
	// its counters.
	Load placement.Load
	// Quarantined maps the action names it is quarantined for to when
	// each quarantine ends (this process's clock).
	Quarantined map[string]time.Time
	// Pins is the number of pins it holds (its pins index).
	Pins int
	// DrainTimeout is the timeout of its drain, if one was given.
	DrainTimeout time.Duration
}

// Claim is an action a worker runs.
type Claim struct {
	Job    job.ID
	Action string // the action ID
}

// Workers lists the registered workers on the store's root, live or
// down, sorted by name, with the actions each holds claims on. A claim
// whose worker is not registered (it is being released) is listed under a
// worker named after it with no registration (StateNone).
func (s *Store) Workers(ctx context.Context) ([]WorkerInfo, error) {
	if err := s.usable("workers"); err != nil {
		return nil, err
	}
	g, err := snapshot(ctx, s.c, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("list workers: %w", err)
	}
	now := time.Now()
	by := map[string]*WorkerInfo{}
	for _, w := range g.view("", now).Workers {
		rw, _ := g.lookup(w.Name)
		wi := &WorkerInfo{Name: w.Name, Capacity: w.Capacity, Actions: w.Actions, PID: rw.live.PID, Host: rw.live.Host,
			Started: rw.live.Started, State: w.Status(now), Unreadable: rw.regFound && w.State == placement.StateNone,
			Live: w.Live, GraceLeft: w.GraceLeft(now), Grace: w.Grace, Limits: w.Limits, Load: w.Load,
			Quarantined: w.Quarantined, DrainTimeout: ms(rw.reg.DrainTimeoutMs)}
		if wi.Unreadable {
			wi.State = placement.StateNone
		}
		pins, err := s.c.children(ctx, s.c.l.pins(w.Name))
		if err != nil && !errors.Is(err, zk.ErrNoNode) {
			return nil, fmt.Errorf("list workers: %w", err)
		}
		wi.Pins = len(pins)
		by[w.Name] = wi
	}
	claims, err := s.c.children(ctx, s.c.l.claims())
	if err != nil {
		return nil, fmt.Errorf("list claims: %w", err)
	}
	for _, cl := range claims {
		_, _, id, aid, ok := entryKey(cl)
		if !ok {
			continue
		}
		owner, _, err := s.c.get(ctx, s.c.l.claim(cl))
		if errors.Is(err, zk.ErrNoNode) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("list claims: %w", err)
		}
		w := by[string(owner)]
		if w == nil {
			w = &WorkerInfo{Name: string(owner)}
			by[string(owner)] = w
		}
		w.Running = append(w.Running, Claim{Job: id, Action: aid})
	}
	out := make([]WorkerInfo, 0, len(by))
	for _, w := range by {
		out = append(out, *w)
	}
	slices.SortFunc(out, func(a, b WorkerInfo) int {
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	return out, nil
}

// Queued counts the queue entries on the store's root: actions waiting or
// running.
func (s *Store) Queued(ctx context.Context) (int, error) {
	names, err := s.c.children(ctx, s.c.l.queue())
	if err != nil {
		return 0, fmt.Errorf("list the queue: %w", err)
	}
	return len(names), nil
}

// QueueEntry is a queue entry: an action waiting, or running (claimed).
type QueueEntry struct {
	Entry    string // its node's name
	Job      job.ID
	Action   string // the action ID
	Priority int
	At       time.Time // when it was queued (the clock of the machine that queued it)
	// Worker is the worker that claimed it; "" while it waits.
	Worker string
}

// Oldest returns the first n entries of the queue in the order workers
// take them (highest priority first, then the oldest), with the worker
// that claimed each, if any. It lists the queue once: its cost grows
// with the queue's length, as Queued's does.
func (s *Store) Oldest(ctx context.Context, n int) ([]QueueEntry, error) {
	if err := s.usable("queue"); err != nil {
		return nil, err
	}
	names, err := s.c.children(ctx, s.c.l.queue())
	if err != nil {
		return nil, fmt.Errorf("list the queue: %w", err)
	}
	slices.Sort(names)
	out := []QueueEntry{}
	for _, name := range names {
		if len(out) == n {
			break
		}
		rk, ms, id, aid, ok := entryKey(name)
		if !ok {
			continue
		}
		q := QueueEntry{Entry: name, Job: id, Action: aid, Priority: 10000 - rk, At: time.UnixMilli(ms)}
		owner, _, err := s.c.get(ctx, s.c.l.claim(name))
		switch {
		case err == nil:
			q.Worker = string(owner)
		case !errors.Is(err, zk.ErrNoNode):
			return nil, fmt.Errorf("read claim %s: %w", name, err)
		}
		out = append(out, q)
	}
	return out, nil
}
