package placement

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Strategy orders the workers that may take an entry without a key.
type Strategy uint8

const (
	// Spread (the default): the largest free share of capacity first,
	// so mixed capacities fill evenly.
	Spread Strategy = iota
	// Pack: the fullest worker with a free slot first, so idle workers
	// can be scaled in.
	Pack
)

func (s Strategy) String() string {
	switch s {
	case Spread:
		return "spread"
	case Pack:
		return "pack"
	}
	return fmt.Sprintf("Strategy(%d)", s)
}

// ParseStrategy returns the strategy named s.
func ParseStrategy(s string) (Strategy, error) {
	switch s {
	case "spread":
		return Spread, nil
	case "pack":
		return Pack, nil
	}
	return 0, fmt.Errorf("placement: unknown strategy %q (valid: spread, pack)", s)
}

const (
	// StepDelay is how long a worker waits for each worker ahead of it
	// in an entry's order before it claims anyway: the order comes from
	// published loads, which may be stale.
	StepDelay = 50 * time.Millisecond
	// MaxDelay bounds that wait.
	MaxDelay = 500 * time.Millisecond
)

// Settings are the cluster's placement settings (on ZooKeeper one
// versioned node that every worker watches).
type Settings struct {
	Strategy Strategy
	// Wait is the default wait of a soft key (the reducer copies it onto
	// actions that do not set their own) and the wait of a replica copy
	// for a worker that already runs a copy of its group.
	Wait time.Duration
	// Quarantine is the quarantine policy; its zero value means
	// DefaultQuarantine.
	Quarantine Quarantine
}

// View is what one worker knows when it decides: the registry as it sees
// it, the cluster settings, and what it runs itself.
type View struct {
	// Self is the deciding worker's name. Its Worker in Workers carries
	// its own exact load, not a published one.
	Self string
	// Workers is every registered worker, Self included, in any order.
	Workers []Worker
	// Settings are the cluster's settings.
	Settings Settings
	// Allocator places keys; nil means Rendezvous.
	Allocator Allocator
	// Groups counts, per replica group (Route.Key), the copies Self runs
	// now.
	Groups map[uint64]int
	// Ranks, if not nil, holds keys' preference lists for Workers (see
	// Ranks), and must fit them (Ranks.Fits): Decide reads the lists from
	// it instead of ranking the workers for each keyed entry, and decides
	// the same. It checks only that Ranks has as many workers as Workers
	// (and ignores it when not): the caller keeps them in step.
	Ranks *Ranks
	// NoReasons leaves Decision.Reason empty: a claim loop that shows no
	// reason asks this, since a reason costs more to write than the
	// decision costs to make (and a soft key's decision then walks its
	// preference list only as far as the delay needs). Every other field
	// of the Decision is the same.
	NoReasons bool
}

// Entry is one queue entry as the deciding worker sees it.
type Entry struct {
	// ID is the entry's name: it breaks ties between workers the
	// strategy ranks equal, differently for each entry, so that idle
	// workers do not all defer to the same one.
	ID string
	// Action is the action's name.
	Action string
	// Route is the entry's parsed route token.
	Route Route
	// Seen is when this worker first saw the entry, on its own clock:
	// waits are measured from it, never from a time another machine
	// wrote.
	Seen time.Time
	// Holder is a pin's stored allocation: the worker that holds it, or
	// "" when it has none (a garbled allocation counts as none).
	Holder string
	// Names is, for a pin, every action name under the pinned node, read
	// from the entry's data; nil until read, when only Action is
	// checked. A runner reads the data of a pin it is about to allocate
	// or move to itself and decides again with Names set.
	Names []string
}

// Verdict is what a worker does with an entry.
type Verdict uint8

const (
	// Pass: not this worker's to take unless the view changes (another
	// worker will take it, or it waits for its pin's holder, or this
	// worker is full, draining, quarantined or has no handler).
	Pass Verdict = iota
	// Wait: this worker claims it at Decision.At unless the view changes
	// before (decide again then).
	Wait
	// Claim: claim it now.
	Claim
)

func (v Verdict) String() string {
	switch v {
	case Pass:
		return "pass"
	case Wait:
		return "wait"
	case Claim:
		return "claim"
	}
	return fmt.Sprintf("Verdict(%d)", v)
}

// Decision is Decide's answer.
type Decision struct {
	Verdict Verdict
	// At is, for Wait, when the entry becomes this worker's to claim; for
	// Pass, when to decide again even if the view does not change (a
	// down holder's grace or this worker's quarantine ends), or zero.
	At time.Time
	// Persist says the claim must write the entry's key's allocation to
	// this worker in the claim's own write: a pin allocated or moved, or
	// a soft key that a plug-in Allocator stores.
	Persist bool
	// Reason says why, for a person: "holder w3 busy 2/2, spill at
	// +3.2s". Empty when the view asked for none (View.NoReasons).
	Reason string
	// Spill says the entry is a soft key's and Self is not its holder:
	// a claim takes it away from the holder's cache.
	Spill bool
	// Err is an allocator's bad answer (an error, or a worker that is not
	// a candidate). Rendezvous answered instead; the runner logs it.
	Err error
}

func (d Decision) String() string { return d.Verdict.String() + ": " + d.Reason }

// Decide says whether the worker view.Self may claim entry at now: claim
// now, wait until a time, or pass. It is pure: the same view, entry and
// now give the same decision, and it keeps nothing.
//
// The rules (the package doc says why):
//
//   - Self claims only while live, with a free slot by its own load (its
//     capacity and the action's limit), a handler for the action (for a
//     pin, for every name under it once known) and no quarantine for it.
//     A draining worker claims only the actions of pins it holds.
//   - An entry without a key ("-"): the eligible workers with a free slot
//     in the strategy's order; the first claims at once, the one at place
//     p after StepDelay × p, at most MaxDelay, from when it saw the entry.
//   - A soft key: its holder (the allocator's pick among eligible workers
//     in the key's preference order: a down, draining or quarantined
//     worker is skipped at once) claims at once when it has room; every
//     other waits the key's wait, then the first with a free slot after
//     the holder claims, the next ones StepDelay later each.
//   - A pin: its holder claims, and nobody else, while it is live and
//     able to run the pin's names (a draining holder too). When it is
//     down past its grace, gone, quarantined for one of the names or no
//     longer handles one, or the pin has no holder, the allocator's pick
//     among the others claims and stores the pin; those after it with a
//     free slot StepDelay later each.
//   - A replica copy: as an entry without a key, except that a worker
//     that runs a copy of the group already takes another only after
//     Settings.Wait when no other eligible worker has room, else after
//     max(Settings.Wait, MaxDelay).
func Decide(view View, entry Entry, now time.Time) Decision {
	d := decide(view, entry, now)
	if view.NoReasons {
		d.Reason = ""
	}
	return d
}

func decide(view View, entry Entry, now time.Time) Decision {
	rk := view.Ranks
	if rk != nil && (!rk.usable || len(rk.names) != len(view.Workers)) {
		rk = nil
	}
	i := -1
	if rk != nil {
		if j, ok := rk.index[view.Self]; ok && view.Workers[j].Name == view.Self {
			i = int(j)
		}
	} else {
		i = slices.IndexFunc(view.Workers, func(w Worker) bool { return w.Name == view.Self })
	}
	if i < 0 {
		return pass("%s is not registered", view.Self)
	}
	self := view.Workers[i]
	names := []string{entry.Action}
	if entry.Route.Kind == RoutePin {
		names = union(entry.Action, entry.Names)
	}
	heldHere := entry.Route.Kind == RoutePin && entry.Holder == self.Name
	switch {
	case !self.Live:
		return pass("%s is not live", self.Name)
	case self.State == StateDraining && !heldHere:
		return pass("%s is draining: it takes only its pins' actions", self.Name)
	case self.State != StateAvailable && self.State != StateDraining:
		return pass("%s is %s", self.Name, self.State)
	}
	for _, n := range names {
		if !self.Handles(n) {
			return pass("%s has no handler for %s", self.Name, n)
		}
		if self.QuarantinedFor(n, now) {
			d := pass("%s is quarantined for %s until %s", self.Name, n, rel(self.Quarantined[n], now))
			d.At = self.Quarantined[n]
			return d
		}
	}
	if self.Free(entry.Action) == 0 {
		return pass("%s is full: %s", self.Name, load(self, entry.Action))
	}
	switch entry.Route.Kind {
	case RouteSoft:
		return decideSoft(view, rk, self, int32(i), entry, now)
	case RoutePin:
		return decidePin(view, rk, self, int32(i), entry, names, now)
	case RouteGroup:
		if n := view.Groups[entry.Route.Key]; n > 0 {
			return decideCopy(view, self, entry, n, now)
		}
	}
	return decideFree(view, self, entry, now)
}

// decideFree places an entry by the strategy.
func decideFree(view View, self Worker, entry Entry, now time.Time) Decision {
	ws := eligible(view, []string{entry.Action}, now, "")
	ws = slices.DeleteFunc(ws, func(w *Worker) bool { return w.Free(entry.Action) == 0 })
	tie := KeyHash(entry.ID)
	sc := make([]scored, len(ws))
	for i, w := range ws {
		sc[i] = scored{score(w.Capacity, PairHash(tie, w.Name)), int32(i), w.Name}
	}
	slices.SortFunc(sc, func(a, b scored) int {
		if c := order(view.Settings.Strategy, ws[a.i], ws[b.i]); c != 0 {
			return c
		}
		return byScore(a, b)
	})
	p := slices.IndexFunc(sc, func(s scored) bool { return s.name == self.Name })
	at := entry.Seen.Add(delay(p))
	if p == 0 {
		return claimAt(at, now, false, "first by %s (%s)", view.Settings.Strategy, load(self, entry.Action))
	}
	ahead := make([]string, p)
	for i := range ahead {
		ahead[i] = sc[i].name
	}
	return claimAt(at, now, false, "%s after %s (%s); claims anyway at %s", ordinal(p), list(ahead), view.Settings.Strategy, rel(at, now))
}

// decideCopy places a replica copy on a worker that runs a copy of its
// group already: after the wait when no other worker has room; when some
// have, after max(wait, MaxDelay), by when they have taken it unless they
// run copies too (which a view does not show: without this, workers that
// all run a copy would each wait for another forever).
func decideCopy(view View, self Worker, entry Entry, n int, now time.Time) Decision {
	wait := view.Settings.Wait
	for _, w := range eligible(view, []string{entry.Action}, now, self.Name) {
		if w.Free(entry.Action) > 0 {
			at := entry.Seen.Add(max(wait, MaxDelay))
			return claimAt(at, now, false, "%s runs %d copies of group %s and %s has room; takes another at %s", self.Name, n, short(entry.Route.Key), w.Name, rel(at, now))
		}
	}
	at := entry.Seen.Add(wait)
	return claimAt(at, now, false, "%s runs %d copies of group %s and no other worker has room; takes another at %s", self.Name, n, short(entry.Route.Key), rel(at, now))
}

// decideSoft places an entry of a soft key.
func decideSoft(view View, rk *Ranks, self Worker, si int32, entry Entry, now time.Time) Decision {
	if rk != nil && view.Allocator == nil {
		return decideSoftRanked(view, rk, self, si, entry, now)
	}
	ws := rankedEligible(view, rk, entry.Route.Key, []string{entry.Action}, now, "")
	holder, persist, err := allocate(view.Allocator, Key{Hash: entry.Route.Key}, candidates(ws, entry.Action))
	if holder == self.Name {
		return Decision{Verdict: Claim, Persist: persist, Reason: holderReason(self, entry), Err: err}
	}
	h := ws[slices.IndexFunc(ws, func(w *Worker) bool { return w.Name == holder })]
	var ahead aheadList
	for _, w := range ws {
		if w.Name == self.Name {
			break
		}
		if w.Name != holder && w.Free(entry.Action) > 0 {
			ahead.add(w.Name, false)
		}
	}
	d := spillDecision(h, ahead, entry, now, view.NoReasons)
	d.Err = err
	return d
}

// decideSoftRanked is decideSoft with the default allocator (the first
// eligible worker in the key's order holds it) and the key's order read
// from rk: it walks the order only down to self.
// si is self's index in view.Workers.
func decideSoftRanked(view View, rk *Ranks, self Worker, si int32, entry Entry, now time.Time) Decision {
	names := [1]string{entry.Action}
	var h *Worker
	var ahead aheadList
	l := rk.list(entry.Route.Key)
	for p := range l.n {
		if view.NoReasons && ahead.n >= maxSteps {
			break // the delay is MaxDelay from here on
		}
		i := l.at(rk, p)
		w := &view.Workers[i]
		if ok, _ := w.eligible(names[:], now); !ok {
			continue
		}
		if h == nil {
			h = w
			if i == si {
				if view.NoReasons {
					return Decision{Verdict: Claim}
				}
				return Decision{Verdict: Claim, Reason: holderReason(self, entry)}
			}
			continue
		}
		if i == si {
			break
		}
		if w.Free(entry.Action) > 0 {
			ahead.add(w.Name, view.NoReasons)
		}
	}
	// self is eligible (Decide checked), so the walk found a holder.
	return spillDecision(h, ahead, entry, now, view.NoReasons)
}

// maxSteps is the place in an order from which the delay is MaxDelay.
const maxSteps = int(MaxDelay / StepDelay)

func holderReason(self Worker, entry Entry) string {
	return "holder of key " + short(entry.Route.Key) + " (" + load(self, entry.Action) + ")"
}

// spillDecision is a soft key's decision for a worker that does not hold
// it: h holds it, and ahead are the workers with room between h and self
// in the key's order.
func spillDecision(h *Worker, ahead aheadList, entry Entry, now time.Time, noReason bool) Decision {
	at := entry.Seen.Add(entry.Route.Wait + delay(ahead.n))
	if noReason {
		d := claimAt(at, now, false, "")
		d.Spill = true
		return d
	}
	state := "busy " + load(*h, entry.Action)
	if h.Free(entry.Action) > 0 {
		state = "has room " + load(*h, entry.Action)
	}
	var d Decision
	if ahead.n == 0 {
		d = claimAt(at, now, false, "holder %s %s, spill at %s", h.Name, state, rel(at, now))
	} else {
		d = claimAt(at, now, false, "holder %s %s, spill to %s first, here at %s", h.Name, state, ahead, rel(at, now))
	}
	d.Spill = true
	return d
}

// decidePin places an entry under a pin.
func decidePin(view View, rk *Ranks, self Worker, si int32, entry Entry, names []string, now time.Time) Decision {
	if entry.Holder == self.Name {
		return Decision{Verdict: Claim, Reason: fmt.Sprintf("pin %s held here (%s)", short(entry.Route.Key), load(self, entry.Action))}
	}
	base, why := entry.Seen, "unallocated"
	if entry.Holder != "" {
		i := slices.IndexFunc(view.Workers, func(w Worker) bool { return w.Name == entry.Holder })
		switch {
		case i < 0 || view.Workers[i].State == StateNone:
			why = "holder " + entry.Holder + " is gone"
		case !view.Workers[i].Live:
			h := view.Workers[i]
			due := h.DownSince.Add(h.Grace)
			if now.Before(due) {
				return Decision{Verdict: Pass, At: due, Reason: fmt.Sprintf("pinned to %s, down, grace ends %s", h.Name, rel(due, now))}
			}
			base, why = later(base, due), fmt.Sprintf("holder %s down past its grace %v", h.Name, h.Grace)
		default:
			h := view.Workers[i]
			ok, cannot := h.canRun(names, now)
			if ok {
				state := "busy " + load(h, entry.Action)
				if h.Free(entry.Action) > 0 {
					state = "has room " + load(h, entry.Action)
				}
				if h.State == StateDraining {
					state = "draining, " + state
				}
				return pass("pinned to %s (%s)", h.Name, state)
			}
			why = fmt.Sprintf("holder %s %s", h.Name, cannot)
		}
	}
	if rk != nil && view.Allocator == nil {
		return decidePinRanked(view, rk, self, si, entry, names, base, why, now)
	}
	ws := rankedEligible(view, rk, entry.Route.Key, names, now, entry.Holder)
	pick, _, err := allocate(view.Allocator, Key{Hash: entry.Route.Key, Pin: true}, candidates(ws, entry.Action))
	if pick == self.Name {
		d := claimAt(base, now, true, "pin %s %s: allocated here", short(entry.Route.Key), why)
		d.Err = err
		return d
	}
	var ahead aheadList
	ahead.add(pick, false) // first, wherever a plug-in allocator ranked it
	for _, w := range ws {
		if w.Name == self.Name {
			break
		}
		if w.Name != pick && w.Free(entry.Action) > 0 {
			ahead.add(w.Name, false)
		}
	}
	at := base.Add(delay(ahead.n))
	d := claimAt(at, now, true, "pin %s %s: %s first, here at %s", short(entry.Route.Key), why, ahead, rel(at, now))
	d.Err = err
	return d
}

// decidePinRanked is the end of decidePin with the default allocator (the
// first eligible worker with room in the key's order, other than the
// holder, takes the pin) and the key's order read from rk: it walks the
// order only down to self.
// si is self's index in view.Workers.
func decidePinRanked(view View, rk *Ranks, self Worker, si int32, entry Entry, names []string, base time.Time, why string, now time.Time) Decision {
	hi, held := rk.index[entry.Holder]
	if !held {
		hi = -1
	}
	var ahead aheadList
	l := rk.list(entry.Route.Key)
	for p := range l.n {
		if view.NoReasons && ahead.n >= maxSteps {
			break // the delay is MaxDelay from here on
		}
		i := l.at(rk, p)
		w := &view.Workers[i]
		if ok, _ := w.eligible(names, now); !ok || i == hi {
			continue
		}
		if i == si {
			if ahead.n == 0 {
				return claimAt(base, now, true, "pin %s %s: allocated here", short(entry.Route.Key), why)
			}
			break
		}
		if w.Free(entry.Action) > 0 {
			ahead.add(w.Name, view.NoReasons) // the first is the pick
		}
	}
	at := base.Add(delay(ahead.n))
	if view.NoReasons {
		return claimAt(at, now, true, "")
	}
	return claimAt(at, now, true, "pin %s %s: %s first, here at %s", short(entry.Route.Key), why, ahead, rel(at, now))
}

// eligible returns the view's workers that may take actions of the given
// names at now, leaving load aside, except the one named skip.
func eligible(view View, names []string, now time.Time, skip string) []*Worker {
	var out []*Worker
	for i := range view.Workers {
		w := &view.Workers[i]
		if ok, _ := w.eligible(names, now); ok && w.Name != skip {
			out = append(out, w)
		}
	}
	return out
}

// rankedEligible is eligible in the key's preference order, read from rk
// when it is not nil.
func rankedEligible(view View, rk *Ranks, key uint64, names []string, now time.Time, skip string) []*Worker {
	if rk == nil {
		ws := eligible(view, names, now, skip)
		rankPtrs(key, ws)
		return ws
	}
	var out []*Worker
	l := rk.list(key)
	for p := range l.n {
		w := &view.Workers[l.at(rk, p)]
		if ok, _ := w.eligible(names, now); ok && w.Name != skip {
			out = append(out, w)
		}
	}
	return out
}

func candidates(ws []*Worker, action string) []Candidate {
	cs := make([]Candidate, len(ws))
	for i, w := range ws {
		cs[i] = Candidate{Worker: w.Name, Free: w.Free(action)}
	}
	return cs
}

// order compares two workers with free slots by the strategy: spread puts
// the larger free share of capacity first, pack the larger used share.
func order(s Strategy, a, b *Worker) int {
	// free share a vs b: (ca-ra)/ca vs (cb-rb)/cb, cross-multiplied.
	fa := (a.Capacity - a.Load.Running) * b.Capacity
	fb := (b.Capacity - b.Load.Running) * a.Capacity
	if s == Pack {
		return cmp.Compare(fa, fb)
	}
	return cmp.Compare(fb, fa)
}

func delay(p int) time.Duration {
	return min(time.Duration(p)*StepDelay, MaxDelay)
}

func claimAt(at, now time.Time, persist bool, format string, args ...any) Decision {
	v := Wait
	if !now.Before(at) {
		v, at = Claim, time.Time{}
	}
	d := Decision{Verdict: v, At: at, Persist: persist && v == Claim}
	if format != "" {
		d.Reason = fmt.Sprintf(format, args...)
	}
	return d
}

func pass(format string, args ...any) Decision {
	return Decision{Verdict: Pass, Reason: fmt.Sprintf(format, args...)}
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func union(name string, names []string) []string {
	out := append([]string{name}, names...)
	slices.Sort(out)
	return slices.Compact(out)
}

// load is "running/capacity", and the limit of the action if it has one.
func load(w Worker, action string) string {
	s := fmt.Sprintf("%d/%d", w.Load.Running, w.Capacity)
	if lim, ok := w.Limits[action]; ok {
		s += fmt.Sprintf(", %s %d/%d", action, w.Load.Names[action].Running, lim)
	}
	return s
}

// rel says when t is, relative to now: "+3.2s", "now", "-1s".
func rel(t, now time.Time) string {
	d := t.Sub(now)
	switch {
	case d == 0:
		return "now"
	case d > 0:
		return "+" + round(d).String()
	}
	return "-" + round(-d).String()
}

func round(d time.Duration) time.Duration {
	if d >= time.Second {
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Millisecond)
}

func short(key uint64) string { return fmt.Sprintf("%016x", key)[:8] }

// aheadList is the workers ahead of another in some order: the names of
// the first three, and how many in all. As a string, it is list's.
type aheadList struct {
	first [3]string
	n     int
}

// add counts a worker, and keeps its name unless count only.
func (a *aheadList) add(name string, countOnly bool) {
	if !countOnly && a.n < len(a.first) {
		a.first[a.n] = name
	}
	a.n++
}

func (a aheadList) String() string {
	s := strings.Join(a.first[:min(a.n, len(a.first))], ", ")
	if a.n > len(a.first) {
		s += fmt.Sprintf(" and %d more", a.n-len(a.first))
	}
	return s
}

// list is at most three names, then how many more.
func list(s []string) string {
	const most = 3
	if len(s) > most {
		return fmt.Sprintf("%s and %d more", strings.Join(s[:most], ", "), len(s)-most)
	}
	return strings.Join(s, ", ")
}

// ordinal is place p (from 0) as "2nd", "3rd", "11th", ...
func ordinal(p int) string {
	n := p + 1
	suffix := "th"
	if n%100 < 11 || n%100 > 13 {
		switch n % 10 {
		case 1:
			suffix = "st"
		case 2:
			suffix = "nd"
		case 3:
			suffix = "rd"
		}
	}
	return fmt.Sprintf("%d%s", n, suffix)
}
