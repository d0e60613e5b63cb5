package live_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/server/live"
	"github.com/batonwf/baton/store"
	"github.com/batonwf/baton/store/bolt"
)

// stores are the stores every stream test runs on: memory, and bolt on a
// file of the test's own.
var stores = []struct {
	name string
	open func(t *testing.T) store.Store
}{
	{"memory", func(t *testing.T) store.Store { return store.NewMemory() }},
	{"bolt", func(t *testing.T) store.Store {
		st, err := bolt.Open(filepath.Join(t.TempDir(), "jobs.db"), &bolt.Options{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		return st
	}},
}

func eachStore(t *testing.T, f func(t *testing.T, st store.Store)) {
	for _, s := range stores {
		t.Run(s.name, func(t *testing.T) { f(t, s.open(t)) })
	}
}

// driver moves one job along by committing its transitions into the store
// itself, as a runner would, and notifies the hub of each.
type driver struct {
	t   *testing.T
	st  store.Store
	hub *live.Hub // nil: nobody is notified
	j   job.Job
	at  time.Time
}

// newJob stores a job of a sequence of n actions: n steps take it to its
// end.
func newJob(t *testing.T, st store.Store, hub *live.Hub, id job.ID, n int) *driver {
	t.Helper()
	kids := make([]ast.Node, n)
	for i := range kids {
		kids[i] = ast.Act("work", map[string]int{"i": i})
	}
	at := time.Date(2026, 11, 26, 4, 0, 0, 0, time.UTC)
	tr, err := job.New(id, ast.Seq(kids...), job.StartedAt(at))
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Commit(context.Background(), st, tr); err != nil {
		t.Fatal(err)
	}
	d := &driver{t: t, st: st, hub: hub, j: tr.Job, at: at}
	d.notify()
	return d
}

func (d *driver) notify() {
	if d.hub != nil {
		d.hub.Notify(d.j.ID())
	}
}

// step finishes the job's running action: one step.
func (d *driver) step() {
	d.t.Helper()
	out := d.j.Outstanding()
	if len(out) == 0 {
		d.t.Fatalf("job %s v%d has nothing running", d.j.ID(), d.j.Version())
	}
	d.at = d.at.Add(time.Second)
	r := out[0].Succeed([]byte(strconv.Quote(out[0].ID)))
	r.At = d.at
	d.commit([]job.Result{r})
}

func (d *driver) cancel(reason string) {
	d.t.Helper()
	tr, err := job.Cancel(d.j, reason)
	if err != nil {
		d.t.Fatal(err)
	}
	d.save(tr)
}

func (d *driver) commit(rs []job.Result) {
	d.t.Helper()
	tr, err := job.Restart(d.j, rs)
	if err != nil {
		d.t.Fatal(err)
	}
	d.save(tr)
}

func (d *driver) save(tr job.Transition) {
	d.t.Helper()
	if err := store.Commit(context.Background(), d.st, tr); err != nil {
		d.t.Fatal(err)
	}
	d.j = tr.Job
	d.notify()
}

// enc is the tests' Encoder: versions and paths, enough to check what a
// stream carried against the history. pad adds that many bytes to step
// events.
type enc struct{ pad int }

type snapshotData struct {
	Version uint64 `json:"version"`
	Status  string `json:"status"`
}

type stepData struct {
	Versions []uint64 `json:"versions"`
	Results  []string `json:"results"` // action IDs, per step, joined by ","
	Cancel   string   `json:"cancel,omitempty"`
	Changed  []string `json:"changed"` // "path=status"
	Pad      string   `json:"pad,omitempty"`
}

func (enc) Snapshot(j job.Job) any {
	return snapshotData{Version: j.Version(), Status: j.Status().String()}
}

func (e enc) Step(steps []live.Step, changed []job.NodeInfo) any {
	d := stepData{Pad: strings.Repeat("x", e.pad)}
	for _, s := range steps {
		d.Versions = append(d.Versions, s.Version)
		ids := make([]string, len(s.Results))
		for i, r := range s.Results {
			ids[i] = r.ActionID
		}
		d.Results = append(d.Results, strings.Join(ids, ","))
		if s.Cancelled {
			d.Cancel = s.Cancel
		}
	}
	for _, n := range changed {
		d.Changed = append(d.Changed, n.Path+"="+n.Status.String())
	}
	return d
}

func (enc) End(j job.Job) any {
	return snapshotData{Version: j.Version(), Status: j.Status().String()}
}

// listEnc is the tests' ListEncoder.
type listEnc struct{}

type changeData struct {
	ID      string `json:"id"`
	Created bool   `json:"created,omitempty"`
	Deleted bool   `json:"deleted,omitempty"`
	Status  string `json:"status"`
}

func (listEnc) Changes(cs []live.Change) any {
	out := make([]changeData, len(cs))
	for i, c := range cs {
		out[i] = changeData{ID: string(c.ID), Created: c.Created, Deleted: c.Deleted, Status: c.Status.String()}
	}
	return out
}

// serve starts a hub on st and an HTTP server on 127.0.0.1 with its
// routes: /jobs/{id}/events, /events, /jobs/{id}/history?from=V&wait=D.
func serve(t *testing.T, o live.Options, e live.Encoder) (*live.Hub, *httptest.Server) {
	t.Helper()
	hub, err := live.New(o)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /jobs/{id}/events", func(w http.ResponseWriter, r *http.Request) {
		if err := hub.ServeJob(w, r, job.ID(r.PathValue("id")), e); err != nil {
			answerError(w, err)
		}
	})
	mux.HandleFunc("GET /events", func(w http.ResponseWriter, r *http.Request) {
		if err := hub.ServeList(w, r, listEnc{}); err != nil {
			answerError(w, err)
		}
	})
	mux.HandleFunc("GET /jobs/{id}/history", func(w http.ResponseWriter, r *http.Request) {
		from, _ := strconv.ParseUint(r.URL.Query().Get("from"), 10, 64)
		wait, _ := time.ParseDuration(r.URL.Query().Get("wait"))
		steps, err := hub.WaitStep(r.Context(), job.ID(r.PathValue("id")), from, wait)
		if err != nil {
			answerError(w, err)
			return
		}
		vs := []uint64{}
		for _, s := range steps {
			vs = append(vs, s.Version)
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(vs)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := hub.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		srv.Close()
	})
	return hub, srv
}

// answerError maps the hub's errors as the server does.
func answerError(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, live.ErrTooManyStreams):
		http.Error(w, "too_many_streams", http.StatusTooManyRequests)
	case errors.Is(err, live.ErrShutdown):
		http.Error(w, "shutting_down", http.StatusServiceUnavailable)
	case errors.Is(err, store.ErrNotFound):
		http.Error(w, "job_not_found", http.StatusNotFound)
	default:
		http.Error(w, err.Error(), http.StatusInternalServerError)
	}
}

// client is one SSE connection: its events arrive on events, and done is
// closed when the stream ended (err says how).
type client struct {
	resp   *http.Response
	events chan live.Event
	done   chan struct{}
	err    error
	cancel context.CancelFunc
}

// connect opens a stream at url, with Last-Event-ID lastID if not "".
// It fails the test unless the answer is want.
func connect(t *testing.T, url, lastID string, want int) *client {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if resp.StatusCode != want {
		cancel()
		resp.Body.Close()
		t.Fatalf("GET %s (Last-Event-ID %q): status %d, want %d", url, lastID, resp.StatusCode, want)
	}
	c := &client{resp: resp, events: make(chan live.Event, 1<<12), done: make(chan struct{}), cancel: cancel}
	t.Cleanup(c.close)
	if want != http.StatusOK {
		resp.Body.Close()
		close(c.done)
		return c
	}
	for h, v := range map[string]string{"Content-Type": "text/event-stream", "Cache-Control": "no-store", "X-Accel-Buffering": "no"} {
		if got := resp.Header.Get(h); got != v {
			t.Errorf("%s: %q, want %q", h, got, v)
		}
	}
	go func() {
		defer close(c.done)
		defer resp.Body.Close()
		c.err = live.ReadEvents(resp.Body, func(ev live.Event) error {
			c.events <- ev
			return nil
		})
	}()
	return c
}

func (c *client) close() {
	c.cancel()
	<-c.done
}

// next returns the next event, failing the test if none comes in time
// (a generous bound: the deadline of a stuck test, not a measure).
func (c *client) next(t *testing.T) live.Event {
	t.Helper()
	ev, err := c.nextErr()
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

// nextErr is next for goroutines other than the test's.
func (c *client) nextErr() (live.Event, error) {
	select {
	case ev := <-c.events:
		return ev, nil
	case <-c.done:
		select {
		case ev := <-c.events:
			return ev, nil
		default:
		}
		return live.Event{}, fmt.Errorf("stream ended (%v), want an event", c.err)
	case <-time.After(30 * time.Second):
		return live.Event{}, errors.New("no event in 30 s")
	}
}

// ended waits for the stream to end without another event.
func (c *client) ended(t *testing.T) {
	t.Helper()
	select {
	case <-c.done:
		select {
		case ev := <-c.events:
			t.Fatalf("event %+v, want the end of the stream", ev)
		default:
		}
	case ev := <-c.events:
		t.Fatalf("event %+v, want the end of the stream", ev)
	case <-time.After(30 * time.Second):
		t.Fatal("stream still open after 30 s")
	}
}

func decode[T any](t *testing.T, ev live.Event) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(ev.Data), &v); err != nil {
		t.Fatalf("event %s %q: %v", ev.Type, ev.Data, err)
	}
	return v
}

// historyOf reads job id's history: the action IDs each version applied.
func historyOf(t *testing.T, st store.Store, id job.ID) map[uint64]string {
	t.Helper()
	h, err := store.LoadHistory(context.Background(), st, id)
	if err != nil {
		t.Fatal(err)
	}
	out := map[uint64]string{}
	for _, s := range h.Steps {
		var ids []string
		for _, r := range s.Results {
			if r.ActionID != job.CancelResult(id, "-").ActionID {
				ids = append(ids, r.ActionID)
			}
		}
		out[s.Version] = strings.Join(ids, ",")
	}
	return out
}

func jobURL(srv *httptest.Server, id job.ID) string {
	return srv.URL + "/jobs/" + string(id) + "/events"
}
