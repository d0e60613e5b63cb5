package metrics

import (
	"context"
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/store"
)

// storeOps are the op label's values.
var storeOps = []string{"create", "save", "load", "stat", "list", "history", "delete", "sweep"}

// Store returns st, timed: every operation observes
// baton_store_operation_duration_seconds under its op, errors included,
// and a Save refused with store.ErrConflict counts in
// baton_store_conflicts_total. The store returned has every optional
// capability (store.Lister, Stater, Historian, Deleter, Sweeper, and
// Cached for runner.Cache), each passed on through package store's
// helper, so it answers as st would: errors.ErrUnsupported where st
// lacks a capability, Stat from Load for a store that is no Stater, no
// cached copy for a store that keeps none. Closing it closes st. A nil
// *Metrics returns st.
func (m *Metrics) Store(st store.Store) store.Store {
	if m == nil {
		return st
	}
	t := &timedStore{st: st, m: m, ops: map[string]prometheus.Observer{}}
	for _, op := range storeOps {
		t.ops[op] = m.storeDuration.WithLabelValues(op)
	}
	return t
}

// timedStore is the store Metrics.Store returns.
type timedStore struct {
	st  store.Store
	m   *Metrics
	ops map[string]prometheus.Observer // read only
}

var (
	_ store.Lister    = (*timedStore)(nil)
	_ store.Stater    = (*timedStore)(nil)
	_ store.Historian = (*timedStore)(nil)
	_ store.Deleter   = (*timedStore)(nil)
	_ store.Sweeper   = (*timedStore)(nil)
	_ store.Instant   = (*timedStore)(nil)

	_ store.IgnoreJournal = (*timedStore)(nil)
)

// time observes, under op, the time since start.
func (t *timedStore) time(op string, start time.Time) {
	t.ops[op].Observe(time.Since(start).Seconds())
}

// Unwrap returns the store it wraps.
func (t *timedStore) Unwrap() store.Store { return t.st }

// Instant forwards the wrapped store's answer (store.IsInstant), so that
// a runner on a timed memory store takes the same path as on the bare one.
func (t *timedStore) Instant() bool { return store.IsInstant(t.st) }

func (t *timedStore) Create(ctx context.Context, j job.Job) error {
	defer t.time("create", time.Now())
	return t.st.Create(ctx, j)
}

func (t *timedStore) Save(ctx context.Context, j job.Job, step job.Step) error {
	defer t.time("save", time.Now())
	err := t.st.Save(ctx, j, step)
	if errors.Is(err, store.ErrConflict) {
		t.m.storeConflicts.Inc()
	}
	return err
}

func (t *timedStore) Load(ctx context.Context, id job.ID) (job.Job, error) {
	defer t.time("load", time.Now())
	return t.st.Load(ctx, id)
}

func (t *timedStore) Stat(ctx context.Context, id job.ID) (store.Info, error) {
	defer t.time("stat", time.Now())
	return store.Stat(ctx, t.st, id)
}

func (t *timedStore) List(ctx context.Context, q store.Query) ([]store.Info, error) {
	defer t.time("list", time.Now())
	return store.List(ctx, t.st, q)
}

func (t *timedStore) History(ctx context.Context, id job.ID) (store.History, error) {
	defer t.time("history", time.Now())
	return store.LoadHistory(ctx, t.st, id)
}

func (t *timedStore) Delete(ctx context.Context, id job.ID) error {
	defer t.time("delete", time.Now())
	return store.Delete(ctx, t.st, id)
}

func (t *timedStore) Sweep(ctx context.Context) (store.SweepResult, error) {
	defer t.time("sweep", time.Now())
	return store.Sweep(ctx, t.st)
}

// Cached returns the copy of job id that st keeps in memory, if it keeps
// one (runner.Cache). It reads nothing and is not timed.
func (t *timedStore) Cached(id job.ID) (job.Job, bool) {
	if c, ok := t.st.(interface {
		Cached(job.ID) (job.Job, bool)
	}); ok {
		return c.Cached(id)
	}
	return job.Job{}, false
}

// JournalIgnored passes ignored results on to st, through
// store.JournalIgnored (errors.ErrUnsupported when st keeps none). Not
// timed: it is written only when results were ignored.
func (t *timedStore) JournalIgnored(ctx context.Context, id job.ID, ig []store.Ignored) error {
	return store.JournalIgnored(ctx, t.st, id, ig)
}

// Close closes st.
func (t *timedStore) Close() error { return t.st.Close() }
