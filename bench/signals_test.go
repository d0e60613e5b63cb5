package main

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batonwf/baton/internal/zktest"
)

// TestSignals runs -signals with a few trials on every runner (zk on a
// server of the test's own, kafka and kafkaw on the in-process broker)
// and checks the table: a row per runner, in order, with the trials
// asked for, positive durations, p90 at least the median, ratios that
// are the medians' and a verdict that agrees with the 1.5x target.
func TestSignals(t *testing.T) {
	srv := zktest.Start(t)
	var out, errOut bytes.Buffer
	args := []string{"-signals", "-sigtrials", "3", "-sigwarm", "1", "-q", "-dir", t.TempDir(),
		"-zk", srv.ConnString(), "-zkroot", srv.Path("bench")}
	if err := mainErr(args, &out, &errOut); err != nil {
		t.Fatalf("mainErr: %v\nstderr:\n%s", err, errOut.String())
	}
	t.Log(out.String())
	lines := strings.Split(out.String(), "\n")
	if len(lines) < 3+len(sigRunners) || !strings.Contains(lines[2], "signal med") {
		t.Fatalf("output:\n%s", out.String())
	}
	for i, name := range sigRunners {
		f := strings.Fields(lines[3+i])
		if len(f) < 9 || f[0] != name || f[1] != "3" {
			t.Errorf("row %d: %q; want runner %s with 3 trials", i, lines[3+i], name)
			continue
		}
		d := make([]time.Duration, 4)
		for k := range d {
			v, err := time.ParseDuration(f[2+k])
			if err != nil || v <= 0 {
				t.Errorf("%s: column %d is %q, want a positive duration", name, 2+k, f[2+k])
			}
			d[k] = v
		}
		if d[1] < d[0] || d[3] < d[2] {
			t.Errorf("%s: p90 under the median: %q", name, lines[3+i])
		}
		ratio, err := strconv.ParseFloat(strings.TrimSuffix(f[6], "x"), 64)
		if err != nil {
			t.Errorf("%s: ratio %q", name, f[6])
		}
		verdict := strings.Join(f[8:], " ")
		if want := map[bool]string{true: "met", false: "NOT met"}[ratio <= sigTarget]; verdict != want {
			t.Errorf("%s: ratio %v, verdict %q, want %q", name, ratio, verdict, want)
		}
	}
	for _, want := range []string{"zk server:", "kafka broker: an in-process broker"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q", want)
		}
	}
}

// TestSignalsFlags checks that -sigrunners refuses a runner it lacks.
func TestSignalsFlags(t *testing.T) {
	var out, errOut bytes.Buffer
	err := mainErr([]string{"-signals", "-sigrunners", "memory,nope", "-q"}, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), `no runner "nope"`) {
		t.Errorf("mainErr: %v, want an error naming the runner", err)
	}
}
