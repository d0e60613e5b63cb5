package server_test

import (
	"context"
	"testing"
	"time"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	"github.com/batonwf/baton/runner/inmem"
	"github.com/batonwf/baton/server"
	"github.com/batonwf/baton/server/live"
	"github.com/batonwf/baton/server/servertest"
	"github.com/batonwf/baton/store"
)

// TestNotifiedHubWakesLongPolls: with a hub notified by the runner's
// steps, a long poll returns at the step, though the hub would look at
// the store only once an hour.
func TestNotifiedHubWakesLongPolls(t *testing.T) {
	var hub *live.Hub
	e := servertest.NewEnv(t, checked(func(t *testing.T, reg *runner.Registry) (store.Store, any) {
		st := store.NewMemory()
		var err error
		hub, err = live.New(live.Options{Store: st, Notified: true, Poll: time.Hour, SafetyPoll: time.Hour, Changed: job.Changed})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { hub.Shutdown(context.Background()) })
		step := func(j job.Job, _ int) { hub.Notify(j.ID()) }
		r, err := inmem.New(inmem.Options{WorkerOptions: runner.WorkerOptions{Registry: reg, DrainTimeout: -1, Hooks: &runner.Hooks{Step: step}}, Store: st})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- r.Run(ctx) }()
		t.Cleanup(func() { cancel(); <-done })
		return st, server.Local{Runner: r, Registry: reg}
	}), func(o *server.Options) { o.Hub = hub })
	e.Submit(t, "w", `{"version":1,"root":{"try":{"act":"block"},"finally":{"act":"ok"}}}`)
	j := e.Running(t, "w", "body")
	polled := make(chan error, 3)
	for range 3 {
		go func() {
			h, err := e.Reader.History(t.Context(), "w", j.Version, 0, 20*time.Second)
			if err == nil && (len(h.Steps) == 0 || h.Steps[0].Version != j.Version+1) {
				t.Errorf("history after v%d: %+v", j.Version, h)
			}
			polled <- err
		}()
	}
	// A poll that starts after the step returns at once; one that waits
	// returns at the step, or after its 20s with no step, which fails.
	if _, err := e.Client.Cancel(t.Context(), "w", "wake"); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := <-polled; err != nil {
			t.Fatal(err)
		}
	}
}
