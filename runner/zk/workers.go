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
)

// WorkerInfo is what a live worker announced, and what it runs now.
type WorkerInfo struct {
	Name     string
	Capacity int      // actions it runs at once
	Actions  []string // the action names it has handlers for
	PID      int
	Host     string
	Started  time.Time
	Running  []Claim // the actions it holds claims on
}

// Claim is an action a worker runs.
type Claim struct {
	Job    job.ID
	Action string // the action ID
}

// Workers lists the live workers on the store's root, sorted by name,
// with the actions each holds claims on. A claim whose worker node is gone
// (it is being released) is listed under a worker named after it with no
// announcement.
func (s *Store) Workers(ctx context.Context) ([]WorkerInfo, error) {
	if err := s.usable("workers"); err != nil {
		return nil, err
	}
	names, err := s.c.children(ctx, s.c.l.workers())
	if err != nil {
		return nil, fmt.Errorf("list workers: %w", err)
	}
	by := map[string]*WorkerInfo{}
	for _, n := range names {
		data, _, err := s.c.get(ctx, s.c.l.worker(n))
		if errors.Is(err, zk.ErrNoNode) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("list workers: %w", err)
		}
		var a announcement
		w := &WorkerInfo{Name: n}
		if json.Unmarshal(data, &a) == nil {
			w.Capacity, w.Actions, w.PID, w.Host, w.Started = a.Capacity, a.Actions, a.PID, a.Host, a.Started
		}
		by[n] = w
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
