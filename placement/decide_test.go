package placement_test

import (
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/batonwf/baton/placement"
)

var t0 = time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

// scene is a view every worker agrees on, an entry, and per worker the
// replica groups it runs.
type scene struct {
	view   placement.View
	entry  placement.Entry
	groups map[string]map[uint64]int
}

// viewOf is the view as worker self has it.
func (s scene) viewOf(self string) placement.View {
	v := s.view
	v.Self = self
	v.Groups = s.groups[self]
	return v
}

// drawScene draws 1 to 7 workers in every state, with capacities,
// limits, handlers, loads and quarantines, and an entry of any route.
// Quarantines end before the entry is seen or long after every claim, so
// the view stays the same while the workers decide (an expiry is a change
// of view; TestDecideQuarantineEnds covers it).
func drawScene(t *rapid.T) scene {
	n := rapid.IntRange(1, 7).Draw(t, "workers")
	s := scene{groups: map[string]map[uint64]int{}}
	groupKey := uint64(0x9)
	for i := range n {
		w := placement.Worker{
			Name:     fmt.Sprintf("w%d", i),
			State:    rapid.SampledFrom([]placement.State{placement.StateAvailable, placement.StateAvailable, placement.StateAvailable, placement.StateDraining, placement.StateNone}).Draw(t, "state"),
			Live:     rapid.IntRange(0, 3).Draw(t, "live") > 0,
			Grace:    ms(rapid.IntRange(0, 60).Draw(t, "grace") * 1000),
			Capacity: rapid.IntRange(0, 4).Draw(t, "capacity"),
			Actions:  rapid.SampledFrom([][]string{{"a", "b"}, {"a", "b"}, {"a"}, {"b"}, nil}).Draw(t, "actions"),
		}
		if !w.Live {
			w.DownSince = t0.Add(-ms(rapid.IntRange(0, 90).Draw(t, "down for") * 1000))
		}
		w.Load.Running = rapid.IntRange(0, max(w.Capacity, 0)).Draw(t, "running")
		runA := rapid.IntRange(0, w.Load.Running).Draw(t, "running a")
		w.Load.Names = map[string]placement.NameLoad{"a": {Running: runA}}
		if rapid.Bool().Draw(t, "limited") {
			w.Limits = map[string]int{"a": rapid.IntRange(runA, runA+2).Draw(t, "limit a")}
		}
		if rapid.IntRange(0, 4).Draw(t, "quarantined") == 0 {
			w.Quarantined = map[string]time.Time{rapid.SampledFrom([]string{"a", "b"}).Draw(t, "quarantined for"): t0.Add(rapid.SampledFrom([]time.Duration{-2 * time.Second, -time.Millisecond, 2 * time.Hour}).Draw(t, "quarantine ends"))}
		}
		s.view.Workers = append(s.view.Workers, w)
		if rapid.IntRange(0, 2).Draw(t, "runs a copy") == 0 {
			s.groups[w.Name] = map[uint64]int{groupKey: 1}
		}
	}
	s.view.Settings = placement.Settings{
		Strategy: rapid.SampledFrom([]placement.Strategy{placement.Spread, placement.Pack}).Draw(t, "strategy"),
		Wait:     ms(rapid.IntRange(0, 3000).Draw(t, "default wait")),
	}
	e := placement.Entry{
		ID:     fmt.Sprintf("e-%d", rapid.IntRange(0, 1000).Draw(t, "entry")),
		Action: "a",
		Seen:   t0,
	}
	switch kind := rapid.SampledFrom([]placement.RouteKind{placement.RouteNone, placement.RouteSoft, placement.RoutePin, placement.RouteGroup}).Draw(t, "route"); kind {
	case placement.RouteSoft:
		e.Route = placement.Route{Kind: kind, Key: rapid.Uint64().Draw(t, "key"), Wait: ms(rapid.IntRange(0, 3000).Draw(t, "wait"))}
	case placement.RoutePin:
		e.Route = placement.Route{Kind: kind, Key: rapid.Uint64().Draw(t, "key")}
		holders := []string{"", "ghost"}
		for _, w := range s.view.Workers {
			holders = append(holders, w.Name)
		}
		e.Holder = rapid.SampledFrom(holders).Draw(t, "holder")
		e.Names = rapid.SampledFrom([][]string{nil, {"a"}, {"a", "b"}}).Draw(t, "names")
	case placement.RouteGroup:
		e.Route = placement.Route{Kind: kind, Key: groupKey}
	}
	s.entry = e
	return s
}

// never is a claim time later than any the scenes produce; the view a
// scene draws holds until horizon (quarantines end before t0 or after).
var (
	never   = t0.Add(1000 * time.Hour)
	horizon = t0.Add(time.Hour)
)

// claimTime is when worker self first claims the entry if the view does
// not change: Decide at Seen, and again at the time it names. It checks
// that Decide agrees with itself at that time, just before it, and when
// asked twice, and that the view is left as it was.
func claimTime(t *rapid.T, s scene, self string) (time.Time, placement.Decision) {
	v := s.viewOf(self)
	before := deepCopy(v)
	now := s.entry.Seen
	for range 3 {
		d := placement.Decide(v, s.entry, now)
		if d.Reason == "" {
			t.Fatalf("%s at %v: %v without a reason", self, now.Sub(t0), d.Verdict)
		}
		if again := placement.Decide(v, s.entry, now); !reflect.DeepEqual(d, again) {
			t.Fatalf("%s: Decide is not deterministic: %+v, then %+v", self, d, again)
		}
		if !reflect.DeepEqual(v, before) {
			t.Fatalf("%s: Decide modified its view", self)
		}
		switch {
		case d.Verdict == placement.Claim:
			return now, d
		case d.At.IsZero() || d.At.After(horizon):
			return never, d
		case !d.At.After(now):
			t.Fatalf("%s at %v: %v at %v, not later", self, now.Sub(t0), d.Verdict, d.At.Sub(t0))
		}
		if early := placement.Decide(v, s.entry, d.At.Add(-time.Nanosecond)); early.Verdict == placement.Claim {
			t.Fatalf("%s: said %v until %v, but claims just before", self, d.Verdict, d.At.Sub(t0))
		}
		now = d.At
	}
	t.Fatalf("%s: no decision after three steps", self)
	return never, placement.Decision{}
}

func deepCopy(v placement.View) placement.View {
	c := v
	c.Workers = nil
	for _, w := range v.Workers {
		w.Actions = slices.Clone(w.Actions)
		w.Limits = cloneMap(w.Limits)
		w.Quarantined = cloneMap(w.Quarantined)
		w.Load.Names = cloneMap(w.Load.Names)
		c.Workers = append(c.Workers, w)
	}
	c.Groups = cloneMap(v.Groups)
	return c
}

func cloneMap[K comparable, V any](m map[K]V) map[K]V {
	if m == nil {
		return nil
	}
	out := make(map[K]V, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// names a pin needs, as Decide reads them.
func needed(e placement.Entry) []string {
	if e.Route.Kind != placement.RoutePin {
		return []string{e.Action}
	}
	out := append([]string{e.Action}, e.Names...)
	slices.Sort(out)
	return slices.Compact(out)
}

// canTake is the test's own reading of eligibility: registered and
// available, live, with capacity, handlers, no quarantine for the names.
func canTake(w placement.Worker, names []string, now time.Time, draining bool) bool {
	if !w.Live || w.Capacity <= 0 || !(w.State == placement.StateAvailable || draining && w.State == placement.StateDraining) {
		return false
	}
	for _, n := range names {
		if !w.Handles(n) || w.QuarantinedFor(n, now) {
			return false
		}
	}
	return true
}

func find(ws []placement.Worker, name string) (placement.Worker, bool) {
	i := slices.IndexFunc(ws, func(w placement.Worker) bool { return w.Name == name })
	if i < 0 {
		return placement.Worker{}, false
	}
	return ws[i], true
}

// TestDecideProperties checks Decide's promises over random views that
// every worker agrees on: 500 views (five rounds of rapid's 100), since
// some rules only show in rare views (a draining worker heading a key,
// every worker with room running a replica copy).
func TestDecideProperties(t *testing.T) {
	for range 5 {
		rapid.Check(t, decideProperties)
	}
}

func decideProperties(t *rapid.T) {
	{
		s := drawScene(t)
		e := s.entry
		need := needed(e)
		times := map[string]time.Time{}
		first, firstCount := never, 0
		for _, w := range s.view.Workers {
			at, d := claimTime(t, s, w.Name)
			times[w.Name] = at
			if at.Before(first) {
				first, firstCount = at, 0
			}
			if at.Equal(first) {
				firstCount++
			}
			if at == never {
				continue
			}
			// A claim respects capacity, limits, drain and quarantine.
			if w.Free(e.Action) == 0 {
				t.Fatalf("%s claims past its capacity or limit: %s", w.Name, d)
			}
			if w.State == placement.StateDraining && !(e.Route.Kind == placement.RoutePin && e.Holder == w.Name) {
				t.Fatalf("draining %s claims an entry that is not its pin's: %s", w.Name, d)
			}
			if !canTake(w, need, at, true) {
				t.Fatalf("%s claims though it cannot take %v (down, unregistered, no handler or quarantined): %s", w.Name, need, d)
			}
			if d.Persist != (e.Route.Kind == placement.RoutePin && e.Holder != w.Name) {
				t.Fatalf("%s: Persist %v for a %v entry held by %q", w.Name, d.Persist, e.Route.Kind, e.Holder)
			}
		}

		// Who could take it, by the view.
		var roomy []placement.Worker
		for _, w := range s.view.Workers {
			if canTake(w, need, e.Seen, false) && w.Free(e.Action) > 0 {
				roomy = append(roomy, w)
			}
		}
		holder, held := find(s.view.Workers, e.Holder)
		held = held && holder.State != placement.StateNone // an unregistered holder is gone: its pins move at once
		holderRuns := e.Route.Kind == placement.RoutePin && held && canTake(holder, need, e.Seen, true)

		switch e.Route.Kind {
		case placement.RouteSoft:
			// At most one claims before the wait ends, and that is the
			// first eligible worker in the key's order: a down,
			// draining or quarantined worker ranked above it is never
			// waited for.
			var elig []placement.Worker
			for _, w := range s.view.Workers {
				if canTake(w, need, e.Seen, false) {
					elig = append(elig, w)
				}
			}
			early := 0
			for name, at := range times {
				if at.Before(e.Seen.Add(e.Route.Wait)) {
					early++
					if top := placement.Rank(e.Route.Key, elig)[0].Name; name != top {
						t.Fatalf("%s claims before the wait, but the key's first eligible worker is %s", name, top)
					}
				}
			}
			if early > 1 {
				t.Fatalf("%d workers claim a soft key's entry before its wait ends: %v", early, times)
			}
			if len(elig) > 0 {
				top := placement.Rank(e.Route.Key, elig)[0]
				if top.Free(e.Action) > 0 && !times[top.Name].Equal(e.Seen) {
					t.Fatalf("holder %s has room but claims at %v", top.Name, times[top.Name].Sub(t0))
				}
			}
		case placement.RoutePin:
			if holderRuns {
				// Only the holder ever claims while it can run the pin.
				for name, at := range times {
					if at != never && name != e.Holder {
						t.Fatalf("%s claims an entry pinned to %s, which can run it", name, e.Holder)
					}
				}
			} else if firstCount > 1 && first != never {
				t.Fatalf("%d workers would claim a pin at once at %v: %v", firstCount, first.Sub(t0), times)
			}
			if held && !holder.Live && len(roomy) > 0 {
				due := holder.DownSince.Add(holder.Grace)
				if due.Before(e.Seen) {
					due = e.Seen
				}
				if first.After(due) {
					t.Fatalf("the pin waits past its down holder's grace (%v): first claim at %v", due.Sub(t0), first.Sub(t0))
				}
				for name, at := range times {
					if at.Before(due) && name != e.Holder {
						t.Fatalf("%s takes the pin of down %s at %v, before its grace ends at %v", name, e.Holder, at.Sub(t0), due.Sub(t0))
					}
				}
			}
		}

		// Liveness: an entry some eligible worker has room for is
		// claimed within max(wait, 500 ms), unless it waits for its pin's
		// holder (live and able, or down within its grace).
		waitsForHolder := holderRuns || e.Route.Kind == placement.RoutePin && held && !holder.Live
		if len(roomy) > 0 && !waitsForHolder {
			wait := time.Duration(0)
			switch e.Route.Kind {
			case placement.RouteSoft:
				wait = e.Route.Wait
			case placement.RouteGroup:
				wait = s.view.Settings.Wait
			}
			if bound := e.Seen.Add(max(wait, placement.MaxDelay)); first.After(bound) {
				t.Fatalf("%v entry: workers %v have room, but the first claim is at %v, past %v", e.Route.Kind, names(roomy), first.Sub(t0), bound.Sub(t0))
			}
		}
	}
}
