package bolt

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/store"
	"go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// Options configure Open. The zero value (or nil) is the safe default.
type Options struct {
	// Timeout bounds the wait for the file lock that keeps a second
	// process (or a second Open in this one) out. Zero or less means one
	// second.
	// When it runs out, Open fails with an error wrapping ErrLocked.
	Timeout time.Duration

	// NoSync skips the fsync at the end of each write transaction. It is
	// UNSAFE: a machine crash or power loss can lose committed jobs or
	// corrupt the file. For tests and benchmarks only.
	NoSync bool

	// SnapshotEvery, if positive, also writes a snapshot once this many
	// steps have been appended since the last one, bounding the journal
	// that a Load must replay by its number of steps. Zero (the default)
	// relies on the byte rule alone (see the package documentation), which
	// keeps the amortised bytes written per step O(delta) for every tree.
	// A positive value costs a full encoding every SnapshotEvery steps,
	// O(tree / SnapshotEvery) bytes per step.
	SnapshotEvery int

	// CacheSize is the number of jobs whose newest version is kept in
	// memory, so that a Load after a Save in the same process does not
	// decode. Zero means 128; a negative value turns the cache off.
	CacheSize int
}

// ErrLocked is wrapped by the error Open returns when another process (or
// another open Store in this one) holds the file.
var ErrLocked = errors.New("store/bolt: file is locked by another process")

type lockedError struct {
	path    string
	timeout time.Duration
}

func (e *lockedError) Error() string {
	return fmt.Sprintf("store/bolt: %s is locked by another process (gave up after %v)", e.path, e.timeout)
}

func (e *lockedError) Is(target error) bool { return target == ErrLocked }

// Store is a store.Store in one bbolt file. All methods may be called
// concurrently. Close it to release the file.
type Store struct {
	path  string
	db    *bbolt.DB
	every uint64
	cache *cache

	mu     sync.RWMutex // held for reading by every operation, for writing by Close
	closed bool

	txs, bytes, steps, stepBytes, snaps, snapBytes atomic.Uint64
}

var (
	_ store.Lister    = (*Store)(nil)
	_ store.Historian = (*Store)(nil)
	_ store.Deleter   = (*Store)(nil)
)

// Bucket and key names; see the package documentation for the layout.
var (
	batonBucket  = []byte("baton")
	formatKey    = []byte("format")
	jobsBucket   = []byte("jobs")
	metaKey      = []byte("meta")
	originBucket = []byte("origin")
	snapBucket   = []byte("snap")
	jobKey       = []byte("job")
	stepsBucket  = []byte("steps")
)

// layoutFormat is the version of the file layout, stored under
// baton/format.
const layoutFormat = "1"

// Open opens the store in the file at path, creating it if it does not
// exist. It fails, without writing to the file, if the file is locked by
// another process (after opts.Timeout, with ErrLocked), is not a bbolt
// database, or is a bbolt database that baton did not make.
func Open(path string, opts *Options) (*Store, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Timeout <= 0 {
		o.Timeout = time.Second
	}
	switch {
	case o.CacheSize == 0:
		o.CacheSize = 128
	case o.CacheSize < 0:
		o.CacheSize = 0
	}
	// A file that exists is first checked read-only, so that nothing is
	// written to a file baton cannot use (bbolt may write when it opens a
	// database for writing).
	if fi, err := os.Stat(path); err == nil && fi.Size() > 0 {
		if err := probe(path, o.Timeout); err != nil {
			return nil, err
		}
	}
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{Timeout: o.Timeout, NoSync: o.NoSync})
	if err != nil {
		return nil, openErr(path, o.Timeout, err)
	}
	s := &Store{path: path, db: db, cache: newCache(o.CacheSize)}
	if o.SnapshotEvery > 0 {
		s.every = uint64(o.SnapshotEvery)
	}
	if err := s.init(); err != nil {
		_ = db.Close()
		return nil, err
	}
	return s, nil
}

// openErr explains an error from bbolt.Open.
func openErr(path string, timeout time.Duration, err error) error {
	switch {
	case errors.Is(err, berrors.ErrTimeout):
		return &lockedError{path: path, timeout: timeout}
	case errors.Is(err, berrors.ErrInvalid), errors.Is(err, berrors.ErrChecksum), errors.Is(err, berrors.ErrVersionMismatch):
		return fmt.Errorf("store/bolt: open %s: not a bbolt database, or a corrupt one (left as it was): %w", path, err)
	}
	return fmt.Errorf("store/bolt: open %s: %w", path, err)
}

// probe opens the file read-only and checks that it is a baton store or an
// empty bbolt database.
func probe(path string, timeout time.Duration) error {
	db, err := bbolt.Open(path, 0, &bbolt.Options{ReadOnly: true, Timeout: timeout})
	if err != nil {
		return openErr(path, timeout, err)
	}
	defer db.Close()
	return db.View(func(tx *bbolt.Tx) error {
		_, err := checkLayout(tx, path)
		return err
	})
}

// checkLayout reports whether the database is empty, and returns an error
// unless it is empty or a baton store this code reads.
func checkLayout(tx *bbolt.Tx, path string) (empty bool, err error) {
	b := tx.Bucket(batonBucket)
	if b == nil {
		if k, _ := tx.Cursor().First(); k != nil {
			return false, fmt.Errorf("store/bolt: %s is a bbolt database that baton did not make (it has a bucket %q and no %q bucket); left as it was", path, k, batonBucket)
		}
		return true, nil
	}
	if f := b.Get(formatKey); string(f) != layoutFormat {
		return false, fmt.Errorf("store/bolt: %s has layout format %q; this baton reads %q", path, f, layoutFormat)
	}
	if tx.Bucket(jobsBucket) == nil {
		return false, fmt.Errorf("store/bolt: %s: %w: the %q bucket is missing", path, job.ErrCorrupt, jobsBucket)
	}
	return false, nil
}

// init checks that the file is a baton store, and makes it one if it is an
// empty database.
func (s *Store) init() error {
	empty := false
	err := s.db.View(func(tx *bbolt.Tx) error {
		var err error
		empty, err = checkLayout(tx, s.path)
		return err
	})
	if err != nil || !empty {
		return err
	}
	err = s.update(func(tx *bbolt.Tx, w *writes) error {
		b, err := tx.CreateBucket(batonBucket)
		if err != nil {
			return err
		}
		if err := w.put(b, formatKey, []byte(layoutFormat)); err != nil {
			return err
		}
		_, err = tx.CreateBucket(jobsBucket)
		return err
	})
	if err != nil {
		return fmt.Errorf("store/bolt: %s: making a new store: %w", s.path, err)
	}
	return nil
}

// Path returns the file the store is in.
func (s *Store) Path() string { return s.path }

// Close releases the file. It waits for operations in progress, and is
// safe to call twice; later calls to other methods fail with
// store.ErrClosed.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("store/bolt: closing %s: %w", s.path, err)
	}
	return nil
}

// enter starts an operation on job id ("" for none): it checks the context
// and that the store is open, and on success holds s.mu for reading; the
// caller must call s.mu.RUnlock.
func (s *Store) enter(ctx context.Context, id job.ID) error {
	if err := ctx.Err(); err != nil {
		return s.errf(id, "%w", err)
	}
	s.mu.RLock()
	if s.closed {
		s.mu.RUnlock()
		return s.errf(id, "%w", store.ErrClosed)
	}
	return nil
}

// errf returns an error naming the file and, unless id is "", the job.
func (s *Store) errf(id job.ID, format string, args ...any) error {
	err := fmt.Errorf(format, args...)
	if id == "" {
		return &namedError{fmt.Errorf("store/bolt: %s: %w", s.path, err)}
	}
	return &namedError{fmt.Errorf("store/bolt: %s: job %s: %w", s.path, id, err)}
}

// namedError marks an error that already names the file and the job.
type namedError struct{ err error }

func (e *namedError) Error() string { return e.err.Error() }
func (e *namedError) Unwrap() error { return e.err }

// corrupt returns an error naming the file, the job and the key whose
// record is bad; err should wrap job.ErrCorrupt.
func (s *Store) corrupt(id job.ID, key string, err error) error {
	return s.errf(id, "key %s: %w", keyName(id, key), err)
}

func keyName(id job.ID, key string) string { return string(jobsBucket) + "/" + string(id) + "/" + key }

// writes counts what one write transaction puts; the counts are added to
// the Store's statistics only once it commits.
type writes struct {
	bytes, steps, stepBytes, snaps, snapBytes uint64
}

func (w *writes) put(b *bbolt.Bucket, k, v []byte) error {
	w.bytes += uint64(len(v))
	return b.Put(k, v)
}

// update runs fn in a write transaction and counts what it wrote if it
// commits.
func (s *Store) update(fn func(tx *bbolt.Tx, w *writes) error) error {
	var w writes
	err := s.db.Update(func(tx *bbolt.Tx) error {
		w = writes{}
		return fn(tx, &w)
	})
	if err != nil {
		return err
	}
	s.txs.Add(1)
	s.bytes.Add(w.bytes)
	s.steps.Add(w.steps)
	s.stepBytes.Add(w.stepBytes)
	s.snaps.Add(w.snaps)
	s.snapBytes.Add(w.snapBytes)
	return nil
}

// Stats are counters since Open, for benchmarks and monitoring. Byte
// counts are of values put (records), not of keys or of bbolt's pages,
// except PageBytes.
type Stats struct {
	WriteTxs      uint64 // committed write transactions: each is one fsync unless NoSync
	BytesWritten  uint64 // bytes of every record put: steps, snapshots, origins, meta records
	Steps         uint64 // step records written (one per Save)
	StepBytes     uint64 // bytes of step records
	Snapshots     uint64 // snapshots written (not counting origins)
	SnapshotBytes uint64 // bytes of snapshots
	// PageBytes is bbolt's count of the bytes of pages it allocated for
	// write transactions: roughly what reached the file, including the
	// B+tree pages that each commit rewrites whatever their fill.
	PageBytes uint64
}

// Stats returns the counters so far. It may be called at any time, also
// after Close.
func (s *Store) Stats() Stats {
	st := Stats{
		WriteTxs:      s.txs.Load(),
		BytesWritten:  s.bytes.Load(),
		Steps:         s.steps.Load(),
		StepBytes:     s.stepBytes.Load(),
		Snapshots:     s.snaps.Load(),
		SnapshotBytes: s.snapBytes.Load(),
	}
	dbs := s.db.Stats()
	st.PageBytes = uint64(dbs.TxStats.GetPageAlloc())
	return st
}
