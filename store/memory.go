package store

import (
	"context"
	"fmt"
	"slices"
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

var _ Store = (*Memory)(nil)

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
func (m *Memory) Save(ctx context.Context, j job.Job) error {
	if err := CheckSave(j); err != nil {
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
	e.steps = append(e.steps, j.Step())
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

// History implements Store.
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

// List implements Store.
func (m *Memory) List(ctx context.Context) ([]Info, error) {
	if err := m.lock(ctx); err != nil {
		return nil, err
	}
	defer m.mu.Unlock()
	out := make([]Info, 0, len(m.jobs))
	for id, e := range m.jobs {
		out = append(out, Info{ID: id, Version: e.latest.Version(), Status: e.latest.Status()})
	}
	slices.SortFunc(out, func(a, b Info) int {
		switch {
		case a.ID < b.ID:
			return -1
		case a.ID > b.ID:
			return 1
		}
		return 0
	})
	return out, nil
}

// Delete implements Store.
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
