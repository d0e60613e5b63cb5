package live_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/batonwf/baton/server/live"
	"github.com/batonwf/baton/store"
	"github.com/batonwf/baton/store/storetest"
)

// 1,000 streams on one job cost one store read per step, not 1,000: the
// job's one watcher reads its history once per notice and every stream
// takes its events from that read.
func TestOneReadPerStep(t *testing.T) {
	const streams, steps = 1000, 5
	st := storetest.NewCounting(store.NewMemory())
	// No safety poll within the test: every read counted is a notice's.
	hub, srv := serve(t, live.Options{Store: st, Notified: true, SafetyPoll: time.Hour, MaxStreams: streams}, enc{})
	d := newJob(t, st, hub, "busy", steps+1)
	// Plain connections: the default transport keeps 2 idle per host.
	tr := &http.Transport{MaxIdleConnsPerHost: streams}
	defer tr.CloseIdleConnections()
	old := http.DefaultClient
	http.DefaultClient = &http.Client{Transport: tr}
	defer func() { http.DefaultClient = old }()

	clients := make([]*client, streams)
	for i := range clients {
		clients[i] = connect(t, jobURL(srv, "busy"), "", http.StatusOK)
	}
	var wg sync.WaitGroup
	errs := make(chan error, streams)
	for _, c := range clients {
		wg.Go(func() {
			if ev, err := c.nextErr(); err != nil || ev.Type != "snapshot" || ev.ID != "1" {
				errs <- fmt.Errorf("first event %s id %q (%v), want the snapshot of v1", ev.Type, ev.ID, err)
			}
		})
	}
	wg.Wait()
	base := st.CountsOf("busy")
	for v := uint64(2); v <= steps+1; v++ {
		d.step()
		for _, c := range clients {
			wg.Go(func() {
				ev, err := c.nextErr()
				var d stepData
				if err == nil {
					err = json.Unmarshal([]byte(ev.Data), &d)
				}
				if err != nil || ev.Type != "step" || len(d.Versions) != 1 || d.Versions[0] != v {
					errs <- fmt.Errorf("event %s %s (%v), want the step of v%d", ev.Type, ev.Data, err, v)
				}
			})
		}
		wg.Wait()
	}
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	reads := st.CountsOf("busy").Sub(base)
	if reads.Reads() != steps || reads.History != steps {
		t.Fatalf("%d streams, %d steps: store calls %s, want %d history reads and nothing else", streams, steps, reads, steps)
	}
	if s := hub.Stats(); s.Watchers != 1 || s.Streams != streams {
		t.Errorf("stats %+v, want 1 watcher and %d streams", s, streams)
	}
}
