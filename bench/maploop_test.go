package main

import (
	"bytes"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batonwf/baton/ast"
)

// TestMapLoop runs -maploop, scaled down, and checks its table: a row per
// figure, in order, with its copies and positive times, and the three
// targets' lines, each verdict agreeing with its ratio. The children
// check, as for every scenario, that the handler ran once per copy or
// iteration.
func TestMapLoop(t *testing.T) {
	var out, errOut bytes.Buffer
	args := []string{"-maploop", "-rounds", "2", "-warm", "1", "-scale", "0.01", "-q", "-dir", t.TempDir()}
	if err := mainErr(args, &out, &errOut); err != nil {
		t.Fatalf("mainErr: %v\nstderr:\n%s", err, errOut.String())
	}
	t.Log(out.String())
	lines := strings.Split(out.String(), "\n")
	head := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "figure") })
	if head < 0 {
		t.Fatalf("no table in:\n%s", out.String())
	}
	want := map[string]string{"par10k": "100", "map10k": "100", "map1k": "10", "map100k": "1,000", "seq1k": "10", "loop1k": "10", "loop1kt": "10"}
	for i, sc := range mapLoopScenarios() {
		row := lines[head+1+i]
		if !strings.HasPrefix(row, sc.Name+" ") || !strings.Contains(row, " "+want[sc.Name]+" ") {
			t.Errorf("row %d: %q; want %s with %s copies", i, row, sc.Name, want[sc.Name])
			continue
		}
		for _, f := range strings.Fields(row) {
			if d, err := time.ParseDuration(strings.ReplaceAll(f, "µ", "u")); err == nil && d <= 0 {
				t.Errorf("%s: a time of %s", sc.Name, f)
			}
		}
	}
	verdicts := regexp.MustCompile(`(?m)^(map against a par written out: map10k/par10k|loop \(until "done"\) against a seq written out: loop1k/seq1k|loop \(until true\) against a seq written out: loop1kt/seq1k) ([0-9.]+)x .*\(target 1.5x\) (met|NOT met)$`)
	ms := verdicts.FindAllStringSubmatch(out.String(), -1)
	if len(ms) != 3 {
		t.Fatalf("want three paired targets' lines, got %q in:\n%s", ms, out.String())
	}
	for _, m := range ms {
		x, err := strconv.ParseFloat(m[2], 64)
		if err != nil {
			t.Fatal(err)
		}
		if wantV := verdict(x <= growTarget); m[3] != wantV {
			t.Errorf("%s: ratio %v says %q, want %q", m[1], x, m[3], wantV)
		}
	}
	if !regexp.MustCompile(`(?m)^cost per copy against map1k's .*: map10k [0-9.]+x, map100k [0-9.]+x \(CPU time map10k [0-9.]+x, map100k [0-9.]+x\) \(target 2x; map100k is nested maps.*\) (met|NOT met)$`).MatchString(out.String()) {
		t.Errorf("no per-copy target line in:\n%s", out.String())
	}
}

// TestMapLoopReport checks the targets' arithmetic on figures made up:
// ratios paired by round, and verdicts at the edge of each target.
func TestMapLoopReport(t *testing.T) {
	e, err := findEngine("memory")
	if err != nil {
		t.Fatal(err)
	}
	// Two rounds of figures in milliseconds, warm runs alike.
	fig := func(sc scenario, ms ...float64) *cell {
		c := &cell{Scenario: sc, Engine: e}
		for _, m := range ms {
			s := sample{Wall: time.Duration(m * 1e6), CPU: time.Duration(m * 1e6)}
			c.Rounds = append(c.Rounds, childResult{Cold: s, Warm: []sample{s}})
		}
		return c
	}
	scs := mapLoopScenarios()
	cells := []*cell{
		fig(scs[0], 10, 20),   // par10k
		fig(scs[1], 15, 30),   // map10k: 1.5x in both rounds: met
		fig(scs[2], 1, 2),     // map1k: 1 µs and 2 µs per copy
		fig(scs[3], 201, 400), // map100k: 2.01x and 2x per copy: median 2.005x, not met
		fig(scs[4], 10, 10),   // seq1k
		fig(scs[5], 16, 14),   // loop1k: 1.6x and 1.4x: median 1.5x, met
		fig(scs[6], 16, 16),   // loop1kt: 1.6x: not met
	}
	rep := mapLoopReport(cells, mapLoopOptions{Rounds: 2, Workers: 4})
	var b bytes.Buffer
	rep.text(&b)
	for _, want := range []string{
		"map10k/par10k 1.50x warm, paired by round (min-max 1.50-1.50, of medians 1.50; CPU time 1.50x) (target 1.5x) met",
		"loop1k/seq1k 1.50x warm, paired by round (min-max 1.40-1.60, of medians 1.50; CPU time 1.50x) (target 1.5x) met",
		"map10k 1.50x, map100k 2.00x (CPU time map10k 1.50x, map100k 2.00x) (target 2x;",
		"loop1kt/seq1k 1.60x warm, paired by round (min-max 1.60-1.60, of medians 1.60; CPU time 1.60x) (target 1.5x) NOT met",
		"NOT met",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
	if got := scs[3].scaled(0.01); got.Inner != 100 || got.Width != 1000 || got.Actions() != 1000 {
		t.Errorf("map100k scaled by 0.01: %+v, want 10 x 100 copies", got)
	}
	if n := scs[3].Width / scs[3].Inner; n*scs[3].Inner != scs[3].Width || scs[3].Inner > ast.MaxCopies {
		t.Errorf("map100k: %d copies as maps of %d: not nested maps of at most %d", scs[3].Width, scs[3].Inner, ast.MaxCopies)
	}
}
