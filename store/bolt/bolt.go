package bolt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/store"
	"go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// Options configure Open and OpenReadOnly. The zero value (or nil) is the
// safe default.
type Options struct {
	// Timeout bounds the wait for the file lock that keeps a second
	// writer (in another process or in this one) out, and, in a Store
	// from OpenReadOnly, each operation's wait for the write transaction
	// in progress (see the package documentation). Zero or less means one
	// second. When it runs out, Open or the operation fails with an error
	// wrapping ErrLocked.
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
	// decode. Zero means 4096; a negative value turns the cache off.
	// Whatever the count, the cached jobs hold at most about 262,000
	// actions (about 50 MB), except that the job used last is always kept.
	// Beside them, History keeps the origins it decoded of at most 64 of
	// those jobs (as many if CacheSize is smaller), within the same bound
	// on actions: a job's origin never changes, so a page that reads a
	// job's history again does not decode it again.
	CacheSize int

	// Retention, if positive, is how long a settled job is kept after its
	// clock (job.Job.Clock: the time of the last result it applied); Sweep
	// deletes the jobs older than that, and the runner that works on the
	// store calls it now and then. Zero (the default) keeps every job.
	Retention time.Duration

	// Now is the clock Sweep measures a job's age with, and the one a
	// job's meta record takes the times of its creation and last write
	// from (store.Info.Created, Updated); nil means time.Now.
	Now func() time.Time
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
	path    string
	db      *bbolt.DB // nil in a read-only Store, which opens bbolt for each read
	every   uint64
	cache   *cache
	origins *cache // the origins History decoded, version 1 of each incarnation
	timeout time.Duration

	lock     *fileLock // W and the gate (Linux); nil elsewhere
	boltFile *os.File  // bbolt's descriptor of the file, in a writing Store
	wmu      sync.Mutex

	// A read-only Store: its descriptor of the file (held open for its
	// life, the gate's locks are on it), and rmu, which makes its
	// operations take turns (the gate's read lock belongs to the
	// descriptor, not to a goroutine).
	readOnly bool
	rfile    *os.File
	rmu      sync.Mutex

	mu     sync.RWMutex // held for reading by every operation, for writing by Close
	closed bool

	// poison is the damage a write transaction ran into; once set, every
	// operation fails with it. wedged records that bbolt may still hold
	// its writer lock after that failure, so Close must not wait for it.
	poison atomic.Pointer[damageError]
	wedged atomic.Bool

	group group // see group.go

	// Retention (see retain.go): sweepMu makes sweeps take turns, and
	// sweepFrom is the last job the previous one read (nil: start over).
	retention time.Duration
	now       func() time.Time
	sweepMu   sync.Mutex
	sweepFrom []byte

	txs, bytes, steps, stepBytes, snaps, snapBytes atomic.Uint64
	decodes                                        atomic.Uint64

	// faults, set only by the package's tests (export_test.go) before
	// the store is used, injects faults (see fault).
	faults func(p faultPoint, j job.Job, step *job.Step) error
}

var (
	_ store.Lister    = (*Store)(nil)
	_ store.Stater    = (*Store)(nil)
	_ store.Sweeper   = (*Store)(nil)
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

// Open opens the store in the file at path for reading and writing,
// creating it if it does not exist. It fails, without writing to the file,
// if the file is locked by another writer (after opts.Timeout, with
// ErrLocked), is not a bbolt database, is a damaged one (ErrDamaged), or is
// a bbolt database that baton did not make.
//
// On Linux, stores opened with OpenReadOnly (in this process or others)
// can read the file while it is open here; see the package documentation.
func Open(path string, opts *Options) (*Store, error) {
	o := opts.withDefaults()
	lock, err := lockWriter(path, o.Timeout)
	if errors.Is(err, errBusy) {
		return nil, &lockedError{path: path, timeout: o.Timeout}
	}
	if err != nil {
		return nil, fmt.Errorf("store/bolt: open %s: %w", path, err)
	}
	s := &Store{path: path, cache: newCache(o.CacheSize), origins: newCache(originsCached(o.CacheSize)), timeout: o.Timeout, lock: lock, retention: o.Retention, now: o.Now}
	if o.SnapshotEvery > 0 {
		s.every = uint64(o.SnapshotEvery)
	}
	if err := s.openWriter(o); err != nil {
		_ = lock.close()
		return nil, err
	}
	if err := s.init(); err != nil {
		_ = s.Close()
		return nil, err
	}
	return s, nil
}

// withDefaults returns the options with defaults filled in.
func (opts *Options) withDefaults() Options {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Timeout <= 0 {
		o.Timeout = time.Second
	}
	switch {
	case o.CacheSize == 0:
		o.CacheSize = 4096
	case o.CacheSize < 0:
		o.CacheSize = 0
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// openWriter opens bbolt for writing, holding the gate (so that no
// reader looks at the file while bbolt may write to it), after checking
// the file; then it lets readers' shared flocks in.
func (s *Store) openWriter(o Options) error {
	ctx, cancel := context.WithTimeout(context.Background(), o.Timeout)
	err := s.lock.lockGate(ctx)
	cancel()
	if err != nil {
		return &lockedError{path: s.path, timeout: o.Timeout}
	}
	defer s.lock.unlockGate()
	// A file that exists is first checked read-only, so that nothing is
	// written to a file baton cannot use (bbolt may write when it opens a
	// database for writing).
	if fi, err := os.Stat(s.path); err == nil && fi.Size() > 0 {
		if err := check(s.path, fi.Size(), o.Timeout); err != nil {
			return err
		}
	}
	var db *bbolt.DB
	err = guard("opening", func() error {
		var err error
		db, err = bbolt.Open(s.path, 0o600, &bbolt.Options{
			Timeout: o.Timeout,
			NoSync:  o.NoSync,
			OpenFile: func(name string, flag int, perm os.FileMode) (*os.File, error) {
				f, err := os.OpenFile(name, flag, perm)
				s.boltFile = f
				return f, err
			},
		})
		return err
	})
	if err != nil {
		return openErr(s.path, o.Timeout, err)
	}
	s.db = db
	if err := s.lock.downgrade(s.boltFile); err != nil {
		_ = db.Close()
		if errors.Is(err, errBusy) {
			return &lockedError{path: s.path, timeout: o.Timeout}
		}
		return fmt.Errorf("store/bolt: open %s: sharing the file lock: %w", s.path, err)
	}
	return nil
}

// openErr explains an error from bbolt.Open.
func openErr(path string, timeout time.Duration, err error) error {
	switch {
	case errors.Is(err, berrors.ErrTimeout):
		return &lockedError{path: path, timeout: timeout}
	case errors.Is(err, berrors.ErrInvalid), errors.Is(err, berrors.ErrChecksum), errors.Is(err, errNoMeta):
		return fmt.Errorf("store/bolt: open %s: not a bbolt database, or a damaged one (left as it was): %w", path, &damageError{detail: err.Error()})
	case errors.Is(err, ErrDamaged):
		return fmt.Errorf("store/bolt: open %s: %w (left as it was)", path, err)
	case errors.Is(err, berrors.ErrVersionMismatch):
		return fmt.Errorf("store/bolt: open %s: not a bbolt database this baton reads (left as it was): %w", path, err)
	}
	return fmt.Errorf("store/bolt: open %s: %w", path, err)
}

// check checks, without writing, that the file at path (size bytes) is a
// baton store or an empty bbolt database: its meta pages and free list
// with checkFile, then its layout through bbolt, read-only.
func check(path string, size int64, timeout time.Duration) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("store/bolt: open %s: %w", path, err)
	}
	_, err = checkFile(f, size, true)
	_ = f.Close()
	if err != nil {
		return openErr(path, timeout, err)
	}
	var db *bbolt.DB
	err = guard("opening", func() error {
		db, err = bbolt.Open(path, 0, &bbolt.Options{ReadOnly: true, Timeout: timeout})
		return err
	})
	if err != nil {
		return openErr(path, timeout, err)
	}
	defer db.Close()
	err = guard("reading", func() error {
		return db.View(func(tx *bbolt.Tx) error {
			_, err := checkLayout(tx, path)
			return err
		})
	})
	if errors.Is(err, ErrDamaged) {
		return openErr(path, timeout, err)
	}
	return err
}

// checkLayout reports whether the database is empty, and returns an error
// unless it is empty or a baton store this code reads.
func checkLayout(tx *bbolt.Tx, path string) (empty bool, err error) {
	b := tx.Bucket(batonBucket)
	if b == nil {
		// A baton store whose root page is damaged may still show
		// baton's names to a walk that a lookup did not find.
		c := tx.Cursor()
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			if bytes.Equal(k, batonBucket) || bytes.Equal(k, jobsBucket) {
				return false, named("store/bolt: %s: %w: the %q bucket cannot be found, though there is a key %q", path, &damageError{detail: "the root bucket's page does not add up"}, batonBucket, k)
			}
		}
		if k, _ := c.First(); k != nil {
			return false, named("store/bolt: %s is a bbolt database that baton did not make (it has a bucket %q and no %q bucket); left as it was", path, k, batonBucket)
		}
		return true, nil
	}
	if f := b.Get(formatKey); string(f) != layoutFormat {
		if _, err := strconv.ParseUint(string(f), 10, 32); err != nil {
			return false, named("store/bolt: %s: %w: layout format %q is not a number", path, job.ErrCorrupt, f)
		}
		return false, named("store/bolt: %s has layout format %q; this baton reads %q", path, f, layoutFormat)
	}
	if tx.Bucket(jobsBucket) == nil {
		return false, named("store/bolt: %s: %w: the %q bucket is missing", path, job.ErrCorrupt, jobsBucket)
	}
	return false, nil
}

// init checks that the file is a baton store, and makes it one if it is an
// empty database.
func (s *Store) init() error {
	ctx := context.Background()
	empty := false
	err := s.view(ctx, "", func(tx *bbolt.Tx) error {
		var err error
		empty, err = checkLayout(tx, s.path)
		return err
	})
	if err != nil {
		return s.txErr("", err)
	}
	if !empty {
		return nil
	}
	err = s.update(ctx, func(tx *bbolt.Tx, w *writes) error {
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
	var err error
	switch {
	case s.db == nil:
	case s.wedged.Load():
		// bbolt may hold its writer lock for good: its Close would wait
		// for it. Release the file; bbolt's memory map stays (and with
		// it the open file, so the flock is released explicitly).
		err = errors.Join(funlock(s.boltFile), s.boltFile.Close())
	default:
		err = guard("closing", s.db.Close)
	}
	if s.rfile != nil {
		err = errors.Join(err, s.rfile.Close())
	} else {
		err = errors.Join(err, s.lock.close())
	}
	if err != nil {
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
	if err := s.fault(faultRequest, job.Job{}, nil); err != nil {
		return s.errf(id, "%w", err)
	}
	s.mu.RLock()
	if s.closed {
		s.mu.RUnlock()
		return s.errf(id, "%w", store.ErrClosed)
	}
	if p := s.poison.Load(); p != nil {
		s.mu.RUnlock()
		return s.errf(id, "%w (a write ran into it; this Store can no longer be used: close it)", p)
	}
	return nil
}

// errf returns an error naming the file and, unless id is "", the job.
// An error of the file itself (a *fs.PathError on it: "write PATH: no
// space left on device") is said without its path a second time.
func (s *Store) errf(id job.ID, format string, args ...any) error {
	err := fmt.Errorf(format, args...)
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Path == s.path {
		err = &pathless{msg: strings.Replace(err.Error(), pe.Op+" "+pe.Path+": ", pe.Op+": ", 1), err: err}
	}
	if id == "" {
		return &namedError{fmt.Errorf("store/bolt: %s: %w", s.path, err)}
	}
	return &namedError{fmt.Errorf("store/bolt: %s: job %s: %w", s.path, id, err)}
}

// pathless is err said without the store's path, which the error around
// it names.
type pathless struct {
	msg string
	err error
}

func (e *pathless) Error() string { return e.msg }
func (e *pathless) Unwrap() error { return e.err }

// named returns an error that names the file (format must).
func named(format string, args ...any) error { return &namedError{fmt.Errorf(format, args...)} }

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

// ErrReadOnly is wrapped by the error that Create, Save and Delete return
// on a Store opened with OpenReadOnly.
var ErrReadOnly = errors.New("store/bolt: the store is open read-only")

// view runs fn in a read transaction on behalf of job id ("" for one that
// reads the whole store). In a read-only Store the file may hold no store
// yet (it is empty): then view returns store.ErrNotFound for a job, and
// nil without calling fn for the whole store, which has no jobs.
//
// A fault or a panic in bbolt becomes an error wrapping ErrDamaged. One
// inside fn leaves bbolt as it was (bbolt's View closes the read
// transaction, which touches no page); one outside it (in bbolt's Begin or
// Rollback, which hold bbolt's locks) poisons the Store, as a write would.
func (s *Store) view(ctx context.Context, id job.ID, fn func(tx *bbolt.Tx) error) error {
	if s.readOnly {
		return s.readView(ctx, id, fn)
	}
	inFn, returned := false, false
	err := guard("reading", func() error {
		err := s.db.View(func(tx *bbolt.Tx) error {
			inFn = true
			err := checkMissing(tx, id, fn(tx))
			inFn = false
			return err
		})
		returned = true
		return err
	})
	if !returned && !inFn {
		var d *damageError
		errors.As(err, &d)
		s.poison.CompareAndSwap(nil, d)
		s.wedged.Store(true)
	}
	return err
}

// checkMissing returns err, fn's error in a read of job id, unless it
// says that the job is missing and the keys of the jobs bucket, walked in
// order, are not strictly increasing or not all buckets: then the job may
// be there, on a damaged page that a lookup could not find it in. (A
// damaged page that hides keys from a walk too goes unnoticed: bbolt's
// pages carry no checksum.)
func checkMissing(tx *bbolt.Tx, id job.ID, err error) error {
	if id == "" || !errors.Is(err, store.ErrNotFound) {
		return err
	}
	var prev []byte
	c := tx.Bucket(jobsBucket).Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if v != nil || prev != nil && bytes.Compare(prev, k) >= 0 {
			return damagef("a lookup found no job %s, and the keys of the %q bucket are out of order or not all jobs", id, jobsBucket)
		}
		prev = k
	}
	return err
}

// update runs fn in a write transaction and counts what it wrote if it
// commits. It holds the gate (see the package documentation) from before
// the transaction begins until after it commits, waiting for readers for
// as long as ctx allows.
//
// A fault or a panic in bbolt or in fn becomes an error wrapping
// ErrDamaged and poisons the Store: bbolt's state in memory (its free
// list, its node cache) may no longer match the file.
func (s *Store) update(ctx context.Context, fn func(tx *bbolt.Tx, w *writes) error) error {
	if s.readOnly {
		return ErrReadOnly
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if err := s.lock.lockGate(ctx); err != nil {
		return fmt.Errorf("waiting for readers to leave the file: %w", err)
	}
	defer s.lock.unlockGate()
	var w writes
	returned := false
	err := guard("writing", func() error {
		err := s.write(func(tx *bbolt.Tx) error {
			w = writes{}
			return fn(tx, &w)
		})
		returned = true
		return err
	})
	if !returned {
		var d *damageError
		errors.As(err, &d)
		s.poison.CompareAndSwap(nil, d)
		return err
	}
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

// write is bbolt's Update, except after a panic: Update's deferred
// rollback rereads the free list from the file, and a second fault there
// would leave bbolt's writer lock held for good. write rolls back in
// memory only, and if even that fails (or Begin failed half way) it marks
// the Store wedged, so that Close does not wait for that lock.
func (s *Store) write(fn func(tx *bbolt.Tx) error) error {
	var tx *bbolt.Tx
	done := false
	defer func() {
		if done {
			return
		}
		if tx == nil || !rollbackQuietly(tx) {
			s.wedged.Store(true)
		}
	}()
	tx, err := s.db.Begin(true)
	if err != nil {
		done = true
		return err
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		done = true
		return err
	}
	err = tx.Commit()
	done = true
	return err
}

// rollbackQuietly rolls tx back after a panic, and reports whether that
// worked (a transaction that Commit closed needs nothing).
func rollbackQuietly(tx *bbolt.Tx) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	err := tx.Rollback()
	return err == nil || errors.Is(err, berrors.ErrTxClosed)
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
	// GroupCommits counts the transactions of Creates and Saves, and
	// GroupWrites the Creates and Saves they carried (refused ones
	// included): GroupWrites/GroupCommits writes shared each fsync.
	// LargestGroup is the most in one transaction.
	GroupCommits, GroupWrites, LargestGroup uint64
	// Decodes counts the encoded jobs (snapshots and origins) decoded by
	// reads: the Loads and Histories the caches did not answer.
	Decodes uint64
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
		Decodes:       s.decodes.Load(),
	}
	s.group.mu.Lock()
	st.GroupCommits, st.GroupWrites, st.LargestGroup = s.group.size.commits, s.group.size.writes, s.group.size.largest
	s.group.mu.Unlock()
	if s.db != nil {
		dbs := s.db.Stats()
		st.PageBytes = uint64(dbs.TxStats.GetPageAlloc())
	}
	return st
}
