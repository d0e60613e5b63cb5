package job_test

// Properties of choices over random trees that hold them beside seqs,
// pars, tries, races and replicas: the reducer and the oracle agree after
// every step (outstanding actions, every node's state, skipped cases
// included), whatever the batching; the final status does not depend on
// the batching; Restart is deterministic and never modifies its input;
// every job made decodes (its invariants hold) and a job stored and
// reloaded before every step ends the same.

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

// choiceValues are the values cases match and leaves output.
var choiceValues = []string{`"a"`, `"b"`, `"c"`, `1`, `1.0`, `null`, `["a","c"]`, `["b"]`, `[]`, `{"x":1}`}

// choiceDrawer draws trees with choices; each choice comes as a seq of a
// named leaf and a choice on it.
type choiceDrawer struct {
	names int
	ends  bool // draw end nodes too (the oracle does not know them)
}

func (d *choiceDrawer) tree(t *rapid.T, depth int) ast.Node {
	kinds := []ast.Kind{ast.KindAct, ast.KindSeq, ast.KindPar, ast.KindTry, ast.KindRace, ast.KindChoice, ast.KindChoice, ast.KindDag}
	if d.ends {
		kinds = append(kinds, ast.KindEnd)
	}
	if depth >= 3 {
		kinds = kinds[:1]
	}
	var n ast.Node
	switch k := rapid.SampledFrom(kinds).Draw(t, "kind"); k {
	case ast.KindAct:
		n = ast.Act("a", nil)
	case ast.KindEnd:
		n = ast.End("stop")
	case ast.KindSeq, ast.KindPar, ast.KindRace:
		kids := make([]ast.Node, rapid.IntRange(2, 3).Draw(t, "width"))
		for i := range kids {
			kids[i] = d.tree(t, depth+1)
		}
		n = ast.Node{Kind: k, Children: kids}
		if k == ast.KindPar && rapid.Bool().Draw(t, "limited") {
			n = n.WithLimit(rapid.IntRange(1, len(kids)).Draw(t, "limit"))
		}
		if k == ast.KindRace && rapid.Bool().Draw(t, "need") {
			n = n.WithNeed(rapid.IntRange(1, len(kids)).Draw(t, "need of"))
		}
	case ast.KindTry:
		var opts []ast.TryOption
		if rapid.Bool().Draw(t, "rescue") {
			opts = append(opts, ast.Rescue(d.tree(t, depth+1)))
		}
		if rapid.Bool().Draw(t, "finally") {
			opts = append(opts, ast.Finally(d.tree(t, depth+1)))
		}
		n = ast.Try(d.tree(t, depth+1), opts...)
	case ast.KindChoice:
		d.names++
		name := fmt.Sprintf("k%d", d.names)
		var cases []ast.ChoiceCase
		for range rapid.IntRange(1, 3).Draw(t, "cases") {
			if rapid.Bool().Draw(t, "any") {
				vs := rapid.SliceOfN(rapid.SampledFrom(choiceValues), 1, 3).Draw(t, "values")
				as := make([]any, len(vs))
				for i, v := range vs {
					as[i] = []byte(v)
				}
				cases = append(cases, ast.WhenAny(as, d.tree(t, depth+1)))
			} else {
				cases = append(cases, ast.When([]byte(rapid.SampledFrom(choiceValues).Draw(t, "value")), d.tree(t, depth+1)))
			}
		}
		if rapid.Bool().Draw(t, "else") {
			cases = append(cases, ast.Else(d.tree(t, depth+1)))
		}
		c := ast.Choice(name, cases...)
		if rapid.Bool().Draw(t, "multi") {
			c = c.AllMatching()
		}
		n = ast.Seq(ast.Act("k", nil).Named(name), c)
	case ast.KindDag:
		// A dag of named children, each after some earlier ones, some
		// guarded on a leaf before the dag.
		d.names++
		name := fmt.Sprintf("k%d", d.names)
		kids := make([]ast.Node, rapid.IntRange(1, 4).Draw(t, "dag width"))
		for i := range kids {
			d.names++
			kids[i] = d.tree(t, depth+1).Named(fmt.Sprintf("d%d", d.names))
			for j := range i {
				if rapid.IntRange(0, 2).Draw(t, "after") == 0 {
					kids[i] = kids[i].WithAfter(kids[j].Name)
				}
			}
			if rapid.Bool().Draw(t, "guarded") {
				kids[i] = kids[i].WithWhen(name, []byte(rapid.SampledFrom(choiceValues).Draw(t, "equals")))
			}
		}
		n = ast.Seq(ast.Act("k", nil).Named(name), ast.Dag(kids...))
	}
	if rapid.IntRange(0, 7).Draw(t, "replicated") == 0 {
		n = n.WithReplicas(2)
	}
	return n
}

// choiceCase draws a tree with choices and every leaf's outcome: the
// named leaves a choice reads succeed with a drawn value (or text that is
// not JSON), the others fail one time in three.
func choiceCase(t *rapid.T) (ast.Node, propCase) { return choiceCaseOf(t, &choiceDrawer{}) }

func choiceCaseOf(t *rapid.T, d *choiceDrawer) (ast.Node, propCase) {
	w := d.tree(t, 0)
	if err := ast.Validate(w); err != nil {
		t.Skip("invalid tree")
	}
	c := propCase{Tree: ast.Expand(w), Outcomes: map[string]propOutcome{}}
	propLeafPaths(&c.Tree, "", &c.Leaves)
	byPath := propByPath(&c.Tree, "", map[string]*ast.Node{})
	for _, p := range c.Leaves {
		switch {
		case byPath[p].Name != "":
			out := rapid.SampledFrom(append(choiceValues, `not json`)).Draw(t, "output "+p)
			c.Outcomes[p] = propOutcome{Output: []byte(out)}
		case rapid.IntRange(0, 2).Draw(t, "fail "+p) == 0:
			c.Outcomes[p] = propOutcome{Fail: true, Msg: "no " + p}
		default:
			c.Outcomes[p] = propOutcome{Output: []byte(fmt.Sprintf("%q", p))}
		}
	}
	return w, c
}

// choicePlay runs the job of w to its end with c's outcomes, in batches
// drawn (or all at once), checking each step as racePlay does; with
// crashes, the job is stored and reloaded before every step.
func choicePlay(t *rapid.T, w ast.Node, c propCase, draw, crashes bool) job.Job {
	tr, err := job.New("choice-prop", w)
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
		if err := job.Check(j); err != nil {
			t.Fatalf("Check: %v\n%s", err, job.Describe(j))
		}
		batch := out
		if draw {
			perm := rapid.Permutation(out).Draw(t, "order")
			batch = perm[:rapid.IntRange(1, len(perm)).Draw(t, "batch")]
		}
		rs := make([]job.Result, len(batch))
		for i, a := range batch {
			rs[i] = c.result(a)
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

// TestPropChoiceStatusCommutes: with no race in the tree the final status
// is the same for all at once, drawn batches and drawn batches with a
// crash before every step.
func TestPropChoiceStatusCommutes(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		w, c := choiceCase(t)
		all := choicePlay(t, w, c, false, false)
		drawn := choicePlay(t, w, c, true, false)
		crashed := choicePlay(t, w, c, true, true)
		if drawn.Status() != all.Status() || crashed.Status() != all.Status() {
			t.Fatalf("status: all at once %s, drawn batches %s, with crashes %s\n%s", all.Status(), drawn.Status(), crashed.Status(), job.Describe(all))
		}
		if got, want := all.Status(), oracleOutcomeOf(c); got != want {
			t.Fatalf("job %s, oracle %s\n%s", got, want, job.Describe(all))
		}
	})
}

// TestPropEndStatusCommutes: with end nodes among choices and dags, every
// step is deterministic, leaves its input alone and makes a job that
// decodes (choicePlay); a job an end stopped ends succeeded; and a crash
// before every step does not change the status.
func TestPropEndStatusCommutes(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		w, c := choiceCaseOf(t, &choiceDrawer{ends: true})
		all := choicePlay(t, w, c, false, false)
		drawn := choicePlay(t, w, c, true, false)
		crashed := choicePlay(t, w, c, true, true)
		if _, ok := all.Ended(); ok && all.Status() != job.StatusSucceeded {
			t.Fatalf("ended, then %s\n%s", all.Status(), job.Describe(all))
		}
		if _, ok := drawn.Ended(); ok && drawn.Status() != job.StatusSucceeded {
			t.Fatalf("ended, then %s\n%s", drawn.Status(), job.Describe(drawn))
		}
		// Which of a failure and an end comes first may decide the
		// status (an end stops a par a failure would have failed), so
		// the status itself is not compared across batchings; a crash
		// before every step changes nothing of it, though.
		if again := choicePlay(t, w, c, false, true); again.Status() != all.Status() {
			t.Fatalf("all at once %s, with crashes %s", all.Status(), again.Status())
		}
		if _, ok := crashed.Ended(); ok && crashed.Status() != job.StatusSucceeded {
			t.Fatalf("ended, then %s\n%s", crashed.Status(), job.Describe(crashed))
		}
	})
}

// oracleOutcomeOf plays c on the oracle, all at once, to its end.
func oracleOutcomeOf(c propCase) job.Status {
	o := oracleStart(c)
	for len(o.queue) > 0 {
		o.deliverBatch(append([]string(nil), o.queue...))
	}
	return o.root.status()
}

// TestOracleChoiceLockstep plays random trees of choices on the reducer
// and the oracle together, in random batches, and compares after every
// step the outstanding actions and the state of every node (skipped
// cases, and failures with their messages, included).
func TestOracleChoiceLockstep(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		w, c := choiceCase(t)
		o := oracleStart(c)
		tr, err := job.New("choice-oracle", w)
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
	})
}

// fuzzChoiceTree is the workflow FuzzRestartChoice plays: an exclusive
// choice with an else beside a multi choice in a par, one case a try
// with a finally, and a choice inside replicas.
func fuzzChoiceTree() ast.Node {
	a := func(name string) ast.Node { return ast.Act(name, nil) }
	return ast.Par(
		ast.Seq(a("k").Named("k"),
			ast.Choice("k",
				ast.When("a", ast.Try(ast.Seq(a("a1"), a("a2")), ast.Finally(a("a3")))),
				ast.WhenAny([]any{1, "b"}, a("b")),
				ast.Else(a("e")))),
		ast.Seq(a("m").Named("m"),
			ast.Choice("m", ast.When("a", a("x")), ast.When("b", ast.Seq(a("y1"), a("y2")))).AllMatching()),
		ast.Seq(a("r").Named("r"), ast.Choice("r", ast.When(`ok`, a("z")), ast.Else(a("w")))).WithReplicas(2),
	)
}

// fuzzEndTree is the workflow FuzzRestartEnd plays: an end reached
// through a choice, beside a try whose finally runs after it, and a
// guarded dag.
func fuzzEndTree() ast.Node {
	a := func(name string) ast.Node { return ast.Act(name, nil) }
	return ast.Par(
		ast.Try(ast.Seq(a("a1"), a("a2")), ast.Finally(a("f"))),
		ast.Seq(a("k").Named("k"), ast.Choice("k", ast.When("stop", ast.End("asked to")), ast.Else(a("go")))),
		ast.Seq(a("m").Named("m"), ast.Dag(a("x").Named("x").WithWhen("m", 1), a("y").Named("y").WithAfter("x"))),
	)
}

// FuzzRestartEnd is FuzzRestart over fuzzEndTree.
func FuzzRestartEnd(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0, 1, 0, 6, '"', 's', 't', 'o', 'p', '"', 6, 0, 0, 0, 0, 6, 7, 1, 0, 0, 0, 0, 6})
	f.Add([]byte{0, 2, 0, 1, '1', 6, 0, 0, 0, 0, 6, 0, 0, 0, 0, 6})
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzPlay(t, fuzzEndTree(), data)
	})
}

// FuzzRestartChoice is FuzzRestart over fuzzChoiceTree: no input may make
// Restart panic, and after every step the job passes its checks, survives
// Encode/Decode unchanged and recovers exactly its outstanding actions.
func FuzzRestartChoice(f *testing.F) {
	f.Add([]byte{})
	var ok []byte
	for i := 0; i < 12; i++ {
		ok = append(ok, 0, 0, 0, 3, '"', byte('a'+i%2), '"', 6)
	}
	f.Add(ok)
	f.Add([]byte{0, 0, 0, 9, '[', '"', 'a', '"', ',', '"', 'b', '"', ']', 6, 0, 0, 0, 1, '1', 6})
	f.Add([]byte{0, 1, 0, 3, '"', 'b', '"', 6, 0, 0, 1, 4, 'd', 'o', 'w', 'n', 6, 0, 0, 0, 0, 6})
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzPlay(t, fuzzChoiceTree(), data)
	})
}
