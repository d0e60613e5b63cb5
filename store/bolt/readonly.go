package bolt

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/store"
	"go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// OpenReadOnly opens the store in the file at path for reading only: Load,
// History and List work as in a Store from Open; Create, Save and Delete
// fail with an error wrapping ErrReadOnly. It never writes to the file nor
// creates anything: the file is opened O_RDONLY, so it may be one the
// process cannot write, in a directory it cannot write. A missing file is
// an error wrapping fs.ErrNotExist; an empty (0-byte) file is a store
// with no jobs, and stays empty.
//
// On Linux it reads while another Store (in this process or another) has
// the file open for writing and commits: each operation waits at the gate
// for the write transaction in progress, if any, to commit (for at most
// opts.Timeout, then ErrLocked), opens bbolt read-only to read the file as
// it is, copies out what it needs, and closes bbolt again. Elsewhere, an
// operation while a writer has the file open fails with ErrLocked. See
// the package documentation.
//
// Of opts, Timeout and CacheSize apply.
func OpenReadOnly(path string, opts *Options) (*Store, error) {
	o := opts.withDefaults()
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("store/bolt: open %s read-only: %w", path, err)
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		_ = f.Close()
		if err == nil {
			err = errors.New("not a regular file")
		}
		return nil, fmt.Errorf("store/bolt: open %s read-only: %w", path, err)
	}
	s := &Store{
		path:     path,
		cache:    newCache(o.CacheSize),
		origins:  newCache(originsCached(o.CacheSize)),
		timeout:  o.Timeout,
		readOnly: true,
		rfile:    f,
		lock:     readerLock(f),
	}
	// A first look, so that a file that is not a store fails here.
	if err := s.view(context.Background(), "", func(*bbolt.Tx) error { return nil }); err != nil {
		_ = f.Close()
		var named *namedError
		if errors.As(err, &named) {
			return nil, err
		}
		return nil, fmt.Errorf("store/bolt: open %s read-only: %w", path, err)
	}
	return s, nil
}

// ReadOnly reports whether the Store was opened with OpenReadOnly.
func (s *Store) ReadOnly() bool { return s.readOnly }

// readView is view for a read-only Store: it passes the gate, opens bbolt
// read-only, checks the layout, runs fn, and closes bbolt.
func (s *Store) readView(ctx context.Context, id job.ID, fn func(tx *bbolt.Tx) error) error {
	s.rmu.Lock()
	defer s.rmu.Unlock()
	if err := s.lock.rlockGate(ctx, s.timeout); err != nil {
		if errors.Is(err, errBusy) {
			return fmt.Errorf("a write held the file for longer than %v: %w", s.timeout, ErrLocked)
		}
		return err
	}
	defer s.lock.unlockGate()
	fi, err := s.rfile.Stat()
	if err != nil {
		return err
	}
	if fi.Size() == 0 {
		return s.noStore(id)
	}
	// bbolt trusts the file; check what it would trip on.
	if _, err := checkFile(s.rfile, fi.Size(), false); err != nil {
		if errors.Is(err, errNoMeta) {
			return fmt.Errorf("not a bbolt database, or a damaged one: %w", &damageError{detail: err.Error()})
		}
		return err // a *damageError, or a bbolt file of another format
	}
	var (
		db *bbolt.DB
		bf *os.File
	)
	err = guard("opening", func() error {
		db, err = bbolt.Open(s.path, 0, &bbolt.Options{
			ReadOnly: true,
			Timeout:  s.timeout,
			OpenFile: func(name string, flag int, perm os.FileMode) (*os.File, error) {
				f, err := os.OpenFile(name, flag, perm)
				bf = f
				return f, err
			},
		})
		return err
	})
	switch {
	case errors.Is(err, berrors.ErrTimeout):
		return fmt.Errorf("%w (gave up after %v)", ErrLocked, s.timeout)
	case err != nil:
		return fmt.Errorf("opening it with bbolt: %w", err)
	}
	defer db.Close()
	// The gate is on s.rfile: it guards what bbolt reads only if that is
	// the same file (not one renamed over it since).
	if bfi, err := bf.Stat(); err != nil || !os.SameFile(fi, bfi) {
		return errors.New("the file was replaced by another since the store was opened; open it again")
	}
	empty := false
	err = guard("reading", func() error {
		return db.View(func(tx *bbolt.Tx) error {
			var err error
			if empty, err = checkLayout(tx, s.path); err != nil || empty {
				return err
			}
			return checkMissing(tx, id, fn(tx))
		})
	})
	if err == nil && empty {
		return s.noStore(id)
	}
	return err
}

// noStore is what view returns for a file that holds no store yet.
func (s *Store) noStore(id job.ID) error {
	if id == "" {
		return nil
	}
	return s.errf(id, "%w", store.ErrNotFound)
}
