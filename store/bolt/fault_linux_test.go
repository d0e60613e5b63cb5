package bolt

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/store"
	"go.etcd.io/bbolt"
	"golang.org/x/sys/unix"
)

// guard turns real memory faults into errors: SIGSEGV on a page mapped
// without access, and SIGBUS on a page of a file mapping past the end of
// the file (what a truncated bbolt file gives). Without guard either
// would kill the process.
func TestGuardFaults(t *testing.T) {
	noAccess, err := unix.Mmap(-1, 0, 4096, unix.PROT_NONE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(noAccess)
	f, err := os.Create(filepath.Join(t.TempDir(), "short"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(4096); err != nil {
		t.Fatal(err)
	}
	pastEOF, err := unix.Mmap(int(f.Fd()), 0, 3*4096, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(pastEOF)
	for name, b := range map[string][]byte{"SIGSEGV": noAccess, "SIGBUS": pastEOF[2*4096:]} {
		var got byte
		err := guard("reading", func() error {
			got = b[10]
			return nil
		})
		if !errors.Is(err, ErrDamaged) || !errors.Is(err, job.ErrCorrupt) {
			t.Fatalf("%s: %v (read %d); want a damage error", name, err, got)
		}
		t.Logf("%s: %v", name, err)
	}
	// bbolt's own assertions are panics: they become errors too.
	err = guard("writing", func() error { panic("assertion failed: page 3 already freed") })
	if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "writing it failed: assertion failed") {
		t.Fatalf("panic: %v", err)
	}
}

// A panic inside a write transaction poisons the Store: every later call
// fails with that damage, naming the file; Close still releases the file;
// and the transaction was not committed.
func TestPoisonAfterWritePanic(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "baton.db")
	s, err := Open(path, &Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := job.New("p", ast.Par(ast.Act("log", 1), ast.Act("log", 2)))
	j, acts := tr.Job, tr.Actions
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Create(ctx, j); err != nil {
		t.Fatal(err)
	}
	err = s.update(ctx, func(tx *bbolt.Tx, w *writes) error {
		if err := w.put(tx.Bucket(jobsBucket), []byte("half-done"), []byte("x")); err != nil {
			return err
		}
		var b []byte
		_ = b[7] // a bug, or a fault in bbolt's memory map
		return nil
	})
	if !errors.Is(err, ErrDamaged) {
		t.Fatalf("update: %v; want ErrDamaged", err)
	}
	j2, err := job.Restart(j, []job.Result{acts[0].Succeed(nil)})
	if err != nil {
		t.Fatal(err)
	}
	calls := map[string]error{
		"Save": s.Save(ctx, j2.Job, j2.Step),
		"Load": func() error { _, err := s.Load(ctx, "p"); return err }(),
		"List": func() error { _, err := s.List(ctx, store.Query{}); return err }(),
	}
	for what, err := range calls {
		if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "index out of range") {
			t.Fatalf("%s after the panic: %v; want the damage error naming %s", what, err, path)
		}
	}
	t.Log(calls["Save"])
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(path, &Options{Timeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatalf("reopening after Close: %v", err)
	}
	defer s.Close()
	got, err := s.Load(ctx, "p")
	if err != nil || got.Version() != 1 {
		t.Fatalf("Load after reopening: %v, %v", got, err)
	}
	err = s.view(ctx, "", func(tx *bbolt.Tx) error {
		if tx.Bucket(jobsBucket).Get([]byte("half-done")) != nil {
			return errors.New("the panicking transaction was committed")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A Store wedged by a failed write (bbolt may hold its writer lock for
// good) closes without waiting for bbolt, and releases the file.
func TestWedgedClose(t *testing.T) {
	path := filepath.Join(t.TempDir(), "baton.db")
	s, err := Open(path, &Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	// Hold bbolt's writer lock, as a write that panicked inside Begin would.
	tx, err := s.db.Begin(true)
	if err != nil {
		t.Fatal(err)
	}
	_ = tx
	s.poison.Store(damagef("test"))
	s.wedged.Store(true)
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close of a wedged Store waited for bbolt")
	}
	s2, err := Open(path, &Options{Timeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatalf("reopening after closing a wedged Store: %v", err)
	}
	s2.Close()
}

// A reader waits at the gate while a write transaction holds it, up to
// Options.Timeout (then ErrLocked); a writer waits while a reader holds
// it, for as long as its context allows.
func TestGateWaits(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "baton.db")
	w, err := Open(path, &Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	tr, err := job.New("g", ast.Par(ast.Act("log", 1), ast.Act("log", 2)))
	j, acts := tr.Job, tr.Actions
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Create(ctx, j); err != nil {
		t.Fatal(err)
	}
	r, err := OpenReadOnly(path, &Options{Timeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	patient, err := OpenReadOnly(path, &Options{Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer patient.Close()

	// A write transaction in progress: the reader gives up.
	if err := w.lock.lockGate(ctx); err != nil {
		t.Fatal(err)
	}
	_, err = r.Load(ctx, "g")
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), path) {
		t.Fatalf("Load while a write holds the gate: %v; want ErrLocked naming %s", err, path)
	}
	t.Log(err)
	// A reader whose context ends before its timeout.
	cctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	_, err = patient.List(cctx, store.Query{})
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("List with a context ending while it waits: %v", err)
	}
	w.lock.unlockGate()
	if _, err := r.Load(ctx, "g"); err != nil {
		t.Fatalf("Load once the write is done: %v", err)
	}

	// A read in progress: the writer waits for its context.
	if err := r.lock.rlockGate(ctx, time.Second); err != nil {
		t.Fatal(err)
	}
	j2, err := job.Restart(j, []job.Result{acts[0].Succeed(nil)})
	if err != nil {
		t.Fatal(err)
	}
	tctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	err = w.Save(tctx, j2.Job, j2.Step)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), path) {
		t.Fatalf("Save while a reader holds the gate: %v; want DeadlineExceeded naming %s", err, path)
	}
	t.Log(err)
	// A writer waiting at the turnstile keeps new readers out...
	saved := make(chan error, 1)
	go func() { saved <- w.Save(ctx, j2.Job, j2.Step) }()
	waitUntil(t, func() bool {
		// T is write-locked once the writer waits for the reader.
		lk := unix.Flock_t{Type: unix.F_RDLCK, Whence: 0, Start: turnstileByte, Len: 1}
		if err := unix.FcntlFlock(r.rfile.Fd(), unix.F_OFD_GETLK, &lk); err != nil {
			t.Fatal(err)
		}
		return lk.Type == unix.F_WRLCK
	})
	r2, err := OpenReadOnly(path, &Options{Timeout: 50 * time.Millisecond})
	if err == nil {
		r2.Close()
		t.Fatal("a new reader passed a writer waiting at the turnstile")
	}
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("OpenReadOnly while a writer waits: %v; want ErrLocked", err)
	}
	// ...and gets in when the reader leaves.
	r.lock.unlockGate()
	if err := <-saved; err != nil {
		t.Fatal(err)
	}
	got, err := r.Load(ctx, "g")
	if err != nil || got.Version() != 2 {
		t.Fatalf("Load after the Save: %v, %v", got, err)
	}
}

func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("timed out waiting")
		}
	}
}

// BenchmarkGate measures what the gate adds to each write transaction:
// write-locking G (with T) and releasing it, two fcntl calls when no
// reader is about. Compare with BenchmarkSave.
//
//	go test -run '^$' -bench Gate ./store/bolt/
func BenchmarkGate(b *testing.B) {
	l, err := lockWriter(filepath.Join(b.TempDir(), "baton.db"), time.Second)
	if err != nil {
		b.Fatal(err)
	}
	defer l.close()
	ctx := context.Background()
	for b.Loop() {
		if err := l.lockGate(ctx); err != nil {
			b.Fatal(err)
		}
		l.unlockGate()
	}
}
