package main

import (
	"bytes"
	"context"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/internal/zktest"
)

// TestSameWorkflow: the example builds examples/placement.json's tree.
func TestSameWorkflow(t *testing.T) {
	data, err := os.ReadFile("../placement.json")
	if err != nil {
		t.Fatal(err)
	}
	n, err := ast.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	if !ast.Equal(n, workflow()) {
		got, _ := ast.Encode(workflow())
		t.Errorf("workflow() is not examples/placement.json's tree:\n%s", got)
	}
}

// TestExample runs the example on a ZooKeeper server of its own: the
// pinned pair runs on one worker, which is drained while it runs the
// first; it runs the second and nothing else, and deregisters; the
// other two stay available; the job succeeds.
func TestExample(t *testing.T) {
	srv := zktest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var buf bytes.Buffer
	if err := example(ctx, srv.Addrs(), srv.Path("example"), &buf); err != nil {
		t.Fatalf("%v\n%s", err, buf.String())
	}
	out := buf.String()
	m := regexp.MustCompile(`(?m)^drain (w[123]):`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no drain in the output:\n%s", out)
	}
	h := m[1]
	for _, want := range []string{
		"workers: w1 available 0/2 pins 0, w2 available 0/2 pins 0, w3 available 0/2 pins 0\n",
		h + " draining 1/2 pins 1",
		h + ": read back what the step before left on this worker's disk (seq[0].seq[1]#1)\n",
		h + " drained: 2 actions finished, 0 pins released; deregistered\n",
		"  seq[0].seq[0]#1 on " + h + ": slept 5s\n",
		"  seq[0].seq[1]#1 on " + h + ": ok\n",
		": done: one of three copies of the sleep won (seq[3]#1)\n",
		" succeeded\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the output has no %q:\n%s", want, out)
		}
	}
	// After the drain, the drained worker runs nothing but the pin's
	// action, and only the other two are left.
	after := out[strings.Index(out, "drain "+h+":"):]
	for _, l := range strings.Split(after, "\n") {
		if strings.HasPrefix(l, h+": ") && !strings.Contains(l, "(seq[0].") {
			t.Errorf("the drained %s ran %q", h, l)
		}
	}
	last := out[strings.LastIndex(out, "workers: "):]
	if strings.Contains(last[:strings.Index(last, "\n")], h) {
		t.Errorf("the drained %s is still registered: %s", h, last)
	}
}
