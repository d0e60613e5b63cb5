package live_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"testing"
	"time"

	"github.com/batonwf/baton/server/live"
	"github.com/batonwf/baton/store"
)

// cuttingProxy forwards to target and cuts every response after 1 s, as
// proxies that end long responses do.
func cuttingProxy(t *testing.T, target string) *httptest.Server {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.FlushInterval = -1
	rp.ErrorLog = log.New(io.Discard, "", 0)
	p := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), time.Second)
		defer cancel()
		rp.ServeHTTP(w, r.WithContext(ctx))
	}))
	t.Cleanup(p.Close)
	return p
}

// Behind a proxy that cuts every response after 1 s, the event stream
// breaks, and a client keeps up by long polling (WaitStep): every step
// once, in order, nothing missed; on a store nothing notifies, which the
// hub polls.
func TestLongPollBehindCuttingProxy(t *testing.T) {
	eachStore(t, func(t *testing.T, st store.Store) {
		const steps = 40
		_, srv := serve(t, live.Options{Store: st, Poll: 50 * time.Millisecond}, enc{})
		p := cuttingProxy(t, srv.URL)
		d := newJob(t, st, nil, "lp", steps) // nothing notifies the hub

		// The stream is cut: it ends without an end event.
		c := connect(t, p.URL+"/jobs/lp/events", "", http.StatusOK)
		if ev := c.next(t); ev.Type != "snapshot" {
			t.Fatalf("first event %s, want snapshot", ev.Type)
		}
		<-c.done
		for range len(c.events) {
			if e := <-c.events; e.Type == "end" {
				t.Fatal("the job ended in a stream that should have been cut")
			}
		}
		t.Logf("the stream was cut: %v", c.err)

		// So the client long polls from the version it had.
		type polled struct {
			versions []uint64
			err      error
		}
		out := make(chan polled, 1)
		go func() {
			var seen []uint64
			from, cuts := uint64(1), 0
			for from < steps+1 {
				req := fmt.Sprintf("%s/jobs/lp/history?from=%d&wait=5s", p.URL, from)
				resp, err := http.Get(req)
				if err != nil {
					cuts++
					continue
				}
				var vs []uint64
				err = json.NewDecoder(resp.Body).Decode(&vs)
				resp.Body.Close()
				if err != nil || resp.StatusCode != http.StatusOK {
					cuts++ // cut mid-answer, or by the proxy
					continue
				}
				for _, v := range vs {
					if v != from+1 {
						out <- polled{seen, fmt.Errorf("long poll from v%d gave v%d (all: %v)", from, v, vs)}
						return
					}
					seen = append(seen, v)
					from = v
				}
			}
			out <- polled{versions: seen}
		}()
		for i := range steps {
			d.step()
			if i == steps/2 {
				time.Sleep(1500 * time.Millisecond) // a quiet spell: polls get cut
			} else {
				time.Sleep(20 * time.Millisecond)
			}
		}
		select {
		case r := <-out:
			if r.err != nil {
				t.Fatal(r.err)
			}
			if len(r.versions) != steps || r.versions[0] != 2 || r.versions[steps-1] != steps+1 {
				t.Fatalf("long polls gave versions %v, want 2 to %d, each once", r.versions, steps+1)
			}
		case <-time.After(60 * time.Second):
			t.Fatal("the long-polling client did not keep up in 60 s")
		}
	})
}
