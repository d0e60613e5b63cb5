package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/batonwf/baton/job"
)

// Memory is a Store in memory, for tests and benchmarks. Jobs are immutable
// values, so it keeps them as they are: Save costs O(results), no encoding.
type Memory struct {
	mu     sync.Mutex
	jobs   map[job.ID]*memEntry
	closed bool

	// ids are the IDs of jobs, sorted, for List: it finds where a query
	// starts by binary search and reads the jobs it selects, not all of
	// them. Creates append to added, and Deletes set dirty; the next List
	// sorts the added IDs in (and drops the deleted), so that Create and
	// Delete stay O(1).
	ids   []job.ID
	added []job.ID
	dirty bool
}

// A job's history gets room for as many steps as it has leaves (a step
// each, as a rule), at least firstSteps and at most maxFirstSteps, at its
// first step.
const (
	firstSteps    = 8
	maxFirstSteps = 64
)

type memEntry struct {
	origin job.Job
	steps  []job.Step
	latest job.Job
	// created and updated are when Create and the last write were
	// called, in UTC (Info.Created, Info.Updated).
	created, updated time.Time
	// ignored is the journal of ignored results, the newest MaxIgnored.
	ignored []Ignored
}

// info is what List and Stat tell of the entry.
func (e *memEntry) info() Info {
	in := InfoOf(e.latest)
	in.Created, in.Updated = e.created, e.updated
	return in
}

var (
	_ Lister        = (*Memory)(nil)
	_ Stater        = (*Memory)(nil)
	_ IgnoreJournal = (*Memory)(nil)
	_ Historian     = (*Memory)(nil)
	_ Deleter       = (*Memory)(nil)
	_ Instant       = (*Memory)(nil)
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
	now := time.Now().UTC()
	m.jobs[j.ID()] = &memEntry{origin: j, latest: j, created: now, updated: now}
	m.added = append(m.added, j.ID())
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
	if e.steps == nil {
		// Room for the steps to come at once: growing one step at a time
		// from none cost an allocation every few steps of a short job.
		_, leaves := j.Progress()
		e.steps = make([]job.Step, 0, min(max(leaves, firstSteps), maxFirstSteps))
	}
	e.steps = append(e.steps, step)
	e.latest = j
	e.updated = time.Now().UTC()
	return nil
}

// Instant implements Instant: a Memory never waits for I/O.
func (m *Memory) Instant() bool { return true }

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
	return History{Origin: e.origin, Steps: slices.Clone(e.steps), Ignored: slices.Clone(e.ignored)}, nil
}

// JournalIgnored implements IgnoreJournal.
func (m *Memory) JournalIgnored(ctx context.Context, id job.ID, ig []Ignored) error {
	if err := m.lock(ctx); err != nil {
		return err
	}
	defer m.mu.Unlock()
	e, ok := m.jobs[id]
	if !ok {
		return fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	e.ignored = append(e.ignored, ig...)
	if n := len(e.ignored) - MaxIgnored; n > 0 {
		e.ignored = slices.Delete(e.ignored, 0, n)
	}
	return nil
}

// Stat implements Stater.
func (m *Memory) Stat(ctx context.Context, id job.ID) (Info, error) {
	if err := m.lock(ctx); err != nil {
		return Info{}, err
	}
	defer m.mu.Unlock()
	e, ok := m.jobs[id]
	if !ok {
		return Info{}, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	return e.info(), nil
}

// List implements Lister. It starts at the first ID the query can select
// (found by binary search) and stops at the end of the prefix or at the
// limit: it reads the jobs it passes over, not the whole store.
func (m *Memory) List(ctx context.Context, q Query) ([]Info, error) {
	if err := m.lock(ctx); err != nil {
		return nil, err
	}
	defer m.mu.Unlock()
	m.sortIDs()
	start := q.Prefix
	if string(q.After) >= start {
		start = string(q.After) + "\x00" // the first ID after q.After
	}
	i, _ := slices.BinarySearch(m.ids, job.ID(start))
	var out []Info
	for _, id := range m.ids[i:] {
		if !strings.HasPrefix(string(id), q.Prefix) || q.Limit > 0 && len(out) == q.Limit {
			break
		}
		if in := m.jobs[id].info(); q.Match(in) {
			out = append(out, in)
		}
	}
	return out, nil
}

// sortIDs brings m.ids up to date: the IDs of every job, sorted. m.mu is
// held.
func (m *Memory) sortIDs() {
	if m.dirty {
		m.ids = slices.DeleteFunc(m.ids, func(id job.ID) bool { return m.jobs[id] == nil })
		m.added = slices.DeleteFunc(m.added, func(id job.ID) bool { return m.jobs[id] == nil })
		m.dirty = false
	}
	if len(m.added) == 0 {
		return
	}
	slices.Sort(m.added)
	m.added = slices.Compact(m.added) // deleted and created again
	merged := make([]job.ID, 0, len(m.ids)+len(m.added))
	i, k := 0, 0
	for i < len(m.ids) || k < len(m.added) {
		switch {
		case k == len(m.added) || i < len(m.ids) && m.ids[i] < m.added[k]:
			merged = append(merged, m.ids[i])
			i++
		case i < len(m.ids) && m.ids[i] == m.added[k]: // deleted and created again
			k++
		default:
			merged = append(merged, m.added[k])
			k++
		}
	}
	m.ids, m.added = merged, m.added[:0]
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
	m.dirty = true
	return nil
}

// Close implements Store. It is safe to call twice.
func (m *Memory) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	return nil
}
