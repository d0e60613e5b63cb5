package kafka

import (
	"container/heap"
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/store"
)

// Retention (Config.Retention): the restarter that owns a partition
// deletes its settled jobs once their clocks are older than the
// retention, a few at a time between the partition's batches. A
// partition keeps its settled jobs in a heap by clock, so a sweep costs
// what it deletes, not what the partition holds.

// sweepMax bounds the jobs one sweep deletes; the next sweep comes at
// once if more are due.
const sweepMax = 64

// sweepEvery is how often a restarter looks for settled jobs to delete.
func sweepEvery(retention time.Duration) time.Duration {
	return min(max(retention/4, 50*time.Millisecond), time.Minute)
}

// expiring is a settled job in a partition's heap: its clock when it
// settled (Unix nanoseconds).
type expiring struct {
	at int64
	id job.ID
}

type expiryHeap []expiring

var _ heap.Interface = (*expiryHeap)(nil)

func (h expiryHeap) Len() int           { return len(h) }
func (h expiryHeap) Less(i, j int) bool { return h[i].at < h[j].at }
func (h expiryHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *expiryHeap) Push(x any)        { *h = append(*h, x.(expiring)) }
func (h *expiryHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

// settledAt records, with p.mu held, that job j of p is settled (a job
// recorded twice is checked when it comes due).
func (p *partition) settledAt(j job.Job) {
	if j.Done() {
		heap.Push(&p.expiry, expiring{at: j.Clock().UnixNano(), id: j.ID()})
	}
}

// expired returns up to n jobs of partition part, which this Store owns,
// that settled before the time before (by their clocks), taking them off
// the partition's heap; more says whether others are due too.
func (s *Store) expired(part int, before time.Time, n int) (ids []job.ID, more bool) {
	p := s.parts[part]
	p.mu.lock(context.Background())
	defer p.mu.unlock()
	if p.token == 0 || p.dirty {
		return nil, false
	}
	limit := before.UnixNano()
	for len(p.expiry) > 0 && p.expiry[0].at < limit {
		if len(ids) == n {
			return ids, true
		}
		x := heap.Pop(&p.expiry).(expiring)
		e := p.jobs[x.id]
		if e == nil || e.broken != nil || e.writing || !e.latest.Done() || e.latest.Clock().UnixNano() != x.at {
			continue // deleted, made again, or recorded twice
		}
		ids = append(ids, x.id)
	}
	return ids, false
}

// sweep deletes the settled jobs of l's partition older than the
// retention, at most sweepMax of them, and reports whether more are due.
func (r *Runner) sweep(ctx context.Context, l *loop, log *slog.Logger) bool {
	ret := r.cfg.retention()
	if ret <= 0 {
		return false
	}
	ids, more := r.st.expired(l.part, time.Now().Add(-ret), sweepMax)
	if len(ids) == 0 {
		return more
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, r.o.Appliers)
	for _, id := range ids {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if err := store.Delete(ctx, r.st, id); err != nil {
				if ctx.Err() == nil {
					log.Warn("deleting a settled job past its retention", "job", id, "err", err)
				}
				return
			}
			log.Debug("settled job deleted: past its retention", "job", id, "retention", ret)
		})
	}
	wg.Wait()
	return more
}
