package runner_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
)

// deep is a payload type with every kind of reference a decoded value
// can hold: what one action decoded must never show in the next.
type deep struct {
	S []int          `json:"s,omitempty"`
	M map[string]int `json:"m,omitempty"`
	P *int           `json:"p,omitempty"`
	N int            `json:"n"`
}

// TestHandleKeepsNothingBetweenActions: Handle decodes each payload into
// a value it reuses; an action sees only its own payload (a field its
// payload does not set is zero), and a value a handler kept is never
// changed by a later action, also with actions running at once.
func TestHandleKeepsNothingBetweenActions(t *testing.T) {
	var mu sync.Mutex
	kept := map[int]deep{}
	reg := runner.NewRegistry()
	if err := runner.Handle(reg, "keep", func(_ context.Context, in deep) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		kept[in.N] = in
		return in.N, nil
	}); err != nil {
		t.Fatal(err)
	}
	h, _ := reg.Lookup("keep")
	ctx := context.Background()
	call := func(payload string) {
		t.Helper()
		if _, err := h(ctx, job.Action{Name: "keep", Payload: []byte(payload)}); err != nil {
			t.Fatalf("%s: %v", payload, err)
		}
	}
	call(`{"s":[1,2],"m":{"a":1},"p":5,"n":1}`)
	call(`{"n":2}`)
	if got := kept[2]; got.S != nil || got.M != nil || got.P != nil {
		t.Fatalf("action 2 saw what action 1 decoded: %+v", got)
	}
	// A payload that fails halfway (s decoded, then n of the wrong type)
	// leaves nothing behind either.
	if _, err := h(ctx, job.Action{Name: "keep", Payload: []byte(`{"s":[7],"m":{"z":7},"n":"x"}`)}); err == nil {
		t.Fatal("a payload with n a string decoded")
	}
	call(`{"n":3}`)
	if got := kept[3]; got.S != nil || got.M != nil || got.P != nil {
		t.Fatalf("action 3 saw what a failed decode left: %+v", got)
	}
	if got := kept[1]; !slices.Equal(got.S, []int{1, 2}) || got.M["a"] != 1 || len(got.M) != 1 || got.P == nil || *got.P != 5 {
		t.Fatalf("action 1's value changed after action 2: %+v", got)
	}

	var wg sync.WaitGroup
	for i := 10; i < 60; i++ {
		wg.Go(func() { call(fmt.Sprintf(`{"s":[%d],"m":{"k":%d},"p":%d,"n":%d}`, i, i, i, i)) })
	}
	wg.Wait()
	for i := 10; i < 60; i++ {
		got := kept[i]
		if !slices.Equal(got.S, []int{i}) || got.M["k"] != i || len(got.M) != 1 || got.P == nil || *got.P != i {
			t.Errorf("action %d kept %+v", i, got)
		}
	}
}

// TestHandleDecodeAllocations: Handle's adapter costs no allocation of
// its own beyond what decoding the payload and encoding the output cost
// in plain Go (json.Unmarshal into a fresh value, json.Marshal): one
// fewer, since the value decoded into is reused.
func TestHandleDecodeAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	type req struct {
		ID string `json:"id"`
		N  int    `json:"n"`
	}
	reg := runner.NewRegistry()
	f := func(_ context.Context, in req) (req, error) { return req{ID: in.ID, N: in.N + 1}, nil }
	if err := runner.Handle(reg, "noop", f); err != nil {
		t.Fatal(err)
	}
	h, _ := reg.Lookup("noop")
	ctx := context.Background()
	a := job.Action{Name: "noop", Payload: []byte(`{"id":"a-0-3","n":3}`)}
	adapter := testing.AllocsPerRun(200, func() {
		if _, err := h(ctx, a); err != nil {
			t.Fatal(err)
		}
	})
	plain := testing.AllocsPerRun(200, func() {
		var in req
		if err := json.Unmarshal(a.Payload, &in); err != nil {
			t.Fatal(err)
		}
		out, _ := f(ctx, in)
		if _, err := json.Marshal(out); err != nil {
			t.Fatal(err)
		}
	})
	if adapter > plain-1 {
		t.Errorf("Handle's adapter: %.1f allocations per action, plain Go %.1f; want at most %.1f", adapter, plain, plain-1)
	}
}
