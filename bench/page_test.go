package main

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/batonwf/baton/internal/browsertest"
)

// TestPage runs -page end to end at a tiny scale, in chromium: the three
// page loads with positive times, the live latency, and the targets'
// lines, in both formats. It asserts no time: the figures are printed.
func TestPage(t *testing.T) {
	browsertest.Require(t)
	for _, format := range []string{"text", "markdown"} {
		t.Run(format, func(t *testing.T) {
			var out, errOut bytes.Buffer
			args := []string{"-page", "-scale", "0.01", "-rounds", "1", "-q", "-format", format, "-dir", t.TempDir()}
			if err := mainErr(args, &out, &errOut); err != nil {
				t.Fatalf("mainErr: %v\nstderr:\n%s", err, errOut.String())
			}
			if errOut.Len() > 0 {
				t.Errorf("-q, but stderr has:\n%s", errOut.String())
			}
			rows := tableRows(t, out.String(), format == "markdown")["median"]
			if len(rows) != 3 || rows[0]["scenario"] != "floor" || rows[1]["scenario"] != "page" || rows[2]["scenario"] != "big" {
				t.Fatalf("load rows %v; want floor, page and big:\n%s", rows, out.String())
			}
			for _, row := range rows {
				for _, col := range []string{"median", "p90", "min", "max"} {
					positiveDur(t, row, col, row[col])
				}
				positiveNum(t, row, "nodes", row["nodes"])
			}
			if rows[1]["nodes"] != "31" || rows[2]["nodes"] != "1,001" {
				t.Errorf("nodes %s and %s; want 31 (a par of 10 seqs of 2) and 1,001", rows[1]["nodes"], rows[2]["nodes"])
			}
			profile := tableRows(t, out.String(), format == "markdown")["parse"]
			if len(profile) != 3 || profile[0]["scenario"] != "floor" || profile[1]["scenario"] != "page" || profile[2]["scenario"] != "big" {
				t.Fatalf("profile rows %v; want floor, page and big:\n%s", profile, out.String())
			}
			for _, row := range profile {
				positiveDur(t, row, "main thread", row["main thread"])
				positiveDur(t, row, "parse", row["parse"])
			}
			for _, want := range []string{"page/floor (paired by round, median)", "page/floor main thread's time", "target at most 2.00x", "page median", "big (1,000 actions",
				"live latency", "2 streams open on the job, 3 steps", "Chrome/"} {
				if !strings.Contains(out.String(), want) {
					t.Errorf("output lacks %q:\n%s", want, out.String())
				}
			}
		})
	}
	for _, args := range [][]string{{"-page", "-engines", "memory"}, {"-page", "-serve"}} {
		if err := mainErr(args, io.Discard, io.Discard); err == nil {
			t.Errorf("%q: no error", args)
		}
	}
}
