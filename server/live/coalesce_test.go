package live_test

import (
	"math"
	"net/http"
	"testing"
	"time"

	"github.com/batonwf/baton/server/live"
	"github.com/batonwf/baton/store"
)

// 100 steps in a burst reach a subscriber in at most ceil(T*MaxRate)+1
// events (T: from the burst's start to the last event read), and every
// step is in them once, in order.
func TestCoalesce(t *testing.T) {
	eachStore(t, func(t *testing.T, st store.Store) {
		const burst, rate = 100, 10
		hub, srv := serve(t, live.Options{Store: st, Notified: true, MaxRate: rate}, enc{})
		d := newJob(t, st, hub, "burst", burst+1)
		c := connect(t, jobURL(srv, "burst"), "", http.StatusOK)
		if ev := c.next(t); ev.Type != "snapshot" {
			t.Fatalf("first event %s, want snapshot", ev.Type)
		}
		start := time.Now()
		for range burst {
			d.step()
		}
		got := map[uint64]string{}
		events := 0
		for next := uint64(2); next <= burst+1; events++ {
			ev := c.next(t)
			if ev.Type != "step" {
				t.Fatalf("event %s, want step", ev.Type)
			}
			for _, v := range decode[stepData](t, ev).Versions {
				if v != next {
					t.Fatalf("step v%d, want v%d", v, next)
				}
				got[v] = ""
				next++
			}
		}
		took := time.Since(start)
		if bound := int(math.Ceil(took.Seconds()*rate)) + 1; events > bound {
			t.Errorf("%d steps came in %d events over %v, more than %d", burst, events, took, bound)
		}
		t.Logf("%d steps in %d events over %v", burst, events, took)
	})
}
