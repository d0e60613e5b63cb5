package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/store"
	"github.com/batonwf/baton/store/bolt"
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

// openStore opens the store chosen by the --store flag value. With create
// it makes the directory and the file when they are missing; without it, a
// missing file is an error (a command that only reads must not leave an
// empty store behind a typo). The returned path is the file opened.
func (c *cli) openStore(flagValue string, create bool) (*bolt.Store, string, error) {
	path, err := c.storePath(flagValue)
	if err != nil {
		return nil, "", err
	}
	if create {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, path, fmt.Errorf("store %s: making its directory: %w", path, err)
		}
	} else if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, path, fmt.Errorf("no store at %s (a store is made by 'baton run'; use --store to pick another)", path)
	}
	st, err := bolt.Open(path, &bolt.Options{Timeout: lockTimeout})
	switch {
	case errors.Is(err, bolt.ErrLocked):
		return nil, path, fmt.Errorf("store %s is in use by another process (is a 'baton run' or 'baton resume' still going?); gave up after %v", path, lockTimeout)
	case err != nil:
		return nil, path, fmt.Errorf("cannot open store %s: %w", path, err)
	}
	return st, path, nil
}

// loadJob loads a job, with a message that names the job and the store.
func loadJob(ctx context.Context, st store.Store, path string, id job.ID) (job.Job, error) {
	j, err := st.Load(ctx, id)
	return j, jobError(err, path, id)
}

// loadHistory loads a job's history, with a message that names the job and
// the store.
func loadHistory(ctx context.Context, st store.Store, path string, id job.ID) (store.History, error) {
	h, err := store.LoadHistory(ctx, st, id)
	return h, jobError(err, path, id)
}

// jobError names the job and the store in err, and says how to list the
// jobs when there is no such job.
func jobError(err error, path string, id job.ID) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, store.ErrNotFound):
		return fmt.Errorf("job %s not found in %s (run 'baton status --store %s' for the list)", id, path, path)
	default:
		return fmt.Errorf("job %s in %s: %w", id, path, err)
	}
}
