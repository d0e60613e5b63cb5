package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/batonwf/baton/api"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/server/live"
)

// ErrSettled is what Events yields when the server answers 204 No
// Content: the job is settled and the client already has its last
// version.
var ErrSettled = errors.New("client: the job is settled and its last version was seen (204)")

// Event is one event of a job's stream, its data decoded by its type.
type Event struct {
	// Type is snapshot, step, end or shutdown.
	Type string
	// Version is the newest version of the job the event covers (its SSE
	// id): the after to resume from. A shutdown event carries on the
	// version of the event before it.
	Version uint64
	// Data is the event's JSON, as sent.
	Data json.RawMessage
	// One of these, by Type: Snapshot (snapshot), Step (step), End (end).
	Snapshot *api.Job
	Step     *api.StepEvent
	End      *api.Summary
}

// Events follows the event stream of job id, from version after (0: from
// a snapshot): it yields each event in order, until the stream ends (after
// end or shutdown), the loop stops, or ctx ends. An error ends the
// sequence: an *Error when the server refused the stream (a 404
// job_not_found, a 429 too_many_streams), ErrSettled for a settled job
// whose last version is after, else the failure of the connection or of
// decoding. The client's HTTP client must not time out whole requests
// (http.Client.Timeout), since a stream lasts as long as the job.
func (c *Client) Events(ctx context.Context, id job.ID, after uint64) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		q := url.Values{}
		if after > 0 {
			q.Set("after", strconv.FormatUint(after, 10))
		}
		resp, err := c.stream(ctx, jobPath(id, "/events"), q)
		if err != nil {
			yield(Event{}, err)
			return
		}
		defer resp.Body.Close()
		if resp.StatusCode == http.StatusNoContent {
			yield(Event{}, ErrSettled)
			return
		}
		stopped := errors.New("stopped")
		err = live.ReadEvents(resp.Body, func(ev live.Event) error {
			out, err := decodeEvent(ev)
			if !yield(out, err) || err != nil {
				return stopped
			}
			return nil
		})
		if err != nil && !errors.Is(err, stopped) {
			if ctx.Err() != nil {
				err = ctx.Err()
			}
			yield(Event{}, fmt.Errorf("job %s: read its event stream: %w", id, err))
		}
	}
}

// stream opens an event stream: a 200 text/event-stream or a 204
// answer, else an *Error.
func (c *Client) stream(ctx context.Context, path string, q url.Values) (*http.Response, error) {
	u := c.base + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	ok := resp.StatusCode == http.StatusNoContent ||
		resp.StatusCode == http.StatusOK && strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream")
	if ok {
		return resp, nil
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	e := &Error{}
	if json.Unmarshal(data, &e.Problem) != nil || e.Code == "" {
		e.Problem = notBaton(resp, data)
	}
	return nil, e
}

// decodeEvent decodes the data of a job stream's event by its type.
func decodeEvent(ev live.Event) (Event, error) {
	out := Event{Type: ev.Type, Data: json.RawMessage(ev.Data)}
	if ev.ID != "" {
		v, err := strconv.ParseUint(ev.ID, 10, 64)
		if err != nil {
			return out, fmt.Errorf("event %s: id %q is not a version", ev.Type, ev.ID)
		}
		out.Version = v
	}
	var dst any
	switch ev.Type {
	case "snapshot":
		out.Snapshot = &api.Job{}
		dst = out.Snapshot
	case "step":
		out.Step = &api.StepEvent{}
		dst = out.Step
	case "end":
		out.End = &api.Summary{}
		dst = out.End
	default:
		return out, nil
	}
	if err := json.Unmarshal(out.Data, dst); err != nil {
		return out, fmt.Errorf("event %s: decode its data: %w", ev.Type, err)
	}
	return out, nil
}
