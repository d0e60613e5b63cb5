package bolt

import (
	"context"
	"fmt"

	"go.etcd.io/bbolt"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/store"
)

// ignoredBucket holds a job's journal of ignored results:
// jobs/<id>/ignored/<seq>, seq the bucket's own sequence as 8 big-endian
// bytes, so records sort in the order they came. A job that never had a
// result ignored (and every job of a file written before baton kept
// them) has no such bucket.
var ignoredBucket = []byte("ignored")

var _ store.IgnoreJournal = (*Store)(nil)

// JournalIgnored implements store.IgnoreJournal: it appends the records
// (store.EncodeIgnored) and deletes the oldest past store.MaxIgnored, in
// one transaction of its own.
func (s *Store) JournalIgnored(ctx context.Context, id job.ID, ig []store.Ignored) error {
	if len(ig) == 0 {
		return nil
	}
	if err := s.enter(ctx, id); err != nil {
		return err
	}
	defer s.mu.RUnlock()
	err := s.update(ctx, func(tx *bbolt.Tx, w *writes) error {
		jb, err := s.jobBucket(tx, id)
		if err != nil {
			return err
		}
		ib, err := jb.CreateBucketIfNotExists(ignoredBucket)
		if err != nil {
			return err
		}
		ib.FillPercent = 1 // keys only ever grow
		for _, x := range ig {
			seq, err := ib.NextSequence()
			if err != nil {
				return err
			}
			if err := w.put(ib, stepKey(seq), store.EncodeIgnored(x)); err != nil {
				return err
			}
		}
		n := 0
		c := ib.Cursor()
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			n++
		}
		for k, _ := c.First(); k != nil && n > store.MaxIgnored; k, _ = c.First() {
			if err := c.Delete(); err != nil {
				return err
			}
			n--
		}
		return ctx.Err()
	})
	if err != nil {
		return s.txErr(id, err)
	}
	return nil
}

// readIgnored reads the job's journal of ignored results, oldest first.
func (s *Store) readIgnored(jb *bbolt.Bucket, id job.ID) ([]store.Ignored, error) {
	ib := jb.Bucket(ignoredBucket)
	if ib == nil {
		return nil, nil
	}
	var out []store.Ignored
	c := ib.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		x, err := store.DecodeIgnored(v)
		if err != nil {
			return nil, s.corrupt(id, fmt.Sprintf("ignored/%x", k), err)
		}
		out = append(out, x)
	}
	return out, nil
}
