package main

import (
	"bytes"
	"context"
	"io"
	"math"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/batonwf/baton/internal/zktest"
)

// TestMain lets the test binary serve as the driver's child: the driver
// runs os.Executable, which under go test is this binary.
func TestMain(m *testing.M) {
	if spec := os.Getenv(childEnv); spec != "" {
		os.Exit(childMain(spec, os.Stdout, os.Stderr))
	}
	if spec := os.Getenv(serveChildEnv); spec != "" {
		os.Exit(serveChildMain(spec, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// smallScenarios are the program's scenarios at a size that runs in
// milliseconds.
func smallScenarios() []scenario {
	var out []scenario
	for _, sc := range defaultScenarios() {
		out = append(out, sc.scaled(0.02))
	}
	return out
}

// TestSmoke runs the driver end to end, children included, with tiny
// settings, and checks that both outputs parse and every figure is
// positive.
func TestSmoke(t *testing.T) {
	for _, format := range []string{"text", "markdown"} {
		t.Run(format, func(t *testing.T) {
			var out, errOut bytes.Buffer
			args := []string{"-only", "c", "-scale", "0.01", "-rounds", "1", "-warm", "1",
				"-engines", "floor,memory", "-q", "-format", format}
			if err := mainErr(args, &out, &errOut); err != nil {
				t.Fatalf("mainErr: %v\nstderr:\n%s", err, errOut.String())
			}
			if errOut.Len() > 0 {
				t.Errorf("-q, but stderr has:\n%s", errOut.String())
			}
			rows := tableRows(t, out.String(), format == "markdown")
			main, ratios := rows["cold"], rows["warm"]
			if len(main) != 2 || len(ratios) != 1 {
				t.Fatalf("got %d rows in the main table and %d in the ratios, want 2 and 1:\n%s", len(main), len(ratios), out.String())
			}
			for _, row := range main {
				if row["scenario"] != "c par of 10" {
					t.Errorf("scenario %q, want %q", row["scenario"], "c par of 10")
				}
				for _, col := range []string{"cold", "warm", "per action"} {
					positiveDur(t, row, col, row[col])
				}
				for _, col := range []string{"cold min-max", "warm min-max"} {
					lo, hi, ok := strings.Cut(row[col], "-")
					if !ok {
						t.Errorf("%s %s: %q is not min-max", row["engine"], col, row[col])
					}
					positiveDur(t, row, col, lo)
					positiveDur(t, row, col, hi)
				}
				positiveNum(t, row, "x floor", row["x floor"])
				positiveNum(t, row, "allocs/action", row["allocs/action"])
				if row["engine"] == "memory" {
					positiveNum(t, row, "steps", row["steps"])
				} else if row["steps"] != "-" {
					t.Errorf("floor steps %q, want -", row["steps"])
				}
			}
			r := ratios[0]
			if r["ratio"] != "memory/floor" {
				t.Errorf("ratio %q, want memory/floor", r["ratio"])
			}
			for _, col := range []string{"warm", "warm of medians", "cold", "cold of medians"} {
				positiveNum(t, r, col, r[col])
			}
			for _, want := range []string{"GOMAXPROCS", "1 rounds", "c 1", "memory within 3x of floor"} {
				if !strings.Contains(out.String(), want) {
					t.Errorf("output lacks %q:\n%s", want, out.String())
				}
			}
		})
	}
}

// tableRows parses the tables of a report: for each table, keyed by its
// third column's header ("cold" for the main table, "warm" for the
// ratios), its rows as maps from header to cell.
func tableRows(t *testing.T, out string, markdown bool) map[string][]map[string]string {
	t.Helper()
	split := func(line string) []string { return regexp.MustCompile(`\s{2,}`).Split(strings.TrimSpace(line), -1) }
	if markdown {
		split = func(line string) []string {
			if !strings.HasPrefix(line, "|") {
				return nil
			}
			cells := strings.Split(strings.Trim(line, "|"), "|")
			for i := range cells {
				cells[i] = strings.TrimSpace(cells[i])
			}
			return cells
		}
	}
	tables := map[string][]map[string]string{}
	var header []string
	for _, line := range strings.Split(out, "\n") {
		cells := split(line)
		switch {
		case len(cells) < 3:
			header = nil
		case cells[0] == "scenario":
			header = cells
		case header != nil && strings.HasPrefix(cells[0], ":--"):
		case header != nil:
			if len(cells) != len(header) {
				t.Fatalf("row %q has %d cells, header %d", line, len(cells), len(header))
			}
			row := map[string]string{}
			for i, h := range header {
				row[h] = cells[i]
			}
			tables[header[2]] = append(tables[header[2]], row)
		}
	}
	return tables
}

func positiveDur(t *testing.T, row map[string]string, col, s string) {
	t.Helper()
	if d, err := time.ParseDuration(s); err != nil || d <= 0 {
		t.Errorf("%s %s: %q is not a positive duration", row["engine"], col, s)
	}
}

func positiveNum(t *testing.T, row map[string]string, col, s string) {
	t.Helper()
	if f, err := strconv.ParseFloat(strings.ReplaceAll(s, ",", ""), 64); err != nil || !(f > 0) {
		t.Errorf("%s %s: %q is not a positive number", row["engine"], col, s)
	}
}

// TestSameHandlerWork checks that the floors and the engines run the
// handler once per action of every scenario, each with its own payload.
func TestSameHandlerWork(t *testing.T) {
	o := runOpts{Workers: 3, Dir: t.TempDir()}
	for _, sc := range smallScenarios() {
		for _, name := range []string{"floor", "go-per-action", "memory", "bolt"} {
			e, err := findEngine(name)
			if err != nil {
				t.Fatal(err)
			}
			if !e.appliesTo(sc) {
				continue
			}
			s, err := measureRun(context.Background(), e, sc, 0, o)
			if err != nil {
				t.Fatalf("%s on %s: %v", sc.Label(), name, err)
			}
			if s.Calls != int64(sc.Actions()) || s.Sum != sc.WantSum() {
				t.Errorf("%s on %s: %d calls adding up to %d, want %d and %d",
					sc.Label(), name, s.Calls, s.Sum, sc.Actions(), sc.WantSum())
			}
			if e.Steps && s.Steps < int64(sc.Jobs)*2 {
				t.Errorf("%s on %s: %d steps, want a creation and an Apply per job at least", sc.Label(), name, s.Steps)
			}
			if name == "bolt" && (s.Store == nil || s.Store.WriteTxns < int64(sc.Jobs) || s.Store.BytesWritten <= 0) {
				t.Errorf("%s on bolt: store counters %+v, want a write per job at least", sc.Label(), s.Store)
			}
		}
	}
}

// TestDurableFloors runs the durable floors on a small sequence: they run
// no handler, and apply to sequences only.
func TestDurableFloors(t *testing.T) {
	o := runOpts{Workers: 3, Dir: t.TempDir()}
	scs := smallScenarios()
	for _, name := range []string{"fsync", "bboltcommit"} {
		e, err := findEngine(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, sc := range scs {
			if got, want := e.appliesTo(sc), sc.Name == "b"; got != want {
				t.Errorf("%s applies to %s: %v, want %v", name, sc.Name, got, want)
			}
		}
		s, err := measureRun(context.Background(), e, scs[1], 0, o)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if s.Wall <= 0 || s.Calls != 0 {
			t.Errorf("%s: %v and %d handler calls, want a positive time and none", name, s.Wall, s.Calls)
		}
	}
	left, err := os.ReadDir(o.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) > 0 {
		t.Errorf("files left behind: %v", left)
	}
}

// TestScenarios checks the scenarios' shapes and payloads against each
// other.
func TestScenarios(t *testing.T) {
	for _, sc := range defaultScenarios() {
		sum := 0
		for _, n := range sc.Stages() {
			sum += n
		}
		if sum != sc.ActionsPerJob() || len(sc.Payloads()) != sum {
			t.Errorf("%s: stages add up to %d, %d payloads, want %d", sc.Name, sum, len(sc.Payloads()), sc.ActionsPerJob())
		}
	}
	a := defaultScenarios()[0]
	if got, want := a.Actions(), 2200; got != want {
		t.Errorf("a runs %d actions, want %d", got, want)
	}
	if got, want := a.WantSum(), int64(200*55); got != want {
		t.Errorf("a's payloads add up to %d, want %d", got, want)
	}
	if got, want := string(a.Payloads()[7]), `{"id":"o-7","n":7}`; got != want {
		t.Errorf("payload %s, want %s", got, want)
	}
	for _, c := range []struct{ got, want string }{
		{a.Label(), "a 200 jobs of seq(par(10), 1)"},
		{a.scaled(0.01).Label(), "a 2 jobs of seq(par(10), 1)"},
		{defaultScenarios()[3].Label(), "d par of 100,000"},
		{defaultScenarios()[1].scaled(0.0001).Label(), "b seq of 1"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

// TestStats checks the arithmetic against values worked out by hand.
func TestStats(t *testing.T) {
	near := func(got, want float64) bool { return math.Abs(got-want) < 1e-9 }
	for _, c := range []struct {
		xs   []float64
		want float64
	}{
		{[]float64{7}, 7},
		{[]float64{3, 1, 2}, 2},
		{[]float64{4, 1, 3, 2}, 2.5},
		{[]float64{10, 1, 1000, 5, 7}, 7},
	} {
		if got := median(c.xs); !near(got, c.want) {
			t.Errorf("median(%v) = %v, want %v", c.xs, got, c.want)
		}
	}
	if !math.IsNaN(median(nil)) {
		t.Errorf("median(nil) = %v, want NaN", median(nil))
	}
	if lo, hi := spread([]float64{3, 9, 1, 4}); lo != 1 || hi != 9 {
		t.Errorf("spread = %v, %v, want 1, 9", lo, hi)
	}

	// Per round: 10/4 = 2.5, 20/40 = 0.5, 30/10 = 3; their median is 2.5,
	// while the medians are 20 and 10, a ratio of 2.
	r := compare([]float64{10, 20, 30}, []float64{4, 40, 10})
	if !near(r.Paired, 2.5) || !near(r.Lo, 0.5) || !near(r.Hi, 3) || !near(r.OfMedian, 2) {
		t.Errorf("compare = %+v, want paired 2.5, 0.5-3, of medians 2", r)
	}
	// Even count: ratios 1, 2, 3, 2, median 2; medians 2.5 and 1.
	r = compare([]float64{1, 2, 3, 4}, []float64{1, 1, 1, 2})
	if !near(r.Paired, 2) || !near(r.Lo, 1) || !near(r.Hi, 3) || !near(r.OfMedian, 2.5) {
		t.Errorf("compare = %+v, want paired 2, 1-3, of medians 2.5", r)
	}
}

// TestReportArithmetic builds a report from made-up rounds and checks the
// figures the tables show.
func TestReportArithmetic(t *testing.T) {
	sc := scenario{Name: "c", Shape: shapePar, Jobs: 1, Width: 1000, Warm: 3}
	ms := func(x float64) sample {
		return sample{Wall: time.Duration(x * 1e6), Mallocs: uint64(x * 1000), Steps: int64(x)}
	}
	round := func(cold float64, warm ...float64) childResult {
		r := childResult{Cold: ms(cold)}
		for _, w := range warm {
			r.Warm = append(r.Warm, ms(w))
		}
		return r
	}
	floor, _ := findEngine("floor")
	memory, _ := findEngine("memory")
	rep := &report{Rounds: 2, Scenarios: []scenario{sc}, Engines: []engine{floor, memory}, Cells: []*cell{
		// Warm medians per round: 1 and 2; cold 4 and 2.
		{Scenario: sc, Engine: floor, Rounds: []childResult{round(4, 1, 5, 0.5), round(2, 2, 2, 3)}},
		// Warm medians per round: 3 and 4, so ratios 3 and 2: x floor 2.5.
		{Scenario: sc, Engine: memory, Rounds: []childResult{round(9, 3, 3, 3), round(8, 4, 1, 6)}},
	}}
	var out bytes.Buffer
	rep.text(&out)
	rows := tableRows(t, out.String(), false)
	want := map[string]map[string]string{
		"floor":  {"cold": "3.00ms", "cold min-max": "2.00ms-4.00ms", "warm": "1.50ms", "warm min-max": "1.00ms-2.00ms", "per action": "1.50µs", "x floor": "1.00", "steps": "-", "allocs/action": "1.50"},
		"memory": {"cold": "8.50ms", "warm": "3.50ms", "warm min-max": "3.00ms-4.00ms", "x floor": "2.50", "steps": "3.50", "allocs/action": "3.50"},
	}
	for _, row := range rows["cold"] {
		for col, w := range want[row["engine"]] {
			if row[col] != w {
				t.Errorf("%s %s = %q, want %q", row["engine"], col, row[col], w)
			}
		}
	}
	// Cold ratios per round: 9/4 = 2.25 and 8/2 = 4, median 3.125;
	// medians 8.5 and 3.
	r := rows["warm"][0]
	for col, w := range map[string]string{"warm": "2.50", "warm min-max": "2.00-3.00", "warm of medians": "2.33", "cold": "3.12", "cold min-max": "2.25-4.00", "cold of medians": "2.83"} {
		if r[col] != w {
			t.Errorf("ratio %s = %q, want %q", col, r[col], w)
		}
	}
}

// TestChildErrors checks that a child that fails, or prints something
// else than one result line, is an error naming what it measured.
func TestChildErrors(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	sc := smallScenarios()[2]
	broken := engine{Name: "broken"}
	_, err = run(context.Background(), config{Exe: exe, Scenarios: []scenario{sc}, Engines: []engine{broken}, Rounds: 1, Workers: 2, Dir: t.TempDir()})
	if err == nil {
		t.Fatal("run with an engine the child lacks: nil error")
	}
	for _, want := range []string{"scenario c", "on broken", "round 1", `no engine \"broken\"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}

	sp := childSpec{Scenario: sc, Engine: "floor", Warm: 2}
	good := `{"scenario":"c","engine":"floor","cold":{"ns":5},"warm":[{"ns":3},{"ns":4}]}`
	if _, err := parseChild([]byte(good+"\n"), sp); err != nil {
		t.Errorf("parseChild(%s): %v", good, err)
	}
	for _, bad := range []string{
		"",
		"hello",
		good + "\n" + good,
		`{"scenario":"c","engine":"memory","cold":{"ns":5},"warm":[{"ns":3},{"ns":4}]}`,
		`{"scenario":"c","engine":"floor","cold":{"ns":5},"warm":[{"ns":3}]}`,
		`{"scenario":"c","engine":"floor","cold":{"ns":0},"warm":[{"ns":3},{"ns":4}]}`,
		`{"scenario":"c","engine":"floor","cold":{"ns":5},"warm":[{"ns":3},{"ns":4}],"x":1}`,
	} {
		if _, err := parseChild([]byte(bad), sp); err == nil {
			t.Errorf("parseChild(%q): nil error", bad)
		}
	}
}

func TestFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-only", "z"},
		{"-format", "html"},
		{"-engines", "redis"},
		{"-engines", "floor,floor"},
		{"-rounds", "0"},
		{"-warm", "-1"},
		{"-workers", "0"},
		{"-scale", "0"},
		{"-kafkaslots", "0"},
		{"-kafkarounds", "0"},
		{"-kafkawarm", "0"},
		{"-kafkamax", "0"},
		{"-kafkaprefix", "a/b"},
		{"-kafkaprefix", "a-prefix-too-long-for-topics"},
		{"extra"},
	} {
		var out, errOut bytes.Buffer
		if err := mainErr(args, &out, &errOut); err == nil {
			t.Errorf("mainErr(%q) = nil, want an error", args)
		}
	}
}

func TestProfileName(t *testing.T) {
	sc := defaultScenarios()[1]
	e, _ := findEngine("memory")
	for _, c := range []struct {
		path  string
		pairs int
		want  string
	}{
		{"", 3, ""},
		{"b.prof", 1, "b.prof"},
		{"out/cpu.prof", 2, "out/cpu-b-memory.prof"},
		{"cpu", 2, "cpu-b-memory"},
	} {
		if got := profileName(c.path, c.pairs, sc, e); got != c.want {
			t.Errorf("profileName(%q, %d) = %q, want %q", c.path, c.pairs, got, c.want)
		}
	}
}

func TestFormat(t *testing.T) {
	for _, c := range []struct {
		got, want string
	}{
		{fmtCount(1234567), "1,234,567"},
		{fmtCount(999), "999"},
		{fmtFloat(4167.4), "4,167"},
		{fmtFloat(2.276), "2.28"},
		{fmtFloat(0.00026), "0.00026"},
		{fmtDur(4230000), "4.23ms"},
		{fmtDur(453), "453ns"},
		{fmtRatio(6.127), "6.13"},
		{fmtRatio(1065.7), "1066"},
		{fmtSpread([]float64{2e6, 1e6, 3.5e6}), "1.00ms-3.50ms"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

// BenchmarkHandler measures the per-action work alone: decoding the
// payload, the handler, encoding the output.
func BenchmarkHandler(b *testing.B) {
	p := defaultScenarios()[0].Payloads()[7]
	for b.Loop() {
		if _, err := floorHandler(context.Background(), p); err != nil {
			b.Fatal(err)
		}
	}
}

// TestZKEngines runs every ZooKeeper engine once on small scenarios a to
// c against a real server, and checks the handler's work and the writes
// counted from the zxid: exact for zkraw and zkfloor, at least a claim
// and a transition per action and a creation per job for runner/zk.
func TestZKEngines(t *testing.T) {
	srv := zktest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	o := runOpts{Workers: 2, Dir: t.TempDir(), ZK: srv.Addrs(), ZKRoot: srv.Path("bench"), Slots: 4}
	for _, sc := range smallScenarios()[:3] {
		for _, e := range zkEngines() {
			s, err := measureRun(ctx, e, sc, 0, o)
			if err != nil {
				t.Fatalf("%s on %s: %v", sc.Label(), e.Name, err)
			}
			if s.ZK == nil || s.Wall <= 0 {
				t.Fatalf("%s on %s: %+v, want ZooKeeper counts and a positive time", sc.Label(), e.Name, s)
			}
			acts, jobs, w := int64(sc.Actions()), int64(sc.Jobs), s.ZK.Writes
			t.Logf("%s on %s: %v, %d writes and %d requests for %d actions, %d steps, %d conflicts, %d calls",
				sc.Label(), e.Name, s.Wall, w, s.ZK.Requests, acts, s.Steps, s.ZK.Conflicts, s.Calls)
			if srv.External() {
				continue // other clients write too: the counts are not this run's alone
			}
			switch e.ZKKind {
			case kindZKRaw:
				if w != 2*acts || s.ZK.Requests < w {
					t.Errorf("%s on %s: %d writes of %d requests, want %d writes", sc.Label(), e.Name, w, s.ZK.Requests, 2*acts)
				}
			case kindZKFloor:
				if w != acts+jobs || s.Steps != acts+jobs {
					t.Errorf("%s on %s: %d writes and %d steps, want %d", sc.Label(), e.Name, w, s.Steps, acts+jobs)
				}
			case kindZK:
				// Every run of a handler follows a claim: from the queue
				// (a write of its own) or by the transition that made the
				// action (none). Results that end together are applied in
				// one transition: at least a creation and one transition
				// per job.
				if s.ZK.Started < acts || s.ZK.Claims+s.ZK.Own < s.ZK.Started || s.Steps < 2*jobs || s.Steps > acts+jobs ||
					w < s.ZK.Claims+s.ZK.Lost+s.Steps || w > 20*acts {
					t.Errorf("%s on %s: %d writes, %d started, %d claims from the queue (%d lost), %d claimed in transitions, %d steps; want a claim per action started, "+
						"a creation and a transition per job at least, at most a transition per action, and a write for each claim from the queue and each step",
						sc.Label(), e.Name, w, s.ZK.Started, s.ZK.Claims, s.ZK.Lost, s.ZK.Own, s.Steps)
				}
			}
		}
	}
	kids, _, err := zktest.Connect(t, srv.Addrs(), 4*time.Second).Children(o.ZKRoot)
	if err != nil || len(kids) > 0 {
		t.Errorf("left under %s: %q, %v; want nothing", o.ZKRoot, kids, err)
	}
}

// TestZKDriver runs the driver with the ZooKeeper engines on a given
// server, and checks their table, targets and the scenario they skip.
func TestZKDriver(t *testing.T) {
	srv := zktest.Start(t)
	var out, errOut bytes.Buffer
	args := []string{"-zk", srv.ConnString(), "-zkroot", srv.Path("bench"), "-only", "c,d", "-scale", "0.01",
		"-zkrounds", "2", "-zkwarm", "1", "-zkslots", "2", "-zkmax", "100", "-q",
		"-engines", "zk1,zkfloor1,zkraw1"}
	if err := mainErr(args, &out, &errOut); err != nil {
		t.Fatalf("mainErr: %v\nstderr:\n%s", err, errOut.String())
	}
	rows := tableRows(t, out.String(), false)
	zk := rows["conns"]
	if len(zk) != 3 {
		t.Fatalf("%d rows in the zk table, want 3:\n%s", len(zk), out.String())
	}
	for _, row := range zk {
		positiveNum(t, row, "actions/s", row["actions/s"])
		positiveNum(t, row, "writes/action", row["writes/action"])
		positiveNum(t, row, "raw writes/s", row["raw writes/s"])
		if row["engine"] != "zkraw1" {
			positiveNum(t, row, "x zkfloor", row["x zkfloor"])
			if row["check"] != "met" && row["check"] != "NOT met" {
				t.Errorf("%s check %q", row["engine"], row["check"])
			}
		}
	}
	if w := rows["writes/action"]; len(w) != 1 || w[0]["engine"] != "zk1" {
		t.Errorf("writes breakdown: %v, want a row for zk1", w)
	}
	for _, want := range []string{"2 rounds", "runner/zk at most 4 ZooKeeper writes per action", "within 4x of zkfloor",
		"scenario d not run on zk1, zkfloor1, zkraw1: 1,000 actions, more than -zkmax 100"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

// TestDefaultEngines checks that the default run leaves the Kafka engines
// out, and that -engines finds them.
func TestDefaultEngines(t *testing.T) {
	def := defaultEngineNames()
	for _, name := range []string{"floor", "memory", "bolt", "zk1", "zkraw4"} {
		if !slices.Contains(def, name) {
			t.Errorf("default engines %q lack %s", def, name)
		}
	}
	for _, e := range kafkaEngines() {
		if slices.Contains(def, e.Name) {
			t.Errorf("default engines %q have %s", def, e.Name)
		}
		if _, err := findEngine(e.Name); err != nil {
			t.Error(err)
		}
	}
	if got, want := len(kafkaEngines()), 4; got != want {
		t.Errorf("%d Kafka engines, want %d", got, want)
	}
}

// TestKafkaEngines runs kafka1 and both raw engines on a small scenario
// against an in-process broker, and checks the handler's work, the
// messages the broker counted, and that every run deleted its topics.
func TestKafkaEngines(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	o := runOpts{Workers: 2, Dir: t.TempDir(), Kafka: c.ListenAddrs(), KafkaPrefix: "test", KafkaSlots: 4}
	sc := defaultScenarios()[0].scaled(0.01) // a: 2 jobs of seq(par(10), 1)
	acts := int64(sc.Actions())
	for _, name := range []string{"kafka1", "kafkaraw", "kafkarawp"} {
		e, err := findEngine(name)
		if err != nil {
			t.Fatal(err)
		}
		s, err := measureRun(ctx, e, sc, 0, o)
		if err != nil {
			t.Fatalf("%s on %s: %v", sc.Label(), name, err)
		}
		if s.Kafka == nil || s.Wall <= 0 {
			t.Fatalf("%s on %s: %+v, want Kafka counts and a positive time", sc.Label(), name, s)
		}
		k := s.Kafka
		t.Logf("%s on %s: %v, %+v, %d steps, %d calls", sc.Label(), name, s.Wall, *k, s.Steps, s.Calls)
		if e.KafkaKind != kindKafka {
			if k.Messages != acts || s.Calls != 0 {
				t.Errorf("%s on %s: %d messages and %d handler calls, want %d and none", sc.Label(), name, k.Messages, s.Calls, acts)
			}
			continue
		}
		// An action message and a result per action; state records: a
		// step (and a head) per transition, the creations included.
		if s.Calls != acts || k.Actions != acts || k.Restarter != acts || k.Started != acts {
			t.Errorf("%s on %s: %d calls, %d action and %d restarter messages, %d started; want %d each",
				sc.Label(), name, s.Calls, k.Actions, k.Restarter, k.Started, acts)
		}
		if s.Steps < 2*int64(sc.Jobs) || k.State < s.Steps || k.Messages != k.Actions+k.Restarter+k.State+k.Stops+k.Control || k.Probes < 1 {
			t.Errorf("%s on %s: %d steps, %+v; want a creation and a transition per job at least, a state record per step, "+
				"the topics adding up, a probe", sc.Label(), name, s.Steps, *k)
		}
	}
	left, err := newKafkaAdmin(o.Kafka).topics(ctx, o.KafkaPrefix)
	if err != nil || len(left) > 0 {
		t.Errorf("topics left under %s: %v, %v; want none", o.KafkaPrefix, left, err)
	}
}

// TestKafkaDriver runs the driver with Kafka engines on the broker it
// starts, and checks their tables, the target and the scenario skipped.
func TestKafkaDriver(t *testing.T) {
	var out, errOut bytes.Buffer
	args := []string{"-only", "c,d", "-scale", "0.01", "-kafkarounds", "1", "-kafkawarm", "1", "-kafkaslots", "2",
		"-kafkamax", "100", "-q", "-engines", "kafka1,kafkaraw,kafkarawp"}
	if err := mainErr(args, &out, &errOut); err != nil {
		t.Fatalf("mainErr: %v\nstderr:\n%s", err, errOut.String())
	}
	rows := tableRows(t, out.String(), false)
	k := rows["workers"]
	if len(k) != 3 {
		t.Fatalf("%d rows in the Kafka table, want 3:\n%s", len(k), out.String())
	}
	for _, row := range k {
		positiveNum(t, row, "actions/s", row["actions/s"])
		positiveNum(t, row, "messages/action", row["messages/action"])
		if row["engine"] == "kafka1" {
			for _, col := range []string{"raw round trips/s", "target", "pipelined round trips/s", "pipelined target"} {
				positiveNum(t, row, col, row[col])
			}
			for _, col := range []string{"check", "pipelined check"} {
				if row[col] != "met" && row[col] != "NOT met" {
					t.Errorf("kafka1 %s %q", col, row[col])
				}
			}
		} else if row["messages/action"] != "1.00" {
			t.Errorf("%s: %s messages per round trip, want 1.00", row["engine"], row["messages/action"])
		}
	}
	if m := rows["messages/action"]; len(m) != 1 || m[0]["engine"] != "kafka1" || m[0]["action topic"] != "1.00" || m[0]["restarter topic"] != "1.00" {
		t.Errorf("messages breakdown: %v, want a row for kafka1 with one action and one result per action", m)
	}
	for _, want := range []string{"Kafka engines: an in-process broker", "1 rounds", "a third of kafkaraw's round trips/s",
		"in 2 of 2 runs", "scenario d not run on kafka1, kafkaraw, kafkarawp: 1,000 actions, more than -kafkamax 100"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

// TestCurve: the larger copies of a run on the floor and memory engines
// only, and the report compares their cost per action with a's.
func TestCurve(t *testing.T) {
	scs := defaultScenarios()
	byName := map[string]scenario{}
	for _, sc := range scs {
		byName[sc.Name] = sc
	}
	for _, name := range []string{"a10", "a100"} {
		sc := byName[name]
		if sc.Of != "a" || sc.Shape != shapeFanIn || sc.Width != byName["a"].Width {
			t.Fatalf("%s is not a larger copy of a: %+v", name, sc)
		}
		for _, e := range allEngines() {
			if got, want := e.appliesTo(sc), e.Name == "floor" || e.Name == "memory"; got != want {
				t.Errorf("%s applies to %s: %v, want %v", e.Name, name, got, want)
			}
		}
	}
	mem, _ := findEngine("memory")
	perAction := func(sc scenario, ns time.Duration) *cell {
		w := sample{Wall: ns * time.Duration(sc.Actions()), CPU: 2 * ns * time.Duration(sc.Actions())}
		return &cell{Scenario: sc, Engine: mem, Rounds: []childResult{{Cold: w, Warm: []sample{w}}}}
	}
	r := &report{Engines: []engine{mem}, Cells: []*cell{
		perAction(byName["a"], 10*time.Microsecond),
		perAction(byName["a10"], 12*time.Microsecond),
		perAction(byName["a100"], 14*time.Microsecond),
	}}
	want := "memory: a per action by jobs (warm): 200 10.0µs, 2,000 12.0µs = 1.20x, 20,000 14.0µs = 1.40x (target 1.5x) met; CPU time per action: 20.0µs, 24.0µs = 1.20x, 28.0µs = 1.40x"
	if got := r.curve(mem); got != want {
		t.Errorf("curve:\n got %s\nwant %s", got, want)
	}
	r.Cells[2] = perAction(byName["a100"], 16*time.Microsecond)
	if got := r.curve(mem); !strings.Contains(got, "NOT met") {
		t.Errorf("curve with a100 at 1.6x: %s, want NOT met", got)
	}
}

// TestServe runs the -serve mode end to end, children included, at a tiny
// size, and checks the shape of its tables in both formats: a row per
// throughput figure with positive times, a row per ratio with its
// verdict, the event latency and the idle streams' memory, and the
// targets' lines.
func TestServe(t *testing.T) {
	for _, format := range []string{"text", "markdown"} {
		t.Run(format, func(t *testing.T) {
			var out, errOut bytes.Buffer
			args := []string{"-serve", "-scale", "0.01", "-rounds", "1", "-warm", "1", "-q", "-format", format}
			if err := mainErr(args, &out, &errOut); err != nil {
				t.Fatalf("mainErr: %v\nstderr:\n%s", err, errOut.String())
			}
			if errOut.Len() > 0 {
				t.Errorf("-q, but stderr has:\n%s", errOut.String())
			}
			rows := tableRows(t, out.String(), format == "markdown")
			thr, ratios, events, idle := rows["per op"], rows["paired"], rows["median"], rows["rss added"]
			if len(thr) != 11 || len(ratios) != 7 || len(events) != 2 || len(idle) != 1 {
				t.Fatalf("got %d throughput rows, %d ratios, %d event rows and %d idle rows, want 11, 7, 2 and 1:\n%s",
					len(thr), len(ratios), len(events), len(idle), out.String())
			}
			engines := map[string]int{}
			for _, row := range thr {
				engines[row["engine"]]++
				positiveDur(t, row, "per op", row["per op"])
				positiveDur(t, row, "cold per op", row["cold per op"])
				if row["cpu per op"] != "unknown" { // no CPU time off unix
					positiveDur(t, row, "cpu per op", row["cpu per op"])
				}
				positiveNum(t, row, "ops/s", row["ops/s"])
				positiveNum(t, row, "ops/run", row["ops/run"])
			}
			if engines["go"] != 3 || engines["http"] != 6 || engines["bare"] != 2 {
				t.Errorf("engines %v, want 3 go, 6 http, 2 bare", engines)
			}
			for _, row := range ratios {
				positiveNum(t, row, "paired", row["paired"])
				if row["check"] != "met" && row["check"] != "NOT met" {
					t.Errorf("%s %s: check %q", row["scenario"], row["ratio"], row["check"])
				}
			}
			for i, where := range []string{"through the route", "on the bare hub"} {
				positiveDur(t, events[i], "median", events[i]["median"])
				positiveDur(t, events[i], "p99", events[i]["p99"])
				if events[i]["streams"] != "2" || events[i]["samples"] != "8.00" || !strings.HasSuffix(events[i]["scenario"], where) {
					t.Errorf("events row %v, want 2 streams and 8 samples (2 streams, 3 steps and the last), %s", events[i], where)
				}
			}
			// On bolt the server adds no write: a submit is a Create and
			// its job's one step a Save, for the Go API and the server
			// alike, each in a group commit.
			commits := rows["write txs per submit"]
			if len(commits) != 2 || commits[0]["engine"] != "go" || commits[1]["engine"] != "http" {
				t.Fatalf("commit rows %v, want submit bolt go and http", commits)
			}
			for _, row := range commits {
				positiveNum(t, row, "writes a commit", row["writes a commit"])
				if row["writes per submit"] != "2.00" {
					t.Errorf("%s: %s writes per submit, want 2 (a Create and a Save)", row["engine"], row["writes per submit"])
				}
			}
			if idle[0]["streams"] != "10" || !strings.HasSuffix(idle[0]["rss added"], " MB") {
				t.Errorf("idle row %v, want 10 streams and the memory they added", idle[0])
			}
			for _, want := range []string{"submit bolt http/go (throughput)", "target at least 0.8x", "status flat 1,000/10 actions (time per read)",
				"list flat 1,000/10 jobs", "event latency with 2 streams, through the route: median", "event latency with 2 streams, on the bare hub: median",
				"10 idle streams add", "through the server's /api/v1/jobs/{id}/events route"} {
				if !strings.Contains(out.String(), want) {
					t.Errorf("output lacks %q:\n%s", want, out.String())
				}
			}
		})
	}
	for x, want := range map[float64]string{0.001414: "0.00141", 0.4974: "0.497", 1.234: "1.23", 150.2: "150"} {
		if got := fmtServeRatio(x); got != want {
			t.Errorf("fmtServeRatio(%v) = %q, want %q", x, got, want)
		}
	}
	var errOut bytes.Buffer
	if err := mainErr([]string{"-serve", "-engines", "memory"}, io.Discard, &errOut); err == nil || !strings.Contains(err.Error(), "-engines") {
		t.Errorf("-serve -engines memory: %v, want an error naming -engines", err)
	}
}
