package live

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/store"
)

// ServeJob answers a request for the event stream of job id
// (text/event-stream): a snapshot event (or, resuming, nothing), then a
// step event for every change, coalesced to at most MaxRate a second,
// then end once the job is settled, after which it returns. Each event's
// id is the newest version it covers; the client resumes from it with the
// Last-Event-ID header or ?after=V (a value that is not a version is
// treated as absent). A settled job whose client already has its last
// version gets 204 No Content, which stops a browser's EventSource for
// good; any other client of a settled job gets its snapshot, then end.
// A comment line is sent every Heartbeat of silence; a write that blocks
// for SlowClient drops the client; Shutdown ends the stream with a
// shutdown event.
//
// ServeJob returns an error only when it has written nothing, for the
// caller to answer: ErrTooManyStreams, ErrShutdown, an error wrapping
// store.ErrNotFound, or a store failure. Once the stream started, its
// troubles end it and are logged.
func (h *Hub) ServeJob(w http.ResponseWriter, r *http.Request, id job.ID, enc Encoder) error {
	sub, err := h.Subscribe(r.Context(), id, resumeFrom(r))
	if errors.Is(err, ErrSettled) {
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
	if err != nil {
		return err
	}
	defer sub.Close()
	sw := h.startStream(w)
	heartbeat := time.NewTimer(h.opts.Heartbeat)
	defer heartbeat.Stop()
	for {
		u, err := sub.nextOr(r.Context(), heartbeat.C)
		switch {
		case errors.Is(err, errIdle):
			err = sw.comment("heartbeat")
		case errors.Is(err, ErrShutdown):
			_ = sw.event("shutdown", "", struct{}{})
			return nil
		case errors.Is(err, io.EOF):
			return nil
		case err != nil:
			switch {
			case r.Context().Err() != nil: // the client went away
			case errors.Is(err, store.ErrNotFound):
				h.opts.Logger.Debug("live: stream ended: job deleted", "job", id)
			default:
				h.opts.Logger.Warn("live: stream ended", "job", id, "err", err)
			}
			return nil
		default:
			var data any
			switch u.Kind {
			case KindSnapshot:
				data = enc.Snapshot(u.Job)
			case KindStep:
				data = enc.Step(u.Steps, u.Changed)
			case KindEnd:
				data = enc.End(u.Job)
			}
			err = sw.event(u.Kind.String(), strconv.FormatUint(u.Version, 10), data)
		}
		if err != nil {
			h.dropWriteError(err, "job", string(id))
			return nil
		}
		heartbeat.Reset(h.opts.Heartbeat)
	}
}

// resumeFrom returns the version a request resumes from: its
// Last-Event-ID header, else its after parameter; 0 when neither is a
// version.
func resumeFrom(r *http.Request) uint64 {
	for _, v := range []string{r.Header.Get("Last-Event-ID"), r.URL.Query().Get("after")} {
		if n, err := strconv.ParseUint(v, 10, 64); err == nil {
			return n
		}
	}
	return 0
}

// sseWriter writes events to one client, each under a write deadline of
// SlowClient, flushed at once.
type sseWriter struct {
	h  *Hub
	w  http.ResponseWriter
	rc *http.ResponseController
}

// startStream writes the stream's headers.
func (h *Hub) startStream(w http.ResponseWriter) *sseWriter {
	hd := w.Header()
	hd.Set("Content-Type", "text/event-stream")
	hd.Set("Cache-Control", "no-store")
	hd.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	sw := &sseWriter{h: h, w: w, rc: http.NewResponseController(w)}
	_ = sw.flush()
	return sw
}

func (sw *sseWriter) flush() error {
	// A writer without deadlines (a test recorder) writes anyway.
	if err := sw.rc.SetWriteDeadline(time.Now().Add(sw.h.opts.SlowClient)); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return err
	}
	if err := sw.rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return err
	}
	return nil
}

// event writes one event; data is marshalled to one JSON line.
func (sw *sseWriter) event(name, id string, data any) error {
	js, err := json.Marshal(data)
	if err != nil {
		return fmt.Errorf("live: encode a %s event: %w", name, err)
	}
	b := make([]byte, 0, len(js)+len(name)+len(id)+24)
	if id != "" {
		b = append(append(append(b, "id: "...), id...), '\n')
	}
	b = append(append(append(b, "event: "...), name...), '\n')
	b = append(append(append(b, "data: "...), js...), "\n\n"...)
	return sw.write(b)
}

// comment writes a comment line, which clients ignore.
func (sw *sseWriter) comment(text string) error {
	return sw.write([]byte(": " + text + "\n\n"))
}

func (sw *sseWriter) write(b []byte) error {
	sw.h.buffered.Add(int64(len(b)))
	defer sw.h.buffered.Add(-int64(len(b)))
	if err := sw.rc.SetWriteDeadline(time.Now().Add(sw.h.opts.SlowClient)); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return err
	}
	if _, err := sw.w.Write(b); err != nil {
		return err
	}
	if err := sw.rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return err
	}
	return nil
}

// dropWriteError counts and logs a stream ended by a failed write: a
// client that read nothing for SlowClient, or one that went away.
func (h *Hub) dropWriteError(err error, kv ...string) {
	args := []any{"err", err}
	for i := 0; i+1 < len(kv); i += 2 {
		args = append(args, kv[i], kv[i+1])
	}
	if errors.Is(err, context.DeadlineExceeded) || isTimeout(err) {
		h.dropped.Add(1)
		h.opts.Logger.Warn("live: dropped a client that read nothing", args...)
		return
	}
	h.opts.Logger.Debug("live: stream ended by its client", args...)
}

func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}
