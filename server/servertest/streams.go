package servertest

import (
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"reflect"
	"strconv"
	"testing"

	"github.com/batonwf/baton/api"
	"github.com/batonwf/baton/client"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/server"
	"github.com/batonwf/baton/server/live"
)

// gateFlow runs three gate actions, one after another, then ok.
const gateFlow = `{"version":1,"root":{"seq":[{"act":"gate","payload":1},{"act":"gate","payload":2},{"act":"gate","payload":3},{"act":"ok","payload":4}]}}`

// release lets one gate action through, waiting until one takes it.
func (e *Env) release(t *testing.T) {
	t.Helper()
	select {
	case e.acts.gate <- struct{}{}:
	case <-ctxOf(t).Done():
		t.Fatal("no gate action took the release")
	}
}

// pull returns the next event of a stream, failing the test on an error
// or the stream's end.
func pull(t *testing.T, next func() (client.Event, error, bool)) client.Event {
	t.Helper()
	ev, err, ok := next()
	if !ok || err != nil {
		t.Fatalf("stream: ended early (more: %v): %v", ok, err)
	}
	return ev
}

// stepsSeen checks that evs' steps carry every version after from, once,
// in order, and returns them and the nodes they changed (the newest state
// of each, by path).
func stepsSeen(t *testing.T, evs []client.Event, from uint64) ([]api.Step, map[string]api.Node) {
	t.Helper()
	var steps []api.Step
	changed := map[string]api.Node{}
	for _, ev := range evs {
		if ev.Type != "step" {
			continue
		}
		if len(ev.Step.Steps) == 0 || ev.Step.Steps[len(ev.Step.Steps)-1].Version != ev.Version {
			t.Errorf("step event id %d, its steps %+v", ev.Version, ev.Step.Steps)
		}
		for _, st := range ev.Step.Steps {
			if want := from + uint64(len(steps)) + 1; st.Version != want {
				t.Fatalf("stream: step v%d where v%d was due (a gap or a repeat)", st.Version, want)
			}
			steps = append(steps, st)
		}
		for _, n := range ev.Step.Changed {
			changed[n.Path] = n
		}
	}
	return steps, changed
}

// sameAsHistory checks that steps are the history route's steps after
// version from, field for field.
func (e *Env) sameAsHistory(t *testing.T, id job.ID, from uint64, steps []api.Step) {
	t.Helper()
	h, err := e.Reader.History(ctxOf(t), id, from, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(steps)
	want, _ := json.Marshal(h.Steps)
	if string(got) != string(want) {
		t.Errorf("the stream's steps after v%d differ from the history's:\nstream  %s\nhistory %s", from, got, want)
	}
}

// testStreamMidJob: a client joining mid-job gets a snapshot (the job as
// the job route gives it), then every later step once, the nodes they
// changed (which make the snapshot the final job), and end.
func testStreamMidJob(t *testing.T, cfg Config) {
	e := NewEnv(t, cfg, nil)
	ctx := ctxOf(t)
	e.Submit(t, "s", gateFlow)
	e.Running(t, "s", "seq[0]")
	e.release(t)
	now := e.Running(t, "s", "seq[1]")

	next, stop := iter.Pull2(e.Reader.Events(ctx, "s", 0))
	defer stop()
	snap := pull(t, next)
	if snap.Type != "snapshot" || snap.Version != now.Version {
		t.Fatalf("first event %s v%d, want a snapshot of v%d", snap.Type, snap.Version, now.Version)
	}
	if got, want := mustJSON(t, snap.Snapshot), mustJSON(t, now); got != want {
		t.Errorf("snapshot differs from the job route:\nsnapshot %s\njob      %s", got, want)
	}
	evs := []client.Event{snap}
	// A gate let through is a step the stream tells, read as it comes.
	e.release(t)
	v := e.Running(t, "s", "seq[2]").Version
	for evs[len(evs)-1].Version < v {
		evs = append(evs, pull(t, next))
	}
	e.release(t)
	for {
		ev, err, ok := next()
		if !ok {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
	}
	final := e.Settled(t, "s")
	last := evs[len(evs)-1]
	if last.Type != "end" || last.Version != final.Version || last.End.Status != "succeeded" {
		t.Fatalf("last event %s v%d %+v, want end of v%d", last.Type, last.Version, last.End, final.Version)
	}
	if got, want := mustJSON(t, last.End), mustJSON(t, final.Summary); got != want {
		t.Errorf("end differs from the job's summary:\nend %s\njob %s", got, want)
	}
	steps, changed := stepsSeen(t, evs, snap.Version)
	if len(steps) == 0 || steps[len(steps)-1].Version != final.Version {
		t.Fatalf("steps seen end at %+v, the job at v%d", steps, final.Version)
	}
	e.sameAsHistory(t, "s", snap.Version, steps)
	nodes := snap.Snapshot.Nodes
	for i, n := range nodes {
		if c, ok := changed[n.Path]; ok {
			nodes[i] = c
		}
	}
	if got, want := mustJSON(t, nodes), mustJSON(t, final.Nodes); got != want {
		t.Errorf("the snapshot with the changed nodes is not the final job:\ngot  %s\nwant %s", got, want)
	}
}

// testStreamResume: a stream dropped after a step and resumed with
// Last-Event-ID (and with ?after) misses nothing and sees nothing twice;
// a settled job's stream ends, and a reconnect from its last version gets
// 204.
func testStreamResume(t *testing.T, cfg Config) {
	e := NewEnv(t, cfg, nil)
	ctx := ctxOf(t)
	e.Submit(t, "r", gateFlow)
	e.Running(t, "r", "seq[0]")

	next, stop := iter.Pull2(e.Reader.Events(ctx, "r", 0))
	snap := pull(t, next)
	e.release(t)
	first := pull(t, next)
	stop() // the client drops
	if snap.Type != "snapshot" || first.Type != "step" {
		t.Fatalf("events %s, %s; want snapshot, step", snap.Type, first.Type)
	}
	e.release(t)
	mid := e.Running(t, "r", "seq[2]").Version

	// Resumed while the job runs (a settled job's stream is a snapshot
	// and end): the steps it missed, then the rest as they come.
	released := false
	a := e.streamRaw(t, "/api/v1/jobs/r/events", map[string]string{"Last-Event-ID": strconv.FormatUint(first.Version, 10)}, func(ev client.Event) {
		if ev.Version >= mid && !released {
			released = true
			e.release(t)
		}
	})
	if a.status != http.StatusOK || len(a.events) == 0 || a.events[0].Type != "step" {
		t.Fatalf("resumed from v%d: %d %+v, want steps", first.Version, a.status, a.events)
	}
	final := e.Settled(t, "r")
	evs := append([]client.Event{snap, first}, a.events...)
	steps, _ := stepsSeen(t, evs, snap.Version)
	e.sameAsHistory(t, "r", snap.Version, steps)
	if last := evs[len(evs)-1]; last.Type != "end" || last.Version != final.Version {
		t.Errorf("the resumed stream ends with %s v%d, want end v%d", last.Type, last.Version, final.Version)
	}

	// Settled: from its last version, 204; from nothing, snapshot and end.
	if a := e.streamRaw(t, "/api/v1/jobs/r/events", map[string]string{"Last-Event-ID": strconv.FormatUint(final.Version, 10)}, nil); a.status != http.StatusNoContent || len(a.events) != 0 {
		t.Errorf("reconnect to a settled job at its last version: %d %+v, want 204", a.status, a.events)
	}
	for _, err := range e.Reader.Events(ctx, "r", final.Version) {
		if !errors.Is(err, client.ErrSettled) {
			t.Errorf("client.Events after the end: %v, want ErrSettled", err)
		}
	}
	var types []string
	for ev, err := range e.Reader.Events(ctx, "r", 0) {
		if err != nil {
			t.Fatal(err)
		}
		types = append(types, fmt.Sprintf("%s v%d", ev.Type, ev.Version))
	}
	if want := []string{fmt.Sprintf("snapshot v%d", final.Version), fmt.Sprintf("end v%d", final.Version)}; !reflect.DeepEqual(types, want) {
		t.Errorf("a settled job's stream: %v, want %v", types, want)
	}
	// A garbage Last-Event-ID is absent: a snapshot.
	if a := e.streamRaw(t, "/api/v1/jobs/r/events", map[string]string{"Last-Event-ID": "garbage"}, nil); a.status != http.StatusOK || len(a.events) != 2 || a.events[0].Type != "snapshot" {
		t.Errorf("garbage Last-Event-ID: %d %+v, want snapshot, end", a.status, a.events)
	}
	e.Do(t, "GET", "/api/v1/jobs/nope/events", nil, "").Problem(t, http.StatusNotFound, server.CodeJobNotFound)
	e.Do(t, "GET", "/api/v1/jobs/r/events?from=1", nil, "").Problem(t, http.StatusBadRequest, server.CodeBadQuery)
}

// testTooManyStreams: past MaxStreams, 429 too_many_streams with
// Retry-After; a stream closed makes room.
func testTooManyStreams(t *testing.T, cfg Config) {
	e := NewEnv(t, cfg, func(o *server.Options) { o.MaxStreams = 2 })
	e.Submit(t, "m", gateFlow)
	e.Running(t, "m", "seq[0]")
	first := e.openStream(t, "/api/v1/jobs/m/events")
	second := e.openStream(t, "/api/v1/events")
	defer second.Body.Close()
	a := e.Do(t, "GET", "/api/v1/jobs/m/events", nil, "")
	a.Problem(t, http.StatusTooManyRequests, server.CodeTooManyStreams)
	if a.Header.Get("Retry-After") == "" {
		t.Errorf("429 too_many_streams without Retry-After: %v", a.Header)
	}
	first.Body.Close()
	for {
		// The server counts the first out once its handler has seen the
		// connection go.
		resp := e.openStreamStatus(t, "/api/v1/jobs/m/events")
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			break
		}
		if resp.StatusCode != http.StatusTooManyRequests {
			t.Fatalf("a stream after one closed: %d", resp.StatusCode)
		}
	}
	e.release(t)
	e.release(t)
	e.release(t)
}

// testListStream: the list stream tells a job created (an unfinished
// one: without notices from the runner, the server finds new jobs by
// listing the unfinished ones, see docs/live.md).
func testListStream(t *testing.T, cfg Config) {
	e := NewEnv(t, cfg, nil)
	resp := e.openStream(t, "/api/v1/events")
	defer resp.Body.Close()
	e.Submit(t, "l", blockFlow)
	found := errors.New("found")
	err := live.ReadEvents(resp.Body, func(ev live.Event) error {
		if ev.Type != "changes" {
			return fmt.Errorf("list stream: a %s event: %s", ev.Type, ev.Data)
		}
		var cs api.Changes
		if err := json.Unmarshal([]byte(ev.Data), &cs); err != nil {
			return err
		}
		for _, c := range cs.Changes {
			if c.ID == "l" && c.Created && c.Seq > 0 && !c.At.IsZero() && c.Status != "" {
				return found
			}
		}
		return nil
	})
	if !errors.Is(err, found) {
		t.Fatalf("the list stream never told job l created: %v", err)
	}
}

// testStreamShutdown: when the server closes (Options.Closing), open
// streams get a shutdown event and end; new ones get 503 shutting_down.
func testStreamShutdown(t *testing.T, cfg Config) {
	closing := make(chan struct{})
	e := NewEnv(t, cfg, func(o *server.Options) { o.Closing = closing })
	e.Submit(t, "d", gateFlow)
	e.Running(t, "d", "seq[0]")
	job := e.openStream(t, "/api/v1/jobs/d/events")
	defer job.Body.Close()
	list := e.openStream(t, "/api/v1/events")
	defer list.Body.Close()
	close(closing)
	for name, resp := range map[string]*http.Response{"job": job, "list": list} {
		var last string
		if err := live.ReadEvents(resp.Body, func(ev live.Event) error { last = ev.Type; return nil }); err != nil {
			t.Errorf("%s stream: %v", name, err)
		}
		if last != "shutdown" {
			t.Errorf("%s stream ended with %q, want shutdown", name, last)
		}
	}
	// The streams ended after the hub closed: a new one is refused.
	e.Do(t, "GET", "/api/v1/jobs/d/events", nil, "").Problem(t, http.StatusServiceUnavailable, server.CodeShuttingDown)
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// rawStream is a stream read to its end.
type rawStream struct {
	status int
	events []client.Event
}

// streamRaw reads the stream at path to its end, with headers, calling
// on (if not nil) with each event as it comes.
func (e *Env) streamRaw(t *testing.T, path string, headers map[string]string, on func(client.Event)) rawStream {
	t.Helper()
	req, err := http.NewRequestWithContext(ctxOf(t), "GET", e.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+ReadToken)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out := rawStream{status: resp.StatusCode}
	err = live.ReadEvents(resp.Body, func(ev live.Event) error {
		ce := client.Event{Type: ev.Type, Data: json.RawMessage(ev.Data)}
		ce.Version, _ = strconv.ParseUint(ev.ID, 10, 64)
		var dst any
		switch ev.Type {
		case "step":
			ce.Step = &api.StepEvent{}
			dst = ce.Step
		case "snapshot":
			ce.Snapshot = &api.Job{}
			dst = ce.Snapshot
		case "end":
			ce.End = &api.Summary{}
			dst = ce.End
		}
		out.events = append(out.events, ce)
		if dst != nil {
			if err := json.Unmarshal(ce.Data, dst); err != nil {
				return err
			}
		}
		if on != nil {
			on(ce)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("read the stream %s: %v", path, err)
	}
	return out
}

// openStream opens the stream at path and returns once its headers came
// (200); close its body to end it.
func (e *Env) openStream(t *testing.T, path string) *http.Response {
	t.Helper()
	resp := e.openStreamStatus(t, path)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		resp.Body.Close()
		t.Fatalf("GET %s: %d %s", path, resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	return resp
}

func (e *Env) openStreamStatus(t *testing.T, path string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctxOf(t), "GET", e.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+ReadToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}
