package job_test

import (
	"bytes"
	"errors"
	"sort"
	"strings"
	"testing"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
)

// fuzzSeedJobs returns encodings of real jobs at various stages, for the
// seed corpus of FuzzDecodeJob: the golden histories at the oldest format,
// with names, inputs and dags at format 3, with time at format 4
// (retries waiting and given up, an expired node, cancelled jobs), with
// priorities at format 5, and with a leaf its own deadline stopped at
// format 6.
func fuzzSeedJobs(f *testing.F) [][]byte {
	var out [][]byte
	for _, format := range []int{1, 3, 4, 5, 6, 9} {
		g := goldenFormats[format]
		for _, c := range g.cases() {
			j, err := c.build(g.opts...)
			if err != nil {
				f.Fatal(err)
			}
			b, err := job.Encode(j)
			if err != nil {
				f.Fatal(err)
			}
			out = append(out, b)
		}
	}
	return out
}

// FuzzDecodeJob checks that job.Decode never panics, that every error it
// returns wraps ErrCorrupt or ErrFutureFormat, and that a job it accepts
// is sound: it passes Check, Encode/Decode is a fixed point, recovery
// re-emits its outstanding actions, and running it on does not panic and
// keeps every invariant.
func FuzzDecodeJob(f *testing.F) {
	for _, b := range append(fuzzSeedJobs(f), fuzzGrowSeedJobs(f)...) {
		f.Add(b)
	}
	f.Add([]byte(`{"format":1,"id":"j","version":1,"workflow":{"act":"a"},"nodes":[[0,1,0,1,0,0,0,0,0]],"results":[]}`))
	f.Add([]byte(`{"format":1,"id":"j","version":2,"workflow":{"act":"a"},"nodes":[[0,2,0,1,0,0,0,0,0]],"results":[{"node":0,"output_b64":"AP8="}]}`))
	f.Add([]byte(`{"format":2}`))
	f.Add([]byte(`{"format":1,"id":"j","version":1,"workflow":{"par":[]},"nodes":[],"results":[]}`))
	f.Add([]byte(`{"format":1,"id":"j","version":1,"workflow":{"act":"a"},"nodes":[[0,1,0,1,0,0,0,0]],"results":[]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		j, err := job.Decode(data)
		if err != nil {
			if !errors.Is(err, job.ErrCorrupt) && !errors.Is(err, job.ErrFutureFormat) {
				t.Fatalf("error wraps neither ErrCorrupt nor ErrFutureFormat: %v", err)
			}
			return
		}
		if err := job.Check(j); err != nil {
			t.Fatalf("Decode returned a job Check rejects: %v", err)
		}
		enc, err := job.Encode(j)
		if err != nil {
			t.Fatalf("Encode: %v", err)
		}
		d, err := job.Decode(enc)
		if err != nil {
			t.Fatalf("Decode(Encode(j)): %v\n%s", err, enc)
		}
		if again, _ := job.Encode(d); !bytes.Equal(again, enc) {
			t.Fatalf("Encode is not a fixed point:\n%s\n%s", enc, again)
		}
		if job.Describe(d) != job.Describe(j) {
			t.Fatalf("Describe changed over Encode/Decode")
		}
		trRec, err := job.Restart(j, nil)
		if err != nil {
			t.Fatalf("Restart(j, nil): %v", err)
		}
		if b, _ := job.Encode(trRec.Job); !bytes.Equal(b, enc) || trRec.Changed() || len(trRec.Actions) > 0 {
			t.Fatalf("an empty batch changed the job or returned actions")
		}
		acts := d.Outstanding()
		if len(acts) != j.Running() {
			t.Fatalf("recovery lists %d actions, job has %d running", len(acts), j.Running())
		}
		// Run on: answer everything, failing every other action; when
		// nothing is outstanding, fire a timer it waits for.
		for round := 0; (len(acts) > 0 || len(j.Timers()) > 0) && round < 50; round++ {
			var rs []job.Result
			for i, a := range acts {
				if (i+round)%2 == 0 {
					rs = append(rs, a.Fail("fuzz"))
				} else {
					rs = append(rs, a.Succeed([]byte(`1`)))
				}
			}
			if len(rs) == 0 {
				// One at a time: a deadline firing with a retry under it
				// withdraws the retry, whose firing would be ignored.
				tm := j.Timers()[0]
				rs = append(rs, tm.Fire(tm.Due))
			}
			trNext, err := job.Restart(j, rs)
			next, more := trNext.Job, trNext.Actions
			if err != nil {
				t.Fatalf("round %d: Restart: %v", round, err)
			}
			if err := job.Check(next); err != nil {
				t.Fatalf("round %d: Check: %v\nfrom\n%s", round, err, job.Describe(j))
			}
			if len(trNext.Ignored) != 0 {
				t.Fatalf("round %d: outstanding results ignored: %v", round, trNext.Ignored)
			}
			j, acts = next, more
		}
	})
}

// fuzzTree is the workflow FuzzRestart plays: every kind, a rescue and a
// finally, a par inside a try, a seq in a finally.
func fuzzTree() ast.Node {
	a := func(name string) ast.Node { return ast.Act(name, nil) }
	return ast.Par(
		ast.Seq(a("a"), ast.Try(a("b"), ast.Rescue(a("c")), ast.Finally(a("d")))),
		ast.Try(ast.Par(a("e"), a("f")), ast.Finally(a("g"), a("h"))),
		a("i"),
	)
}

// fuzzReader hands out the fuzz input a byte or a slice at a time; past
// the end it gives zeros.
type fuzzReader struct{ b []byte }

func (r *fuzzReader) byte() byte {
	if len(r.b) == 0 {
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *fuzzReader) bytes(max int) []byte {
	n := int(r.byte()) % (max + 1)
	n = min(n, len(r.b))
	s := r.b[:n:n]
	r.b = r.b[n:]
	return s
}

// FuzzRestart plays fuzzTree with results decoded from the fuzz input:
// answers to outstanding actions with arbitrary outputs and messages,
// duplicates, arbitrary action IDs, results for another job, batch
// boundaries and crashes. No input may make Restart panic, and after every
// step the job passes Check, survives Encode/Decode unchanged and recovers
// exactly its outstanding actions.
func FuzzRestart(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0, 0, 0, 0, 6, 0, 0, 0, 6, 0, 0, 0, 6, 0, 0, 0, 6})
	f.Add([]byte{0, 1, 1, 3, 'b', 'a', 'd', 6, 0, 0, 0, 7, 0, 0, 0, 6, 4, 0, 6})
	f.Add([]byte("\x05\x07par[0]#1\x05\x08root#1\x06\x03\x00\x00\x06\x02\x00\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzPlay(t, fuzzTree(), data)
	})
}

// fuzzGraphTree is the workflow FuzzRestartGraph plays: a dag whose
// children are an act, a try with a rescue and a finally, a seq holding a
// nested dag, and a fan-in after them, beside a seq passing outputs through
// a par; named leaves and inner nodes, and inputs of both.
func fuzzGraphTree() ast.Node {
	a := func(name string) ast.Node { return ast.Act(name, nil) }
	return ast.Par(
		ast.Dag(
			a("fetch").Named("a"),
			a("fetch").Named("b"),
			ast.Try(a("join").Named("j").WithInputs("a", "b"),
				ast.Rescue(a("fix").WithInputs("a")),
				ast.Finally(a("close").WithInputs("b"))).Named("t").WithAfter("a", "b"),
			ast.Seq(a("x").Named("x").WithInputs("a"),
				ast.Dag(a("y").Named("y"), a("v").Named("v").WithAfter("y").WithInputs("y", "x"))).Named("s").WithAfter("a"),
			a("report").Named("r").WithAfter("t", "s", "t").WithInputs("t", "b", "s", "v"),
		).Named("d"),
		ast.Seq(a("p").Named("p"), ast.Par(a("q").Named("q").WithInputs("p"), a("w")).Named("pw"), a("z").WithInputs("pw", "q", "p")),
	)
}

// FuzzRestartGraph is FuzzRestart over fuzzGraphTree, a workflow with
// dags, names and inputs. Besides the checks of FuzzRestart, every action
// dispatched carries the outputs of the named leaves it takes, which have
// succeeded, and null for the named inner nodes, and Job.Output gives
// each named leaf's output once it succeeded, and nothing otherwise.
func FuzzRestartGraph(f *testing.F) {
	f.Add([]byte{})
	// Everything succeeds, one result a batch, each with an output.
	var ok []byte
	for i := 0; i < 14; i++ {
		ok = append(ok, 0, 0, 0, 3, '"', byte('a'+i), '"', 6)
	}
	f.Add(ok)
	// The first outstanding action fails: the dag freezes.
	f.Add([]byte{0, 0, 1, 4, 'd', 'o', 'w', 'n', 6, 0, 0, 0, 1, '1', 6, 0, 0, 0, 0, 6, 0, 1, 0, 0, 6})
	// Whole batches, the second with a failure, a crash, duplicates.
	f.Add([]byte{0, 0, 0, 1, '1', 0, 1, 0, 1, '2', 0, 2, 0, 0, 6, 7, 1, 0, 0, 1, 0, 0, 1, 1, 1, 'x', 6, 4, 0, 4, 1, 6, 0, 0, 0, 0, 6})
	// Arbitrary IDs, of a dag child too, and a stray result.
	f.Add([]byte("\x05\x0apar[0].dag[2]#1\x05\x0epar[0].dag[9]#1\x06\x07\x00\x00\x00\x00\x03{}\x06"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzPlay(t, fuzzGraphTree(), data)
	})
}

// fuzzPlay plays tree with results decoded from data: see FuzzRestart.
func fuzzPlay(t *testing.T, tree ast.Node, data []byte) {
	r := &fuzzReader{b: data}
	c := propCase{Tree: ast.Expand(tree), Graph: true}.withIndex() // the paths the reducer runs
	trJ, err := job.New("fuzz", tree)
	j, out := trJ.Job, trJ.Actions
	if err != nil {
		t.Fatal(err)
	}
	var batch []job.Result
	var sent []job.Result
	propCheckInputs(t, c, j, out, nil)
	stray := false
	flush := func() {
		if len(batch) == 0 {
			return // recovery (Outstanding) is checked by fuzzCheckRecovery
		}
		trNext, err := job.Restart(j, batch)
		next, acts := trNext.Job, trNext.Actions
		if stray {
			if err == nil {
				t.Fatalf("Restart accepted a result of another job")
			}
			batch, stray = nil, false
			return
		}
		if err != nil {
			t.Fatalf("Restart: %v", err)
		}
		if err := job.Check(next); err != nil {
			t.Fatalf("Check: %v\n%s", err, job.Describe(next))
		}
		done := map[string]bool{}
		if next.Version() == j.Version() {
			if len(trNext.Ignored) != len(batch) || len(acts) != 0 {
				t.Fatalf("same version, but %d of %d results ignored and %d actions", len(trNext.Ignored), len(batch), len(acts))
			}
		} else {
			applied := trNext.Step.Results
			if next.Version() != j.Version()+1 || len(applied) == 0 || len(applied)+len(trNext.Ignored) != len(batch) {
				t.Fatalf("version %d -> %d: %d applied + %d ignored of %d results",
					j.Version(), next.Version(), len(applied), len(trNext.Ignored), len(batch))
			}
			for _, res := range applied {
				done[res.ActionID] = true
				sent = append(sent, res)
			}
		}
		propCheckInputs(t, c, next, acts, sent)
		propCheckOutputs(t, c, next, sent)
		for _, a := range trNext.Stops {
			done[a.ID] = true // a race's losers: stopped, no longer outstanding
		}
		rest := out[:0:0]
		for _, a := range out {
			if !done[a.ID] {
				rest = append(rest, a)
			}
		}
		j, out, batch = next, append(rest, acts...), nil
		fuzzCheckRecovery(t, j, out)
	}
	for steps := 0; len(r.b) > 0 && steps < 200; steps++ {
		switch op := r.byte(); op % 8 {
		case 0, 1, 2, 3: // answer an outstanding action
			if len(out) == 0 {
				continue
			}
			a := out[int(r.byte())%len(out)]
			if r.byte()%2 == 0 {
				batch = append(batch, a.Succeed(r.bytes(12)))
			} else {
				batch = append(batch, a.Fail(string(r.bytes(12))))
			}
		case 4: // send an old result again
			if len(sent) > 0 {
				batch = append(batch, sent[int(r.byte())%len(sent)])
			}
		case 5: // an arbitrary action ID
			batch = append(batch, job.Result{JobID: "fuzz", ActionID: string(r.bytes(24)), Output: r.bytes(4)})
		case 6: // end of batch
			flush()
		case 7: // a result for another job, or a crash
			if r.byte()%4 == 0 {
				batch = append(batch, job.Result{JobID: "other", ActionID: "a#1"})
				stray = true
			} else {
				d, err := job.Decode(propEnc(t, j))
				if err != nil {
					t.Fatalf("Decode: %v", err)
				}
				propCheckOutputs(t, c, d, sent)
				j = d
			}
		}
	}
	flush()
}

// fuzzCheckRecovery checks that j survives Encode/Decode unchanged and that
// recovery re-emits exactly the outstanding actions out.
func fuzzCheckRecovery(t *testing.T, j job.Job, out []job.Action) {
	t.Helper()
	enc := propEnc(t, j)
	d, err := job.Decode(enc)
	if err != nil {
		t.Fatalf("Decode(Encode(j)): %v\n%s", err, enc)
	}
	if again := propEnc(t, d); !bytes.Equal(again, enc) {
		t.Fatalf("Encode(Decode(Encode(j))) differs:\n%s\n%s", enc, again)
	}
	acts := d.Outstanding()
	got, want := propIDs(acts), propIDs(out)
	sort.Strings(got)
	sort.Strings(want)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("recovery re-emitted %v, outstanding %v", got, want)
	}
	if j.Done() != (len(out) == 0) {
		t.Fatalf("job done=%v with %d outstanding", j.Done(), len(out))
	}
}
