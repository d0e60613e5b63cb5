package main

import (
	"fmt"
	"math"
	"strings"
)

// The report's part on the Kafka engines.

// kafkaRawShare is the target of runner/kafka: actions per second at
// least this share of the raw round-trip rate (kafkaraw's, measured in
// the same run) divided by its messages per action.
const kafkaRawShare = 1.0 / 3

const (
	kafkaNote = "Kafka engines, warm runs (medians over rounds): actions per second (kafkaraw, kafkarawp: round trips per second), " +
		"the messages produced per action, counted from the broker's end offsets of the run's topics, the raw round-trip rate " +
		"(kafkaraw: one in flight; the target's), the target (a third of that rate divided by messages per action) and its check, " +
		"and the same against kafkarawp (-kafkaslots in flight), for reference:"
	kafkaMessagesNote = "runner/kafka's messages per action by topic, counted from the broker's end offsets: the action topic " +
		"(actions dispatched), the restarter topic (results), the state topic (steps, heads, snapshots) and the stops topic; " +
		"steps (transitions committed, creations included, from its hooks) and handler calls per action:"
)

func (r *report) hasKafka() bool {
	for _, e := range r.Engines {
		if e.KafkaKind != "" {
			return true
		}
	}
	return false
}

func kafkaOf(f func(kafkaStats) int64) func(sample) float64 {
	return func(s sample) float64 {
		if s.Kafka == nil {
			return math.NaN()
		}
		return float64(f(*s.Kafka))
	}
}

func callsOf(s sample) float64 { return float64(s.Calls) }

// kafkaCheck is the check of runner/kafka's throughput against a raw
// round-trip rate.
type kafkaCheck struct {
	Have, Need, Raw, MPA float64
	OK                   bool
}

// kafkaCheck checks c against the raw engine named raw on the same
// scenario; false if either is not runner/kafka's or was not measured.
func (r *report) kafkaCheck(c *cell, raw string) (kafkaCheck, bool) {
	rc := r.find(c.Scenario.Name, raw)
	if rc == nil || c.Engine.KafkaKind != kindKafka {
		return kafkaCheck{}, false
	}
	k := kafkaCheck{Raw: rc.rate(actionsOf(rc.Scenario)), MPA: c.perAction(messagesOf), Have: c.rate(actionsOf(c.Scenario))}
	k.Need = kafkaRawShare * k.Raw / k.MPA
	k.OK = k.Have >= k.Need
	return k, true
}

// kafkaTable has a row per scenario and Kafka engine; nil if none ran.
func (r *report) kafkaTable() *table {
	t := &table{
		Header: []string{"scenario", "engine", "workers", "warm", "warm min-max", "actions/s", "messages/action",
			"raw round trips/s", "target", "check", "pipelined round trips/s", "pipelined target", "pipelined check"},
		Left: 2,
	}
	for _, c := range r.Cells {
		if c.Engine.KafkaKind == "" {
			continue
		}
		warm := c.warm(wallOf)
		workers := "-"
		if c.Engine.Kafka > 0 {
			workers = fmt.Sprint(c.Engine.Kafka)
		}
		cols := []string{"-", "-", "-", "-", "-", "-"}
		for i, raw := range []string{kindKafkaRaw, kindKafkaRawP} {
			if k, ok := r.kafkaCheck(c, raw); ok {
				cols[3*i], cols[3*i+1], cols[3*i+2] = fmtFloat(k.Raw), fmtFloat(k.Need), verdict(k.OK)
			}
		}
		t.add(append([]string{c.Scenario.Label(), c.Engine.Name, workers, fmtDur(dur(median(warm))), fmtSpread(warm),
			fmtFloat(c.rate(actionsOf(c.Scenario))), fmtFloat(c.perAction(messagesOf))}, cols...)...)
	}
	if len(t.Rows) == 0 {
		return nil
	}
	return t
}

// kafkaMessagesTable breaks runner/kafka's messages down; nil if it did
// not run.
func (r *report) kafkaMessagesTable() *table {
	t := &table{
		Header: []string{"scenario", "engine", "messages/action", "action topic", "restarter topic", "state topic", "stops topic",
			"steps/action", "calls/action"},
		Left: 2,
	}
	for _, c := range r.Cells {
		if c.Engine.KafkaKind != kindKafka {
			continue
		}
		t.add(c.Scenario.Label(), c.Engine.Name, fmtFloat(c.perAction(messagesOf)),
			fmtFloat(c.perAction(kafkaOf(func(k kafkaStats) int64 { return k.Actions }))),
			fmtFloat(c.perAction(kafkaOf(func(k kafkaStats) int64 { return k.Restarter }))),
			fmtFloat(c.perAction(kafkaOf(func(k kafkaStats) int64 { return k.State }))),
			fmtFloat(c.perAction(kafkaOf(func(k kafkaStats) int64 { return k.Stops }))),
			fmtFloat(c.perAction(stepsOf)), fmtFloat(c.perAction(callsOf)))
	}
	if len(t.Rows) == 0 {
		return nil
	}
	return t
}

// kafkaTargets checks runner/kafka's target, cross-checks the broker's
// counts with runner/kafka's own, and says what runner/kafka logged.
func (r *report) kafkaTargets() []string {
	var serial, piped, logged []string
	runs, matched := 0, 0
	var mismatch string
	var unsteady []string
	for _, c := range r.Cells {
		if c.Engine.KafkaKind != kindKafka {
			continue
		}
		name := c.Scenario.Name + " " + c.Engine.Name
		for i, raw := range []string{kindKafkaRaw, kindKafkaRawP} {
			k, ok := r.kafkaCheck(c, raw)
			if !ok {
				continue
			}
			line := fmt.Sprintf("%s %s/s vs %s/s (= %s round trips/s / 3 / %s messages/action) %s", name,
				fmtFloat(k.Have), fmtFloat(k.Need), fmtFloat(k.Raw), fmtFloat(k.MPA), verdict(k.OK))
			if i == 0 {
				serial = append(serial, line)
			} else {
				piped = append(piped, line)
			}
		}
		var n int64
		first := ""
		var un struct {
			runs                     int
			gens, takeovers, retried int64
			event                    string
		}
		all := 0
		for _, rd := range c.Rounds {
			for _, s := range append([]sample{rd.Cold}, rd.Warm...) {
				if s.Kafka == nil {
					continue
				}
				// Every action dispatched is one message on the action
				// topic, and its result one on the restarter topic
				// (the jobs are submitted through the restarter: no
				// submit message); both as many as the handler calls.
				runs++
				all++
				if s.Kafka.Actions == s.Calls && s.Kafka.Restarter == s.Calls && s.Kafka.Started == s.Calls {
					matched++
				} else if mismatch == "" {
					mismatch = fmt.Sprintf(" (the first that did not: %s, %d action messages, %d restarter messages, %d actions started, %d handler calls; keys produced twice: %s)",
						name, s.Kafka.Actions, s.Kafka.Restarter, s.Kafka.Started, s.Calls, s.Kafka.Duplicates)
				}
				if k := s.Kafka; k.Generations+k.Takeovers+k.Retried > 0 {
					un.runs++
					un.gens += k.Generations
					un.takeovers += k.Takeovers
					un.retried += k.Retried
					un.event = k.Event
				}
				if s.Kafka.Warnings > 0 {
					n += s.Kafka.Warnings
					if first == "" {
						first = s.Kafka.Warning
					}
				}
			}
		}
		if un.runs > 0 {
			unsteady = append(unsteady, fmt.Sprintf("%s: %d of %d runs, %d group generations, %d partitions taken over, %d kafka-go errors (it retries them) or head writes failed (the last: %s)",
				name, un.runs, all, un.gens, un.takeovers, un.retried, un.event))
		}
		if n > 0 {
			logged = append(logged, fmt.Sprintf("%s: runner/kafka logged %d warnings over all runs (the first: %s)", name, n, first))
		}
	}
	var out []string
	if len(serial) > 0 {
		out = append(out, fmt.Sprintf("runner/kafka actions/s at least a third of kafkaraw's round trips/s (one in flight, same scenario, same run) / messages per action: %s",
			strings.Join(serial, "; ")))
	}
	if len(piped) > 0 {
		out = append(out, fmt.Sprintf("for reference, the same against kafkarawp (round trips in flight, not the target): %s", strings.Join(piped, "; ")))
	}
	if runs > 0 {
		out = append(out, fmt.Sprintf("broker counts cross-checked with runner/kafka's: in %d of %d runs (cold and warm), the action topic and the restarter topic "+
			"each got exactly one message per handler call, and the hooks saw as many actions start%s", matched, runs, mismatch))
	}
	if len(unsteady) > 0 {
		out = append(out, "runner/kafka's runs that were not steady while the clock ran (from its debug log): "+strings.Join(unsteady, "; "))
	}
	return append(out, logged...)
}
