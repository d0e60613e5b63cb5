package placement_test

import (
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/batonwf/baton/placement"
)

var allOutcomes = []placement.Outcome{placement.Succeeded, placement.Failed, placement.TimedOut, placement.Permanent, placement.Stopped, placement.SessionLost, placement.Lost}

func TestQuarantineWhichFailuresCount(t *testing.T) {
	for _, o := range allOutcomes {
		want := o == placement.Failed || o == placement.TimedOut
		if o.Counts() != want {
			t.Errorf("%v.Counts() = %v, want %v", o, o.Counts(), want)
		}
	}
}

func TestQuarantineBackoffAndLimit(t *testing.T) {
	q := placement.DefaultQuarantine()
	want := []time.Duration{1, 2, 4, 8, 16, 30, 30, 30}
	for strikes, w := range want {
		if got := q.Backoff(strikes); got != w*time.Minute {
			t.Errorf("Backoff(%d) = %v, want %v", strikes, got, w*time.Minute)
		}
	}
	if got := q.Backoff(1000); got != 30*time.Minute {
		t.Errorf("Backoff(1000) = %v", got)
	}
	for handlers, want := range map[int]int{0: -1, 1: 0, 2: 1, 4: 1, 5: 1, 9: 1, 10: 2, 15: 3, 20: 4, 100: 20} {
		if got := q.Limit(handlers); got != want && !(handlers == 0 && got <= 0) {
			t.Errorf("Limit(%d) = %d, want %d", handlers, got, want)
		}
	}
	if (placement.Quarantine{}).WithDefaults() != q {
		t.Errorf("the zero policy is not the default")
	}
}

// oracle is the quarantine rule of the issue, written naively: it keeps
// every outcome and recounts from them.
type oracle struct {
	q       placement.Quarantine
	history []placement.Outcome // counted failures and successes since the last quarantine started
	strikes int
	until   time.Time
	since   []placement.Outcome // successes and counted failures since the last quarantine ended
}

func (o *oracle) observe(out placement.Outcome, peers placement.Peers, now time.Time) bool {
	if out != placement.Succeeded && out != placement.Failed && out != placement.TimedOut {
		return false
	}
	active := now.Before(o.until)
	if active && out != placement.Succeeded {
		return false
	}
	o.history = append(o.history, out)
	if !o.until.IsZero() && !active {
		o.since = append(o.since, out)
		// three successes in a row since the return reset the doubling
		n := 0
		for i := len(o.since) - 1; i >= 0 && o.since[i] == placement.Succeeded; i-- {
			n++
		}
		if n >= o.q.Reset && out == placement.Succeeded {
			o.strikes, o.since = 0, nil
		}
	}
	fails := 0
	for i := len(o.history) - 1; i >= 0 && o.history[i] != placement.Succeeded; i-- {
		fails++
	}
	peerOK := !peers.LastSuccess.IsZero() && now.Sub(peers.LastSuccess) <= o.q.PeerWindow
	capOK := peers.Quarantined < max(peers.Handlers*o.q.SharePercent/100, 1) && peers.Handlers-peers.Quarantined >= 2
	if fails >= o.q.After && peerOK && capOK && !active {
		d := o.q.First
		for range o.strikes {
			d = min(2*d, o.q.Max)
		}
		o.until = now.Add(d)
		o.strikes++
		o.history, o.since = nil, nil
		return true
	}
	return false
}

// Quarantine against the oracle over random runs of outcomes, peers and
// time, and the rules stated outright: stops, cancels, deadlines, lost
// sessions and non-retryable errors never count; an action that fails
// everywhere quarantines no one; the last worker able to run it is never
// quarantined; the cap is respected.
func TestQuarantineAgainstOracle(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		q := placement.DefaultQuarantine()
		if rapid.Bool().Draw(t, "small policy") {
			q = placement.Quarantine{After: rapid.IntRange(1, 4).Draw(t, "after"), PeerWindow: time.Minute, First: time.Second, Max: 5 * time.Second, Reset: rapid.IntRange(1, 3).Draw(t, "reset"), SharePercent: rapid.SampledFrom([]int{10, 20, 50, 100}).Draw(t, "share")}
		}
		o := &oracle{q: q}
		var tally placement.Tally
		now := t0
		for i := range rapid.IntRange(1, 80).Draw(t, "steps") {
			now = now.Add(time.Duration(rapid.SampledFrom([]int{0, 0, 1, 4, 20, 120}).Draw(t, "quarter seconds")) * time.Second / 4)
			out := rapid.SampledFrom(allOutcomes).Draw(t, "outcome")
			peers := placement.Peers{Handlers: rapid.IntRange(1, 10).Draw(t, "handlers")}
			peers.Quarantined = rapid.IntRange(0, peers.Handlers-1).Draw(t, "quarantined")
			if rapid.IntRange(0, 3).Draw(t, "peer succeeded") > 0 {
				peers.LastSuccess = now.Add(-time.Duration(rapid.IntRange(0, 700).Draw(t, "peer success age")) * time.Second)
			}
			before := tally
			var s placement.Sentence
			tally, s = q.Observe(tally, out, peers, now)
			want := o.observe(out, peers, now)
			if s.Start != want {
				t.Fatalf("step %d: %v with %+v at +%v: Start %v (%s), the oracle says %v", i, out, peers, now.Sub(t0), s.Start, s.Reason, want)
			}
			if s.Reason == "" {
				t.Fatalf("step %d: no reason", i)
			}
			if before.Active(now) && out != placement.Succeeded && tally != before {
				t.Fatalf("step %d: %v during the quarantine changed the tally from %+v to %+v", i, out, before, tally)
			}
			if !out.Counts() && out != placement.Succeeded && tally != before {
				t.Fatalf("step %d: %v, which does not count, changed the tally from %+v to %+v", i, out, before, tally)
			}
			if s.Start {
				if !tally.Active(now) || !s.Until.Equal(tally.Until) || !tally.Until.Equal(o.until) {
					t.Fatalf("step %d: quarantined until %v (tally %v), the oracle says %v", i, s.Until.Sub(t0), tally.Until.Sub(t0), o.until.Sub(t0))
				}
				if peers.Handlers-peers.Quarantined <= 1 {
					t.Fatalf("step %d: quarantined the last worker able to run the action: %+v", i, peers)
				}
				if peers.LastSuccess.IsZero() {
					t.Fatalf("step %d: quarantined although no peer ever succeeded", i)
				}
			}
			if tally.Strikes != o.strikes {
				t.Fatalf("step %d: strikes %d, the oracle says %d", i, tally.Strikes, o.strikes)
			}
		}
	})
}

// A single worker is never quarantined, and an action that fails on every
// worker (no peer success) quarantines none.
func TestQuarantineNeverTheLastNorWhenAllFail(t *testing.T) {
	q := placement.DefaultQuarantine()
	var tally placement.Tally
	now := t0
	for i := range 50 {
		var s placement.Sentence
		tally, s = q.Observe(tally, placement.Failed, placement.Peers{Handlers: 1, LastSuccess: now}, now)
		if s.Start {
			t.Fatalf("failure %d: the only worker was quarantined", i+1)
		}
		now = now.Add(time.Second)
	}
	tally = placement.Tally{}
	for i := range 50 {
		var s placement.Sentence
		tally, s = q.Observe(tally, placement.Failed, placement.Peers{Handlers: 5}, now)
		if s.Start {
			t.Fatalf("failure %d: quarantined although no other worker succeeds", i+1)
		}
	}
	// With a peer succeeding, the fifth failure quarantines for a
	// minute; three successes after the return reset the doubling.
	tally = placement.Tally{}
	peers := placement.Peers{Handlers: 5, LastSuccess: now}
	var s placement.Sentence
	for range 5 {
		tally, s = q.Observe(tally, placement.Failed, peers, now)
	}
	if !s.Start || s.Until != now.Add(time.Minute) {
		t.Fatalf("fifth failure: %+v", s)
	}
	now = now.Add(time.Minute)
	peers.LastSuccess = now
	for range 5 {
		tally, s = q.Observe(tally, placement.Failed, peers, now)
	}
	if !s.Start || s.Until != now.Add(2*time.Minute) {
		t.Fatalf("second quarantine: %+v, want two minutes", s)
	}
	now = now.Add(2 * time.Minute)
	for range 3 {
		tally, _ = q.Observe(tally, placement.Succeeded, peers, now)
	}
	if tally.Strikes != 0 {
		t.Fatalf("three successes after the return left strikes %d", tally.Strikes)
	}
}
