package main

import (
	"fmt"
	"math"
	"strings"
)

// The report's part on the ZooKeeper engines.

// Targets of runner/zk: at most this many ZooKeeper writes per action,
// within this factor of zkfloor (same connections) on a to c, and a
// throughput of at least this share of the raw write rate divided by its
// writes per action.
const (
	zkWritesTarget = 4.0
	zkFloorTarget  = 4.0
	zkRawShare     = 0.5
)

const (
	zkNote = "ZooKeeper engines, warm runs (medians over rounds): actions per second (zkraw: create+delete pairs), the server's writes per action " +
		"counted from its zxid against the theory, the other requests it received per action (reads, and pings), time over zkfloor with the same connections (paired by round), the raw write rate " +
		"(zkraw, same connections) and the check: actions/s at least half of that rate divided by writes per action:"
	zkWritesNote = "runner/zk's writes per action, counted and broken down: claims from the queue (one multi-op each; those another worker won are counted in the rest), " +
		"claimed in transitions (actions the transition that made them claimed for its worker: no write of their own), transitions " +
		"(multi-ops committed, a job's creation included), failed commits (a compare-and-swap lost to another worker: reloaded and " +
		"retried), and the rest (claims lost to another worker, superseded snapshots deleted, entries released); re-runs: handler calls beyond one per action (actions handed back and run again):"
)

// hasOthers reports whether an engine other than the ZooKeeper and Kafka
// ones ran.
func (r *report) hasOthers() bool {
	for _, e := range r.Engines {
		if e.ZK == 0 && e.KafkaKind == "" {
			return true
		}
	}
	return false
}

func (r *report) hasZK() bool {
	for _, e := range r.Engines {
		if e.ZK > 0 {
			return true
		}
	}
	return false
}

// perAction returns the median over rounds of the warm median of f,
// divided by the scenario's actions.
func (c *cell) perAction(f func(sample) float64) float64 {
	return median(c.warm(f)) / float64(c.Scenario.Actions())
}

// readsOf is the requests a run's server received that were not writes:
// reads (and watches set with them), and the sessions' pings.
func readsOf(s sample) float64 {
	if s.ZK == nil {
		return math.NaN()
	}
	return float64(s.ZK.Requests - s.ZK.Writes)
}

func zkOf(f func(zkStats) int64) func(sample) float64 {
	return func(s sample) float64 {
		if s.ZK == nil {
			return math.NaN()
		}
		return float64(f(*s.ZK))
	}
}

// rate returns, per round, the warm median of f over the warm median
// time, per second; and their median.
func (c *cell) rate(f func(sample) float64) float64 {
	num, den := c.warm(f), c.warm(wallOf)
	rs := make([]float64, len(num))
	for i := range num {
		rs[i] = num[i] / den[i] * 1e9
	}
	return median(rs)
}

func actionsOf(sc scenario) func(sample) float64 {
	return func(sample) float64 { return float64(sc.Actions()) }
}

// zkTheory is the writes per action the engine's design makes: runner/zk
// at most a claim and a transition per action and a creation per job (an
// action that the transition making it claims for its worker takes no
// claim of its own, and results applied together share a transition, so
// runs go below it); zkfloor a
// transition per action and a creation per job; zkraw a create and a
// delete per pair.
func zkTheory(c *cell) float64 {
	perJob := float64(c.Scenario.Jobs) / float64(c.Scenario.Actions())
	switch c.Engine.ZKKind {
	case kindZK:
		return 2 + perJob
	case kindZKFloor:
		return 1 + perJob
	}
	return 2
}

// rawCheck is the check of throughput against the raw write rate.
type rawCheck struct {
	Have, Need, RawWrites, WPA float64
	OK                         bool
}

// rawCheck checks c against the zkraw engine with as many connections;
// false if that was not measured.
func (r *report) rawCheck(c *cell) (rawCheck, bool) {
	raw := r.find(c.Scenario.Name, fmt.Sprintf("%s%d", kindZKRaw, c.Engine.ZK))
	if raw == nil || c.Engine.ZKKind == kindZKRaw {
		return rawCheck{}, false
	}
	k := rawCheck{RawWrites: raw.rate(writesOf), WPA: c.perAction(writesOf), Have: c.rate(actionsOf(c.Scenario))}
	k.Need = zkRawShare * k.RawWrites / k.WPA
	k.OK = k.Have >= k.Need
	return k, true
}

// xZKFloor returns c's warm time over zkfloor's with as many connections,
// paired by round; false if that was not measured.
func (r *report) xZKFloor(c *cell) (float64, bool) {
	f := r.find(c.Scenario.Name, fmt.Sprintf("%s%d", kindZKFloor, c.Engine.ZK))
	if f == nil || c.Engine.ZKKind == kindZKRaw {
		return 0, false
	}
	return compare(c.warm(wallOf), f.warm(wallOf)).Paired, true
}

// zkTable has a row per scenario and ZooKeeper engine; nil if none ran.
func (r *report) zkTable() *table {
	t := &table{
		Header: []string{"scenario", "engine", "conns", "warm", "warm min-max", "actions/s", "writes/action", "theory",
			"reads/action", "x zkfloor", "raw writes/s", "half raw/wpa", "check"},
		Left: 2,
	}
	for _, c := range r.Cells {
		if c.Engine.ZK == 0 {
			continue
		}
		warm := c.warm(wallOf)
		x, rawW, need, check := "-", "-", "-", "-"
		if v, ok := r.xZKFloor(c); ok {
			x = fmtRatio(v)
		}
		if k, ok := r.rawCheck(c); ok {
			rawW, need, check = fmtFloat(k.RawWrites), fmtFloat(k.Need), verdict(k.OK)
		} else if c.Engine.ZKKind == kindZKRaw {
			rawW = fmtFloat(c.rate(writesOf))
		}
		t.add(c.Scenario.Label(), c.Engine.Name, fmt.Sprint(c.Engine.ZK),
			fmtDur(dur(median(warm))), fmtSpread(warm),
			fmtFloat(c.rate(actionsOf(c.Scenario))),
			fmtFloat(c.perAction(writesOf)), fmtFloat(zkTheory(c)), fmtFloat(c.perAction(readsOf)), x, rawW, need, check)
	}
	if len(t.Rows) == 0 {
		return nil
	}
	return t
}

// zkWritesTable breaks runner/zk's writes down; nil if it did not run.
func (r *report) zkWritesTable() *table {
	t := &table{
		Header: []string{"scenario", "engine", "writes/action", "claims", "claimed in transitions", "transitions", "failed commits", "lost claims", "rest", "steps/job", "re-runs"},
		Left:   2,
	}
	for _, c := range r.Cells {
		if c.Engine.ZKKind != kindZK {
			continue
		}
		writes := c.perAction(writesOf)
		claims := c.perAction(zkOf(func(z zkStats) int64 { return z.Claims }))
		own := c.perAction(zkOf(func(z zkStats) int64 { return z.Own }))
		lost := c.perAction(zkOf(func(z zkStats) int64 { return z.Lost }))
		trans := c.perAction(stepsOf)
		failed := c.perAction(zkOf(func(z zkStats) int64 { return z.Conflicts }))
		rest := c.perAction(func(s sample) float64 {
			if s.ZK == nil {
				return math.NaN()
			}
			return float64(s.ZK.Writes - s.ZK.Claims - s.ZK.Lost - s.Steps - s.ZK.Conflicts)
		})
		t.add(c.Scenario.Label(), c.Engine.Name, fmtFloat(writes), fmtFloat(claims), fmtFloat(own), fmtFloat(trans), fmtFloat(failed),
			fmtFloat(lost), fmtFloat(rest), fmtFloat(median(c.warm(stepsOf))/float64(c.Scenario.Jobs)),
			fmtFloat(median(c.warm(func(s sample) float64 { return float64(s.Calls) - float64(c.Scenario.Actions()) }))))
	}
	if len(t.Rows) == 0 {
		return nil
	}
	return t
}

// zkTargets checks runner/zk's targets, and says what runner/zk logged.
func (r *report) zkTargets() []string {
	var writes, floor, raw, logged []string
	for _, c := range r.Cells {
		if c.Engine.ZKKind != kindZK {
			continue
		}
		name := c.Scenario.Name + " " + c.Engine.Name
		wpa := c.perAction(writesOf)
		writes = append(writes, fmt.Sprintf("%s %s %s", name, fmtFloat(wpa), verdict(wpa <= zkWritesTarget)))
		if x, ok := r.xZKFloor(c); ok && strings.Contains("abc", c.Scenario.Name) {
			floor = append(floor, fmt.Sprintf("%s %sx %s", name, fmtRatio(x), verdict(x <= zkFloorTarget)))
		}
		if k, ok := r.rawCheck(c); ok {
			raw = append(raw, fmt.Sprintf("%s %s/s vs %s/s (= %g x %s writes/s / %s writes/action) %s", name,
				fmtFloat(k.Have), fmtFloat(k.Need), zkRawShare, fmtFloat(k.RawWrites), fmtFloat(k.WPA), verdict(k.OK)))
		}
		var n int64
		first := ""
		for _, rd := range c.Rounds {
			for _, s := range append([]sample{rd.Cold}, rd.Warm...) {
				if s.ZK != nil && s.ZK.Warnings > 0 {
					n += s.ZK.Warnings
					if first == "" {
						first = s.ZK.Warning
					}
				}
			}
		}
		if n > 0 {
			logged = append(logged, fmt.Sprintf("%s: runner/zk logged %d warnings over all runs (the first: %s)", name, n, first))
		}
	}
	var out []string
	if len(writes) > 0 {
		out = append(out, fmt.Sprintf("runner/zk at most %g ZooKeeper writes per action (counted, warm): %s", zkWritesTarget, strings.Join(writes, ", ")))
	}
	if len(floor) > 0 {
		out = append(out, fmt.Sprintf("runner/zk within %gx of zkfloor with as many connections (warm, paired): %s", zkFloorTarget, strings.Join(floor, ", ")))
	}
	if len(raw) > 0 {
		out = append(out, fmt.Sprintf("runner/zk actions/s at least %g x raw writes/s / writes per action: %s", zkRawShare, strings.Join(raw, "; ")))
	}
	return append(out, logged...)
}
