package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/batonwf/baton/job"
)

// Memory is a Store in memory, for tests and benchmarks. Jobs are immutable
// values, so it keeps them as they are: Save costs O(results), no encoding.
type Memory struct {
	mu     sync.Mutex
	jobs   map[job.ID]*memEntry
	closed bool
}

type memEntry struct {
	origin job.Job
	steps  []job.Step
	latest job.Job
}

var (
	_ Lister    = (*Memory)(nil)
	_ Historian = (*Memory)(nil)
	_ Deleter   = (*Memory)(nil)
)

// NewMemory returns an empty memory store.
func NewMemory() *Memory {
	return &Memory{jobs: map[job.ID]*memEntry{}}
}

func (m *Memory) lock(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return ErrClosed
	}
	return nil
}

// Create implements Store.
func (m *Memory) Create(ctx context.Context, j job.Job) error {
	if err := CheckCreate(j); err != nil {
		return err
	}
	if err := m.lock(ctx); err != nil {
		return err
	}
	defer m.mu.Unlock()
	if _, ok := m.jobs[j.ID()]; ok {
		return fmt.Errorf("%w: %s", ErrExists, j.ID())
	}
	m.jobs[j.ID()] = &memEntry{origin: j, latest: j}
	return nil
}

// Save implements Store.
func (m *Memory) Save(ctx context.Context, j job.Job, step job.Step) error {
	if err := CheckSave(j, step); err != nil {
		return err
	}
	if err := m.lock(ctx); err != nil {
		return err
	}
	defer m.mu.Unlock()
	e, ok := m.jobs[j.ID()]
	if !ok {
		return fmt.Errorf("%w: %s", ErrNotFound, j.ID())
	}
	if e.latest.Version() != j.Version()-1 {
		return fmt.Errorf("%w: job %s is at version %d, save of version %d", ErrConflict, j.ID(), e.latest.Version(), j.Version())
	}
	if e.latest.Incarnation() != j.Incarnation() {
		return fmt.Errorf("%w: job %s is incarnation %x, save of incarnation %x (the job was deleted and made again)", ErrConflict, j.ID(), e.latest.Incarnation(), j.Incarnation())
	}
	e.steps = append(e.steps, step)
	e.latest = j
	return nil
}

// Load implements Store.
func (m *Memory) Load(ctx context.Context, id job.ID) (job.Job, error) {
	if err := m.lock(ctx); err != nil {
		return job.Job{}, err
	}
	defer m.mu.Unlock()
	e, ok := m.jobs[id]
	if !ok {
		return job.Job{}, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	return e.latest, nil
}

// History implements Historian.
func (m *Memory) History(ctx context.Context, id job.ID) (History, error) {
	if err := m.lock(ctx); err != nil {
		return History{}, err
	}
	defer m.mu.Unlock()
	e, ok := m.jobs[id]
	if !ok {
		return History{}, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	return History{Origin: e.origin, Steps: slices.Clone(e.steps)}, nil
}

// List implements Lister.
func (m *Memory) List(ctx context.Context, q Query) ([]Info, error) {
	if err := m.lock(ctx); err != nil {
		return nil, err
	}
	defer m.mu.Unlock()
	var out []Info
	for _, e := range m.jobs {
		if in := InfoOf(e.latest); q.Match(in) {
			out = append(out, in)
		}
	}
	slices.SortFunc(out, func(a, b Info) int { return strings.Compare(string(a.ID), string(b.ID)) })
	if q.Limit > 0 && len(out) > q.Limit {
		out = out[:q.Limit]
	}
	return out, nil
}

// Delete implements Deleter.
func (m *Memory) Delete(ctx context.Context, id job.ID) error {
	if err := m.lock(ctx); err != nil {
		return err
	}
	defer m.mu.Unlock()
	if _, ok := m.jobs[id]; !ok {
		return fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	delete(m.jobs, id)
	return nil
}

// Close implements Store. It is safe to call twice.
func (m *Memory) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	return nil
}
