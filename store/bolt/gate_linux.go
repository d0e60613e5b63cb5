//go:build linux

package bolt

import (
	"context"
	"errors"
	"io"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// Byte ranges of the file locked with open file description (OFD) locks,
// far past any data; see "Locking" in the package documentation. OFD
// locks belong to an open file, not to a process: two Stores in one
// process, each with its own *os.File, exclude each other as two processes
// would, and closing some other descriptor of the file does not drop them.
const (
	writerByte    = 1 << 62        // W: held for writing by the writing Store, for its life
	turnstileByte = writerByte + 1 // T: closed (write-locked) by a writer waiting for readers to leave G
	gateByte      = writerByte + 2 // G: write-locked around each write transaction, read-locked around each read
)

// fileLock holds the OFD locks of one Store on its own descriptor of the
// file.
type fileLock struct {
	f  *os.File
	fd uintptr
}

// ofd sets (typ F_RDLCK or F_WRLCK) or releases (F_UNLCK) an OFD lock on
// n bytes from start, without waiting.
func (l *fileLock) ofd(typ int16, start, n int64) error {
	lk := unix.Flock_t{Type: typ, Whence: io.SeekStart, Start: start, Len: n}
	for {
		err := unix.FcntlFlock(l.fd, unix.F_OFD_SETLK, &lk)
		if err != unix.EINTR {
			return err
		}
	}
}

func isBusy(err error) bool { return errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EACCES) }

// errBusy is poll's error when the deadline passes.
var errBusy = errors.New("lock held")

// poll calls try until it succeeds or fails with an error other than a
// lock held by someone else, ctx ends, or the deadline (if not zero)
// passes (errBusy). It sleeps between tries, from 20µs up to 2ms.
func poll(ctx context.Context, deadline time.Time, try func() error) error {
	wait := 20 * time.Microsecond
	for {
		err := try()
		if err == nil || !isBusy(err) {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		d := wait
		if !deadline.IsZero() {
			left := time.Until(deadline)
			if left <= 0 {
				return errBusy
			}
			d = min(d, left)
		}
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		wait = min(2*wait, 2*time.Millisecond)
	}
}

// lockWriter opens the file (creating it, as bbolt would) and takes W,
// waiting at most timeout; a second writer fails with errBusy.
func lockWriter(path string, timeout time.Duration) (*fileLock, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	l := readerLock(f)
	err = poll(context.Background(), time.Now().Add(timeout), func() error { return l.ofd(unix.F_WRLCK, writerByte, 1) })
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	return l, nil
}

// readerLock returns the lock of a reader, on f, its own descriptor of the
// file (which may be read-only).
func readerLock(f *os.File) *fileLock { return &fileLock{f: f, fd: f.Fd()} }

// downgrade turns bbolt's exclusive flock on its descriptor bf into a
// shared one, so that readers' bbolt.Open (which takes a shared flock)
// does not wait for the writer to close. Writers are kept apart by W;
// other programs that open the file with bbolt for writing are still kept
// out by the shared flock.
func (l *fileLock) downgrade(bf *os.File) error {
	if l == nil || bf == nil {
		return nil
	}
	err := unix.Flock(int(bf.Fd()), unix.LOCK_SH|unix.LOCK_NB)
	if errors.Is(err, unix.EWOULDBLOCK) {
		return errBusy
	}
	return err
}

// funlock releases bbolt's flock on its descriptor bf, which closing bf
// does not do while bbolt's memory map of the file remains.
func funlock(bf *os.File) error { return unix.Flock(int(bf.Fd()), unix.LOCK_UN) }

// lockGate write-locks G for a write transaction, waiting (for as long as
// ctx allows) for readers to leave it. While it waits it holds T, so that
// no new reader enters: a stream of readers cannot starve the writer.
func (l *fileLock) lockGate(ctx context.Context) error {
	if l == nil {
		return nil
	}
	err := l.ofd(unix.F_WRLCK, turnstileByte, 2) // T and G at once: no reader about
	if err == nil || !isBusy(err) {
		return err
	}
	if err := poll(ctx, time.Time{}, func() error { return l.ofd(unix.F_WRLCK, turnstileByte, 1) }); err != nil {
		return err
	}
	if err := poll(ctx, time.Time{}, func() error { return l.ofd(unix.F_WRLCK, turnstileByte, 2) }); err != nil {
		_ = l.ofd(unix.F_UNLCK, turnstileByte, 1)
		return err
	}
	return nil
}

// rlockGate read-locks G for a read, passing through T: it waits while a
// writer holds or waits for G, for at most timeout (errBusy) or until ctx
// ends.
func (l *fileLock) rlockGate(ctx context.Context, timeout time.Duration) error {
	if l == nil {
		return nil
	}
	err := poll(ctx, time.Now().Add(timeout), func() error { return l.ofd(unix.F_RDLCK, turnstileByte, 2) })
	if err != nil {
		return err
	}
	return l.ofd(unix.F_UNLCK, turnstileByte, 1)
}

// unlockGate releases G (and T, if held).
func (l *fileLock) unlockGate() {
	if l != nil {
		_ = l.ofd(unix.F_UNLCK, turnstileByte, 2)
	}
}

// close releases every lock l holds, and its descriptor.
func (l *fileLock) close() error {
	if l == nil {
		return nil
	}
	return l.f.Close()
}
