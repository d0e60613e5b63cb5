package main

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/store/bolt"
	berrors "go.etcd.io/bbolt/errors"
)

// lockTimeout is how long opening a store waits for another process to
// release it before giving up with a clear message.
const lockTimeout = time.Second

// storePath returns the store file to use: the --store flag, else
// $BATON_STORE, else $XDG_STATE_HOME/baton/baton.db, else
// $HOME/.local/state/baton/baton.db.
func (c *cli) storePath(flagValue string) (string, error) {
	if flagValue != "" {
		return flagValue, nil
	}
	if p := c.getenv("BATON_STORE"); p != "" {
		return p, nil
	}
	if d := c.getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "baton", "baton.db"), nil
	}
	if h := c.getenv("HOME"); h != "" {
		return filepath.Join(h, ".local", "state", "baton", "baton.db"), nil
	}
	return "", errors.New("no store given: use --store PATH, or set BATON_STORE, XDG_STATE_HOME or HOME")
}

// How a command opens the store.
type openMode int

const (
	readOnly  openMode = iota // never writes, works beside a running job
	readWrite                 // the file must exist
	create                    // makes the file (and the default directory)
)

// openStore opens the store chosen by the --store flag value. With create
// it makes the file when it is missing, and its directory too when the
// store is in the default location (a directory in a path the user gave
// is not made behind a typo); otherwise a missing file is an error (a
// command must not leave an empty store behind a typo). readOnly opens it
// with bolt.OpenReadOnly: it never writes (not even to an empty file),
// works on a file it may not write, and while another process runs jobs
// on it. With retain > 0, a runner on it deletes the settled jobs older
// than that (bolt.Options.Retention). The returned path is the file
// opened.
func (c *cli) openStore(flagValue string, mode openMode, retain time.Duration) (*bolt.Store, string, error) {
	path, err := c.storePath(flagValue)
	if err != nil {
		return nil, "", err
	}
	fi, err := os.Stat(path)
	switch {
	case err == nil && fi.IsDir():
		return nil, path, fmt.Errorf("%s is a directory, not a store file", path)
	case err == nil && !fi.Mode().IsRegular():
		return nil, path, notRegular("store "+path, fi.Mode())
	case errors.Is(err, fs.ErrNotExist) && mode != create:
		return nil, path, fmt.Errorf("no store at %s (a store is made by 'baton run'; use --store to pick another)", path)
	case errors.Is(err, fs.ErrNotExist):
		given := flagValue != "" || c.getenv("BATON_STORE") != ""
		if err := storeDir(filepath.Dir(path), !given); err != nil {
			return nil, path, fmt.Errorf("cannot make store %s: %w", path, err)
		}
	}
	open := bolt.Open
	if mode == readOnly {
		open = bolt.OpenReadOnly
	}
	st, err := open(path, &bolt.Options{Timeout: lockTimeout, Retention: retain})
	switch {
	case errors.Is(err, bolt.ErrLocked):
		return nil, path, &storeError{fmt.Sprintf("store %s is in use by another process (a 'baton run' or 'baton resume' still going, or a 'baton serve': reach a served store's jobs with --server URL); gave up after %v", path, lockTimeout), err}
	case err != nil:
		return nil, path, &storeError{fmt.Sprintf("cannot open store %s: %s", path, openMessage(path, err)), err}
	}
	return st, path, nil
}

// retainFlag adds the --retain flag of the commands that run jobs on the
// store.
func retainFlag(fs *flag.FlagSet) *time.Duration {
	return fs.Duration("retain", 0, "delete the jobs that finished more than `D` ago (like 72h), while this command runs (0: keep every job)")
}

// storeError is an error about the store with a message of its own, which
// still wraps the cause (for storeExit).
type storeError struct {
	msg string
	err error
}

func (e *storeError) Error() string { return e.msg }

// storeInUse returns the storeError of err, and true, when err says the
// store file is held by another process.
func storeInUse(err error) (*storeError, bool) {
	var se *storeError
	return se, errors.Is(err, bolt.ErrLocked) && errors.As(err, &se)
}
func (e *storeError) Unwrap() error { return e.err }

// cause returns the innermost file system error in err's chain (a
// *fs.PathError or a syscall.Errno: "write X: no space left on device"),
// or err itself: what a user needs of a store failure, without the
// layers that carried it.
func cause(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno
	}
	return err
}

// storeExit is the exit status for err: exitStore when the store itself
// cannot be used (damaged, full, failing, in use), else exitError.
func storeExit(err error) int {
	for _, target := range []error{bolt.ErrLocked, bolt.ErrDamaged, job.ErrCorrupt, berrors.ErrInvalid, berrors.ErrChecksum, berrors.ErrVersionMismatch,
		syscall.ENOSPC, syscall.EDQUOT, syscall.EIO, syscall.EROFS, syscall.EFBIG} {
		if errors.Is(err, target) {
			return exitStore
		}
	}
	return exitError
}

// openMessage is the message of err, from bolt.Open, without what
// openStore's message says already: the package name and "open PATH: "
// (said by the store and by the os package).
func openMessage(path string, err error) string {
	msg := strings.TrimPrefix(err.Error(), "store/bolt: ")
	for {
		rest, ok := strings.CutPrefix(msg, "open "+path+": ")
		if !ok {
			rest, ok = strings.CutPrefix(msg, "open "+path+" read-only: ")
		}
		if !ok {
			return msg
		}
		msg = rest
	}
}

// checkID checks a job ID given on the command line; the message does
// not start with the job package's name.
func checkID(id job.ID) error {
	if err := id.Check(); err != nil {
		return errors.New(strings.TrimPrefix(err.Error(), "job: "))
	}
	return nil
}

// storeDir checks that dir, the directory of a store file to be made,
// exists; with create it makes dir when it is missing.
func storeDir(dir string, create bool) error {
	if create {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("making directory %s: %v", dir, pathErr(err))
		}
		return nil
	}
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("directory %s does not exist", dir)
	case err != nil:
		return fmt.Errorf("directory %s: %v", dir, pathErr(err))
	case !fi.IsDir():
		return fmt.Errorf("%s is not a directory", dir)
	}
	return nil
}

// submitFailed is the error of a submit of job id from source to where
// that failed with err, naming the job and the place once: a store's
// error names them already (store/bolt: PATH: job ID: ...).
func submitFailed(source string, id job.ID, where string, err error) error {
	msg := err.Error()
	what := "submit job " + string(id)
	if strings.Contains(msg, "job "+string(id)+":") {
		what = "submit"
	}
	if where != "" && !strings.Contains(msg, where) {
		what += " to " + where
	}
	return fmt.Errorf("%s: %s: %w", source, what, err)
}
