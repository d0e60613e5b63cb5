package runner

import (
	"context"
	"sync"

	"github.com/batonwf/baton/job"
)

// ApplyFunc applies one batch of the items waiting for job id (results,
// with whatever a runner keeps beside each): one Engine.Apply or
// ApplyWith, as a rule. The batch holds at most ApplierOptions.MaxBatch
// items, in the order they were added. It belongs to the Applier and is
// valid only until the call returns (the Applier reuses its array).
//
// again is what the call wants applied once more (results that lost too
// many conflicts, say): it goes back to the head of the job's queue,
// before what was added meanwhile, and is applied in the next batch. It
// may share batch's array.
type ApplyFunc[T any] func(ctx context.Context, id job.ID, batch []T) (again []T)

// ApplierOptions configures an Applier of items of type T.
type ApplierOptions[T any] struct {
	// Job names the job an item belongs to; required.
	Job func(T) job.ID
	// MaxBatch bounds the items of one batch; default 4096.
	MaxBatch int
	// Size, with MaxBytes, bounds a batch's bytes too: a batch takes
	// items while their sizes add up to at most MaxBytes, and at least
	// one. Nil leaves the bytes unbounded.
	Size     func(T) int
	MaxBytes int
}

// Applier is the per-job applier every runner needs, written once: items
// for a job queue up; one goroutine at a time applies a job's items, a
// batch at a time, until none is left; items added while it applies a
// batch join its next batch, so results that end while a transition of
// their job is written are applied together in the next (one Restart,
// one commit), and the applies of one job never overlap.
//
// Add applies in the calling goroutine, Go in one it starts; either way a
// job has at most one goroutine applying its items, with the ApplyFunc
// given by the call that started it. Wait waits until no job has items.
// Its methods are safe for concurrent use. Once warm, adding and applying
// allocates nothing: the queues of drained jobs, and their small arrays,
// are kept for the next jobs.
type Applier[T any] struct {
	o ApplierOptions[T]

	mu      sync.Mutex
	jobs    map[job.ID]*jobQueue[T] // the jobs with items waiting or applied
	idle    []*jobQueue[T]          // drained queues, for reuse (at most maxIdleQueues)
	busy    int                     // len(jobs): the jobs some goroutine applies
	drained chan struct{}           // closed when busy drops to 0, if someone waits
}

// jobQueue holds the items of one job that wait to be applied. Its items
// go through two arrays in turn: while a batch is applied from one, items
// arriving meanwhile gather in the other (spare, swapped in for items).
type jobQueue[T any] struct {
	items []T
	spare []T // empty, or nil: an array to swap in for items
	// last is the size of the last batch taken: the array items start
	// again in has room for as many, so that a backlog that grows while a
	// batch is applied does not grow its array one doubling at a time.
	last int
}

// maxIdleQueues bounds the drained queues an Applier keeps for reuse, and
// maxReusedItems the arrays they keep (in items): more than a few jobs'
// worth of memory is not kept for speed.
const (
	maxIdleQueues  = 64
	maxReusedItems = 16
)

// NewApplier returns an Applier.
func NewApplier[T any](o ApplierOptions[T]) *Applier[T] {
	if o.Job == nil {
		panic("runner: NewApplier needs ApplierOptions.Job")
	}
	if o.MaxBatch <= 0 {
		o.MaxBatch = 4096
	}
	if o.Size == nil || o.MaxBytes <= 0 {
		o.Size, o.MaxBytes = nil, 0
	}
	return &Applier[T]{o: o, jobs: map[job.ID]*jobQueue[T]{}}
}

// Add queues items for their jobs, and applies with apply, in the calling
// goroutine, the items of each job that no goroutine was applying, until
// none of them is left; it returns then. The items of a job another
// goroutine applies are applied by that goroutine (with its ApplyFunc),
// maybe after Add returns.
func (a *Applier[T]) Add(ctx context.Context, apply ApplyFunc[T], items ...T) {
	var claimed [4]job.ID
	for _, id := range a.queue(claimed[:0], items) {
		a.drain(ctx, apply, id)
	}
}

// Go is Add in the background: it queues items for their jobs, and starts
// a goroutine that applies the items of each job that no goroutine was
// applying. It returns at once.
func (a *Applier[T]) Go(ctx context.Context, apply ApplyFunc[T], items ...T) {
	var claimed [4]job.ID
	for _, id := range a.queue(claimed[:0], items) {
		go a.drain(ctx, apply, id)
	}
}

// Queue queues one item for its job, as Add does, but applies nothing: it
// reports whether no goroutine was applying the job's items. Then the
// caller holds the job: it must call Drain for it (at once, or after
// letting go of what it holds, say a slot of its own), and until it does,
// the job's items wait, those added meanwhile included. Otherwise the
// goroutine applying the job applies the item too.
func (a *Applier[T]) Queue(it T) (claimed bool) {
	var claimedBuf [1]job.ID
	return len(a.queue(claimedBuf[:0], []T{it})) > 0
}

// Drain applies, with apply, the items of job id, which the caller
// claimed with Queue, until none is left; it returns then.
func (a *Applier[T]) Drain(ctx context.Context, apply ApplyFunc[T], id job.ID) {
	a.drain(ctx, apply, id)
}

// Wait blocks until no job has items waiting or being applied: those
// added before it, and those added while it waits.
func (a *Applier[T]) Wait() {
	a.mu.Lock()
	if a.busy == 0 {
		a.mu.Unlock()
		return
	}
	if a.drained == nil {
		a.drained = make(chan struct{})
	}
	ch := a.drained
	a.mu.Unlock()
	<-ch
}

// queue appends items to their jobs' queues and returns, appended to
// mine, the jobs that had none: the caller applies them.
func (a *Applier[T]) queue(mine []job.ID, items []T) []job.ID {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, it := range items {
		id := a.o.Job(it)
		q := a.jobs[id]
		if q == nil {
			if n := len(a.idle); n > 0 {
				q, a.idle[n-1] = a.idle[n-1], nil
				a.idle = a.idle[:n-1]
			} else {
				q = &jobQueue[T]{}
			}
			a.jobs[id] = q
			a.busy++
			mine = append(mine, id)
		}
		if len(q.items) == 0 && cap(q.items) < q.last {
			q.items = make([]T, 0, q.last)
		}
		q.items = append(q.items, it)
	}
	return mine
}

// drain applies the items of job id, which the calling goroutine has
// claimed, until none is left: everything that piled up while it applied
// the previous batch goes in the next.
func (a *Applier[T]) drain(ctx context.Context, apply ApplyFunc[T], id job.ID) {
	a.mu.Lock()
	q := a.jobs[id]
	for {
		if len(q.items) == 0 {
			q.last = 0 // the next job's is its own
			delete(a.jobs, id)
			if len(a.idle) < maxIdleQueues {
				a.idle = append(a.idle, q)
			}
			a.busy--
			if a.busy == 0 && a.drained != nil {
				close(a.drained)
				a.drained = nil
			}
			a.mu.Unlock()
			return
		}
		batch := q.items
		n := a.batchLen(batch)
		q.last = n
		whole := n == len(batch)
		if whole {
			q.items, q.spare = q.spare, nil
		} else {
			// The rest moves to an array of its own, so that every array
			// a queue holds starts with its first item.
			batch = batch[:n:n]
			q.items = append([]T(nil), q.items[n:]...)
		}
		a.mu.Unlock()
		again := apply(ctx, id, batch)
		a.mu.Lock()
		if len(again) > 0 {
			// Copied before batch's array is reused: again may share it.
			q.items = append(append(make([]T, 0, len(again)+len(q.items)), again...), q.items...)
		}
		if whole && cap(batch) <= maxReusedItems && q.spare == nil {
			// Applied: nothing holds the array now. Emptied, it is the
			// next spare.
			clear(batch)
			q.spare = batch[:0]
		}
	}
}

// batchLen returns how many of items, from the first, the next batch
// takes.
func (a *Applier[T]) batchLen(items []T) int {
	n := min(len(items), a.o.MaxBatch)
	if a.o.Size == nil {
		return n
	}
	size := 0
	for i := range n {
		size += a.o.Size(items[i])
		if i > 0 && size > a.o.MaxBytes {
			return i
		}
	}
	return n
}
