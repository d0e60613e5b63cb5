package placement_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/batonwf/baton/placement"
)

func idle(name string, capacity int) placement.Worker {
	return placement.Worker{Name: name, State: placement.StateAvailable, Live: true, Capacity: capacity, Actions: []string{"a", "b"}, Grace: 30 * time.Second}
}

func busy(w placement.Worker, running int) placement.Worker {
	w.Load.Running = running
	w.Load.Names = map[string]placement.NameLoad{"a": {Running: running}}
	return w
}

// holderOf is the key's holder among the given workers (all eligible).
func holderOf(key uint64, ws ...placement.Worker) string {
	return placement.Rank(key, ws)[0].Name
}

func decide(t *testing.T, self string, ws []placement.Worker, e placement.Entry, now time.Time) placement.Decision {
	t.Helper()
	return placement.Decide(placement.View{Self: self, Workers: ws}, e, now)
}

func TestDecideSoftSpillsAfterTheWait(t *testing.T) {
	key := placement.KeyHash("dataset-42")
	ws := []placement.Worker{idle("w1", 2), idle("w2", 2), idle("w3", 2)}
	h := holderOf(key, ws...)
	order := placement.Rank(key, ws)
	next := order[1].Name
	for i := range ws {
		if ws[i].Name == h {
			ws[i] = busy(ws[i], 2)
		}
	}
	e := placement.Entry{ID: "e1", Action: "a", Seen: t0, Route: placement.Route{Kind: placement.RouteSoft, Key: key, Wait: 3200 * time.Millisecond}}
	d := decide(t, next, ws, e, t0)
	if want := fmt.Sprintf("wait: holder %s busy 2/2, spill at +3.2s", h); d.String() != want {
		t.Errorf("next in line before the wait: %q, want %q", d, want)
	}
	if !d.At.Equal(t0.Add(3200 * time.Millisecond)) {
		t.Errorf("spill at %v, want +3.2s", d.At.Sub(t0))
	}
	if d := decide(t, next, ws, e, t0.Add(3200*time.Millisecond)); d.Verdict != placement.Claim {
		t.Errorf("next in line at the wait's end: %s", d)
	}
	third := order[2].Name
	d = decide(t, third, ws, e, t0.Add(3200*time.Millisecond))
	if d.Verdict != placement.Wait || !d.At.Equal(t0.Add(3250*time.Millisecond)) || !strings.Contains(d.Reason, "spill to "+next+" first") {
		t.Errorf("third in line: %s at %v, want a wait to +3.25s behind %s", d, d.At.Sub(t0), next)
	}
	if d := decide(t, h, ws, e, t0); d.Verdict != placement.Pass || !strings.Contains(d.Reason, "full: 2/2") {
		t.Errorf("the busy holder: %s", d)
	}
}

// A down or draining holder is skipped at once: the next in the key's
// order is the holder.
func TestDecideSoftSkipsDownAndDrainingHolders(t *testing.T) {
	key := placement.KeyHash("k")
	ws := []placement.Worker{idle("w1", 2), idle("w2", 2), idle("w3", 2)}
	order := placement.Rank(key, ws)
	for _, mk := range []func(*placement.Worker){
		func(w *placement.Worker) { w.Live, w.DownSince = false, t0 },
		func(w *placement.Worker) { w.State = placement.StateDraining },
		func(w *placement.Worker) { w.Quarantined = map[string]time.Time{"a": t0.Add(time.Minute)} },
		func(w *placement.Worker) { w.Actions = []string{"b"} },
	} {
		ws := []placement.Worker{idle("w1", 2), idle("w2", 2), idle("w3", 2)}
		for i := range ws {
			if ws[i].Name == order[0].Name {
				mk(&ws[i])
			}
		}
		e := placement.Entry{ID: "e", Action: "a", Seen: t0, Route: placement.Route{Kind: placement.RouteSoft, Key: key, Wait: time.Second}}
		if d := decide(t, order[1].Name, ws, e, t0); d.Verdict != placement.Claim {
			t.Errorf("with %s ineligible, %s (next in the key's order) should claim at once: %s", order[0].Name, order[1].Name, d)
		}
	}
}

// Spread takes the largest free share first, pack the fullest worker with
// a free slot.
func TestDecideStrategies(t *testing.T) {
	ws := []placement.Worker{busy(idle("big", 4), 3), idle("small", 2), busy(idle("full", 2), 2)}
	e := placement.Entry{ID: "e", Action: "a", Seen: t0}
	for _, c := range []struct {
		s           placement.Strategy
		first, next string
	}{{placement.Spread, "small", "big"}, {placement.Pack, "big", "small"}} {
		v := placement.View{Workers: ws, Settings: placement.Settings{Strategy: c.s}}
		v.Self = c.first
		if d := placement.Decide(v, e, t0); d.Verdict != placement.Claim || !strings.HasPrefix(d.Reason, "first by "+c.s.String()) {
			t.Errorf("%v: %s: %s", c.s, c.first, d)
		}
		v.Self = c.next
		d := placement.Decide(v, e, t0)
		if want := fmt.Sprintf("wait: 2nd after %s (%s); claims anyway at +50ms", c.first, c.s); d.String() != want {
			t.Errorf("%v: %s: %q, want %q", c.s, c.next, d, want)
		}
		v.Self = "full"
		if d := placement.Decide(v, e, t0); d.Verdict != placement.Pass {
			t.Errorf("%v: a full worker: %s", c.s, d)
		}
	}
}

// The wait behind workers ahead is StepDelay each, at most MaxDelay.
func TestDecideDelayIsCapped(t *testing.T) {
	var ws []placement.Worker
	for i := range 15 {
		ws = append(ws, idle(fmt.Sprintf("w%02d", i), 1))
	}
	e := placement.Entry{ID: "e", Action: "a", Seen: t0}
	var last time.Time
	for _, w := range ws {
		d := decide(t, w.Name, ws, e, t0)
		if d.Verdict == placement.Wait && d.At.After(last) {
			last = d.At
		}
	}
	if want := t0.Add(placement.MaxDelay); !last.Equal(want) {
		t.Errorf("the last of 15 idle workers waits until %v, want MaxDelay (%v)", last.Sub(t0), placement.MaxDelay)
	}
}

func TestDecidePins(t *testing.T) {
	key := placement.KeyHash("job/j1/seq[2]")
	pin := placement.Route{Kind: placement.RoutePin, Key: key}
	ws := []placement.Worker{idle("w1", 2), idle("w2", 2), idle("w3", 2)}
	order := placement.Rank(key, ws)
	h, next := order[0].Name, order[1].Name
	e := placement.Entry{ID: "e", Action: "a", Seen: t0, Route: pin, Holder: h, Names: []string{"a", "b"}}

	if d := decide(t, h, ws, e, t0); d.Verdict != placement.Claim || d.Persist {
		t.Errorf("the holder: %s (persist %v), want a claim without a write", d, d.Persist)
	}
	if d := decide(t, next, ws, e, t0); d.Verdict != placement.Pass || !strings.Contains(d.Reason, "pinned to "+h) {
		t.Errorf("another worker: %s", d)
	}
	// The holder drains: it still runs its pins; others still pass.
	drained := setWorker(ws, h, func(w *placement.Worker) { w.State = placement.StateDraining })
	if d := decide(t, h, drained, e, t0); d.Verdict != placement.Claim {
		t.Errorf("a draining holder: %s", d)
	}
	if d := decide(t, h, drained, placement.Entry{ID: "f", Action: "a", Seen: t0}, t0); d.Verdict != placement.Pass || !strings.Contains(d.Reason, "draining") {
		t.Errorf("a draining worker and an unpinned entry: %s", d)
	}
	if d := decide(t, next, drained, e, t0); d.Verdict != placement.Pass || !strings.Contains(d.Reason, "draining") {
		t.Errorf("another worker, holder draining: %s", d)
	}
	// The holder goes down: others wait out its grace, then the next in
	// rank moves the pin to itself.
	down := setWorker(ws, h, func(w *placement.Worker) { w.Live, w.DownSince = false, t0.Add(time.Second) })
	d := decide(t, next, down, e, t0.Add(10*time.Second))
	if want := fmt.Sprintf("pass: pinned to %s, down, grace ends +21s", h); d.String() != want {
		t.Errorf("holder down within its grace: %q, want %q", d, want)
	}
	if d := decide(t, next, down, e, t0.Add(31*time.Second)); d.Verdict != placement.Claim || !d.Persist {
		t.Errorf("holder down past its grace: %s (persist %v), want a claim that moves the pin", d, d.Persist)
	}
	// Quarantined for a name under the pin, or without its handler: the
	// pin moves at once.
	for _, mk := range []func(*placement.Worker){
		func(w *placement.Worker) { w.Quarantined = map[string]time.Time{"b": t0.Add(time.Minute)} },
		func(w *placement.Worker) { w.Actions = []string{"a"} },
	} {
		if d := decide(t, next, setWorker(ws, h, mk), e, t0); d.Verdict != placement.Claim || !d.Persist {
			t.Errorf("holder unable to run the pin's names: %s", d)
		}
	}
	// No holder: the first in rank with room pins it.
	e.Holder = ""
	full := setWorker(ws, h, func(w *placement.Worker) { *w = busy(*w, 2) })
	if d := decide(t, next, full, e, t0); d.Verdict != placement.Claim || !d.Persist || !strings.Contains(d.Reason, "unallocated") {
		t.Errorf("a new pin, its first choice full: %s", d)
	}
}

func setWorker(ws []placement.Worker, name string, f func(*placement.Worker)) []placement.Worker {
	out := make([]placement.Worker, len(ws))
	copy(out, ws)
	for i := range out {
		if out[i].Name == name {
			f(&out[i])
		}
	}
	return out
}

// Replica copies: a worker that runs one takes another only after the
// wait, and after max(wait, MaxDelay) when another worker has room.
func TestDecideReplicaCopies(t *testing.T) {
	g := placement.Route{Kind: placement.RouteGroup, Key: 7}
	e := placement.Entry{ID: "e", Action: "a", Seen: t0, Route: g}
	ws := []placement.Worker{idle("w1", 4), idle("w2", 4)}
	v := placement.View{Self: "w1", Workers: ws, Settings: placement.Settings{Wait: 2 * time.Second}, Groups: map[uint64]int{7: 1}}
	d := placement.Decide(v, e, t0)
	if d.Verdict != placement.Wait || !d.At.Equal(t0.Add(2*time.Second)) || !strings.Contains(d.Reason, "w2 has room") {
		t.Errorf("another worker has room: %s until %v", d, d.At.Sub(t0))
	}
	v.Workers = []placement.Worker{idle("w1", 4), busy(idle("w2", 4), 4)}
	if d := placement.Decide(v, e, t0.Add(2*time.Second)); d.Verdict != placement.Claim {
		t.Errorf("nobody else has room, after the wait: %s", d)
	}
	v.Workers = []placement.Worker{idle("w1", 4)}
	if d := placement.Decide(v, e, t0.Add(time.Second)); d.Verdict != placement.Wait {
		t.Errorf("alone, before the wait: %s", d)
	}
}

// badAllocator answers a worker that is not a candidate.
type badAllocator struct{}

func (badAllocator) Allocate(placement.Key, []placement.Candidate) (string, bool, error) {
	return "elsewhere", false, nil
}

type errAllocator struct{}

func (errAllocator) Allocate(placement.Key, []placement.Candidate) (string, bool, error) {
	return "", false, fmt.Errorf("no idea")
}

// An allocator's bad answer is reported and Rendezvous answers instead.
func TestDecideBadAllocator(t *testing.T) {
	key := placement.KeyHash("k")
	ws := []placement.Worker{idle("w1", 2), idle("w2", 2), idle("w3", 2)}
	h := holderOf(key, ws...)
	e := placement.Entry{ID: "e", Action: "a", Seen: t0, Route: placement.Route{Kind: placement.RouteSoft, Key: key, Wait: time.Second}}
	for _, a := range []placement.Allocator{badAllocator{}, errAllocator{}} {
		d := placement.Decide(placement.View{Self: h, Workers: ws, Allocator: a}, e, t0)
		if d.Verdict != placement.Claim || d.Err == nil {
			t.Errorf("%T: %s, err %v; want the default's claim and the allocator's error", a, d, d.Err)
		}
	}
}

func TestDecideSelfNotRegisteredOrDown(t *testing.T) {
	ws := []placement.Worker{idle("w1", 2)}
	e := placement.Entry{ID: "e", Action: "a", Seen: t0}
	if d := decide(t, "ghost", ws, e, t0); d.Verdict != placement.Pass || !strings.Contains(d.Reason, "not registered") {
		t.Errorf("unregistered self: %s", d)
	}
	ws[0].Live = false
	if d := decide(t, "w1", ws, e, t0); d.Verdict != placement.Pass || !strings.Contains(d.Reason, "not live") {
		t.Errorf("self not live: %s", d)
	}
}

// A quarantined worker passes until its quarantine ends and says when, so
// its claim loop wakes at once then.
func TestDecideQuarantineEnds(t *testing.T) {
	w := idle("w1", 2)
	w.Quarantined = map[string]time.Time{"a": t0.Add(time.Minute)}
	e := placement.Entry{ID: "e", Action: "a", Seen: t0}
	d := decide(t, "w1", []placement.Worker{w}, e, t0)
	if d.Verdict != placement.Pass || !d.At.Equal(t0.Add(time.Minute)) || d.Reason != "w1 is quarantined for a until +1m0s" {
		t.Errorf("quarantined: %s, decide again at %v", d, d.At.Sub(t0))
	}
	if d := decide(t, "w1", []placement.Worker{w}, e, t0.Add(time.Minute)); d.Verdict != placement.Claim {
		t.Errorf("at the quarantine's end: %s", d)
	}
}

// storingAllocator is a plug-in that stores soft keys too, answering as
// Rendezvous does.
type storingAllocator struct{}

func (storingAllocator) Allocate(k placement.Key, cs []placement.Candidate) (string, bool, error) {
	w, _, err := placement.Rendezvous{}.Allocate(k, cs)
	return w, true, err
}

// A plug-in's wish to store a soft key reaches the claim.
func TestDecideAllocatorStoresSoftKeys(t *testing.T) {
	key := placement.KeyHash("k")
	ws := []placement.Worker{idle("w1", 2), idle("w2", 2)}
	h := holderOf(key, ws...)
	e := placement.Entry{ID: "e", Action: "a", Seen: t0, Route: placement.Route{Kind: placement.RouteSoft, Key: key}}
	if d := placement.Decide(placement.View{Self: h, Workers: ws, Allocator: storingAllocator{}}, e, t0); d.Verdict != placement.Claim || !d.Persist || d.Err != nil {
		t.Errorf("%s, persist %v, err %v; want a claim that stores the key", d, d.Persist, d.Err)
	}
	if d := placement.Decide(placement.View{Self: h, Workers: ws}, e, t0); d.Persist {
		t.Errorf("Rendezvous stored a soft key: %s", d)
	}
}

// lastAllocator picks the last candidate: a legal, if odd, plug-in.
type lastAllocator struct{}

func (lastAllocator) Allocate(_ placement.Key, cs []placement.Candidate) (string, bool, error) {
	return cs[len(cs)-1].Worker, true, nil
}

// Whatever candidate a plug-in picks for a pin, it alone claims first;
// every other worker waits at least a step behind it.
func TestDecidePinPickedLast(t *testing.T) {
	key := placement.KeyHash("pin")
	ws := []placement.Worker{idle("w1", 2), idle("w2", 2), idle("w3", 2)}
	order := placement.Rank(key, ws)
	e := placement.Entry{ID: "e", Action: "a", Seen: t0, Route: placement.Route{Kind: placement.RoutePin, Key: key}}
	for i, w := range order {
		d := placement.Decide(placement.View{Self: w.Name, Workers: ws, Allocator: lastAllocator{}}, e, t0)
		if last := i == len(order)-1; (d.Verdict == placement.Claim) != last {
			t.Errorf("%s (place %d in the key's order): %s; only the pick, the last, claims at once", w.Name, i, d)
		}
	}
}
