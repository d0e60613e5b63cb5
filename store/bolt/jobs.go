package bolt

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/store"
	"go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// jobBucket returns the bucket of job id, or an error wrapping
// store.ErrNotFound.
func (s *Store) jobBucket(tx *bbolt.Tx, id job.ID) (*bbolt.Bucket, error) {
	jb := tx.Bucket(jobsBucket).Bucket([]byte(id))
	if jb == nil {
		return nil, s.errf(id, "%w", store.ErrNotFound)
	}
	return jb, nil
}

func (s *Store) readMeta(jb *bbolt.Bucket, id job.ID) (meta, error) {
	m, err := decodeMeta(jb.Get(metaKey))
	if err != nil {
		return meta{}, s.corrupt(id, "meta", err)
	}
	return m, nil
}

// snapshot returns the name and the record of the job's newest snapshot:
// the origin while m.snapVersion is 1, else the snap record.
func (s *Store) snapshot(jb *bbolt.Bucket, id job.ID, m meta) (string, []byte, error) {
	if m.snapVersion > 1 {
		return s.blob(jb, id, snapBucket, m.snapCRC)
	}
	return s.blob(jb, id, originBucket, m.originCRC)
}

// blob returns the name and the encoded job kept in the bucket called
// name (origin or snap), checked against its CRC-32C. The record is
// bbolt's memory, valid only in the transaction.
func (s *Store) blob(jb *bbolt.Bucket, id job.ID, name []byte, crc uint32) (string, []byte, error) {
	key := string(name) + "/" + string(jobKey)
	var b []byte
	if bb := jb.Bucket(name); bb != nil {
		b = bb.Get(jobKey)
	}
	switch {
	case b == nil:
		return key, nil, s.corrupt(id, key, fmt.Errorf("%w: missing", job.ErrCorrupt))
	case checksum(b) != crc:
		return key, nil, s.corrupt(id, key, fmt.Errorf("%w: checksum mismatch", job.ErrCorrupt))
	}
	return key, b, nil
}

// putBlob stores an encoded job in the bucket called name, alone: bbolt
// rewrites a whole leaf when any of its keys changes, so a large record
// must not share a leaf with the meta record that every Save rewrites.
func putBlob(jb *bbolt.Bucket, w *writes, name, enc []byte) error {
	bb, err := jb.CreateBucketIfNotExists(name)
	if err != nil {
		return err
	}
	return w.put(bb, jobKey, enc)
}

// decodeJob decodes the record under key, which must hold job id at
// version v.
func (s *Store) decodeJob(id job.ID, key string, v uint64, b []byte) (job.Job, error) {
	j, err := job.Decode(b)
	if err != nil {
		return job.Job{}, s.corrupt(id, key, err)
	}
	if j.ID() != id || j.Version() != v {
		return job.Job{}, s.corrupt(id, key, fmt.Errorf("%w: holds job %s v%d, want v%d", job.ErrCorrupt, j.ID(), j.Version(), v))
	}
	return j, nil
}

// readSteps decodes the step records of versions from to m.version.
func (s *Store) readSteps(jb *bbolt.Bucket, id job.ID, m meta, from uint64) ([]job.Step, error) {
	sb := jb.Bucket(stepsBucket)
	if sb == nil {
		return nil, s.corrupt(id, "steps", fmt.Errorf("%w: bucket missing", job.ErrCorrupt))
	}
	if from > m.version {
		return nil, nil
	}
	steps := make([]job.Step, 0, m.version-from+1)
	c := sb.Cursor()
	v := from
	for k, rec := c.Seek(stepKey(from)); k != nil && v <= m.version; k, rec = c.Next() {
		if len(k) != 8 || binary.BigEndian.Uint64(k) != v {
			return nil, s.corrupt(id, "steps/"+strconv.FormatUint(v, 10), fmt.Errorf("%w: missing (found key %x)", job.ErrCorrupt, k))
		}
		st, err := job.DecodeStep(id, v, rec)
		if err != nil {
			return nil, s.corrupt(id, "steps/"+strconv.FormatUint(v, 10), err)
		}
		steps = append(steps, st)
		v++
	}
	if v != m.version+1 {
		return nil, s.corrupt(id, "steps/"+strconv.FormatUint(v, 10), fmt.Errorf("%w: missing (meta says version %d)", job.ErrCorrupt, m.version))
	}
	return steps, nil
}

// Create implements store.Store: it puts the origin (job.Encode of j) and
// the meta record, in a write transaction it may share with other writes
// waiting at the same moment (group commit).
func (s *Store) Create(ctx context.Context, j job.Job) error {
	if err := store.CheckCreate(j); err != nil {
		return fmt.Errorf("store/bolt: %s: %w", s.path, err)
	}
	id := j.ID()
	if err := s.enter(ctx, id); err != nil {
		return err
	}
	defer s.mu.RUnlock()
	origin, err := job.Encode(j)
	if err != nil {
		return s.errf(id, "%w", err)
	}
	var inc uint64
	err = s.commit(&groupWrite{
		ctx: ctx,
		apply: func(tx *bbolt.Tx, w *writes) error {
			jobs := tx.Bucket(jobsBucket)
			if jobs.Bucket([]byte(id)) != nil {
				return refuse(s.errf(id, "%w", store.ErrExists))
			}
			var err error
			if inc, err = jobs.NextSequence(); err != nil {
				return err
			}
			jb, err := jobs.CreateBucket([]byte(id))
			if err != nil {
				return err
			}
			if _, err := jb.CreateBucket(stepsBucket); err != nil {
				return err
			}
			if err := putBlob(jb, w, originBucket, origin); err != nil {
				return err
			}
			now := s.now().UnixNano()
			m := meta{inc: inc, snapVersion: 1, originCRC: checksum(origin), created: now, updated: now}.withJob(j)
			return w.put(jb, metaKey, m.encode())
		},
		committed: func() { s.cache.put(inc, j) },
		j:         j,
	})
	if err != nil {
		return s.txErr(id, err)
	}
	return nil
}

// txErr names the file and the job in an error from a transaction, unless
// it already does (errors made by errf do).
func (s *Store) txErr(id job.ID, err error) error {
	var named *namedError
	if errors.As(err, &named) {
		return err
	}
	return s.errf(id, "%w", err)
}

// Save implements store.Store: in a write transaction it may share with
// other writes waiting at the same moment (group commit), it checks the
// stored version and incarnation, appends the step record under
// steps/<version> and rewrites the meta record; now and then it also
// writes a snapshot (see the package documentation).
func (s *Store) Save(ctx context.Context, j job.Job, step job.Step) error {
	if err := store.CheckSave(j, step); err != nil {
		return fmt.Errorf("store/bolt: %s: %w", s.path, err)
	}
	id, v := j.ID(), j.Version()
	if err := s.enter(ctx, id); err != nil {
		return err
	}
	defer s.mu.RUnlock()
	rec := job.EncodeStep(step)
	var inc uint64
	err := s.commit(&groupWrite{
		ctx: ctx,
		apply: func(tx *bbolt.Tx, w *writes) error {
			jb, err := s.jobBucket(tx, id)
			if err != nil {
				return refuse(err)
			}
			m, err := s.readMeta(jb, id)
			if err != nil {
				return refuse(err)
			}
			if m.version != v-1 {
				return refuse(s.errf(id, "%w: stored version %d, save of version %d", store.ErrConflict, m.version, v))
			}
			if m.jobInc != j.Incarnation() {
				return refuse(s.errf(id, "%w: stored incarnation %x, save of incarnation %x (the job was deleted and made again)", store.ErrConflict, m.jobInc, j.Incarnation()))
			}
			sb := jb.Bucket(stepsBucket)
			if sb == nil {
				return refuse(s.corrupt(id, "steps", fmt.Errorf("%w: bucket missing", job.ErrCorrupt)))
			}
			sb.FillPercent = 1 // keys only ever grow: fill pages
			if err := w.put(sb, stepKey(v), rec); err != nil {
				return err
			}
			w.steps++
			w.stepBytes += uint64(len(rec))
			m = m.withJob(j)
			m.updated = s.now().UnixNano()
			m.sinceSnap += uint64(len(rec))
			m.stepsSinceSnap++
			if s.snapshotDue(jb, m) {
				enc, err := job.Encode(j)
				if err != nil {
					return err
				}
				if err := putBlob(jb, w, snapBucket, enc); err != nil {
					return err
				}
				w.snaps++
				w.snapBytes += uint64(len(enc))
				m.snapVersion, m.snapCRC, m.sinceSnap, m.stepsSinceSnap = v, checksum(enc), 0, 0
			}
			inc = m.inc
			return w.put(jb, metaKey, m.encode())
		},
		committed: func() { s.cache.put(inc, j) },
		j:         j,
		step:      &step,
	})
	if err != nil {
		return s.txErr(id, err)
	}
	return nil
}

// snapshotDue reports whether a Save that leaves the job at meta m should
// write a snapshot: when the step records since the last snapshot weigh as
// much as it does, or, with SnapshotEvery, after that many steps.
func (s *Store) snapshotDue(jb *bbolt.Bucket, m meta) bool {
	name := originBucket
	if m.snapVersion > 1 {
		name = snapBucket
	}
	var size int
	if bb := jb.Bucket(name); bb != nil {
		size = len(bb.Get(jobKey))
	}
	return store.SnapshotDue(m.stepsSinceSnap, m.sinceSnap, uint64(size), s.every)
}

// Load implements store.Store. It reads the meta record; if the cache holds
// that version it returns it, otherwise it decodes the newest snapshot and
// replays the steps written after it.
func (s *Store) Load(ctx context.Context, id job.ID) (job.Job, error) {
	if err := s.enter(ctx, id); err != nil {
		return job.Job{}, err
	}
	defer s.mu.RUnlock()
	return s.load(ctx, id)
}

// load is Load inside an operation (s.mu held for reading).
func (s *Store) load(ctx context.Context, id job.ID) (job.Job, error) {
	var (
		m        meta
		snapName string
		snap     []byte
		steps    []job.Step
		cached   job.Job
		hit      bool
	)
	err := s.view(ctx, id, func(tx *bbolt.Tx) error {
		jb, err := s.jobBucket(tx, id)
		if err != nil {
			return err
		}
		if m, err = s.readMeta(jb, id); err != nil {
			return err
		}
		if cached, hit = s.cache.get(id, m.inc, m.version); hit {
			return nil
		}
		key, b, err := s.snapshot(jb, id, m)
		if err != nil {
			return err
		}
		snapName, snap = key, bytes.Clone(b)
		steps, err = s.readSteps(jb, id, m, m.snapVersion+1)
		return err
	})
	if err != nil {
		return job.Job{}, s.txErr(id, err)
	}
	if hit {
		return cached, nil
	}
	j, err := s.decodeJob(id, snapName, m.snapVersion, snap)
	if err != nil {
		return job.Job{}, err
	}
	if j, err = job.Replay(j, steps); err != nil {
		return job.Job{}, s.corrupt(id, fmt.Sprintf("steps/%d..%d", m.snapVersion+1, m.version), fmt.Errorf("%w: %w", job.ErrCorrupt, err))
	}
	if j.Version() != m.version || j.Status() != m.status {
		return job.Job{}, s.corrupt(id, "meta", fmt.Errorf("%w: says v%d %s, the journal gives v%d %s", job.ErrCorrupt, m.version, m.status, j.Version(), j.Status()))
	}
	s.cache.put(m.inc, j)
	return j, nil
}

// History implements store.Historian: the origin and every step record.
func (s *Store) History(ctx context.Context, id job.ID) (store.History, error) {
	if err := s.enter(ctx, id); err != nil {
		return store.History{}, err
	}
	defer s.mu.RUnlock()
	var (
		origin  []byte
		steps   []job.Step
		ignored []store.Ignored
	)
	err := s.view(ctx, id, func(tx *bbolt.Tx) error {
		jb, err := s.jobBucket(tx, id)
		if err != nil {
			return err
		}
		m, err := s.readMeta(jb, id)
		if err != nil {
			return err
		}
		_, b, err := s.blob(jb, id, originBucket, m.originCRC)
		if err != nil {
			return err
		}
		origin = bytes.Clone(b)
		if steps, err = s.readSteps(jb, id, m, 2); err != nil {
			return err
		}
		ignored, err = s.readIgnored(jb, id)
		return err
	})
	if err != nil {
		return store.History{}, s.txErr(id, err)
	}
	o, err := s.decodeJob(id, "origin/job", 1, origin)
	if err != nil {
		return store.History{}, err
	}
	return store.History{Origin: o, Steps: steps, Ignored: ignored}, nil
}

// List implements store.Lister. It reads only the meta records of the jobs
// it returns (and of the finished jobs it skips when q.Unfinished), walking
// the jobs in ID order from q.After or q.Prefix. A job whose meta record
// is damaged is listed with Info.Damaged set (wrapping job.ErrCorrupt,
// naming the file, the job and the key) and its other fields zero, so
// that one damaged record stops no listing and hides no other job.
func (s *Store) List(ctx context.Context, q store.Query) ([]store.Info, error) {
	if err := s.enter(ctx, ""); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	var out []store.Info
	err := s.view(ctx, "", func(tx *bbolt.Tx) error {
		jobs := tx.Bucket(jobsBucket)
		c := jobs.Cursor()
		start := []byte(q.Prefix)
		if string(q.After) > q.Prefix {
			start = []byte(q.After)
		}
		for k, v := c.Seek(start); k != nil; k, v = c.Next() {
			if !bytes.HasPrefix(k, []byte(q.Prefix)) {
				break
			}
			if q.After != "" && string(k) <= string(q.After) {
				continue // q.After itself: filtered by its key, its meta unread
			}
			id := job.ID(k)
			var in store.Info
			if v != nil {
				in = store.Info{ID: id, Damaged: s.corrupt(id, "", fmt.Errorf("%w: a value where a job's bucket belongs", job.ErrCorrupt))}
			} else if m, err := s.readMeta(jobs.Bucket(k), id); err != nil {
				// One damaged record hides no other job: it is listed
				// as damaged, its status unknown.
				in = store.Info{ID: id, Damaged: err}
			} else {
				in = m.info(id)
			}
			if q.Match(in) {
				out = append(out, in)
				if q.Limit > 0 && len(out) == q.Limit {
					break
				}
			}
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, s.txErr("", err)
	}
	return out, nil
}

// Stat implements store.Stater: it reads the job's meta record alone.
func (s *Store) Stat(ctx context.Context, id job.ID) (store.Info, error) {
	if err := s.enter(ctx, id); err != nil {
		return store.Info{}, err
	}
	defer s.mu.RUnlock()
	var in store.Info
	err := s.view(ctx, id, func(tx *bbolt.Tx) error {
		jb, err := s.jobBucket(tx, id)
		if err != nil {
			return err
		}
		m, err := s.readMeta(jb, id)
		if err != nil {
			return err
		}
		in = m.info(id)
		return nil
	})
	if err != nil {
		return store.Info{}, s.txErr(id, err)
	}
	return in, nil
}

// Delete implements store.Deleter: it removes the job's bucket, history and
// all.
func (s *Store) Delete(ctx context.Context, id job.ID) error {
	if err := s.enter(ctx, id); err != nil {
		return err
	}
	defer s.mu.RUnlock()
	err := s.update(ctx, func(tx *bbolt.Tx, w *writes) error {
		err := tx.Bucket(jobsBucket).DeleteBucket([]byte(id))
		if errors.Is(err, berrors.ErrBucketNotFound) {
			return s.errf(id, "%w", store.ErrNotFound)
		}
		if err != nil {
			return err
		}
		return ctx.Err()
	})
	s.cache.drop(id)
	if err != nil {
		return s.txErr(id, err)
	}
	return nil
}
