package storetest

import (
	"context"
	"fmt"
	"sync"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/store"
)

// Counts are the calls a Counting store saw, by method. A call counts
// whether or not it succeeded.
type Counts struct {
	Create, Save, Load, Stat, List, History, Delete, Sweep int
	// Journal counts the calls of JournalIgnored (store.IgnoreJournal).
	Journal int
	// Cached counts the calls of Cached (the in-memory copy a store may
	// keep, runner.Cache): no read of the store.
	Cached int
}

// Reads is every call that reads the store: Load, Stat, List and History.
func (c Counts) Reads() int { return c.Load + c.Stat + c.List + c.History }

// Writes is every call that writes to the store: Create, Save, Delete,
// Sweep and JournalIgnored.
func (c Counts) Writes() int { return c.Create + c.Save + c.Delete + c.Sweep + c.Journal }

// Sub returns c less d: what was counted between two Snapshots.
func (c Counts) Sub(d Counts) Counts {
	return Counts{
		Create: c.Create - d.Create, Save: c.Save - d.Save, Load: c.Load - d.Load, Stat: c.Stat - d.Stat,
		List: c.List - d.List, History: c.History - d.History, Delete: c.Delete - d.Delete, Sweep: c.Sweep - d.Sweep,
		Journal: c.Journal - d.Journal, Cached: c.Cached - d.Cached,
	}
}

func (c Counts) String() string {
	return fmt.Sprintf("create %d, save %d, load %d, stat %d, list %d, history %d, delete %d, sweep %d, journal %d, cached %d",
		c.Create, c.Save, c.Load, c.Stat, c.List, c.History, c.Delete, c.Sweep, c.Journal, c.Cached)
}

// Counting is a store.Store that passes every call to the store it wraps
// and counts them, in all and for each job: a test that asserts how many
// store operations a runner's path costs (a wait, a transition) instead of
// how long it takes, which no loaded machine can make flaky.
//
// It has every optional capability (store.Lister, store.Stater,
// store.Historian, store.IgnoreJournal, store.Deleter, store.Sweeper, and
// Cached, which runner.Cache asks for), each passed on through the helper
// of package store (store.List, store.Stat, ...), so it answers as the
// store under it would: errors.ErrUnsupported for a capability that store
// lacks, Stat from Load for a store that is no Stater, and no cached copy
// for a store without a cache. It is safe for concurrent use.
type Counting struct {
	st store.Store

	mu    sync.Mutex
	all   Counts
	byJob map[job.ID]*Counts
}

var (
	_ store.Lister    = (*Counting)(nil)
	_ store.Stater    = (*Counting)(nil)
	_ store.Historian = (*Counting)(nil)
	_ store.Deleter   = (*Counting)(nil)
	_ store.Sweeper   = (*Counting)(nil)

	_ store.IgnoreJournal = (*Counting)(nil)
)

// NewCounting returns a Counting store that wraps st. Closing it closes st.
func NewCounting(st store.Store) *Counting {
	return &Counting{st: st, byJob: map[job.ID]*Counts{}}
}

// Unwrap returns the store it wraps.
func (c *Counting) Unwrap() store.Store { return c.st }

// Counts returns the calls counted so far, all jobs together.
func (c *Counting) Counts() Counts {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.all
}

// CountsOf returns the calls counted so far that named job id (List and
// Sweep name no job).
func (c *Counting) CountsOf(id job.ID) Counts {
	c.mu.Lock()
	defer c.mu.Unlock()
	if n := c.byJob[id]; n != nil {
		return *n
	}
	return Counts{}
}

// count adds one to the field f picks, in all and for job id ("" for
// none).
func (c *Counting) count(id job.ID, f func(*Counts) *int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	*f(&c.all)++
	if id == "" {
		return
	}
	n := c.byJob[id]
	if n == nil {
		n = &Counts{}
		c.byJob[id] = n
	}
	*f(n)++
}

// Create implements store.Store.
func (c *Counting) Create(ctx context.Context, j job.Job) error {
	c.count(j.ID(), func(n *Counts) *int { return &n.Create })
	return c.st.Create(ctx, j)
}

// Save implements store.Store.
func (c *Counting) Save(ctx context.Context, j job.Job, step job.Step) error {
	c.count(j.ID(), func(n *Counts) *int { return &n.Save })
	return c.st.Save(ctx, j, step)
}

// Load implements store.Store.
func (c *Counting) Load(ctx context.Context, id job.ID) (job.Job, error) {
	c.count(id, func(n *Counts) *int { return &n.Load })
	return c.st.Load(ctx, id)
}

// Stat implements store.Stater, through store.Stat.
func (c *Counting) Stat(ctx context.Context, id job.ID) (store.Info, error) {
	c.count(id, func(n *Counts) *int { return &n.Stat })
	return store.Stat(ctx, c.st, id)
}

// List implements store.Lister, through store.List.
func (c *Counting) List(ctx context.Context, q store.Query) ([]store.Info, error) {
	c.count("", func(n *Counts) *int { return &n.List })
	return store.List(ctx, c.st, q)
}

// History implements store.Historian, through store.LoadHistory.
func (c *Counting) History(ctx context.Context, id job.ID) (store.History, error) {
	c.count(id, func(n *Counts) *int { return &n.History })
	return store.LoadHistory(ctx, c.st, id)
}

// JournalIgnored implements store.IgnoreJournal, through
// store.JournalIgnored.
func (c *Counting) JournalIgnored(ctx context.Context, id job.ID, ig []store.Ignored) error {
	c.count(id, func(n *Counts) *int { return &n.Journal })
	return store.JournalIgnored(ctx, c.st, id, ig)
}

// Delete implements store.Deleter, through store.Delete.
func (c *Counting) Delete(ctx context.Context, id job.ID) error {
	c.count(id, func(n *Counts) *int { return &n.Delete })
	return store.Delete(ctx, c.st, id)
}

// Sweep implements store.Sweeper, through store.Sweep.
func (c *Counting) Sweep(ctx context.Context) (store.SweepResult, error) {
	c.count("", func(n *Counts) *int { return &n.Sweep })
	return store.Sweep(ctx, c.st)
}

// Cached returns the copy of job id that the store under it keeps in
// memory, if it keeps one (runner.Cache); it reads nothing.
func (c *Counting) Cached(id job.ID) (job.Job, bool) {
	c.count(id, func(n *Counts) *int { return &n.Cached })
	if ch, ok := c.st.(interface {
		Cached(job.ID) (job.Job, bool)
	}); ok {
		return ch.Cached(id)
	}
	return job.Job{}, false
}

// Close implements store.Store: it closes the store under it.
func (c *Counting) Close() error { return c.st.Close() }
