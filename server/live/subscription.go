package live

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/store"
)

// Kind is the kind of an Update, and the SSE event name it is sent as.
type Kind uint8

// The kinds of updates a job stream sends.
const (
	KindSnapshot Kind = iota + 1 // the job as it stands
	KindStep                     // the steps since the previous update
	KindEnd                      // the job settled: the last update
)

var kindNames = [...]string{"", "snapshot", "step", "end"}

func (k Kind) String() string {
	if int(k) < len(kindNames) && k > 0 {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Update is one event of a job stream. Its slices belong to the hub and
// are shared with other streams: read them, never modify them.
type Update struct {
	Kind Kind
	// Version is the newest version the update covers: its SSE id.
	Version uint64
	// Job is the job at Version.
	Job job.Job
	// Steps (KindStep) are the steps since the previous update, oldest
	// first: every version after it, up to Version, once.
	Steps []Step
	// Changed (KindStep) is the latest state of every node the steps
	// changed.
	Changed []job.NodeInfo
}

// errIdle is next's answer when its idle channel fired first.
var errIdle = errors.New("live: idle")

// Subscription follows one job: a snapshot (unless it resumed from a
// version the job still has), then every later step exactly once, in
// order, coalesced to at most MaxRate updates a second, then an end once
// the job is settled. It holds no queue: each Next takes the job's newest
// state and the steps since the previous one from the job's watcher, so
// a subscriber that falls behind costs no memory, only a longer update.
// Its methods must be called from one goroutine, Close aside.
type Subscription struct {
	h       *Hub
	w       *watcher
	cursor  uint64 // the newest version delivered
	inc     uint64 // the incarnation delivered
	started bool   // a snapshot, or the version resumed from, was delivered
	ending  bool   // the job was settled at the start: snapshot, then end
	ended   bool
	next    time.Time // no update before
	gap     time.Duration
	once    sync.Once
}

// Subscribe follows job id from version after (0: from a snapshot). It
// waits for the job's first read, and fails with ErrSettled when the job
// is settled at version after, with an error wrapping store.ErrNotFound
// when there is no such job, and with ErrTooManyStreams or ErrShutdown.
// A version the job does not have (from the future, or of an earlier
// incarnation) gets a snapshot. Close it when done.
func (h *Hub) Subscribe(ctx context.Context, id job.ID, after uint64) (*Subscription, error) {
	if err := h.openStream(); err != nil {
		return nil, err
	}
	w, err := h.attach(id)
	if err != nil {
		h.closeStream()
		return nil, err
	}
	s := &Subscription{h: h, w: w, gap: time.Duration(float64(time.Second) / h.opts.MaxRate)}
	// The job as it is now decides between 204, a snapshot and a resume:
	// a watcher that read it a while ago reads it again.
	sn, err := h.first(ctx, w, w.fresh(s.gap))
	if err == nil && sn.latest.Done() && after == sn.version() {
		err = ErrSettled
	}
	if err != nil {
		s.Close()
		if errors.Is(err, store.ErrNotFound) || errors.Is(err, ErrSettled) || errors.Is(err, ErrShutdown) {
			return nil, err
		}
		return nil, fmt.Errorf("live: job %s: %w", id, err)
	}
	switch {
	case sn.latest.Done():
		s.ending = true
	case after >= sn.base() && after <= sn.version():
		s.cursor, s.inc, s.started = after, sn.origin.Incarnation(), true
	}
	return s, nil
}

// Close ends the subscription; calling it twice is safe.
func (s *Subscription) Close() {
	s.once.Do(func() {
		s.h.detach(s.w)
		s.h.closeStream()
	})
}

// Next returns the next update. After the end update it returns io.EOF;
// when the job is deleted, an error wrapping store.ErrNotFound; at
// Shutdown, ErrShutdown; when ctx ends, its error.
func (s *Subscription) Next(ctx context.Context) (Update, error) {
	return s.nextOr(ctx, nil)
}

// nextOr is Next that gives up with errIdle when idle fires first.
func (s *Subscription) nextOr(ctx context.Context, idle <-chan time.Time) (Update, error) {
	var rate *time.Timer
	defer func() {
		if rate != nil {
			rate.Stop()
		}
	}()
	for {
		if s.ended {
			return Update{}, io.EOF
		}
		sn, ch := s.w.current()
		var wait <-chan time.Time
		if sn != nil {
			if sn.err != nil {
				return Update{}, fmt.Errorf("live: job %s: %w", s.w.id, sn.err)
			}
			if s.due(sn) {
				if d := time.Until(s.next); d > 0 {
					if rate == nil {
						rate = time.NewTimer(d)
					} else {
						rate.Reset(d)
					}
					wait = rate.C
				} else {
					u, err := s.take(sn)
					if err != nil {
						return Update{}, err
					}
					s.next = time.Now().Add(s.gap)
					return u, nil
				}
			}
		}
		if wait != nil {
			ch = nil // the rate decides; the newest snap is taken then
		}
		select {
		case <-ch:
		case <-wait:
		case <-idle:
			return Update{}, errIdle
		case <-ctx.Done():
			return Update{}, ctx.Err()
		case <-s.h.closing:
			return Update{}, ErrShutdown
		}
	}
}

// due reports whether sn has an update for the subscriber.
func (s *Subscription) due(sn *snap) bool {
	switch {
	case !s.started:
		return true
	case s.inc != sn.origin.Incarnation() || s.cursor > sn.version() || s.cursor < sn.base():
		return true // another job under the same ID: a snapshot
	case s.cursor < sn.version():
		return true
	}
	return sn.latest.Done()
}

// take makes the update due in sn and moves the cursor past it.
func (s *Subscription) take(sn *snap) (Update, error) {
	switch {
	case !s.started || s.inc != sn.origin.Incarnation() || s.cursor > sn.version() || s.cursor < sn.base():
		s.started, s.cursor, s.inc = true, sn.version(), sn.origin.Incarnation()
		return Update{Kind: KindSnapshot, Version: sn.version(), Job: sn.latest}, nil
	case s.ending || s.cursor == sn.version():
		// A job settled at the start ends after its snapshot; one that
		// settled since, after its last step.
		s.ended, s.cursor = true, sn.version()
		return Update{Kind: KindEnd, Version: sn.version(), Job: sn.latest}, nil
	}
	changed, err := sn.changed(s.cursor, s.h.opts.Changed)
	if err != nil {
		return Update{}, fmt.Errorf("live: job %s: %w", s.w.id, err)
	}
	u := Update{Kind: KindStep, Version: sn.version(), Job: sn.latest, Steps: sn.stepsAfter(s.cursor), Changed: changed}
	s.cursor = sn.version()
	return u, nil
}
