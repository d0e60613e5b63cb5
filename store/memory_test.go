package store_test

import (
	"context"
	"strings"
	"testing"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/store"
	"github.com/batonwf/baton/store/storetest"
)

func TestMemory(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return store.NewMemory() })
}

// history returns the stored history of a par of three finished one result
// per step, and every live version.
func history(t *testing.T) (store.History, []job.Job) {
	t.Helper()
	ctx := context.Background()
	s := store.NewMemory()
	defer s.Close()
	tr, err := job.New("h", ast.Par(ast.Act("log", "a"), ast.Act("log", "b"), ast.Act("log", "c")))
	j, acts := tr.Job, tr.Actions
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Create(ctx, j); err != nil {
		t.Fatal(err)
	}
	live := []job.Job{j}
	for _, a := range acts {
		tr, err = job.Restart(j, []job.Result{a.Succeed([]byte(`"ok"`))})
		j = tr.Job
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Save(ctx, tr.Job, tr.Step); err != nil {
			t.Fatal(err)
		}
		live = append(live, j)
	}
	h, err := s.History(ctx, "h")
	if err != nil {
		t.Fatal(err)
	}
	return h, live
}

func encode(t *testing.T, j job.Job) string {
	t.Helper()
	b, err := job.Encode(j)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestHistoryAt(t *testing.T) {
	h, live := history(t)
	for i, want := range live {
		got, err := h.At(uint64(i + 1))
		if err != nil {
			t.Fatalf("At(%d): %v", i+1, err)
		}
		if encode(t, got) != encode(t, want) {
			t.Fatalf("At(%d) = %s, want %s", i+1, encode(t, got), encode(t, want))
		}
	}
	if got, _ := h.At(1); got.Version() != 1 || encode(t, got) != encode(t, h.Origin) {
		t.Fatalf("At(1) is not the origin: %v", got)
	}
}

func TestHistoryAtOutOfRange(t *testing.T) {
	h, live := history(t)
	for _, v := range []uint64{0, uint64(len(live)) + 1, 1 << 63, ^uint64(0)} {
		_, err := h.At(v)
		if err == nil {
			t.Fatalf("At(%d) of a job with versions 1 to %d succeeded", v, len(live))
		}
		if !strings.Contains(err.Error(), "job h has versions 1 to 4") {
			t.Errorf("At(%d): error %q does not name the job and its versions", v, err)
		}
	}
}

func TestHistoryAtTruncated(t *testing.T) {
	h, live := history(t)
	h.Steps = h.Steps[:1] // a history cut short knows only versions 1 and 2
	if _, err := h.At(3); err == nil {
		t.Fatal("At(3) of a history with one step succeeded")
	}
	got, err := h.At(2)
	if err != nil {
		t.Fatal(err)
	}
	if encode(t, got) != encode(t, live[1]) {
		t.Fatalf("At(2) of the truncated history = %s, want %s", encode(t, got), encode(t, live[1]))
	}
}

func TestHistoryAtGap(t *testing.T) {
	h, _ := history(t)
	h.Steps = append(h.Steps[:1:1], h.Steps[2]) // versions 2 and 4: a gap
	if _, err := h.At(3); err == nil {
		t.Fatal("At(3) of a history with a gap succeeded")
	}
}

func TestHistoryAtZero(t *testing.T) {
	var h store.History
	for _, v := range []uint64{0, 1} {
		if _, err := h.At(v); err == nil {
			t.Fatalf("At(%d) of a zero History succeeded", v)
		}
	}
	if _, err := h.Latest(); err == nil {
		t.Fatal("Latest of a zero History succeeded")
	}
}

// A History is the caller's: changing the steps it returned must not change
// the store's.
func TestHistoryIsACopy(t *testing.T) {
	ctx := context.Background()
	s := store.NewMemory()
	defer s.Close()
	tr, err := job.New("copy", ast.Par(ast.Act("log", "a"), ast.Act("log", "b")))
	j, acts := tr.Job, tr.Actions
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Create(ctx, j); err != nil {
		t.Fatal(err)
	}
	tr2, err := job.Restart(j, []job.Result{acts[0].Succeed(nil)})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Save(ctx, tr2.Job, tr2.Step); err != nil {
		t.Fatal(err)
	}
	h, err := s.History(ctx, "copy")
	if err != nil {
		t.Fatal(err)
	}
	h.Steps[0] = job.Step{}
	h2, err := s.History(ctx, "copy")
	if err != nil {
		t.Fatal(err)
	}
	if h2.Steps[0].Version != 2 {
		t.Fatalf("changing a returned History changed the store: step %+v", h2.Steps[0])
	}
}

// TestMemoryListModel checks List, which walks a sorted index of IDs kept
// up to date lazily, against a plain filter of every job, through creates,
// deletes and creates again under the same IDs, listing between them.
func TestMemoryListModel(t *testing.T) {
	ctx := context.Background()
	s := store.NewMemory()
	defer s.Close()
	live := map[job.ID]bool{}
	ids := []job.ID{"a", "a-1", "a-10", "a-2", "ab", "b", "b-1", "c"}
	queries := []store.Query{{}, {Prefix: "a"}, {Prefix: "a-1"}, {After: "a-1"}, {After: "a-1", Prefix: "a"},
		{After: "0"}, {After: "b-1"}, {Limit: 2}, {Prefix: "a", After: "a-10", Limit: 1}, {Prefix: "zz"}}
	inc := uint64(0)
	for step := range 200 {
		id := ids[(step*7+step/3)%len(ids)]
		if live[id] && step%3 != 0 {
			if err := s.Delete(ctx, id); err != nil {
				t.Fatal(err)
			}
			delete(live, id)
		} else if !live[id] {
			inc++
			tr, err := job.New(id, ast.Act("x", nil), job.WithIncarnation(inc))
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Create(ctx, tr.Job); err != nil {
				t.Fatal(err)
			}
			live[id] = true
		}
		if step%4 != 0 {
			continue // several changes between two listings
		}
		for _, q := range queries {
			got, err := s.List(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			var want []job.ID
			for _, id := range ids { // sorted
				if live[id] && q.Match(store.Info{ID: id}) && (q.Limit == 0 || len(want) < q.Limit) {
					want = append(want, id)
				}
			}
			var gotIDs []job.ID
			for _, in := range got {
				gotIDs = append(gotIDs, in.ID)
			}
			if strings.Join(toStrings(gotIDs), ",") != strings.Join(toStrings(want), ",") {
				t.Fatalf("step %d: List(%+v) = %v, want %v", step, q, gotIDs, want)
			}
		}
	}
}

func toStrings(ids []job.ID) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = string(id)
	}
	return out
}

// TestInstant: the memory store says its writes never wait for I/O, and a
// store that does not say so (a wrapper that does not forward it) is not
// taken for one.
func TestInstant(t *testing.T) {
	m := store.NewMemory()
	if !store.IsInstant(m) {
		t.Error("store.NewMemory is not instant")
	}
	type wrapped struct{ store.Store }
	if store.IsInstant(wrapped{m}) {
		t.Error("a wrapper that does not forward Instant is instant")
	}
}
