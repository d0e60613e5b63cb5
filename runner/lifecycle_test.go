package runner_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/batonwf/baton/runner"
)

// run is a Run written on a Lifecycle: it blocks until its context ends.
func run(l *runner.Lifecycle, ctx context.Context, running chan<- struct{}) error {
	ctx, done, err := l.Start(ctx)
	if errors.Is(err, runner.ErrClosed) {
		return nil
	}
	if err != nil {
		return err
	}
	defer done()
	if running != nil {
		close(running)
	}
	<-ctx.Done()
	return nil
}

func TestLifecycleStartStop(t *testing.T) {
	var l runner.Lifecycle
	if err := l.Usable(); err != nil {
		t.Fatalf("Usable before Run: %v", err)
	}
	closed := make(chan struct{})
	l.OnClose(func() { close(closed) })
	running := make(chan struct{})
	ret := make(chan error, 1)
	var ended atomic.Bool // Run's body is over, before it calls done
	go func() {
		ctx, done, err := l.Start(context.Background())
		if err != nil {
			ret <- err
			return
		}
		close(running)
		<-ctx.Done()
		ended.Store(true)
		done()
		ret <- nil
	}()
	<-running
	if err := run(&l, context.Background(), nil); !errors.Is(err, runner.ErrRunning) {
		t.Errorf("second Run = %v, want ErrRunning", err)
	}
	select {
	case <-closed:
		t.Fatal("OnClose called while Run runs")
	default:
	}
	l.Close() // returns once Run has called done
	if !ended.Load() {
		t.Fatal("Close returned before Run did")
	}
	if err := <-ret; err != nil {
		t.Errorf("Run = %v", err)
	}
	<-closed
	if err := l.Usable(); !errors.Is(err, runner.ErrClosed) {
		t.Errorf("Usable after Close = %v, want ErrClosed", err)
	}
	l.Close() // twice: nothing
	called := false
	l.OnClose(func() { called = true })
	if !called {
		t.Error("OnClose after Close was not called at once")
	}
}

func TestLifecycleCloseBeforeRun(t *testing.T) {
	var l runner.Lifecycle
	n := 0
	l.OnClose(func() { n++ })
	l.Close()
	l.Close()
	if n != 1 {
		t.Errorf("OnClose called %d times, want 1", n)
	}
	if err := run(&l, context.Background(), nil); err != nil {
		t.Errorf("Run after Close = %v, want nil at once", err)
	}
	if err := l.Usable(); !errors.Is(err, runner.ErrClosed) {
		t.Errorf("Usable = %v", err)
	}
}

func TestLifecycleContextEnds(t *testing.T) {
	var l runner.Lifecycle
	ctx, cancel := context.WithCancel(context.Background())
	running := make(chan struct{})
	ret := make(chan error, 1)
	go func() { ret <- run(&l, ctx, running) }()
	<-running
	cancel()
	if err := <-ret; err != nil {
		t.Errorf("Run = %v", err)
	}
	if err := l.Usable(); !errors.Is(err, runner.ErrClosed) {
		t.Errorf("Usable after Run returned = %v, want ErrClosed", err)
	}
	l.Close() // after Run returned: at once
}

func TestLifecycleConcurrentClose(t *testing.T) {
	var l runner.Lifecycle
	running := make(chan struct{})
	ret := make(chan error, 1)
	var ended atomic.Bool // Run's body is over, before it calls done
	go func() {
		ctx, done, err := l.Start(context.Background())
		if err != nil {
			ret <- err
			return
		}
		close(running)
		<-ctx.Done()
		ended.Store(true)
		done()
		ret <- nil
	}()
	<-running
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(l.Close)
	}
	wg.Wait()
	select { // every Close returned only once Run had
	case err := <-ret:
		if err != nil {
			t.Errorf("Run = %v", err)
		}
	default:
		t.Fatal("a Close returned before Run did")
	}
}

func TestBackoffWait(t *testing.T) {
	b := runner.Backoff{Base: 8 * time.Millisecond, Max: 100 * time.Millisecond}
	for n, hi := range map[int]time.Duration{0: 8, 1: 8, 2: 16, 3: 32, 4: 64, 5: 100, 9: 100, 1000: 100} {
		hi *= time.Millisecond
		for range 200 {
			if w := b.Wait(n); w < hi/2 || w > hi {
				t.Fatalf("Wait(%d) = %v, want in [%v, %v]", n, w, hi/2, hi)
			}
		}
	}
	if w := (runner.Backoff{}).Wait(100); w < 500*time.Millisecond || w > time.Second {
		t.Errorf("zero Backoff Wait(100) = %v, want in [500ms, 1s]", w)
	}
}

func TestBackoffRetry(t *testing.T) {
	b := runner.Backoff{Base: time.Microsecond, Max: time.Microsecond}
	calls := 0
	transient := errors.New("transient")
	err := b.Retry(context.Background(), nil, func() error {
		calls++
		if calls < 3 {
			return transient
		}
		return nil
	})
	if err != nil || calls != 3 {
		t.Errorf("Retry = %v after %d calls, want nil after 3", err, calls)
	}

	permanent := errors.New("permanent")
	calls = 0
	err = b.Retry(context.Background(), func(err error) bool { return err != permanent }, func() error {
		calls++
		return permanent
	})
	if err != permanent || calls != 1 {
		t.Errorf("Retry = %v after %d calls, want the permanent error after 1", err, calls)
	}

	ctx, cancel := context.WithCancel(context.Background())
	calls = 0
	err = b.Retry(ctx, nil, func() error {
		calls++
		if calls == 5 {
			cancel()
		}
		return transient
	})
	if !errors.Is(err, context.Canceled) || !errors.Is(err, transient) || calls != 5 {
		t.Errorf("Retry = %v after %d calls, want Canceled and the last error after 5", err, calls)
	}
}

// TestLifecycleStop: Stop ends Run's context without waiting for Run, so
// Run's own work may call it; before Run it does nothing, and the runner
// stays usable until Run returns.
func TestLifecycleStop(t *testing.T) {
	var l runner.Lifecycle
	l.Stop() // before Run: nothing
	if err := l.Usable(); err != nil {
		t.Fatalf("Usable after Stop before Run = %v", err)
	}
	ctx, done, err := l.Start(context.Background())
	if err != nil {
		t.Fatalf("Start after Stop before Run = %v", err)
	}
	if ctx.Err() != nil {
		t.Fatal("Run's context ended by a Stop that came before Run")
	}
	l.Stop() // from Run's own goroutine: must not wait for Run
	<-ctx.Done()
	if err := l.Usable(); err != nil {
		t.Errorf("Usable after Stop, before Run returned = %v, want nil", err)
	}
	done()
	if err := l.Usable(); !errors.Is(err, runner.ErrClosed) {
		t.Errorf("Usable after Run returned = %v, want ErrClosed", err)
	}
	l.Stop() // after Run returned: nothing
	l.Close()
}
