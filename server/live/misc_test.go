package live_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"time"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/server/live"
	"github.com/batonwf/baton/store"
)

// The stream past MaxStreams is refused with ErrTooManyStreams (the
// server's 429 too_many_streams); list streams count too, and a closed
// stream frees its place.
func TestTooManyStreams(t *testing.T) {
	st := store.NewMemory()
	hub, srv := serve(t, live.Options{Store: st, Notified: true, MaxStreams: 2}, enc{})
	newJob(t, st, hub, "a", 3)
	c1 := connect(t, jobURL(srv, "a"), "", http.StatusOK)
	c1.next(t)
	l := connect(t, srv.URL+"/events", "", http.StatusOK)
	waitFor(t, "two streams", func() bool { return hub.Stats().Streams == 2 })
	connect(t, jobURL(srv, "a"), "", http.StatusTooManyRequests)
	connect(t, srv.URL+"/events", "", http.StatusTooManyRequests)
	if _, err := hub.Subscribe(context.Background(), "a", 0); !errors.Is(err, live.ErrTooManyStreams) {
		t.Errorf("Subscribe past MaxStreams: %v, want ErrTooManyStreams", err)
	}
	l.close()
	waitFor(t, "the list stream's place", func() bool { return hub.Stats().Streams == 1 })
	connect(t, jobURL(srv, "a"), "", http.StatusOK).next(t)
}

// Shutdown sends every open stream a shutdown event and ends it, ends long
// polls, and refuses new streams (the server's 503 shutting_down).
func TestShutdown(t *testing.T) {
	st := store.NewMemory()
	hub, srv := serve(t, live.Options{Store: st, Notified: true}, enc{})
	newJob(t, st, hub, "a", 3)
	newJob(t, st, hub, "b", 3)
	newJob(t, st, hub, "c", 3)
	var cs []*client
	for _, u := range []string{jobURL(srv, "a"), jobURL(srv, "b"), jobURL(srv, "a"), srv.URL + "/events"} {
		cs = append(cs, connect(t, u, "", http.StatusOK))
	}
	for _, c := range cs[:3] {
		if ev := c.next(t); ev.Type != "snapshot" {
			t.Fatalf("first event %s, want snapshot", ev.Type)
		}
	}
	waitFor(t, "four streams", func() bool { return hub.Stats().Streams == 4 })
	var wg sync.WaitGroup
	polled := make(chan error, 1)
	wg.Go(func() {
		steps, err := hub.WaitStep(context.Background(), "c", 1, time.Hour)
		if err == nil && len(steps) > 0 {
			err = errors.New("steps from a job that did not move")
		}
		polled <- err
	})
	waitFor(t, "the long poll's watcher", func() bool { return hub.Stats().Watchers == 3 })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := hub.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	for i, c := range cs {
		if ev := c.next(t); ev.Type != "shutdown" {
			t.Errorf("stream %d: event %s, want shutdown", i, ev.Type)
		}
		c.ended(t)
	}
	wg.Wait()
	if err := <-polled; err != nil {
		t.Errorf("WaitStep at shutdown: %v", err)
	}
	connect(t, jobURL(srv, "a"), "", http.StatusServiceUnavailable)
	connect(t, srv.URL+"/events", "", http.StatusServiceUnavailable)
	if s := hub.Stats(); s.Streams != 0 || s.Watchers != 0 {
		t.Errorf("after Shutdown: %+v", s)
	}
	if err := hub.Shutdown(ctx); err != nil {
		t.Errorf("second Shutdown: %v", err)
	}
}

// A silent stream gets a comment every Heartbeat.
func TestHeartbeat(t *testing.T) {
	st := store.NewMemory()
	hub, srv := serve(t, live.Options{Store: st, Notified: true, Heartbeat: 20 * time.Millisecond}, enc{})
	newJob(t, st, hub, "quiet", 3)
	for _, u := range []string{jobURL(srv, "quiet"), srv.URL + "/events"} {
		resp, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		br := bufio.NewReader(resp.Body)
		beats := 0
		for beats < 3 {
			line, err := br.ReadString('\n')
			if err != nil {
				t.Fatalf("%s: %v", u, err)
			}
			if line == ": heartbeat\n" {
				beats++
			}
		}
		resp.Body.Close()
	}
}

// WaitStep returns the steps after a version at once when there are some,
// waits for one otherwise, and returns none when its wait ends.
func TestWaitStep(t *testing.T) {
	st := store.NewMemory()
	hub, _ := serve(t, live.Options{Store: st, Notified: true}, enc{})
	ctx := context.Background()
	if _, err := hub.WaitStep(ctx, "none", 0, time.Second); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("WaitStep of a missing job: %v, want ErrNotFound", err)
	}
	d := newJob(t, st, hub, "w", 5)
	d.step()
	steps, err := hub.WaitStep(ctx, "w", 0, time.Hour)
	if err != nil || len(steps) != 2 || !steps[0].Created || steps[1].Version != 2 || len(steps[1].Results) != 1 {
		t.Fatalf("WaitStep from 0: %+v, %v; want the creation and v2", steps, err)
	}
	if len(steps[0].Dispatched) != 1 || len(steps[1].Dispatched) != 1 || steps[1].Settled != 1 || steps[1].Total != 5 {
		t.Errorf("steps %+v: want one dispatch each, 1 of 5 settled after v2", steps)
	}
	if steps, err := hub.WaitStep(ctx, "w", 2, 10*time.Millisecond); err != nil || len(steps) != 0 {
		t.Fatalf("WaitStep from the newest version: %+v, %v; want none once the wait ends", steps, err)
	}
	got := make(chan []live.Step, 1)
	go func() {
		steps, _ := hub.WaitStep(ctx, "w", 2, time.Hour)
		got <- steps
	}()
	d.step()
	if steps := <-got; len(steps) != 1 || steps[0].Version != 3 {
		t.Fatalf("WaitStep woken by a step: %+v, want v3", steps)
	}
	ch, stop := hub.Watch("w") // the watcher lingers: it has read v3
	defer stop()
	d.step()
	<-ch // closed once the hub read v4
	stop()
}

// The list stream tells of jobs created and of status changes, from
// notices; without notices, its scan finds them.
func TestListStream(t *testing.T) {
	for _, notified := range []bool{true, false} {
		name := map[bool]string{true: "notified", false: "scanned"}[notified]
		t.Run(name, func(t *testing.T) {
			st := store.NewMemory()
			hub, srv := serve(t, live.Options{Store: st, Notified: notified, SafetyPoll: 50 * time.Millisecond}, enc{})
			notify := hub
			if !notified {
				notify = nil
			}
			newJob(t, st, notify, "old", 1) // there before the stream: not a change
			l := connect(t, srv.URL+"/events", "", http.StatusOK)
			d := newJob(t, st, notify, "new", 1)
			var changes []changeData
			last := ""
			for len(changes) == 0 || changes[len(changes)-1].Status != "succeeded" {
				ev := l.next(t)
				if ev.Type != "changes" {
					t.Fatalf("event %s %s, want changes", ev.Type, ev.Data)
				}
				last = ev.ID
				changes = append(changes, decode[[]changeData](t, ev)...)
				if len(changes) == 1 {
					d.step()
				}
			}
			want := []changeData{{ID: "new", Created: true, Status: "running"}, {ID: "new", Status: "succeeded"}}
			if len(changes) != 2 || changes[0] != want[0] || changes[1] != want[1] {
				t.Errorf("changes %+v, want %+v", changes, want)
			}
			l.close()
			// Resuming from an ID the feed does not have is a resync.
			l = connect(t, srv.URL+"/events", "12", http.StatusOK)
			if ev := l.next(t); ev.Type != "resync" || ev.ID == "" {
				t.Errorf("resumed from an unknown change: %s id %q, want resync", ev.Type, ev.ID)
			}
			_ = last
		})
	}
}

// ReadEvents reads streams as EventSource does, malformed ones included.
func TestReadEvents(t *testing.T) {
	long := strings.Repeat("x", live.MaxEventLine+1)
	for _, tt := range []struct {
		name, in string
		want     []live.Event
		err      error
	}{
		{"plain", "id: 3\nevent: step\ndata: {\"a\":1}\n\n", []live.Event{{ID: "3", Type: "step", Data: `{"a":1}`}}, nil},
		{"crlf and cr", "id: 1\r\nevent: a\r\ndata: x\r\n\r\nid: 2\rdata: y\r\r", []live.Event{{ID: "1", Type: "a", Data: "x"}, {ID: "2", Type: "message", Data: "y"}}, nil},
		{"bom, comments, multi-line data", "\uFEFF: hi\ndata: a\ndata:b\ndata\n\n", []live.Event{{Type: "message", Data: "a\nb\n"}}, nil},
		{"id carries over, NUL id ignored", "id: 7\ndata: a\n\nid: 8\x00\ndata: b\n\n", []live.Event{{ID: "7", Type: "message", Data: "a"}, {ID: "7", Type: "message", Data: "b"}}, nil},
		{"no data: not dispatched", "event: x\nid: 4\n\ndata: y\n\n", []live.Event{{ID: "4", Type: "message", Data: "y"}}, nil},
		{"cut off: dropped", "data: a\n\ndata: b\n", []live.Event{{Type: "message", Data: "a"}}, nil},
		{"retry", "retry: 1500\ndata: a\n\nretry: 1x\ndata: b\n\n", []live.Event{{Type: "message", Data: "a", Retry: 1500 * time.Millisecond}, {Type: "message", Data: "b"}}, nil},
		{"unknown fields, no space", "foo: bar\nevent:e\ndata:d\n\n", []live.Event{{Type: "e", Data: "d"}}, nil},
		{"invalid UTF-8", "data: a\xffb\n\n", []live.Event{{Type: "message", Data: "a\uFFFDb"}}, nil},
		{"empty", "", nil, nil},
		{"only blank lines", "\n\n\r\n", nil, nil},
		{"line too long", "data: " + long + "\n\n", nil, live.ErrLineTooLong},
	} {
		for _, bytewise := range []bool{false, true} {
			if bytewise && tt.err != nil {
				continue // a byte at a time, the long line is merely slow
			}
			t.Run(fmt.Sprintf("%s/bytewise=%v", tt.name, bytewise), func(t *testing.T) {
				var r io.Reader = strings.NewReader(tt.in)
				if bytewise {
					r = iotest.OneByteReader(r)
				}
				var got []live.Event
				err := live.ReadEvents(r, func(ev live.Event) error {
					got = append(got, ev)
					return nil
				})
				if !errors.Is(err, tt.err) || (tt.err == nil && err != nil) {
					t.Fatalf("error %v, want %v", err, tt.err)
				}
				if len(got) != len(tt.want) {
					t.Fatalf("events %+v, want %+v", got, tt.want)
				}
				for i := range got {
					if got[i] != tt.want[i] {
						t.Errorf("event %d: %+v, want %+v", i, got[i], tt.want[i])
					}
				}
			})
		}
	}
	// An event ended by "\r\r" is dispatched without waiting for a "\n"
	// that may never come.
	pr, pw := io.Pipe()
	got := make(chan live.Event, 1)
	go func() {
		_ = live.ReadEvents(pr, func(ev live.Event) error { got <- ev; return nil })
	}()
	if _, err := pw.Write([]byte("data: a\r\r")); err != nil {
		t.Fatal(err)
	}
	if ev := <-got; ev.Data != "a" {
		t.Errorf("event %+v, want data a", ev)
	}
	pw.Close()
	stop := errors.New("stop")
	n := 0
	err := live.ReadEvents(strings.NewReader("data: a\n\ndata: b\n\n"), func(live.Event) error { n++; return stop })
	if !errors.Is(err, stop) || n != 1 {
		t.Errorf("f's error: %v after %d events, want stop after 1", err, n)
	}
}

// FullDiff gives the nodes a step changed: the finished action, the next
// one started, and nothing else of an unchanged tree.
func TestFullDiff(t *testing.T) {
	st := store.NewMemory()
	d := newJob(t, st, nil, "diff", 3)
	before := d.j
	d.step()
	var paths []string
	for _, n := range live.FullDiff(before, d.j) {
		paths = append(paths, n.Path+"="+n.Status.String())
	}
	if got, want := strings.Join(paths, " "), "seq[0]=succeeded seq[1]=running"; got != want {
		t.Errorf("FullDiff: %s, want %s", got, want)
	}
	if c := live.FullDiff(d.j, d.j); len(c) != 0 {
		t.Errorf("FullDiff of a job with itself: %+v", c)
	}
	var all int
	d.j.Walk(func(job.NodeInfo) bool { all++; return true })
	if c := live.FullDiff(job.Job{}, d.j); len(c) != all {
		t.Errorf("FullDiff from the zero job: %d nodes, want all %d", len(c), all)
	}
}

// A stream outlives the server's WriteTimeout: each write extends its
// own deadline.
func TestOutlivesWriteTimeout(t *testing.T) {
	st := store.NewMemory()
	hub, err := live.New(live.Options{Store: st, Notified: true, Heartbeat: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	d := newJob(t, st, hub, "long", 10)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := hub.ServeJob(w, r, "long", enc{}); err != nil {
			answerError(w, err)
		}
	}))
	srv.Config.WriteTimeout = 300 * time.Millisecond
	srv.Start()
	defer srv.Close()
	defer func() { _ = hub.Shutdown(context.Background()) }()
	c := connect(t, srv.URL, "", http.StatusOK)
	c.next(t)
	start := time.Now()
	for v := uint64(2); time.Since(start) < time.Second; v++ {
		time.Sleep(100 * time.Millisecond)
		d.step()
		if ev := c.next(t); ev.Type != "step" || ev.ID != fmt.Sprint(v) {
			t.Fatalf("after %v: event %s id %s, want the step of v%d", time.Since(start), ev.Type, ev.ID, v)
		}
	}
}

// plainStore is a store with none of the optional capabilities.
type plainStore struct{ store.Store }

// New refuses a store without history; a store that fails is the
// stream's error before anything is written (the server's 503), not a
// missing job.
func TestStoreErrors(t *testing.T) {
	if _, err := live.New(live.Options{}); err == nil {
		t.Error("New without a store: no error")
	}
	if _, err := live.New(live.Options{Store: plainStore{store.NewMemory()}}); err == nil {
		t.Error("New on a store without history: no error")
	}
	st := store.NewMemory()
	hub, srv := serve(t, live.Options{Store: st, Notified: true}, enc{})
	newJob(t, st, hub, "a", 2)
	_ = st.Close()
	_, err := hub.Subscribe(context.Background(), "a", 0)
	if !errors.Is(err, store.ErrClosed) || errors.Is(err, store.ErrNotFound) {
		t.Errorf("Subscribe on a closed store: %v, want ErrClosed", err)
	}
	connect(t, jobURL(srv, "a"), "", http.StatusInternalServerError)
	if s := hub.Stats(); s.Streams != 0 {
		t.Errorf("streams left open: %+v", s)
	}
}

// Requests for jobs that do not exist leave no watcher behind.
func TestMissingJobsLeaveNoWatcher(t *testing.T) {
	st := store.NewMemory()
	hub, srv := serve(t, live.Options{Store: st, Notified: true, SafetyPoll: time.Hour}, enc{})
	for i := range 20 {
		connect(t, jobURL(srv, job.ID(fmt.Sprint("nope-", i))), "", http.StatusNotFound)
		if _, err := hub.WaitStep(context.Background(), job.ID(fmt.Sprint("nope-", i)), 0, time.Hour); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("WaitStep of a missing job: %v", err)
		}
	}
	if s := hub.Stats(); s.Watchers != 0 || s.Streams != 0 {
		t.Errorf("after requests for missing jobs: %+v, want no watcher", s)
	}
}
