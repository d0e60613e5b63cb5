package runner

import (
	"context"
	"errors"
	"sync"
)

// Errors of the lifecycle. Each runner names its own sentinel errors
// (inmem.ErrClosed, ...) wrapping these, so a caller can test for either.
var (
	// ErrClosed is returned by calls made after Close, or after Run
	// returned.
	ErrClosed = errors.New("runner: closed")
	// ErrRunning is returned by a second call of Run.
	ErrRunning = errors.New("runner: Run already called")
)

// Lifecycle is the start and stop of a runner, written once: Run may be
// called once; Close stops a running Run and waits for it to return; Close
// before Run makes Run return at once; Close twice does nothing. The zero
// value is ready to use; a Lifecycle must not be copied after first use.
//
// A runner's Run starts with Start and ends by calling the done function
// Start returned; its Close calls Close. Its other methods check Usable.
// (The model is river's startstop.BaseStartStop.)
type Lifecycle struct {
	mu      sync.Mutex
	started bool
	closed  bool
	stop    context.CancelFunc
	stopped chan struct{} // closed when Run has returned
	fired   bool          // the OnClose functions were called
	onClose []func()
}

// Start marks the runner started and returns the context Run must run
// under (it ends when ctx ends or Close is called) and done, which Run
// must call when it returns. It returns ErrRunning if Run was called
// before, and ErrClosed if Close came first: Run then returns nil at once.
func (l *Lifecycle) Start(ctx context.Context) (context.Context, func(), error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.started:
		return nil, nil, ErrRunning
	case l.closed:
		return nil, nil, ErrClosed
	}
	l.started = true
	l.stopped = make(chan struct{})
	ctx, cancel := context.WithCancel(ctx)
	l.stop = cancel
	done := func() {
		cancel()
		l.mu.Lock()
		l.closed = true
		l.mu.Unlock()
		close(l.stopped)
		l.fire()
	}
	return ctx, done, nil
}

// Close stops Run if it runs and waits until Run has returned. It is safe
// to call concurrently and more than once.
func (l *Lifecycle) Close() {
	l.mu.Lock()
	l.closed = true
	started, stop, stopped := l.started, l.stop, l.stopped
	l.mu.Unlock()
	if !started {
		l.fire()
		return
	}
	stop()
	<-stopped
}

// Stop ends Run's context, as Close does, but does not wait for Run to
// return, and does not close the runner: its other methods work until
// Run has returned. It is for a runner that stops on its own from within
// Run's work (a store that failed), where waiting for Run would never
// end. Before Run, and once Run has returned, it does nothing.
func (l *Lifecycle) Stop() {
	l.mu.Lock()
	stop := l.stop
	l.mu.Unlock()
	if stop != nil {
		stop()
	}
}

// fire calls the OnClose functions, once.
func (l *Lifecycle) fire() {
	l.mu.Lock()
	if l.fired {
		l.mu.Unlock()
		return
	}
	l.fired = true
	fns := l.onClose
	l.onClose = nil
	l.mu.Unlock()
	for _, f := range fns {
		f()
	}
}

// OnClose registers f to be called once the runner is closed: when Run
// returns, or by Close if Run never ran. Runners use it to wake waiters.
// f is called at once if that has happened already.
func (l *Lifecycle) OnClose(f func()) {
	l.mu.Lock()
	if l.fired {
		l.mu.Unlock()
		f()
		return
	}
	l.onClose = append(l.onClose, f)
	l.mu.Unlock()
}

// Usable returns ErrClosed once Close was called or Run returned.
func (l *Lifecycle) Usable() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return ErrClosed
	}
	return nil
}
