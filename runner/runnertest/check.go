package runnertest

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	"github.com/batonwf/baton/store"
)

// noHistory holds the tests that were told their store keeps no history.
var noHistory sync.Map // *testing.T -> true

// checkHistory checks, when the store keeps history (store.Historian),
// that every step of final's job was applied once: the versions follow
// one another from the origin without a repeat or a gap, every applied
// result's action ID appears in exactly one step, and replaying the
// history gives final byte for byte (job.Encode). It returns the history,
// or nil when the store keeps none (said once per test in the log).
func checkHistory(t *testing.T, ctx context.Context, st store.Store, final job.Job) *store.History {
	t.Helper()
	id := final.ID()
	h, err := store.LoadHistory(ctx, st, id)
	if errors.Is(err, errors.ErrUnsupported) {
		if _, said := noHistory.LoadOrStore(t, true); !said {
			t.Logf("the store keeps no history; steps not checked: %v", err)
		}
		return nil
	}
	if err != nil {
		t.Errorf("history of job %s: %v", id, err)
		return nil
	}
	v := h.Origin.Version()
	step := map[string]uint64{} // action ID -> version of the step that applied its result
	for _, s := range h.Steps {
		if s.Version != v+1 {
			t.Errorf("job %s: history has step v%d after v%d: a version applied twice or skipped", id, s.Version, v)
		}
		v = s.Version
		for _, r := range s.Results {
			if prev, ok := step[r.ActionID]; ok {
				t.Errorf("job %s: the result of %s was applied in step v%d and again in step v%d", id, r.ActionID, prev, s.Version)
				continue
			}
			step[r.ActionID] = s.Version
		}
	}
	latest, err := h.Latest()
	if err != nil {
		t.Errorf("job %s: replaying its history: %v", id, err)
		return &h
	}
	got, err1 := job.Encode(latest)
	want, err2 := job.Encode(final)
	if err := errors.Join(err1, err2); err != nil {
		t.Errorf("job %s: encode: %v", id, err)
		return &h
	}
	if !bytes.Equal(got, want) {
		t.Errorf("job %s: replaying its history (%d steps) gives v%d %s, not the final job v%d %s, byte for byte",
			id, len(h.Steps), latest.Version(), latest.Status(), final.Version(), final.Status())
	}
	return &h
}

// observer watches a runner through its hooks (Config.Hooks).
type observer struct {
	mu sync.Mutex
	ig map[string][]job.IgnoreReason // reasons results were ignored, by "job/action ID"
}

func newObserver() *observer {
	return &observer{ig: map[string][]job.IgnoreReason{}}
}

func (o *observer) hooks() *runner.Hooks {
	return &runner.Hooks{
		Ignored: func(id job.ID, ig job.Ignored) {
			o.mu.Lock()
			k := string(id) + "/" + ig.Result.ActionID
			o.ig[k] = append(o.ig[k], ig.Reason)
			o.mu.Unlock()
		},
	}
}

// ignored returns how many results for the action the runner ignored,
// and the reasons.
func (o *observer) ignored(id job.ID, actionID string, reasons ...job.IgnoreReason) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := 0
	for _, r := range o.ig[string(id)+"/"+actionID] {
		if len(reasons) == 0 || slices.Contains(reasons, r) {
			n++
		}
	}
	return n
}
