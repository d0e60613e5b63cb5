package job_test

// Properties of races and replicas over random trees: the restated
// commutation rule (the job's final status is the same for every order
// and batching of the same outcomes, and a race succeeds if and only if
// some child would on its own), determinism, no mutation of the input
// job, every job valid (Encode then Decode, which checks every
// invariant), and recovery (a job stored and reloaded mid-flight ends the
// same).

import (
	"bytes"
	"fmt"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
)

// raceTree draws a tree of acts, seqs, pars, tries and races, some nodes
// with replicas; leaves are named by their kind only (no inputs).
func raceTree(t *rapid.T, depth int) ast.Node {
	kinds := []ast.Kind{ast.KindAct, ast.KindSeq, ast.KindPar, ast.KindTry, ast.KindRace, ast.KindRace}
	if depth >= 3 {
		kinds = kinds[:1]
	}
	var n ast.Node
	switch k := rapid.SampledFrom(kinds).Draw(t, "kind"); k {
	case ast.KindAct:
		n = ast.Act("a", nil)
	case ast.KindSeq, ast.KindPar, ast.KindRace:
		kids := make([]ast.Node, rapid.IntRange(2, 3).Draw(t, "width"))
		for i := range kids {
			kids[i] = raceTree(t, depth+1)
		}
		n = ast.Node{Kind: k, Children: kids}
	case ast.KindTry:
		var opts []ast.TryOption
		if rapid.Bool().Draw(t, "rescue") {
			opts = append(opts, ast.Rescue(raceTree(t, depth+1)))
		}
		if rapid.Bool().Draw(t, "finally") {
			opts = append(opts, ast.Finally(raceTree(t, depth+1)))
		}
		n = ast.Try(raceTree(t, depth+1), opts...)
	}
	if rapid.IntRange(0, 5).Draw(t, "replicated") == 0 {
		n = n.WithReplicas(rapid.IntRange(2, 3).Draw(t, "replicas"))
	}
	return n
}

// raceNaive is the final status of n (as ast.Expand gives it) at path
// when every leaf ends as fails says, with no schedule: as if every node
// that would run did run.
func raceNaive(n *ast.Node, path string, fails map[string]bool) job.Status {
	kid := func(i int) job.Status {
		return raceNaive(&n.Children[i], ast.ChildPath(path, n.Kind, i), fails)
	}
	part := func(p *ast.Node, name string) job.Status { return raceNaive(p, ast.PartPath(path, name), fails) }
	switch n.Kind {
	case ast.KindAct:
		if fails[path] {
			return job.StatusFailed
		}
		return job.StatusSucceeded
	case ast.KindSeq, ast.KindPar:
		for i := range n.Children {
			if kid(i) == job.StatusFailed {
				return job.StatusFailed
			}
		}
		return job.StatusSucceeded
	case ast.KindRace:
		for i := range n.Children {
			if kid(i) == job.StatusSucceeded {
				return job.StatusSucceeded
			}
		}
		return job.StatusFailed
	case ast.KindTry:
		out := part(n.Body, ast.PartBody)
		if out == job.StatusFailed && n.Rescue != nil {
			out = part(n.Rescue, ast.PartRescue)
		}
		if n.Finally != nil && part(n.Finally, ast.PartFinally) == job.StatusFailed {
			out = job.StatusFailed
		}
		return out
	}
	panic(fmt.Sprintf("kind %s", n.Kind))
}

// racePlay runs the job to its end, delivering the outstanding actions'
// results in batches drawn by draw (nil: all at once, in tree order), and
// checks each step; with crashes, the job is stored and reloaded before
// every step.
func racePlay(t *rapid.T, w ast.Node, fails map[string]bool, draw bool, crashes bool) job.Job {
	tr, err := job.New("race-prop", w)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	j := tr.Job
	for steps := 0; !j.Done(); steps++ {
		if steps > 1000 {
			t.Fatalf("no end after 1000 steps: %s", job.Describe(j))
		}
		if crashes {
			enc, err := job.Encode(j)
			if err != nil {
				t.Fatalf("Encode: %v", err)
			}
			if j, err = job.Decode(enc); err != nil {
				t.Fatalf("Decode: %v", err)
			}
		}
		out := j.Outstanding()
		if len(out) == 0 {
			t.Fatalf("running with nothing outstanding: %s", job.Describe(j))
		}
		batch := out
		if draw {
			perm := rapid.Permutation(out).Draw(t, "order")
			batch = perm[:rapid.IntRange(1, len(perm)).Draw(t, "batch")]
		}
		rs := make([]job.Result, len(batch))
		for i, a := range batch {
			if fails[a.Path()] {
				rs[i] = a.Fail("no")
			} else {
				rs[i] = a.Succeed([]byte(fmt.Sprintf("%q", a.ID)))
			}
		}
		before, _ := job.Encode(j)
		tr, err := job.Restart(j, rs)
		if err != nil {
			t.Fatalf("Restart: %v", err)
		}
		if after, _ := job.Encode(j); !bytes.Equal(before, after) {
			t.Fatalf("Restart modified its input job")
		}
		again, err := job.Restart(j, rs)
		if err != nil {
			t.Fatalf("Restart again: %v", err)
		}
		a, _ := job.Encode(tr.Job)
		b, _ := job.Encode(again.Job)
		if !bytes.Equal(a, b) || fmt.Sprint(tr.Actions, tr.Stops) != fmt.Sprint(again.Actions, again.Stops) {
			t.Fatalf("Restart is not deterministic")
		}
		if _, err := job.Decode(a); err != nil {
			t.Fatalf("the job made does not decode (an invariant broken): %v\n%s", err, job.Describe(tr.Job))
		}
		j = tr.Job
	}
	return j
}

func TestPropRaceStatusCommutes(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		w := raceTree(t, 0)
		if err := ast.Validate(w); err != nil {
			t.Skip("invalid tree")
		}
		run := ast.Expand(w)
		fails := map[string]bool{}
		ast.Walk(run, func(path string, n *ast.Node) bool {
			if n.Kind == ast.KindAct && rapid.IntRange(0, 2).Draw(t, "fail "+path) == 0 {
				fails[path] = true
			}
			return true
		})
		want := raceNaive(&run, "", fails)
		all := racePlay(t, w, fails, false, false)
		drawn := racePlay(t, w, fails, true, false)
		crashed := racePlay(t, w, fails, true, true)
		for name, j := range map[string]job.Job{"all at once": all, "drawn batches": drawn, "with crashes": crashed} {
			if j.Status() != want {
				t.Fatalf("%s: %s, want %s (every leaf run)\n%s", name, j.Status(), want, job.Describe(j))
			}
		}
	})
}

// TestOracleRaceLockstep plays random trees of races and replicas (as
// ast.Expand runs them) on the reducer and the oracle together, in random
// batches, and compares after every step the outstanding actions, the
// state of every node (failures included) and every race's winner.
func TestOracleRaceLockstep(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		w := raceTree(t, 0)
		if err := ast.Validate(w); err != nil {
			t.Skip("invalid tree")
		}
		c := propCase{Tree: ast.Expand(w), Outcomes: map[string]propOutcome{}}
		propLeafPaths(&c.Tree, "", &c.Leaves)
		for _, p := range c.Leaves {
			if rapid.IntRange(0, 2).Draw(t, "fail "+p) == 0 {
				c.Outcomes[p] = propOutcome{Fail: true, Msg: "no " + p}
			} else {
				c.Outcomes[p] = propOutcome{Output: []byte(fmt.Sprintf("%q", p))}
			}
		}
		o := oracleStart(c)
		tr, err := job.New("race-oracle", w)
		if err != nil {
			t.Fatalf("New: %v", err)
		}
		j := tr.Job
		compare := func() {
			want := append([]string(nil), o.queue...)
			sort.Strings(want)
			if diff := cmp.Diff(want, propSortedIDs(j.Outstanding())); diff != "" {
				t.Fatalf("step %d: outstanding actions (-oracle +reducer):\n%s\n%s%s", o.step, diff, c, job.Describe(j))
			}
			if diff := cmp.Diff(o.states(), propStates(j)); diff != "" {
				t.Fatalf("step %d: node states (-oracle +reducer):\n%s\n%s%s", o.step, diff, c, job.Describe(j))
			}
			winners := map[string]string{}
			var visit func(n *oracleNode)
			visit = func(n *oracleNode) {
				if n.winner != nil {
					winners[n.path] = n.winner.path
				}
				for _, k := range n.children() {
					visit(k)
				}
			}
			visit(o.root)
			got := map[string]string{}
			j.Walk(func(n job.NodeInfo) bool {
				if n.Winner != "" {
					got[n.Path] = n.Winner
				}
				return true
			})
			if diff := cmp.Diff(winners, got); diff != "" {
				t.Fatalf("step %d: winners (-oracle +reducer):\n%s\n%s%s", o.step, diff, c, job.Describe(j))
			}
		}
		compare()
		for len(o.queue) > 0 {
			perm := rapid.Permutation(o.queue).Draw(t, "order")
			ids := perm[:rapid.IntRange(1, len(perm)).Draw(t, "batch")]
			out := map[string]job.Action{}
			for _, a := range j.Outstanding() {
				out[a.ID] = a
			}
			var rs []job.Result
			for _, id := range ids {
				rs = append(rs, c.result(out[id]))
			}
			o.deliverBatch(ids)
			tr, err := job.Restart(j, rs)
			if err != nil {
				t.Fatalf("Restart: %v", err)
			}
			j = tr.Job
			compare()
		}
		if !j.Done() {
			t.Fatalf("the oracle has nothing outstanding, the job is %s\n%s", j.Status(), job.Describe(j))
		}
		if got, want := j.Status(), oracleOutcome(c, &c.Tree, ""); got != want {
			t.Fatalf("job %s, oracleOutcome %s\n%s", got, want, c)
		}
	})
}

// fuzzRaceTree is the workflow FuzzRestartRace plays: races nested in
// races and under a par, a loser with a finally block, and
// replicas of a seq.
func fuzzRaceTree() ast.Node {
	a := func(name string) ast.Node { return ast.Act(name, nil) }
	return ast.Par(
		ast.Race(
			ast.Seq(a("a"), a("b")),
			ast.Try(a("c"), ast.Rescue(a("d")), ast.Finally(a("e"))),
			ast.Race(a("f"), a("g")),
		),
		ast.Seq(a("h"), a("i")).WithReplicas(3),
	)
}

// FuzzRestartRace is FuzzRestart over fuzzRaceTree: no input may make
// Restart panic, and after every step the job passes its checks, survives
// Encode/Decode unchanged and recovers exactly its outstanding actions.
func FuzzRestartRace(f *testing.F) {
	f.Add([]byte{})
	var ok []byte
	for i := 0; i < 12; i++ {
		ok = append(ok, 0, 0, 0, 3, '"', byte('a'+i), '"', 6)
	}
	f.Add(ok)
	f.Add([]byte{0, 0, 1, 4, 'd', 'o', 'w', 'n', 6, 0, 0, 0, 1, '1', 6, 0, 0, 0, 0, 6, 0, 1, 0, 0, 6})
	f.Add([]byte{0, 0, 0, 1, '1', 0, 1, 0, 1, '2', 0, 2, 0, 0, 6, 7, 1, 0, 0, 1, 0, 0, 1, 1, 1, 'x', 6, 4, 0, 4, 1, 6, 0, 0, 0, 0, 6})
	f.Add([]byte("\x05\x0fpar[0].race[1].body#1\x05\x0cpar[1].race[2]#1\x06\x07\x00\x00\x00\x00\x03{}\x06"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzPlay(t, fuzzRaceTree(), data)
	})
}
