package live

import (
	"errors"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/store"
)

// Change is one change of a job that the list feed saw.
type Change struct {
	// Seq orders the feed's changes: a list stream's event id is the Seq
	// of its newest change.
	Seq uint64
	ID  job.ID
	// Created marks a job the feed had not seen; Deleted one that is
	// gone. Otherwise its status changed.
	Created, Deleted bool
	Status           job.Status
	Version          uint64
	// At is when the feed saw it (Options.Now).
	At time.Time
}

// Bounds of the list feed.
const (
	listScan  = 1000   // unfinished jobs a scan lists
	listRing  = 1024   // changes kept for streams that are behind: the newest 512 to 1,024
	listHints = 10000  // notices waiting to be looked at
	listKnown = 100000 // jobs whose status the feed remembers
)

// listFeed turns notices and periodic scans into changes, for every list
// stream at once. It runs while a list stream is open.
//
// What it guarantees: when Options.Notified (every change is notified),
// each creation and status change of a job is a change, once, in the
// order the feed looked at them; a notice lost (or more than listHints
// waiting at once) is made up for by the next scan for the unfinished
// jobs it lists. Without notices, a scan every SafetyPoll lists the
// first listScan unfinished jobs by ID: a job created and settled between
// two scans, or past the first listScan, may show no change at all.
// Changes are hints for a page to read the jobs again; the state always
// comes from the store.
type listFeed struct {
	h     *Hub
	refs  int // under h.mu
	stop  chan struct{}
	wake  chan struct{}
	ready chan struct{} // closed after the first scan

	mu       sync.Mutex
	hints    map[job.ID]struct{}
	known    map[job.ID]job.Status // read by the feed's goroutine only
	ring     []Change              // the newest changes, oldest first
	seq      uint64                // Seq of the newest change
	changed  chan struct{}         // closed and replaced on a change
	overflow bool                  // notices were dropped: scan soon
}

// Changes since cursor: the ones after it, and whether the cursor is too
// old (or from another feed) for them to be all.
func (f *listFeed) since(cursor uint64) (cs []Change, missed bool, newest uint64, ch <-chan struct{}) {
	f.mu.Lock()
	defer f.mu.Unlock()
	oldest := f.seq + 1 - uint64(len(f.ring))
	switch {
	case cursor > f.seq || cursor+1 < oldest:
		return nil, true, f.seq, f.changed
	case cursor == f.seq:
		return nil, false, f.seq, f.changed
	}
	return f.ring[cursor+1-oldest:], false, f.seq, f.changed
}

func (f *listFeed) hint(id job.ID) {
	f.mu.Lock()
	if len(f.hints) < listHints {
		f.hints[id] = struct{}{}
	} else {
		f.overflow = true
	}
	f.mu.Unlock()
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

func (f *listFeed) add(c Change) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seq++
	c.Seq = f.seq
	if len(f.ring) == listRing {
		// Keep the newer half: a copy every listRing/2 changes. Streams
		// hold the old array, which stays as it was.
		f.ring = append(make([]Change, 0, listRing), f.ring[listRing/2:]...)
	}
	f.ring = append(f.ring, c)
	close(f.changed)
	f.changed = make(chan struct{})
}

func (f *listFeed) run() {
	defer f.h.wg.Done()
	f.scan(true)
	close(f.ready)
	tick := time.NewTicker(f.h.opts.SafetyPoll)
	defer tick.Stop()
	gap := time.Duration(float64(time.Second) / f.h.opts.MaxRate)
	for {
		select {
		case <-f.stop:
			return
		case <-f.wake:
			// Notices of one job that come within 1/MaxRate are one look.
			select {
			case <-time.After(gap):
			case <-f.stop:
				return
			}
			f.mu.Lock()
			hints, overflow := f.hints, f.overflow
			f.hints, f.overflow = map[job.ID]struct{}{}, false
			f.mu.Unlock()
			for id := range hints {
				f.look(id)
			}
			if overflow {
				f.scan(false)
			}
		case <-tick.C:
			f.scan(false)
		}
	}
}

// scan lists the first listScan unfinished jobs: new ones are changes,
// and known unfinished ones missing from the list are looked at. The
// first scan (quiet) only learns them.
func (f *listFeed) scan(quiet bool) {
	infos, err := store.List(f.h.ctx, f.h.opts.Store, store.Query{Unfinished: true, Limit: listScan})
	if err != nil {
		if !errors.Is(err, errors.ErrUnsupported) {
			f.h.opts.Logger.Warn("live: listing unfinished jobs failed", "err", err)
		}
		return
	}
	listed := make(map[job.ID]bool, len(infos))
	for _, in := range infos {
		listed[in.ID] = true
		if quiet {
			f.known[in.ID] = in.Status
			continue
		}
		f.saw(in.ID, in, nil)
	}
	for id, st := range f.known {
		// Past the last listed, a job may be missing because of the limit.
		if st.Settled() || listed[id] || (len(infos) == listScan && id > infos[len(infos)-1].ID) {
			continue
		}
		f.look(id)
	}
}

// look reads job id's status.
func (f *listFeed) look(id job.ID) {
	in, err := store.Stat(f.h.ctx, f.h.opts.Store, id)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		f.h.opts.Logger.Debug("live: stat failed", "job", id, "err", err)
		return
	}
	f.saw(id, in, err)
}

// saw records what a read of job id found, adding a change if it is one.
func (f *listFeed) saw(id job.ID, in store.Info, err error) {
	st, known := f.known[id]
	c := Change{ID: id, Status: in.Status, Version: in.Version, At: f.h.opts.Now()}
	switch {
	case err != nil:
		if !known {
			return
		}
		delete(f.known, id)
		c.Deleted = true
	case in.Damaged != nil:
		return
	case !known:
		c.Created = true
	case st == in.Status:
		return
	}
	if !c.Deleted {
		if len(f.known) >= listKnown {
			f.forget()
		}
		f.known[id] = in.Status
	}
	f.add(c)
}

// forget bounds what the feed remembers: settled jobs first, then all.
func (f *listFeed) forget() {
	for id, st := range f.known {
		if st.Settled() {
			delete(f.known, id)
		}
	}
	if len(f.known) >= listKnown {
		clear(f.known)
	}
}

// attachList returns the list feed, started if need be, with one more
// stream.
func (h *Hub) attachList() (*listFeed, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, ErrShutdown
	}
	if h.list == nil {
		h.list = &listFeed{
			h: h, stop: make(chan struct{}), wake: make(chan struct{}, 1), ready: make(chan struct{}),
			hints: map[job.ID]struct{}{}, known: map[job.ID]job.Status{},
			changed: make(chan struct{}),
			// Seqs of a new feed start past any an earlier one gave, so
			// that resuming from one of those is a resync.
			seq: uint64(h.opts.Now().UnixMicro()),
		}
		h.wg.Add(1)
		go h.list.run()
	}
	h.list.refs++
	return h.list, nil
}

func (h *Hub) detachList(f *listFeed) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if f.refs--; f.refs == 0 {
		h.list = nil
		close(f.stop)
	}
}

// ServeList answers a request for the list stream
// (text/event-stream), once the feed knows the unfinished jobs it tells
// changes against: a "changes" event for the jobs created or whose
// status changed since the previous one (its id is the Seq of its newest
// change; at most MaxRate a second), and a "resync" event (data {}) when
// the stream resumed from, or fell behind, changes the feed no longer
// keeps: the client should read the listing again. Last-Event-ID or
// ?after resume. Heartbeats, slow clients and shutdown are as in
// ServeJob, and so are its errors.
func (h *Hub) ServeList(w http.ResponseWriter, r *http.Request, enc ListEncoder) error {
	if err := h.openStream(); err != nil {
		return err
	}
	defer h.closeStream()
	f, err := h.attachList()
	if err != nil {
		return err
	}
	defer h.detachList(f)
	// The feed's first scan is what changes are told against: a change
	// after the response started is told.
	select {
	case <-f.ready:
	case <-r.Context().Done():
		return r.Context().Err()
	case <-h.closing:
		return ErrShutdown
	}
	cursor := resumeFrom(r)
	if cursor == 0 {
		_, _, cursor, _ = f.since(0)
	}
	sw := h.startStream(w)
	gap := time.Duration(float64(time.Second) / h.opts.MaxRate)
	heartbeat := time.NewTimer(h.opts.Heartbeat)
	defer heartbeat.Stop()
	rate := time.NewTimer(0)
	defer rate.Stop()
	var next time.Time
	for {
		cs, missed, newest, ch := f.since(cursor)
		var wait <-chan time.Time
		if len(cs) > 0 || missed {
			if d := time.Until(next); d > 0 {
				rate.Reset(d)
				wait, ch = rate.C, nil
			} else {
				if missed {
					err = sw.event("resync", strconv.FormatUint(newest, 10), struct{}{})
				} else {
					err = sw.event("changes", strconv.FormatUint(newest, 10), enc.Changes(cs))
				}
				if err != nil {
					h.dropWriteError(err, "stream", "list")
					return nil
				}
				cursor, next = newest, time.Now().Add(gap)
				heartbeat.Reset(h.opts.Heartbeat)
				continue
			}
		}
		select {
		case <-ch:
		case <-wait:
		case <-heartbeat.C:
			if err := sw.comment("heartbeat"); err != nil {
				h.dropWriteError(err, "stream", "list")
				return nil
			}
			heartbeat.Reset(h.opts.Heartbeat)
		case <-r.Context().Done():
			return nil
		case <-h.closing:
			_ = sw.event("shutdown", "", struct{}{})
			return nil
		}
	}
}
