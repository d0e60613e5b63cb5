package placement_test

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/batonwf/baton/placement"
)

// TestRanksDecideSame: Decide with a Ranks in its view answers exactly as
// without, for every worker of a random view as Self, at times around the
// entry's, with the default allocator and with plug-ins; one Ranks serves
// every decision of a scene (its lists are computed by the first and read
// by the others), and a Ranks of another number of workers is ignored.
// With NoReasons, the decision is the same but for its empty Reason.
func TestRanksDecideSame(t *testing.T) {
	for range 5 {
		rapid.Check(t, ranksDecideSame)
	}
}

func ranksDecideSame(t *rapid.T) {
	s := drawScene(t)
	switch rapid.IntRange(0, 5).Draw(t, "allocator") {
	case 0:
		s.view.Allocator = lastAllocator{}
	case 1:
		s.view.Allocator = storingAllocator{}
	case 2:
		s.view.Allocator = badAllocator{}
	}
	ranks := placement.NewRanks(s.view.Workers)
	if !ranks.Fits(s.view.Workers) {
		t.Fatalf("a Ranks does not fit the workers it was made from")
	}
	other := placement.NewRanks(append(slices.Clone(s.view.Workers), placement.Worker{Name: "extra", Capacity: 1}))
	// A second entry of the same key decided first fills the cache.
	second := s.entry
	second.ID += "-second"
	times := []time.Time{s.entry.Seen, s.entry.Seen.Add(ms(rapid.IntRange(0, 4000).Draw(t, "later"))), s.entry.Seen.Add(time.Hour)}
	for _, w := range s.view.Workers {
		v := s.viewOf(w.Name)
		for _, now := range times {
			for _, e := range []placement.Entry{second, s.entry} {
				want := placement.Decide(v, e, now)
				if want.Spill != (e.Route.Kind == placement.RouteSoft && want.Verdict != placement.Pass && !strings.HasPrefix(want.Reason, "holder of key")) {
					t.Fatalf("%s: Spill %v: %s", w.Name, want.Spill, want)
				}
				for _, rk := range []*placement.Ranks{nil, ranks, other} {
					for _, quiet := range []bool{false, true} {
						rv := v
						rv.Ranks, rv.NoReasons = rk, quiet
						got := placement.Decide(rv, e, now)
						exp := want
						if quiet {
							exp.Reason = ""
						}
						if !reflect.DeepEqual(got, exp) {
							t.Fatalf("%s at %v, %+v: with Ranks (fits %v, no reasons %v) %+v (err %v), without %+v (err %v)",
								w.Name, now.Sub(t0), e, rk.Fits(v.Workers), quiet, got, got.Err, exp, exp.Err)
						}
					}
				}
			}
		}
	}
}

// Workers with the same name make a Ranks that fits nothing; a nil one
// fits nothing either.
func TestRanksFits(t *testing.T) {
	ws := []placement.Worker{{Name: "a", Capacity: 1}, {Name: "b", Capacity: 2}}
	if !placement.NewRanks(ws).Fits(ws) {
		t.Errorf("does not fit its own workers")
	}
	moved := slices.Clone(ws)
	moved[1].Load.Running, moved[1].Live, moved[1].State = 2, true, placement.StateDraining
	if !placement.NewRanks(ws).Fits(moved) {
		t.Errorf("a change of load, liveness or state made it unfit (only names and capacities matter)")
	}
	dup := []placement.Worker{{Name: "a", Capacity: 1}, {Name: "a", Capacity: 1}}
	if placement.NewRanks(dup).Fits(dup) {
		t.Errorf("a Ranks of two workers named a fits")
	}
	var nilRanks *placement.Ranks
	if nilRanks.Fits(ws) {
		t.Errorf("a nil Ranks fits")
	}
}

// Decide with a Ranks and no reasons over the figure, 10,000
// entries of 1,000 soft keys with 200 workers, allocates nothing once the
// lists are made.
func TestRanksDecideAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocations are counted without -race")
	}
	view, entries := figureScene()
	view.Ranks = placement.NewRanks(view.Workers)
	view.NoReasons = true
	for _, e := range entries {
		placement.Decide(view, e, t0)
	}
	allocs := testing.AllocsPerRun(10, func() {
		for _, e := range entries[:1000] {
			placement.Decide(view, e, t0)
		}
	})
	if per := allocs / 1000; per > 0 {
		t.Errorf("%.1f allocations per decision with a filled Ranks", per)
	}
}

// figureScene is the figure: 200 workers of capacity 4, one of
// them deciding, and 10,000 entries of 1,000 soft keys.
func figureScene() (placement.View, []placement.Entry) {
	ws := make([]placement.Worker, 200)
	for i := range ws {
		ws[i] = placement.Worker{Name: fmt.Sprintf("worker-%03d", i), State: placement.StateAvailable, Live: true, Capacity: 4, Actions: []string{"a"}}
	}
	view := placement.View{Self: ws[7].Name, Workers: ws, Settings: placement.Settings{Wait: time.Second}}
	entries := make([]placement.Entry, 10_000)
	for i := range entries {
		entries[i] = placement.Entry{ID: fmt.Sprintf("e-%d", i), Action: "a",
			Route: placement.Route{Kind: placement.RouteSoft, Key: placement.KeyHash(fmt.Sprint("key-", i%1000)), Wait: time.Second}, Seen: t0}
	}
	return view, entries
}

// TestRanksDecideSameMany is TestRanksDecideSame over 33 to 120 workers,
// where a Ranks orders only the head of a list until a decision reads
// past it: soft keys and pins, with every kind of worker ahead of Self.
func TestRanksDecideSameMany(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(33, 120).Draw(t, "workers")
		ws := make([]placement.Worker, n)
		for i := range ws {
			w := placement.Worker{Name: fmt.Sprintf("w%03d", i), State: placement.StateAvailable, Live: true,
				Capacity: rapid.IntRange(0, 4).Draw(t, "capacity"), Actions: []string{"a"}}
			switch rapid.IntRange(0, 9).Draw(t, "kind") {
			case 0:
				w.Live, w.DownSince = false, t0.Add(-time.Hour)
			case 1:
				w.State = placement.StateDraining
			case 2:
				w.Quarantined = map[string]time.Time{"a": t0.Add(time.Hour)}
			}
			w.Load.Running = rapid.IntRange(0, max(w.Capacity, 0)).Draw(t, "running")
			ws[i] = w
		}
		key := rapid.Uint64().Draw(t, "key")
		e := placement.Entry{ID: "e", Action: "a", Seen: t0, Route: placement.Route{Kind: placement.RouteSoft, Key: key, Wait: time.Second}}
		if rapid.Bool().Draw(t, "pin") {
			e.Route = placement.Route{Kind: placement.RoutePin, Key: key}
			e.Holder = rapid.SampledFrom([]string{"", ws[0].Name, ws[n-1].Name}).Draw(t, "holder")
		}
		ranks := placement.NewRanks(ws)
		for _, self := range rapid.SliceOfNDistinct(rapid.IntRange(0, n-1), 1, 8, rapid.ID[int]).Draw(t, "selves") {
			v := placement.View{Self: ws[self].Name, Workers: ws}
			now := t0.Add(ms(rapid.IntRange(0, 2000).Draw(t, "now")))
			want := placement.Decide(v, e, now)
			for _, quiet := range []bool{true, false} {
				rv := v
				rv.Ranks, rv.NoReasons = ranks, quiet
				got := placement.Decide(rv, e, now)
				exp := want
				if quiet {
					exp.Reason = ""
				}
				if !reflect.DeepEqual(got, exp) {
					t.Fatalf("%s (no reasons %v): with Ranks %+v, without %+v", ws[self].Name, quiet, got, exp)
				}
			}
		}
	})
}
