package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestRebalance runs -rebalance for one round on an in-process broker:
// the sticky assignor moves the newcomer's share of each topic (3 of
// 12, so 6) and the table has the round and the median.
func TestRebalance(t *testing.T) {
	var out, errOut bytes.Buffer
	if err := mainErr([]string{"-rebalance", "-rounds", "1", "-q"}, &out, &errOut); err != nil {
		t.Fatalf("%v\n%s", err, errOut.String())
	}
	t.Log(out.String())
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 4 || !strings.Contains(lines[1], "moved, sticky") {
		t.Fatalf("output:\n%s", out.String())
	}
	if f := strings.Fields(lines[2]); len(f) != 4 || f[0] != "1" || f[1] != "6" {
		t.Errorf("round 1: %q; want 6 partitions moved by the sticky assignor", lines[2])
	}
}
