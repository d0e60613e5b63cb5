package server_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/batonwf/baton/api"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	"github.com/batonwf/baton/runner/inmem"
	"github.com/batonwf/baton/server"
	"github.com/batonwf/baton/server/servertest"
	"github.com/batonwf/baton/store"
	"github.com/batonwf/baton/store/bolt"
)

// TestHistoryShowsIgnoredResults: results the reducer ignored are
// journaled and the history shows them at the version they met, with
// their reason: a result delivered again after the job finished, and
// the late result of the action a cancel stopped. On the memory store
// and on bolt, the stores that journal them.
func TestHistoryShowsIgnoredResults(t *testing.T) {
	for _, name := range []string{"memory", "bolt"} {
		t.Run(name, func(t *testing.T) {
			var r *inmem.Runner
			hold := make(chan struct{})
			e := servertest.NewEnv(t, checked(func(t *testing.T, reg *runner.Registry) (store.Store, any) {
				var st store.Store = store.NewMemory()
				if name == "bolt" {
					b, err := bolt.Open(filepath.Join(t.TempDir(), "jobs.db"), &bolt.Options{NoSync: true})
					if err != nil {
						t.Fatal(err)
					}
					st = b
				}
				t.Cleanup(func() { st.Close() })
				if err := reg.Register("hold", func(context.Context, job.Action) ([]byte, error) { <-hold; return nil, nil }); err != nil {
					t.Fatal(err)
				}
				var err error
				r, err = inmem.New(inmem.Options{WorkerOptions: runner.WorkerOptions{Registry: reg, DrainTimeout: -1}, Store: st})
				if err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan error, 1)
				go func() { done <- r.Run(ctx) }()
				t.Cleanup(func() { cancel(); <-done })
				return st, server.Local{Runner: r, Registry: reg}
			}), nil)
			ctx := t.Context()

			e.Submit(t, "dup", `{"version":1,"root":{"act":"fail"}}`)
			j := e.Settled(t, "dup")
			h, err := e.Reader.History(ctx, "dup", 0, 0, 0)
			if err != nil || len(h.Steps) != 2 || len(h.Steps[1].Results) != 1 {
				t.Fatalf("history: %+v, %v", h, err)
			}
			first := h.Steps[1].Results[0]
			at := time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)
			if err := r.Deliver(ctx, job.Result{JobID: "dup", ActionID: first.ActionID, Error: "boom again", At: at}); err != nil {
				t.Fatal(err)
			}
			h, err = e.Reader.History(ctx, "dup", 0, 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			want := api.IgnoredResult{ActionID: first.ActionID, Path: first.Path, Action: "fail", Reason: "job_done", Error: "boom again", At: &at}
			if got := h.Steps[len(h.Steps)-1].Ignored; len(got) != 1 || !sameIgnored(got[0], want) || h.Latest != j.Version {
				t.Fatalf("the last step's ignored results: %+v; want [%+v] at v%d", got, want, j.Version)
			}
			for _, st := range h.Steps[:len(h.Steps)-1] {
				if len(st.Ignored) > 0 {
					t.Errorf("v%d has ignored results %+v", st.Version, st.Ignored)
				}
			}
			// From a later version on, the page holds none of them.
			if h, err := e.Reader.History(ctx, "dup", j.Version, 0, 0); err != nil || len(h.Steps) != 0 {
				t.Errorf("history after the last version: %+v, %v", h, err)
			}

			// A late result of the action the cancel stopped, while the
			// job's finally block still runs (runner/inmem drops its own
			// stopped handlers' results: this one comes from outside).
			e.Submit(t, "stop", `{"version":1,"root":{"try":{"act":"block"},"finally":{"act":"hold"}}}`)
			e.Running(t, "stop", "body")
			if _, err := e.Client.Cancel(ctx, "stop", "enough"); err != nil {
				t.Fatal(err)
			}
			c := e.Running(t, "stop", "finally")
			if err := r.Deliver(ctx, job.Result{JobID: "stop", ActionID: "body#1", Error: "too late", At: at}); err != nil {
				t.Fatal(err)
			}
			close(hold)
			e.Settled(t, "stop")
			h, err = e.Reader.History(ctx, "stop", 0, 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			want = api.IgnoredResult{ActionID: "body#1", Path: "body", Action: "block", Reason: "stopped", Error: "too late", At: &at}
			for _, st := range h.Steps {
				switch {
				case st.Version == c.Version && (len(st.Ignored) != 1 || !sameIgnored(st.Ignored[0], want)):
					t.Errorf("v%d (the cancelled job's) ignored results: %+v; want [%+v]", st.Version, st.Ignored, want)
				case st.Version != c.Version && len(st.Ignored) > 0:
					t.Errorf("v%d has ignored results %+v", st.Version, st.Ignored)
				}
			}
		})
	}
}

func sameIgnored(a, b api.IgnoredResult) bool {
	if (a.At == nil) != (b.At == nil) || a.At != nil && !a.At.Equal(*b.At) {
		return false
	}
	a.At, b.At = nil, nil
	return a == b
}
