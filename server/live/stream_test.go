package live_test

import (
	"net/http"
	"slices"
	"strconv"
	"testing"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/server/live"
	"github.com/batonwf/baton/store"
)

// readSteps reads a stream's step events until it has version last,
// checking that each version comes once and in order after from, and
// returns the versions in the order they came and the id of the last
// event read.
func readSteps(t *testing.T, c *client, from, last uint64, got map[uint64]string) string {
	t.Helper()
	next := from + 1
	id := ""
	for next <= last {
		ev := c.next(t)
		if ev.Type != "step" {
			t.Fatalf("event %s %s, want a step (waiting for v%d)", ev.Type, ev.Data, next)
		}
		d := decode[stepData](t, ev)
		for i, v := range d.Versions {
			if v != next {
				t.Fatalf("step event carries v%d, want v%d (versions %v)", v, next, d.Versions)
			}
			got[v] = d.Results[i]
			next++
		}
		if want := strconv.FormatUint(next-1, 10); ev.ID != want {
			t.Fatalf("step event id %q, want the newest version %s", ev.ID, want)
		}
		id = ev.ID
	}
	return id
}

// A client joining mid-job gets a snapshot, then every later step once, in
// order, then end; the stream closes and a reconnect gets 204.
func TestJoinMidJob(t *testing.T) {
	eachStore(t, func(t *testing.T, st store.Store) {
		hub, srv := serve(t, live.Options{Store: st, Notified: true}, enc{})
		_ = hub
		d := newJob(t, st, hub, "mid", 8)
		for range 3 {
			d.step()
		}
		c := connect(t, jobURL(srv, "mid"), "", http.StatusOK)
		ev := c.next(t)
		if s := decode[snapshotData](t, ev); ev.Type != "snapshot" || s.Version != 4 || ev.ID != "4" {
			t.Fatalf("first event %s id %q %s, want the snapshot of v4", ev.Type, ev.ID, ev.Data)
		}
		got := map[uint64]string{}
		for range 5 {
			d.step()
		}
		last := readSteps(t, c, 4, 9, got)
		ev = c.next(t)
		if e := decode[snapshotData](t, ev); ev.Type != "end" || e.Status != "succeeded" || ev.ID != "9" {
			t.Fatalf("event %s id %q %s, want end of v9, succeeded", ev.Type, ev.ID, ev.Data)
		}
		c.ended(t)
		checkAgainstHistory(t, st, "mid", 5, 9, got)
		connect(t, jobURL(srv, "mid"), last, http.StatusNoContent)
		connect(t, jobURL(srv, "mid")+"?after=9", "", http.StatusNoContent)
	})
}

// checkAgainstHistory checks that got holds versions from to last, each
// with the results the history says it applied.
func checkAgainstHistory(t *testing.T, st store.Store, id job.ID, from, last uint64, got map[uint64]string) {
	t.Helper()
	h := historyOf(t, st, id)
	for v := from; v <= last; v++ {
		if got[v] != h[v] {
			t.Errorf("v%d: stream says results %q, history %q", v, got[v], h[v])
		}
	}
	if len(got) != int(last-from+1) {
		t.Errorf("stream carried %d versions, want %d (%d to %d)", len(got), last-from+1, from, last)
	}
}

// Dropped and resumed with Last-Event-ID (or ?after), a client misses
// nothing and sees nothing twice; a cancel's reason travels with its step.
func TestResume(t *testing.T) {
	eachStore(t, func(t *testing.T, st store.Store) {
		hub, srv := serve(t, live.Options{Store: st, Notified: true}, enc{})
		d := newJob(t, st, hub, "res", 20)
		c := connect(t, jobURL(srv, "res"), "", http.StatusOK)
		if ev := c.next(t); ev.Type != "snapshot" || ev.ID != "1" {
			t.Fatalf("first event %s id %q, want the snapshot of v1", ev.Type, ev.ID)
		}
		got := map[uint64]string{}
		d.step()
		d.step()
		last := readSteps(t, c, 1, 3, got)
		c.close() // dropped
		for range 4 {
			d.step() // missed while away: v4 to v7
		}
		c = connect(t, jobURL(srv, "res"), last, http.StatusOK)
		last = readSteps(t, c, 3, 7, got)
		c.close()
		d.step()
		c = connect(t, jobURL(srv, "res")+"?after="+last, "", http.StatusOK)
		readSteps(t, c, 7, 8, got)
		d.cancel("enough")
		ev := c.next(t)
		if s := decode[stepData](t, ev); ev.Type != "step" || !slices.Equal(s.Versions, []uint64{9}) || s.Cancel != "enough" {
			t.Fatalf("event %s %s, want the step of v9 with the cancel's reason", ev.Type, ev.Data)
		}
		got[9] = ""
		if ev := c.next(t); ev.Type != "end" || decode[snapshotData](t, ev).Status != "cancelled" {
			t.Fatalf("event %s %s, want end, cancelled", ev.Type, ev.Data)
		}
		c.ended(t)
		checkAgainstHistory(t, st, "res", 2, 9, got)
	})
}

// A Last-Event-ID that is not a version is treated as absent, one from
// the future (or before the job) gets a snapshot; a settled job's stream
// sends its snapshot, then end, and closes.
func TestResumeOddVersions(t *testing.T) {
	st := store.NewMemory()
	hub, srv := serve(t, live.Options{Store: st, Notified: true}, enc{})
	d := newJob(t, st, hub, "odd", 3)
	d.step()
	for _, id := range []string{"garbage", "-1", "99", "0", "1e3", "2x"} {
		c := connect(t, jobURL(srv, "odd"), id, http.StatusOK)
		if ev := c.next(t); ev.Type != "snapshot" || ev.ID != "2" {
			t.Errorf("Last-Event-ID %q: first event %s id %q, want the snapshot of v2", id, ev.Type, ev.ID)
		}
		c.close()
	}
	d.step()
	d.step()
	for _, id := range []string{"", "1", "2", "3", "99"} {
		c := connect(t, jobURL(srv, "odd"), id, http.StatusOK)
		if ev := c.next(t); ev.Type != "snapshot" || ev.ID != "4" {
			t.Errorf("settled, Last-Event-ID %q: first event %s id %q, want the snapshot of v4", id, ev.Type, ev.ID)
		}
		if ev := c.next(t); ev.Type != "end" || ev.ID != "4" {
			t.Errorf("settled, Last-Event-ID %q: event %s id %q, want end", id, ev.Type, ev.ID)
		}
		c.ended(t)
	}
	connect(t, jobURL(srv, "odd"), "4", http.StatusNoContent)
	connect(t, jobURL(srv, "nope"), "", http.StatusNotFound)
}
