package live

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/store"
)

// Hub serves the live updates of the jobs of one store: job streams,
// list streams, long polls and watches, all fed by one watcher per watched
// job. Its methods may be called concurrently.
type Hub struct {
	opts   Options
	ctx    context.Context // ends at Shutdown: the watchers' reads
	cancel context.CancelFunc

	mu       sync.Mutex
	watchers map[job.ID]*watcher
	list     *listFeed // nil while no list stream is open
	streams  int       // open streams and subscriptions
	closing  chan struct{}
	closed   bool

	wg      sync.WaitGroup // watchers and the list feed
	streamw sync.WaitGroup // open streams and subscriptions

	dropped  atomic.Int64
	buffered atomic.Int64
}

// New returns a hub over opts.Store. It starts nothing until something
// subscribes; Shutdown stops it.
func New(opts Options) (*Hub, error) {
	if opts.Store == nil {
		return nil, errors.New("live: Options.Store is nil")
	}
	if _, ok := opts.Store.(store.Historian); !ok {
		return nil, fmt.Errorf("live: store %T keeps no history, which streams are read from", opts.Store)
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Hub{
		opts:     opts.withDefaults(),
		ctx:      ctx,
		cancel:   cancel,
		watchers: map[job.ID]*watcher{},
		closing:  make(chan struct{}),
	}, nil
}

// Notify tells the hub that job id may have changed. It is a hint to look
// again, never a state: a lost notice delays an update (by at most
// SafetyPoll when Options.Notified, else Poll) and a doubled one costs at
// most a read. It never blocks: call it from runner Hooks.Step.
func (h *Hub) Notify(id job.ID) {
	h.mu.Lock()
	w, l := h.watchers[id], h.list
	h.mu.Unlock()
	if w != nil {
		w.poke()
	}
	if l != nil {
		l.hint(id)
	}
}

// Stats are the hub's own counters.
type Stats struct {
	// Streams open (job streams, list streams and Subscriptions).
	Streams int
	// Watchers running: one per job that has streams or waiters, or had
	// them less than SafetyPoll ago.
	Watchers int
	// Dropped counts the streams ended because their client read nothing
	// for SlowClient.
	Dropped int64
	// Buffered is the bytes of events being written: at most one event
	// per stream, as a stream takes its next event only once the
	// previous one was written.
	Buffered int64
}

// Stats returns the hub's counters now.
func (h *Hub) Stats() Stats {
	h.mu.Lock()
	defer h.mu.Unlock()
	return Stats{Streams: h.streams, Watchers: len(h.watchers), Dropped: h.dropped.Load(), Buffered: h.buffered.Load()}
}

// Shutdown ends every open stream with a shutdown event, makes new ones
// fail with ErrShutdown, ends long polls, and waits until the streams have
// ended or ctx ends (returning its error). Calling it twice is safe.
func (h *Hub) Shutdown(ctx context.Context) error {
	h.mu.Lock()
	if !h.closed {
		h.closed = true
		close(h.closing)
	}
	h.mu.Unlock()
	done := make(chan struct{})
	go func() {
		h.streamw.Wait()
		h.mu.Lock()
		for id, w := range h.watchers {
			// Lingering ones, and those of watches not yet stopped:
			// their late detach finds them gone.
			delete(h.watchers, id)
			close(w.stop)
		}
		h.mu.Unlock()
		h.cancel()
		h.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("live: shutdown: %w", ctx.Err())
	}
}

// openStream counts a stream in, or fails past MaxStreams or once
// shutting down.
func (h *Hub) openStream() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case h.closed:
		return ErrShutdown
	case h.streams >= h.opts.MaxStreams:
		return fmt.Errorf("%w (%d)", ErrTooManyStreams, h.opts.MaxStreams)
	}
	h.streams++
	h.streamw.Add(1)
	return nil
}

func (h *Hub) closeStream() {
	h.mu.Lock()
	h.streams--
	h.mu.Unlock()
	h.streamw.Done()
}

// attach returns the watcher of job id, started if it was not running,
// with one more subscriber.
func (h *Hub) attach(id job.ID) (*watcher, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, ErrShutdown
	}
	w := h.watchers[id]
	if w == nil {
		w = &watcher{h: h, id: id, wake: make(chan struct{}, 1), stop: make(chan struct{}), changed: make(chan struct{}), readDone: make(chan struct{})}
		h.watchers[id] = w
		h.wg.Add(1)
		go w.run()
	}
	w.refs++
	return w, nil
}

// detach takes a subscriber away from w. A watcher without subscribers
// lingers for SafetyPoll before it stops, so that a client that comes
// back at once (the next long poll, a reconnecting stream) finds the job
// read already.
func (h *Hub) detach(w *watcher) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if w.refs--; w.refs > 0 {
		return
	}
	if h.closed || w.cur == nil || w.cur.err != nil {
		// Nothing worth keeping: a missing job (a flood of requests for
		// jobs that do not exist must not leave watchers behind), a store
		// that failed.
		h.retireLocked(w)
		return
	}
	time.AfterFunc(h.opts.SafetyPoll, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.retireLocked(w)
	})
}

// retireLocked stops w unless it has subscribers again or was stopped.
func (h *Hub) retireLocked(w *watcher) {
	if w.refs == 0 && h.watchers[w.id] == w {
		delete(h.watchers, w.id)
		close(w.stop)
	}
}

// first waits until w has done read number need (0: any) and returns its
// snap, or why the job cannot be read.
func (h *Hub) first(ctx context.Context, w *watcher, need uint64) (*snap, error) {
	for {
		done, ch := w.readsDone()
		if s, _ := w.current(); s != nil && done >= need {
			return s, s.err
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-h.closing:
			return nil, ErrShutdown
		}
	}
}
