package bolt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/store"
	"go.etcd.io/bbolt"
)

// Retention. A sweep walks the jobs bucket from where the previous one
// stopped, reading at most sweepScan meta records, and deletes, in one
// write transaction shared with the Saves waiting then (group commit), the
// settled jobs whose clock is older than the retention, at most
// sweepDelete of them. So each sweep costs bounded work whatever the store
// holds, and a round through the whole store takes jobs/sweepScan sweeps.
const (
	sweepScan   = 1024
	sweepDelete = 256
)

// sweepPause bounds how long a runner waits between two rounds through the
// store: a tenth of the retention, from a second to a minute. A settled job
// is deleted within about retention + sweepPause(retention) of its clock
// (later when a round takes longer than that).
func sweepPause(retention time.Duration) time.Duration {
	return min(max(retention/10, time.Second), time.Minute)
}

// Sweep implements store.Sweeper: it deletes the settled jobs whose clock
// (the time of the last result they applied, job.Job.Clock) is older than
// Options.Retention, as measured by Options.Now. Each call reads at most
// 1,024 jobs' meta records, going on from where the previous call
// stopped, and deletes at most 256 jobs, in one write transaction; its
// result's Next is 0 while the round through the store is not over, then
// a tenth of the retention (at least a second, at most a minute). A job
// saved by a baton from before this record format, whose meta record has
// no clock, is loaded to learn it. A job that is deleted, made again or
// saved between the walk and the deletion is left alone, and so is a
// damaged one (List shows it as damaged; Delete removes it).
//
// With Retention zero (the default) Sweep returns an error wrapping
// errors.ErrUnsupported, and so does a read-only Store.
func (s *Store) Sweep(ctx context.Context) (store.SweepResult, error) {
	if s.retention <= 0 {
		return store.SweepResult{}, fmt.Errorf("store/bolt: %s keeps every job (no Options.Retention): %w", s.path, errors.ErrUnsupported)
	}
	if s.readOnly {
		return store.SweepResult{}, fmt.Errorf("store/bolt: %s: %w: %w", s.path, ErrReadOnly, errors.ErrUnsupported)
	}
	if err := s.enter(ctx, ""); err != nil {
		return store.SweepResult{}, err
	}
	defer s.mu.RUnlock()
	s.sweepMu.Lock()
	defer s.sweepMu.Unlock()
	cutoff := s.now().Add(-s.retention).UnixNano()

	// Walk: the settled jobs that are due, and those whose clock the meta
	// record does not know.
	type due struct {
		id      job.ID
		inc, v  uint64
		unknown bool
	}
	var (
		found []due
		last  []byte // the last key read
		end   bool   // the walk reached the end of the jobs
	)
	err := s.view(ctx, "", func(tx *bbolt.Tx) error {
		found, last, end = nil, nil, true
		jobs := tx.Bucket(jobsBucket)
		c := jobs.Cursor()
		k, v := c.First()
		if s.sweepFrom != nil {
			k, v = c.Seek(s.sweepFrom)
			if k != nil && bytes.Equal(k, s.sweepFrom) {
				k, v = c.Next()
			}
		}
		for n := 0; k != nil; k, v = c.Next() {
			if n == sweepScan || len(found) == sweepDelete {
				end = false
				break
			}
			n++
			last = bytes.Clone(k)
			if v != nil {
				continue // damaged: not known to have finished, left alone
			}
			id := job.ID(k)
			m, err := s.readMeta(jobs.Bucket(k), id)
			if err != nil {
				continue // damaged, as above: List shows it, Delete removes it
			}
			if !m.status.Settled() || m.clock >= cutoff {
				continue
			}
			found = append(found, due{id: id, inc: m.inc, v: m.version, unknown: m.clock == 0})
		}
		return nil
	})
	if err != nil {
		return store.SweepResult{}, s.txErr("", err)
	}
	if end {
		s.sweepFrom = nil
	} else {
		s.sweepFrom = last
	}
	// A meta record without a clock: the job's own says.
	keep := found[:0]
	for _, d := range found {
		if d.unknown {
			j, err := s.load(ctx, d.id)
			if errors.Is(err, store.ErrNotFound) || errors.Is(err, job.ErrCorrupt) {
				continue // deleted since, or damaged: left alone
			}
			if err != nil {
				return store.SweepResult{}, err
			}
			if c := j.Clock(); c.IsZero() || c.UnixNano() >= cutoff || j.Version() != d.v {
				continue // no clock at all: kept
			}
		}
		keep = append(keep, d)
	}
	found = keep

	res := store.SweepResult{Next: sweepPause(s.retention)}
	if !end {
		res.Next = 0
	}
	if len(found) == 0 {
		return res, nil
	}
	var deleted []job.ID
	err = s.commit(&groupWrite{
		ctx: ctx,
		apply: func(tx *bbolt.Tx, w *writes) error {
			deleted = deleted[:0]
			jobs := tx.Bucket(jobsBucket)
			for _, d := range found {
				jb := jobs.Bucket([]byte(d.id))
				if jb == nil {
					continue
				}
				m, err := s.readMeta(jb, d.id)
				if err != nil || m.inc != d.inc || m.version != d.v {
					continue // saved, or deleted and made again, since the walk
				}
				if err := jobs.DeleteBucket([]byte(d.id)); err != nil {
					return err
				}
				deleted = append(deleted, d.id)
			}
			return nil
		},
		committed: func() {
			for _, id := range deleted {
				s.cache.drop(id)
				s.origins.drop(id)
			}
		},
	})
	if err != nil {
		return store.SweepResult{}, s.txErr("", err)
	}
	res.Deleted = len(deleted)
	return res, nil
}
