package job_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
)

// fuzzSignalTree is the workflow FuzzSignals plays: waits (transient or
// not, two of one name), a race of a wait and a sleep, a wait in a
// finally block, a named node to cancel, and actions.
func fuzzSignalTree() ast.Node {
	a := func(name string) ast.Node { return ast.Act(name, nil) }
	return ast.Par(
		ast.Seq(a("a"), ast.Wait("go").Named("w1"), a("b").WithInputs("w1")),
		ast.Seq(ast.Wait("go").OnlyWhileRunning(), a("c")),
		ast.Race(ast.Wait("stop"), ast.Sleep(time.Hour)).Named("r"),
		ast.Try(ast.Seq(a("d"), ast.Sleep(time.Minute)).Named("region"), ast.Finally(ast.Wait("ack"))),
	)
}

// FuzzSignals plays signals (good, repeated, malformed, too many), timer
// firings, node cancels and job cancels against fuzzSignalTree, with
// actions answered in between: no input may make Restart panic; after
// every step the job passes its checks, Restart left its input as it
// was, Encode/Decode is a fixed point, every result is applied or
// ignored (a signal dropped by a full queue both), and replaying the
// journal of encoded steps rebuilds the job byte for byte.
func FuzzSignals(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{1, 0, 0, 1, 5, 0, 0, 0, 5, 2, 0, 5})
	f.Add([]byte{1, 1, 2, 1, 1, 3, 5, 3, 0, 5, 4, 1, 5, 0, 0, 0, 5})
	f.Add([]byte{6, 5, 1, 2, 7, 5, 2, 0, 5, 0, 1, 1, 5})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := &fuzzReader{b: data}
		t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		tr, err := job.New("sig", fuzzSignalTree(), job.StartedAt(t0))
		if err != nil {
			t.Fatal(err)
		}
		first, j := tr.Job, tr.Job
		out := tr.Actions
		var steps []job.Step
		var batch []job.Result
		now := t0
		names := []string{"go", "stop", "ack", "nobody"}
		flush := func() {
			if len(batch) == 0 {
				return
			}
			before := propEnc(t, j)
			tr, err := job.Restart(j, batch)
			if err != nil {
				t.Fatalf("Restart: %v", err)
			}
			if !bytes.Equal(before, propEnc(t, j)) {
				t.Fatal("Restart modified its input job")
			}
			if err := job.Check(tr.Job); err != nil {
				t.Fatalf("Check: %v\n%s", err, job.Describe(tr.Job))
			}
			full := 0
			for _, ig := range tr.Ignored {
				if ig.Reason == job.IgnoredQueueFull {
					full++
				}
			}
			if len(tr.Step.Results)+len(tr.Ignored)-full != len(batch) {
				t.Fatalf("%d applied, %d ignored (%d dropped) of %d", len(tr.Step.Results), len(tr.Ignored), full, len(batch))
			}
			if tr.Job.Version() != j.Version() {
				rec := job.EncodeStep(tr.Step)
				st, err := job.DecodeStep(tr.Job.ID(), tr.Step.Version, rec)
				if err != nil {
					t.Fatalf("DecodeStep: %v", err)
				}
				steps = append(steps, st)
			}
			enc := propEnc(t, tr.Job)
			d, err := job.Decode(enc)
			if err != nil {
				t.Fatalf("Decode: %v\n%s", err, enc)
			}
			if !bytes.Equal(propEnc(t, d), enc) {
				t.Fatalf("Encode/Decode is not a fixed point:\n%s\n%s", enc, propEnc(t, d))
			}
			re, err := job.Replay(first, steps)
			if err != nil {
				t.Fatalf("Replay: %v", err)
			}
			if !bytes.Equal(propEnc(t, re), enc) {
				t.Fatalf("Replay differs:\n%s\n%s", propEnc(t, re), enc)
			}
			j, out, batch = tr.Job, tr.Job.Outstanding(), nil
		}
		for n := 0; len(r.b) > 0 && n < 300; n++ {
			now = now.Add(time.Duration(r.byte()) * time.Minute)
			switch r.byte() % 8 {
			case 0: // answer an outstanding action
				if len(out) > 0 {
					a := out[int(r.byte())%len(out)]
					res := a.Succeed([]byte(`1`))
					if r.byte()%3 == 0 {
						res = a.Fail("no")
					}
					res.At = now
					batch = append(batch, res)
				}
			case 1: // a signal: a name, an ID from a few, a payload
				s := job.Signal{Name: names[int(r.byte())%len(names)], ID: string('a' + rune(r.byte()%6)), At: now}
				if p := r.byte(); p%4 != 0 {
					s.Payload = []byte{'0' + p%10}
				}
				batch = append(batch, job.SignalResult(j.ID(), s))
			case 2: // a malformed signal
				batch = append(batch, job.Result{JobID: j.ID(), ActionID: "@signal/" + string(r.bytes(8)), Output: r.bytes(4)})
			case 3: // many signals: fills the queue
				for i := range int(r.byte()) {
					batch = append(batch, job.SignalResult(j.ID(), job.Signal{Name: "q", ID: string(rune('A'+i%50)) + string(rune('A'+i/50)), At: now}))
				}
			case 4: // fire a pending timer
				if ts := j.Timers(); len(ts) > 0 {
					batch = append(batch, ts[int(r.byte())%len(ts)].Fire(now))
				}
			case 5:
				flush()
			case 6: // cancel a node
				node := []string{"region", "r", "w1", "nobody"}[int(r.byte())%4]
				batch = append(batch, job.CancelNodeResult(j.ID(), node, "fuzz"))
			case 7: // cancel the job
				if r.byte()%4 == 0 {
					batch = append(batch, job.CancelResult(j.ID(), "fuzz"))
				}
			}
		}
		flush()
	})
}
