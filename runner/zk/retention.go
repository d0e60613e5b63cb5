package zk

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/batonwf/baton/job"
)

// Retention (Config.Retention). The transition that settles a job also
// creates, in the same multi-op, its node in the index of settled jobs:
// /ROOT/settled/m-YYYYMMDDHHMM/MS-LEN-ID, one bucket per minute (UTC), the
// settling time in milliseconds first, the job's incarnation as data.
// Every worker (a runner with a Registry) sweeps now and then: it lists
// the buckets, and in those that started before now minus the retention,
// the names; for each job settled before that, it deletes the job (its
// incarnation's nodes, then its node, which fails if the job was made
// again under the same ID since), then, once per sweep, the queue entries
// and timers left of the jobs it deleted (dropLeftovers), then the index
// nodes, then the buckets emptied (an hour after the retention, for the
// processes whose clock lags). Deletes are idempotent: workers that
// sweep at once do no harm.
//
// What a sweep costs: one listing of the buckets (one name per minute in
// which a job settled, over the retention), the listings of the expired
// buckets, and for each job it deletes a read and its deletes; at most
// maxSweep jobs per sweep. A sweep runs every tenth of the retention,
// at most every minute and at least every 100 ms; one that reached
// maxSweep is followed by another sooner (a tenth of that), so that a
// backlog drains in bounded steps. Nothing here lists the jobs.
//
// Jobs that settled before their root had the index (made by an older
// baton) are not in it: they stay until deleted by hand.

// maxSweep bounds the jobs one sweep deletes.
const maxSweep = 256

// bucketGrace is how long after the retention an emptied bucket stays.
const bucketGrace = time.Hour

// sweepEvery is the pause between sweeps for a retention of keep.
func sweepEvery(keep time.Duration) time.Duration {
	return min(max(keep/10, 100*time.Millisecond), time.Minute)
}

// ensureBucket creates the index bucket of the minute of t, and the
// index itself, if missing; the last one made is remembered.
func (c *conn) ensureBucket(ctx context.Context, t time.Time) error {
	b := c.l.settledBucket(t)
	c.mu.Lock()
	known := c.bucket == b
	c.mu.Unlock()
	if known {
		return nil
	}
	err := c.ensure(ctx, b)
	if errors.Is(err, zk.ErrNoNode) {
		if err = c.ensure(ctx, c.l.settled()); err == nil {
			err = c.ensure(ctx, b)
		}
	}
	if err != nil {
		return fmt.Errorf("create the index bucket %s: %w", b, err)
	}
	c.mu.Lock()
	c.bucket = b
	c.mu.Unlock()
	return nil
}

// forgetBucket makes ensureBucket check its bucket again.
func (c *conn) forgetBucket() {
	c.mu.Lock()
	c.bucket = ""
	c.mu.Unlock()
}

// retentionLoop sweeps until ctx ends, if the runner is a worker and the
// retention is on.
func (r *Runner) retentionLoop(ctx context.Context) {
	keep := r.c.retention
	if keep <= 0 || r.o.Registry == nil {
		return
	}
	every := sweepEvery(keep)
	wait := rand.N(every) // workers that start together sweep apart
	for {
		sleep(ctx, wait)
		if ctx.Err() != nil {
			return
		}
		n, more, err := r.sweep(ctx, time.Now().Add(-keep))
		if err != nil && ctx.Err() == nil {
			r.log.Warn("retention: sweep failed; trying again later", "err", err)
		}
		if n > 0 {
			r.log.Info("retention: deleted jobs settled longer ago than the retention", "jobs", n, "retention", keep)
		}
		wait = every
		if more {
			wait = every / 10
		}
	}
}

// sweep deletes up to maxSweep jobs that settled before cutoff; more says
// it stopped at that bound.
func (r *Runner) sweep(ctx context.Context, cutoff time.Time) (deleted int, more bool, err error) {
	c := r.c
	buckets, err := c.children(ctx, c.l.settled())
	if errors.Is(err, zk.ErrNoNode) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("list %s: %w", c.l.settled(), err)
	}
	slices.Sort(buckets)
	gone := map[job.ID]bool{}
	var done, empty []string // index nodes handled; buckets emptied
	defer func() {
		if len(gone) > 0 {
			if derr := c.dropLeftovers(ctx, gone); derr != nil {
				err = errors.Join(err, derr)
				return // the index stays: the next sweep tries again
			}
		}
		for _, p := range done {
			if derr := c.delete(ctx, p, -1); derr != nil && !errors.Is(derr, zk.ErrNoNode) {
				err = errors.Join(err, derr)
				return
			}
		}
		for _, p := range empty {
			if derr := c.delete(ctx, p, -1); derr != nil && !errors.Is(derr, zk.ErrNoNode) && !errors.Is(derr, zk.ErrNotEmpty) {
				err = errors.Join(err, derr)
			}
		}
	}()
	for _, b := range buckets {
		start, ok := bucketTime(b)
		if !ok {
			continue
		}
		if start.After(cutoff) {
			break // the buckets sort by time: the rest are younger
		}
		bp := c.l.settled() + "/" + b
		names, err := c.children(ctx, bp)
		if errors.Is(err, zk.ErrNoNode) {
			continue
		}
		if err != nil {
			return deleted, false, fmt.Errorf("list %s: %w", bp, err)
		}
		slices.Sort(names)
		all := true
		for _, name := range names {
			ms, id, ok := settledKey(name)
			if !ok {
				continue // not baton's: left alone
			}
			if ms > cutoff.UnixMilli() {
				all = false
				break
			}
			if len(done) == maxSweep {
				return deleted, true, nil
			}
			data, _, err := c.get(ctx, bp+"/"+name)
			if errors.Is(err, zk.ErrNoNode) {
				continue
			}
			if err != nil {
				return deleted, false, err
			}
			ok, err = r.deleteSettled(ctx, id, string(data))
			if err != nil {
				return deleted, false, err
			}
			if ok {
				gone[id] = true
				deleted++
			}
			done = append(done, bp+"/"+name)
		}
		if all && start.Add(time.Minute+bucketGrace).Before(cutoff) {
			empty = append(empty, bp)
		}
	}
	return deleted, false, nil
}

// deleteSettled deletes job id if its record is that of incarnation inc
// and settled (else it was made again since, or is damaged: left
// alone), and reports whether it did.
func (r *Runner) deleteSettled(ctx context.Context, id job.ID, inc string) (bool, error) {
	c := r.c
	data, st, err := c.get(ctx, c.l.job(id))
	if errors.Is(err, zk.ErrNoNode) {
		return false, nil // deleted already
	}
	if err != nil {
		return false, err
	}
	m, err := decodeMeta(id, data)
	if err != nil || m.Incarnation != inc || m.Status == job.StatusRunning.String() {
		return false, nil
	}
	n, _ := m.incarnation()
	if err := c.deleteTree(ctx, c.l.incarnation(id, n)); err != nil {
		return false, fmt.Errorf("job %s: %w", id, err)
	}
	err = c.delete(ctx, c.l.job(id), st.Version)
	r.st.forget(id)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, zk.ErrNoNode), errors.Is(err, zk.ErrNotEmpty), errors.Is(err, zk.ErrBadVersion):
		return false, nil // deleted by another sweeper, or made again
	}
	return false, fmt.Errorf("job %s: %w", id, err)
}
