package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// smallScenarios are the program's scenarios at a size that runs in
// milliseconds.
func smallScenarios() []scenario {
	scs := defaultScenarios()
	scs[0].Jobs = 20
	scs[1].Width = 50
	scs[2].Width = 50
	scs[3].Width = 200
	return scs
}

// runSmall runs every small scenario once on the named engines and checks
// the report; runBaton itself checks that every job succeeded and every
// action ran once.
func runSmall(t *testing.T, engines string) *report {
	t.Helper()
	engs, cleanup, err := pickEngines(engines, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	scs := smallScenarios()
	rep, err := run(context.Background(), config{Scenarios: scs, Engines: engs, Reps: 1, Workers: 4})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(rep.Results), len(scs)*len(engs); got != want {
		t.Fatalf("%d results, want %d", got, want)
	}
	for _, res := range rep.Results {
		if len(res.Samples) != 1 {
			t.Errorf("%s on %s: %d samples, want 1", res.Scenario.Name, res.Engine, len(res.Samples))
		}
		if res.Engine != "floor" && res.Steps() < 2 {
			t.Errorf("%s on %s: %v steps, want at least 2 (create and one Apply)", res.Scenario.Name, res.Engine, res.Steps())
		}
	}
	return rep
}

func TestMemoryAndFloor(t *testing.T) {
	rep := runSmall(t, "floor,memory")
	var text, md bytes.Buffer
	rep.text(&text)
	rep.markdown(&md)
	for _, name := range []string{"a ", "b ", "c ", "d "} {
		for _, eng := range []string{"floor", "memory"} {
			if !hasRow(text.String(), name, eng) {
				t.Errorf("text table has no row for %s on %s:\n%s", name, eng, text.String())
			}
			if !hasRow(md.String(), "| "+name, eng) {
				t.Errorf("markdown table has no row for %s on %s:\n%s", name, eng, md.String())
			}
		}
	}
	if !strings.Contains(text.String(), "memory within 3x of floor") {
		t.Errorf("text report has no target line:\n%s", text.String())
	}
	if strings.Contains(text.String(), "durable store") {
		t.Errorf("text report has a store table without a store:\n%s", text.String())
	}
}

func TestBolt(t *testing.T) {
	scs := smallScenarios()
	scs[0].Jobs = 5
	scs[1].Width = 10
	engs, cleanup, err := pickEngines("bolt", 4)
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	rep, err := run(context.Background(), config{Scenarios: scs, Engines: engs, Reps: 1, Workers: 4})
	if err != nil {
		t.Fatal(err)
	}
	for _, res := range rep.Results {
		tot, ok := res.StoreTotals()
		switch {
		case !ok:
			t.Errorf("%s: no store counters", res.Scenario.Name)
		case tot.WriteTxns < int64(res.Scenario.Jobs) || tot.BytesWritten <= 0:
			t.Errorf("%s: store counters %+v, want a write per job at least", res.Scenario.Name, tot)
		}
	}
	var text bytes.Buffer
	rep.text(&text)
	if !strings.Contains(text.String(), "durable store") || !hasRow(text.String(), "b ", "bolt") {
		t.Errorf("text report lacks the bolt rows:\n%s", text.String())
	}
}

func TestFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-only", "z"},
		{"-format", "html"},
		{"-engines", "redis"},
		{"extra"},
	} {
		var out, errOut bytes.Buffer
		if err := mainErr(args, &out, &errOut); err == nil {
			t.Errorf("mainErr(%q) = nil, want an error", args)
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
		{fmtBytes(2048), "2.00 KiB"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

// hasRow reports whether a line of out starts with prefix and names engine.
func hasRow(out, prefix, engine string) bool {
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, prefix) && strings.Contains(line, " "+engine+" ") {
			return true
		}
	}
	return false
}
