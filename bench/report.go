package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"
)

// cell is what the children measured for one scenario on one engine, one
// result per round.
type cell struct {
	Scenario scenario
	Engine   engine
	Rounds   []childResult
}

func wallOf(s sample) float64    { return float64(s.Wall) }
func cpuOf(s sample) float64     { return float64(s.CPU) }
func stepsOf(s sample) float64   { return float64(s.Steps) }
func mallocsOf(s sample) float64 { return float64(s.Mallocs) }

// medianOf returns the median of f over ss.
func medianOf(ss []sample, f func(sample) float64) float64 {
	xs := make([]float64, len(ss))
	for i, s := range ss {
		xs[i] = f(s)
	}
	return median(xs)
}

// cold returns f of each round's cold run.
func (c *cell) cold(f func(sample) float64) []float64 {
	out := make([]float64, len(c.Rounds))
	for i, r := range c.Rounds {
		out[i] = f(r.Cold)
	}
	return out
}

// warm returns, for each round, the median of f over its warm runs.
func (c *cell) warm(f func(sample) float64) []float64 {
	out := make([]float64, len(c.Rounds))
	for i, r := range c.Rounds {
		out[i] = medianOf(r.Warm, f)
	}
	return out
}

// storeWarm returns the median over rounds of the median over warm runs
// of f of the store counters; false if the engine has none.
func (c *cell) storeWarm(f func(storeStats) float64) (float64, bool) {
	if len(c.Rounds) == 0 || c.Rounds[0].Cold.Store == nil {
		return 0, false
	}
	return median(c.warm(func(s sample) float64 {
		if s.Store == nil {
			return math.NaN()
		}
		return f(*s.Store)
	})), true
}

// report is what a run measured, ready to print.
type report struct {
	Machine   string
	Rounds    int
	Workers   int
	Scenarios []scenario
	Engines   []engine // measured, in order, for the legend
	Cells     []*cell  // by scenario, then engine

	// The ZooKeeper engines' server and settings; notes on what was not
	// run.
	ZKServer string
	ZKSlots  int
	ZKRounds int
	ZKWarm   int
	Notes    []string

	// The Kafka engines' broker and settings.
	KafkaBroker string
	KafkaSlots  int
	KafkaRounds int
	KafkaWarm   int
}

func (r *report) addEngine(e engine) {
	if !slices.ContainsFunc(r.Engines, func(x engine) bool { return x.Name == e.Name }) {
		r.Engines = append(r.Engines, e)
	}
}

func (r *report) find(scenario, engine string) *cell {
	i := slices.IndexFunc(r.Cells, func(c *cell) bool { return c.Scenario.Name == scenario && c.Engine.Name == engine })
	if i < 0 {
		return nil
	}
	return r.Cells[i]
}

// Targets: baton on the memory store within this factor of the floor on
// every scenario but the largest, and the largest par's cost per action
// within this factor of the 1,000-action par's.
const (
	floorTarget  = 3.0
	flatTarget   = 2.0
	linearTarget = 1.5 // a10 and a100 per action over a's, on memory
)

// mainTable has one row per scenario and engine.
func (r *report) mainTable() *table {
	t := &table{
		Header: []string{"scenario", "engine", "cold", "cold min-max", "warm", "warm min-max",
			"per action", "x floor", "steps", "allocs/action"},
		Left: 2,
	}
	for _, c := range r.Cells {
		n := float64(c.Scenario.Actions())
		cold, warm := c.cold(wallOf), c.warm(wallOf)
		xFloor := "-"
		if f := r.find(c.Scenario.Name, "floor"); f != nil {
			xFloor = fmtRatio(compare(warm, f.warm(wallOf)).Paired)
		}
		steps := "-"
		if c.Engine.Steps {
			steps = fmtFloat(median(c.warm(stepsOf)))
		}
		t.add(c.Scenario.Label(), c.Engine.Name,
			fmtDur(dur(median(cold))), fmtSpread(cold),
			fmtDur(dur(median(warm))), fmtSpread(warm),
			fmtDur(dur(median(warm)/n)), xFloor, steps,
			fmtFloat(median(c.warm(mallocsOf))/n))
	}
	return t
}

// ratioPairs are the ratios the report gives: scenario, numerator and
// denominator engines.
var ratioPairs = [][3]string{
	{"a", "memory", "floor"}, {"b", "memory", "floor"}, {"c", "memory", "floor"}, {"d", "memory", "floor"},
	{"a", "bolt", "memory"},
	{"b", "bolt", "bboltcommit"}, {"b", "bolt", "fsync"},
}

// ratioTable compares engines paired by round; nil if no pair was
// measured.
func (r *report) ratioTable() *table {
	t := &table{
		Header: []string{"scenario", "ratio", "warm", "warm min-max", "warm of medians", "cold", "cold min-max", "cold of medians"},
		Left:   2,
	}
	for _, p := range ratioPairs {
		num, den := r.find(p[0], p[1]), r.find(p[0], p[2])
		if num == nil || den == nil {
			continue
		}
		w := compare(num.warm(wallOf), den.warm(wallOf))
		c := compare(num.cold(wallOf), den.cold(wallOf))
		t.add(num.Scenario.Label(), p[1]+"/"+p[2],
			fmtRatio(w.Paired), fmtRatio(w.Lo)+"-"+fmtRatio(w.Hi), fmtRatio(w.OfMedian),
			fmtRatio(c.Paired), fmtRatio(c.Lo)+"-"+fmtRatio(c.Hi), fmtRatio(c.OfMedian))
	}
	if len(t.Rows) == 0 {
		return nil
	}
	return t
}

// storeTable has a row per scenario run on a store with counters; nil if
// there is none.
func (r *report) storeTable() *table {
	t := &table{
		Header: []string{"scenario", "engine", "steps", "fsyncs", "record B/step", "page B/step"},
		Left:   2,
	}
	for _, c := range r.Cells {
		txns, ok := c.storeWarm(func(s storeStats) float64 { return float64(s.WriteTxns) })
		if !ok {
			continue
		}
		rec, _ := c.storeWarm(func(s storeStats) float64 { return float64(s.BytesWritten) })
		page, _ := c.storeWarm(func(s storeStats) float64 { return float64(s.PageBytes) })
		steps := median(c.warm(stepsOf))
		t.add(c.Scenario.Label(), c.Engine.Name, fmtFloat(steps), fmtFloat(txns),
			fmtFloat(rec/steps), fmtFloat(page/steps))
	}
	if len(t.Rows) == 0 {
		return nil
	}
	return t
}

// targets checks the goals and says which are met.
func (r *report) targets() []string {
	var out []string
	var parts []string
	for _, name := range []string{"a", "b", "c"} {
		m, f := r.find(name, "memory"), r.find(name, "floor")
		if m == nil || f == nil {
			continue
		}
		x := compare(m.warm(wallOf), f.warm(wallOf)).Paired
		parts = append(parts, fmt.Sprintf("%s %sx %s", name, fmtRatio(x), verdict(x <= floorTarget)))
	}
	if len(parts) > 0 {
		out = append(out, fmt.Sprintf("memory within %gx of floor (warm, paired): %s", floorTarget, strings.Join(parts, ", ")))
	}
	for _, e := range r.Engines {
		if line := r.curve(e); line != "" {
			out = append(out, line)
		}
	}
	for _, e := range r.Engines {
		c, d := r.find("c", e.Name), r.find("d", e.Name)
		if c == nil || d == nil {
			continue
		}
		pc := median(c.warm(wallOf)) / float64(c.Scenario.Actions())
		pd := median(d.warm(wallOf)) / float64(d.Scenario.Actions())
		line := fmt.Sprintf("%s: d per action %s vs c %s = %sx", e.Name, fmtDur(dur(pd)), fmtDur(dur(pc)), fmtRatio(pd/pc))
		if e.Name == "memory" {
			line += fmt.Sprintf(" (target %gx) %s", flatTarget, verdict(pd/pc <= flatTarget))
		}
		out = append(out, line)
	}
	return out
}

// curve says how e's warm cost per action on the larger copies of a
// scenario (a10, a100) compares with the scenario's own; "" if e ran none.
func (r *report) curve(e engine) string {
	var parts, cpus []string
	met := true
	for _, big := range r.Cells {
		if big.Engine.Name != e.Name || big.Scenario.Of == "" {
			continue
		}
		base := r.find(big.Scenario.Of, e.Name)
		if base == nil {
			continue
		}
		pb := median(base.warm(wallOf)) / float64(base.Scenario.Actions())
		pa := median(big.warm(wallOf)) / float64(big.Scenario.Actions())
		cb := median(base.warm(cpuOf)) / float64(base.Scenario.Actions())
		ca := median(big.warm(cpuOf)) / float64(big.Scenario.Actions())
		if len(parts) == 0 {
			parts = append(parts, fmt.Sprintf("%s %s", fmtCount(int64(base.Scenario.Jobs)), fmtDur(dur(pb))))
			cpus = append(cpus, fmtDur(dur(cb)))
		}
		parts = append(parts, fmt.Sprintf("%s %s = %sx", fmtCount(int64(big.Scenario.Jobs)), fmtDur(dur(pa)), fmtRatio(pa/pb)))
		if cb > 0 {
			cpus = append(cpus, fmt.Sprintf("%s = %sx", fmtDur(dur(ca)), fmtRatio(ca/cb)))
		}
		met = met && pa/pb <= linearTarget
	}
	if len(parts) == 0 {
		return ""
	}
	line := fmt.Sprintf("%s: a per action by jobs (warm): %s", e.Name, strings.Join(parts, ", "))
	if e.Name == "memory" {
		line += fmt.Sprintf(" (target %gx) %s", linearTarget, verdict(met))
	}
	if len(cpus) == len(parts) {
		// CPU time does not count the time the machine gave to other
		// processes, which wall time on a shared machine does.
		line += "; CPU time per action: " + strings.Join(cpus, ", ")
	}
	return line
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "NOT met"
}

// header says where and how the figures were taken.
func (r *report) header() []string {
	var warm []string
	for _, sc := range r.Scenarios {
		warm = append(warm, fmt.Sprintf("%s %d", sc.Name, sc.Warm))
	}
	out := []string{"baton bench: " + r.Machine}
	if r.hasOthers() {
		out = append(out, fmt.Sprintf("%d rounds; each round runs every engine once, interleaved, each in a fresh process; warm runs per process: %s; inmem workers %d, floor workers %d",
			r.Rounds, strings.Join(warm, ", "), r.Workers, r.Workers))
	}
	if r.hasZK() {
		out = append(out, fmt.Sprintf("zk engines: %s; %d rounds, interleaved with the other engines (in their first %d), each in a fresh process; %d warm runs per process; %d slots per connection (runner/zk Workers per Runner)",
			r.ZKServer, r.ZKRounds, r.ZKRounds, r.ZKWarm, r.ZKSlots))
	}
	if r.hasKafka() {
		out = append(out, fmt.Sprintf("Kafka engines: %s; %d rounds, interleaved with the other engines (in their first %d), each in a fresh process; %d warm runs per process; "+
			"runner/kafka Workers per worker Runner and kafkarawp's round trips in flight: %d",
			r.KafkaBroker, r.KafkaRounds, r.KafkaRounds, r.KafkaWarm, r.KafkaSlots))
	}
	return append(out, "cold: the first run in a process; warm: the median of the runs after it; both given as the median over rounds and the min-max across rounds")
}

// legend describes the engines measured.
func (r *report) legend() []string {
	var out []string
	for _, e := range r.Engines {
		out = append(out, e.Name+": "+e.About)
	}
	return out
}

const (
	ratioNote = "ratios, paired by round: the median of the per-round ratios, their min-max, and the ratio of the medians:"
	storeNote = "durable store, per warm run (medians):"
)

// text writes the report as aligned text.
func (r *report) text(w io.Writer) {
	for _, s := range r.header() {
		fmt.Fprintln(w, s)
	}
	fmt.Fprintln(w)
	r.mainTable().text(w)
	if t := r.ratioTable(); t != nil {
		fmt.Fprintln(w)
		fmt.Fprintln(w, ratioNote)
		t.text(w)
	}
	if t := r.storeTable(); t != nil {
		fmt.Fprintln(w)
		fmt.Fprintln(w, storeNote)
		t.text(w)
	}
	if t := r.zkTable(); t != nil {
		fmt.Fprintln(w)
		fmt.Fprintln(w, zkNote)
		t.text(w)
	}
	if t := r.zkWritesTable(); t != nil {
		fmt.Fprintln(w)
		fmt.Fprintln(w, zkWritesNote)
		t.text(w)
	}
	if t := r.kafkaTable(); t != nil {
		fmt.Fprintln(w)
		fmt.Fprintln(w, kafkaNote)
		t.text(w)
	}
	if t := r.kafkaMessagesTable(); t != nil {
		fmt.Fprintln(w)
		fmt.Fprintln(w, kafkaMessagesNote)
		t.text(w)
	}
	for _, sec := range [][]string{r.targets(), r.zkTargets(), r.kafkaTargets(), r.Notes, r.legend()} {
		if len(sec) > 0 {
			fmt.Fprintln(w)
		}
		for _, s := range sec {
			fmt.Fprintln(w, s)
		}
	}
}

// markdown writes the report as Markdown, for the README.
func (r *report) markdown(w io.Writer) {
	fmt.Fprintln(w, strings.Join(r.header(), "  \n"))
	fmt.Fprintln(w)
	r.mainTable().markdown(w)
	if t := r.ratioTable(); t != nil {
		fmt.Fprintf(w, "\n%s%s\n\n", strings.ToUpper(ratioNote[:1]), ratioNote[1:])
		t.markdown(w)
	}
	if t := r.storeTable(); t != nil {
		fmt.Fprintf(w, "\n%s%s\n\n", strings.ToUpper(storeNote[:1]), storeNote[1:])
		t.markdown(w)
	}
	if t := r.zkTable(); t != nil {
		fmt.Fprintf(w, "\n%s%s\n\n", strings.ToUpper(zkNote[:1]), zkNote[1:])
		t.markdown(w)
	}
	if t := r.zkWritesTable(); t != nil {
		fmt.Fprintf(w, "\n%s%s\n\n", strings.ToUpper(zkWritesNote[:1]), zkWritesNote[1:])
		t.markdown(w)
	}
	if t := r.kafkaTable(); t != nil {
		fmt.Fprintf(w, "\n%s%s\n\n", strings.ToUpper(kafkaNote[:1]), kafkaNote[1:])
		t.markdown(w)
	}
	if t := r.kafkaMessagesTable(); t != nil {
		fmt.Fprintf(w, "\n%s%s\n\n", strings.ToUpper(kafkaMessagesNote[:1]), kafkaMessagesNote[1:])
		t.markdown(w)
	}
	for _, sec := range [][]string{r.targets(), r.zkTargets(), r.kafkaTargets(), r.Notes, r.legend()} {
		if len(sec) > 0 {
			fmt.Fprintln(w)
		}
		for _, s := range sec {
			fmt.Fprintf(w, "- %s\n", s)
		}
	}
}

// dur turns nanoseconds into a Duration.
func dur(ns float64) time.Duration { return time.Duration(math.Round(ns)) }

// fmtSpread writes the smallest and largest of times in nanoseconds.
func fmtSpread(ns []float64) string {
	lo, hi := spread(ns)
	return fmtDur(dur(lo)) + "-" + fmtDur(dur(hi))
}

// fmtRatio writes a ratio with two decimals, or none from 100 up.
func fmtRatio(x float64) string {
	if x >= 100 {
		return fmt.Sprintf("%.0f", x)
	}
	return fmt.Sprintf("%.2f", x)
}
