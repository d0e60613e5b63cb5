//go:build !linux

package bolt

import (
	"context"
	"errors"
	"os"
	"time"
)

// Without Linux's open file description locks there is no gate: the
// writer keeps bbolt's exclusive flock for as long as it has the file
// open, and a reader's bbolt.Open (a shared flock) waits for it to close,
// then fails with ErrLocked, as before. Readers still never write, and
// read while no writer has the file open.
//
// (fileLock is always nil here; its methods do nothing.)
type fileLock struct{}

var errBusy = errors.New("lock held")

func lockWriter(path string, timeout time.Duration) (*fileLock, error) { return nil, nil }

func readerLock(f *os.File) *fileLock { return nil }

func (l *fileLock) downgrade(bf *os.File) error { return nil }

// funlock does nothing here: a Store wedged by a failed write (see
// Store.Close) keeps bbolt's flock until the process exits.
func funlock(bf *os.File) error { return nil }

func (l *fileLock) lockGate(ctx context.Context) error { return nil }

func (l *fileLock) rlockGate(ctx context.Context, timeout time.Duration) error { return nil }

func (l *fileLock) unlockGate() {}

func (l *fileLock) close() error { return nil }
