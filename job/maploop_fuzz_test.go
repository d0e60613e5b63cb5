package job_test

import (
	"bytes"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
)

// fuzzGrowTree is the workflow FuzzRestartGrow plays: a map with a limit
// whose copies run a nested map (with need) over an output of their own
// and a wait; a loop whose iterations map over an output and race a wait
// with a sleep; a try whose finally loops; deadlines inside a template
// and on a map, so that copies' timers exist too.
func fuzzGrowTree() ast.Node {
	a := func(name string) ast.Node { return ast.Act(name, nil) }
	return ast.Par(
		ast.Seq(a("l").Named("xs"),
			ast.Map("xs", ast.Seq(
				a("y").Named("ys").WithInputs(ast.InputItem),
				ast.Map("ys", a("z").WithInputs("ys", ast.InputItem, ast.InputIndex).WithDeadline(time.Minute)).WithNeed(2),
				ast.Wait("go").Named("w"),
			)).WithLimit(2).Named("m")),
		ast.Loop(ast.Seq(
			a("p").Named("ps"),
			ast.Map("ps", ast.Race(ast.Wait("ok"), ast.Sleep(time.Hour))).WithDeadline(2*time.Hour),
			a("u").Named("u").WithInputs("ps"),
		), "u", true, 3).Named("lp"),
		ast.Try(a("b"), ast.Finally(ast.Loop(a("f").Named("f"), "f", "done", 2))),
	)
}

// fuzzGrowOutputs are outputs an answer may carry, for the maps' over
// leaves and the loops' until leaves above all.
var fuzzGrowOutputs = []string{`[1,2]`, `[]`, `["a", "b", "c"]`, `true`, `"done"`, `null`, `[[1],[2,3]]`, `{"a":1}`, `false`, ``, `[null]`}

// FuzzRestartGrow plays fuzzGrowTree with results, signals, timer
// firings, node and job cancels decoded from the fuzz input: answers
// with outputs from a table (arrays, values the loops wait for) or
// arbitrary bytes, stale results of earlier iterations and copies,
// arbitrary IDs, batch boundaries and crashes. No input may make Restart
// panic; after every step the job passes Check, Restart left its input
// as it was and gives the same bytes again, every result is applied or
// ignored, Encode/Decode is a fixed point, recovery re-emits exactly the
// actions outstanding, and replaying the journal of steps rebuilds the
// job byte for byte.
func FuzzRestartGrow(f *testing.F) {
	f.Add([]byte{})
	// Every answer from the table in turn, one batch each.
	var ok []byte
	for i := 0; i < 24; i++ {
		ok = append(ok, 0, 0, byte(i), 0, byte(i), 5)
	}
	f.Add(ok)
	// Signals, firings, then everything at once.
	f.Add([]byte{1, 0, 0, 1, 5, 2, 1, 1, 5, 3, 0, 0, 5, 0, 0, 0, 0, 0, 5, 1, 0, 1, 2, 5, 3, 0, 1, 5})
	f.Add([]byte{0, 0, 1, 0, 0, 5, 6, 0, 1, 5, 4, 0, 5, 7, 0, 5})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := &fuzzReader{b: data}
		tr, err := job.New("grow", fuzzGrowTree(), job.StartedAt(growStart))
		if err != nil {
			t.Fatal(err)
		}
		first, j := tr.Job, tr.Job
		var steps []job.Step
		var batch, sent []job.Result
		now := growStart
		out := map[string]bool{}
		for _, a := range tr.Actions {
			out[a.ID] = true
		}
		flush := func() {
			if len(batch) == 0 {
				return
			}
			tr := growRestart(t, j, batch)
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
				st, err := job.DecodeStep(tr.Job.ID(), tr.Step.Version, job.EncodeStep(tr.Step))
				if err != nil {
					t.Fatalf("DecodeStep: %v", err)
				}
				steps = append(steps, st)
			}
			for _, res := range tr.Step.Results {
				delete(out, res.ActionID)
				sent = append(sent, res)
			}
			for _, a := range tr.Stops {
				delete(out, a.ID)
			}
			for _, a := range tr.Actions {
				if out[a.ID] {
					t.Fatalf("%s dispatched twice", a.ID)
				}
				out[a.ID] = true
			}
			var want []string
			for id := range out {
				want = append(want, id)
			}
			sort.Strings(want)
			if got := propSortedIDs(tr.Job.Outstanding()); !slices.Equal(got, want) {
				t.Fatalf("outstanding %v, the runner has %v\n%s", got, want, job.Describe(tr.Job))
			}
			if tr.Job.Done() && (len(out) > 0 || len(tr.Job.Timers()) > 0) {
				t.Fatalf("a job done with %d outstanding and %d timers", len(out), len(tr.Job.Timers()))
			}
			re, err := job.Replay(first, steps)
			if err != nil {
				t.Fatalf("Replay: %v", err)
			}
			if enc := propEnc(t, tr.Job); !bytes.Equal(propEnc(t, re), enc) {
				t.Fatalf("Replay differs:\n%s\n%s", propEnc(t, re), enc)
			}
			j, batch = tr.Job, nil
		}
		for n := 0; len(r.b) > 0 && n < 300; n++ {
			now = now.Add(time.Duration(r.byte()) * time.Minute)
			switch r.byte() % 8 {
			case 0: // answer an outstanding action from the table, or fail it
				acts := j.Outstanding()
				if len(acts) == 0 {
					continue
				}
				a := acts[int(r.byte())%len(acts)]
				res := a.Succeed([]byte(fuzzGrowOutputs[int(r.byte())%len(fuzzGrowOutputs)]))
				if r.byte()%5 == 4 {
					res = a.Fail("no")
				}
				res.At = now
				batch = append(batch, res)
			case 1: // a signal
				s := job.Signal{Name: []string{"go", "ok", "nobody"}[int(r.byte())%3], ID: string('a' + rune(r.byte()%8)), At: now}
				if p := r.byte(); p%3 != 0 {
					s.Payload = []byte{'0' + p%10}
				}
				batch = append(batch, job.SignalResult(j.ID(), s))
			case 2: // fire a pending timer
				if ts := j.Timers(); len(ts) > 0 {
					batch = append(batch, ts[int(r.byte())%len(ts)].Fire(now))
				}
			case 3: // an old result again: stale once its iteration or copy is gone
				if len(sent) > 0 {
					res := sent[int(r.byte())%len(sent)]
					if !strings.HasPrefix(res.ActionID, "@") {
						batch = append(batch, res)
					}
				}
			case 4: // answer with arbitrary bytes, or an arbitrary ID
				if acts := j.Outstanding(); len(acts) > 0 && r.byte()%2 == 0 {
					res := acts[int(r.byte())%len(acts)].Succeed(r.bytes(12))
					res.At = now
					batch = append(batch, res)
				} else {
					batch = append(batch, job.Result{JobID: j.ID(), ActionID: string(r.bytes(24)), Output: r.bytes(4)})
				}
			case 5:
				flush()
			case 6: // cancel a node, or the job
				if r.byte()%4 == 0 {
					batch = append(batch, job.CancelResult(j.ID(), "fuzz"))
				} else {
					node := []string{"m", "lp", "w", "ys", "nobody"}[int(r.byte())%5]
					batch = append(batch, job.CancelNodeResult(j.ID(), node, "fuzz"))
				}
			case 7: // a crash: the stored job from here on
				flush()
				d, err := job.Decode(propEnc(t, j))
				if err != nil {
					t.Fatalf("Decode: %v", err)
				}
				j = d
			}
		}
		flush()
	})
}

// fuzzGrowSeedJobs returns encodings of jobs that grew, for the seed
// corpus of FuzzDecodeJob: fuzzGrowTree after each of its first steps,
// one action answered a step, from fuzzGrowOutputs in turn, and a
// signal of each name sent, so that maps have copies and loops later iterations.
func fuzzGrowSeedJobs(f *testing.F) [][]byte {
	tr, err := job.New("grow", fuzzGrowTree(), job.StartedAt(growStart))
	if err != nil {
		f.Fatal(err)
	}
	j := tr.Job
	var out [][]byte
	for step := 0; step < 12 && !j.Done(); step++ {
		var rs []job.Result
		if acts := j.Outstanding(); len(acts) > 0 {
			rs = append(rs, acts[0].Succeed([]byte(fuzzGrowOutputs[step%len(fuzzGrowOutputs)])))
		}
		for _, name := range []string{"go", "ok"} {
			rs = append(rs, job.SignalResult(j.ID(), job.Signal{Name: name, ID: strings.Repeat("x", step+1), Payload: []byte("1")}))
		}
		tr, err := job.Restart(j, rs)
		if err != nil {
			f.Fatal(err)
		}
		j = tr.Job
		b, err := job.Encode(j)
		if err != nil {
			f.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}
