package placement_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/batonwf/baton/placement"
)

// BenchmarkDecide reports the cost of one decision for 10, 100 and 1,000
// workers, for an entry without a key (the strategy's order), a soft key
// whose holder is busy, and a pin whose holder is down past its grace:
// each ranks or orders every worker. It prints the figures; nothing here
// asserts a time.
func BenchmarkDecide(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		ws := make([]placement.Worker, n)
		for i := range ws {
			ws[i] = placement.Worker{Name: fmt.Sprintf("worker-%04d", i), State: placement.StateAvailable, Live: true,
				Capacity: 1 + i%4, Actions: []string{"a"}, Load: placement.Load{Running: i % 2}}
		}
		key := placement.KeyHash("dataset-42")
		holder := placement.Rank(key, ws)[0].Name
		for i := range ws {
			if ws[i].Name == holder {
				ws[i].Load.Running = ws[i].Capacity
				ws[i].Live, ws[i].DownSince = false, t0.Add(-time.Hour)
			}
		}
		self := placement.Rank(key, ws)[1].Name
		view := placement.View{Self: self, Workers: ws}
		for _, c := range []struct {
			name  string
			entry placement.Entry
		}{
			{"free", placement.Entry{ID: "e1", Action: "a", Seen: t0}},
			{"soft", placement.Entry{ID: "e2", Action: "a", Seen: t0, Route: placement.Route{Kind: placement.RouteSoft, Key: key, Wait: time.Second}}},
			{"pin", placement.Entry{ID: "e3", Action: "a", Seen: t0, Route: placement.Route{Kind: placement.RoutePin, Key: key}, Holder: holder}},
		} {
			b.Run(fmt.Sprintf("%s/workers=%d", c.name, n), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					placement.Decide(view, c.entry, t0)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/decision")
			})
		}
	}
}

// BenchmarkRank is the preference list alone (a runner caches it per key
// until the registry changes).
func BenchmarkRank(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		ws := make([]placement.Worker, n)
		for i := range ws {
			ws[i] = placement.Worker{Name: fmt.Sprintf("worker-%04d", i), Capacity: 1 + i%4}
		}
		b.Run(fmt.Sprintf("workers=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			key := uint64(0)
			for b.Loop() {
				key++
				placement.Rank(key, ws)
			}
		})
	}
}

// BenchmarkBalance assigns 64 partitions to 10 and 100 members that own
// an earlier assignment, one of them new.
func BenchmarkBalance(b *testing.B) {
	for _, n := range []int{10, 100} {
		var ps []placement.Partition
		for i := range 64 {
			ps = append(ps, placement.Partition{Topic: "t", ID: i})
		}
		ms := make([]placement.Member, n)
		for i := range ms {
			ms[i] = placement.Member{ID: fmt.Sprintf("m%03d", i), Name: fmt.Sprintf("w%03d", i), Capacity: 1 + i%3}
		}
		a := placement.Balance(ms[1:], ps)
		for i := range ms {
			ms[i].Owned, ms[i].Generation = a[ms[i].ID], 1
		}
		b.Run(fmt.Sprintf("members=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				placement.Balance(ms, ps)
			}
		})
	}
}

// BenchmarkDecideFigure is issue 18's figure: Decide over 10,000 entries
// of 1,000 soft keys with 200 workers, one op deciding them all: without
// a Ranks, with a new Ranks for each op (the first decision of each key
// ranks it, as after the registry's names or capacities changed), with
// one and no reasons (what runner/zk's work loop asks), and with one
// whose lists are cached already (warm: a round of the loop while the
// workers stay the same).
func BenchmarkDecideFigure(b *testing.B) {
	view, entries := figureScene()
	for _, c := range []struct {
		name                string
		ranked, quiet, warm bool
	}{{"plain", false, false, false}, {"ranked", true, false, false}, {"ranked-noreasons", true, true, false}, {"warm-noreasons", true, true, true}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			warm := placement.NewRanks(view.Workers)
			for _, e := range entries {
				placement.Decide(placement.View{Self: view.Self, Workers: view.Workers, Ranks: warm}, e, t0)
			}
			for b.Loop() {
				v := view
				v.NoReasons = c.quiet
				if c.ranked {
					v.Ranks = placement.NewRanks(v.Workers)
				}
				if c.warm {
					v.Ranks = warm
				}
				for _, e := range entries {
					placement.Decide(v, e, t0)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(entries)), "ns/decision")
		})
	}
}
