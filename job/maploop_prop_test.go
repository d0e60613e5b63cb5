package job_test

// Properties of maps, loops, waits and sleeps over random trees that grow
// as they run: the reducer and the oracle (maploop_oracle_test.go) agree
// after every batch of results, signals and timer firings on the actions
// outstanding (with their inputs and the failure each follows), every
// node's state (copies and iterations included), the sleeps' timers and
// the signals kept; every Restart is deterministic (byte for byte), never
// modifies its input job, and gives the same job from the job as stored
// and reloaded (Encode, Decode) as from the job in hand; every job made
// passes Check and survives Encode/Decode unchanged; the final status is
// oracleOutcome's.

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
)

// growStart is the start time of the jobs the properties play.
var growStart = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// growOvers are the outputs a map's over leaf gives: arrays of 0 to 3
// elements, written loosely (item is the element as compact JSON), and
// outputs that are not arrays.
var (
	growArrays    = []string{`[1]`, `["a", "b"]`, `[ {"k": 1} , 2, null ]`, `[]`, `[1,2,3]`}
	growNotArrays = []string{`"x"`, `null`, ``, `not json`, `{"a":1}`}
	growPayloads  = []string{`1`, `"ok"`, ``, `null`, `{"a": [1, 2]}`, `[1,2]`}
	growSignals   = []string{"s1", "s2"}
)

// growSpec is how the leaves drawn at one place of the tree as written
// end, in every copy and iteration.
type growSpec struct {
	overs  []string // a map's over leaf: its output, picked per copy by a hash of the path
	stopAt int      // a loop's until leaf: outputs true from this iteration on (never, at max)
	until  bool
}

// growDrawer draws trees of acts, seqs, pars (limited), tries, races
// (with need), maps (limit, need; nested), loops, waits and sleeps.
type growDrawer struct {
	names   int
	specs   map[string]growSpec // by the leaf's path with every copy and iteration index written *
	maps    bool                // draw maps and loops
	signals bool                // draw waits and sleeps
	budget  int
}

func (d *growDrawer) name(prefix string) string {
	d.names++
	return fmt.Sprintf("%s%d", prefix, d.names)
}

// tree draws a node at depth; path is its path as written, with every
// copy and iteration index written "*" (growTemplatePath).
func (d *growDrawer) tree(t *rapid.T, depth int, path string, inMap bool) ast.Node {
	d.budget--
	kinds := []ast.Kind{ast.KindAct, ast.KindSeq, ast.KindPar, ast.KindTry, ast.KindRace}
	if d.maps {
		kinds = append(kinds, ast.KindMap, ast.KindLoop, ast.KindMap, ast.KindLoop, ast.KindChoice)
	}
	if d.signals {
		kinds = append(kinds, ast.KindWait, ast.KindSleep, ast.KindWait)
	}
	if depth >= 4 || d.budget <= 0 {
		kinds = []ast.Kind{ast.KindAct}
		if d.signals {
			kinds = append(kinds, ast.KindWait)
		}
	}
	child := func(k ast.Kind, i int) string { return ast.ChildPath(path, k, i) }
	switch k := rapid.SampledFrom(kinds).Draw(t, "kind"); k {
	case ast.KindWait:
		w := ast.Wait(rapid.SampledFrom(growSignals).Draw(t, "signal"))
		if rapid.IntRange(0, 3).Draw(t, "transient") == 0 {
			w = w.OnlyWhileRunning()
		}
		return w
	case ast.KindSleep:
		if rapid.Bool().Draw(t, "race sleep") {
			return ast.Race(ast.Wait(rapid.SampledFrom(growSignals).Draw(t, "signal")), ast.Sleep(time.Hour))
		}
		return ast.Sleep(time.Duration(rapid.IntRange(1, 30).Draw(t, "minutes")) * time.Minute)
	case ast.KindAct:
		a := ast.Act("a", nil)
		if inMap {
			var ins []string
			if rapid.IntRange(0, 2).Draw(t, "item") == 0 {
				ins = append(ins, ast.InputItem)
			}
			if rapid.IntRange(0, 3).Draw(t, "index") == 0 {
				ins = append(ins, ast.InputIndex)
			}
			if len(ins) > 0 {
				a = a.WithInputs(ins...)
			}
		}
		return a
	case ast.KindSeq, ast.KindPar, ast.KindRace:
		kids := make([]ast.Node, rapid.IntRange(2, 3).Draw(t, "width"))
		for i := range kids {
			kids[i] = d.tree(t, depth+1, child(k, i), inMap)
		}
		n := ast.Node{Kind: k, Children: kids}
		if k == ast.KindPar && rapid.IntRange(0, 2).Draw(t, "limited") == 0 {
			n = n.WithLimit(rapid.IntRange(1, len(kids)).Draw(t, "limit"))
		}
		if k == ast.KindRace && rapid.IntRange(0, 2).Draw(t, "need") == 0 {
			n = n.WithNeed(rapid.IntRange(1, len(kids)).Draw(t, "need of"))
		}
		return n
	case ast.KindTry:
		var opts []ast.TryOption
		if rapid.Bool().Draw(t, "rescue") {
			opts = append(opts, ast.Rescue(d.tree(t, depth+1, ast.PartPath(path, ast.PartRescue), inMap)))
		}
		if rapid.Bool().Draw(t, "finally") {
			opts = append(opts, ast.Finally(d.tree(t, depth+1, ast.PartPath(path, ast.PartFinally), inMap)))
		}
		return ast.Try(d.tree(t, depth+1, ast.PartPath(path, ast.PartBody), inMap), opts...)
	case ast.KindChoice:
		// seq(the leaf it is on, a choice on it): inside a copy or an
		// iteration, on names the leaf of the same one.
		name := d.name("k")
		d.specs[child(ast.KindSeq, 0)] = growSpec{overs: rapid.SliceOfN(rapid.SampledFrom(choiceValues), 1, 2).Draw(t, "on outputs")}
		ch := child(ast.KindSeq, 1)
		var cases []ast.ChoiceCase
		n := rapid.IntRange(1, 2).Draw(t, "cases")
		for i := range n {
			cases = append(cases, ast.When([]byte(rapid.SampledFrom(choiceValues).Draw(t, "when")), d.tree(t, depth+1, ast.ChildPath(ch, ast.KindChoice, i), inMap)))
		}
		if rapid.Bool().Draw(t, "else") {
			cases = append(cases, ast.Else(d.tree(t, depth+1, ast.ChildPath(ch, ast.KindChoice, n), inMap)))
		}
		c := ast.Choice(name, cases...)
		if rapid.IntRange(0, 2).Draw(t, "multi") == 0 {
			c = c.AllMatching()
		}
		return ast.Seq(ast.Act("k", nil).Named(name), c)
	case ast.KindMap:
		// seq(the over leaf, map over it)
		name := d.name("xs")
		over := child(ast.KindSeq, 0)
		mp := child(ast.KindSeq, 1)
		need := 0
		if rapid.IntRange(0, 3).Draw(t, "map need") == 0 {
			need = rapid.IntRange(1, 2).Draw(t, "need")
		}
		var overs []string
		for range rapid.IntRange(1, 2).Draw(t, "overs") {
			switch {
			case rapid.IntRange(0, 4).Draw(t, "bad over") == 0:
				overs = append(overs, rapid.SampledFrom(growNotArrays).Draw(t, "not an array"))
			default:
				a := rapid.SampledFrom(growArrays).Draw(t, "array")
				if need > 0 && a != `[]` && len(growElems(a)) < need {
					a = `[1,2,3]`
				}
				overs = append(overs, a)
			}
		}
		d.specs[over] = growSpec{overs: overs}
		tmpl := d.tree(t, depth+1, ast.ChildPath(mp, ast.KindMap, 0), true)
		if tmpl.Kind == ast.KindAct && rapid.Bool().Draw(t, "reads over") {
			tmpl.Inputs = append(tmpl.Inputs, name) // sure before the map, so in every copy
		}
		m := ast.Map(name, tmpl)
		if rapid.IntRange(0, 2).Draw(t, "map limit") == 0 {
			m = m.WithLimit(rapid.IntRange(1, 2).Draw(t, "limit"))
		}
		if need > 0 {
			m = m.WithNeed(need)
		}
		return ast.Seq(ast.Act("l", nil).Named(name), m)
	default: // loop
		name := d.name("u")
		body := ast.ChildPath(path, ast.KindLoop, 0)
		max := rapid.IntRange(1, 3).Draw(t, "max")
		spec := growSpec{until: true, stopAt: rapid.IntRange(0, max).Draw(t, "stop at")}
		var b ast.Node
		switch rapid.IntRange(0, 2).Draw(t, "body") {
		case 0:
			d.specs[body] = spec
			b = ast.Act("u", nil).Named(name)
		case 1:
			d.specs[ast.ChildPath(body, ast.KindSeq, 1)] = spec
			// The until leaf reads a leaf of the same iteration.
			first := d.name("p")
			b = ast.Seq(ast.Act("p", nil).Named(first), ast.Act("u", nil).Named(name).WithInputs(first))
		default:
			d.specs[ast.ChildPath(body, ast.KindPar, 0)] = spec
			b = ast.Par(ast.Act("u", nil).Named(name), d.tree(t, depth+1, ast.ChildPath(body, ast.KindPar, 1), inMap))
		}
		return ast.Loop(b, name, true, max)
	}
}

// growElems returns the elements of the array a.
func growElems(a string) [][]byte {
	e, _ := oracleElements([]byte(a))
	return e
}

var growIndexRE = regexp.MustCompile(`(map|loop)\[\d+\]`)

// growTemplatePath is path with every copy and iteration index written *.
func growTemplatePath(path string) string {
	return growIndexRE.ReplaceAllString(path, "$1[*]")
}

// growWrittenPath is the path, in the tree as written, of the node at
// path: every copy and iteration index written 0 (the template's).
func growWrittenPath(path string) string {
	return growIndexRE.ReplaceAllString(path, "${1}[0]")
}

// growIteration is the index of the innermost iteration holding path.
func growIteration(path string) int {
	i := strings.LastIndex(path, "loop[")
	n, _ := strconv.Atoi(path[i+5 : i+5+strings.IndexByte(path[i+5:], ']')])
	return n
}

// growHash is a hash of the path and the case's seed.
func growHash(seed int, path string) int {
	h := fnv.New32a()
	fmt.Fprintf(h, "%d/%s", seed, path)
	return int(h.Sum32() % 1000)
}

// growCase draws a tree and the outcome of every leaf it may grow: a map's
// over leaf succeeds with an output of its spec (picked per copy), a
// loop's until leaf with false, then true from its stop iteration on, and
// every other leaf fails failPct percent of the time (by a hash of its
// path, so that each copy and iteration draws its own).
func growCase(t *rapid.T, d *growDrawer) (ast.Node, propCase) {
	d.specs = map[string]growSpec{}
	d.budget = 14
	w := d.tree(t, 1, "", false)
	if err := ast.Validate(w); err != nil {
		b, _ := ast.Encode(w)
		t.Fatalf("drew an invalid tree: %v\n%s", err, b)
	}
	failPct := rapid.SampledFrom([]int{0, 10, 30}).Draw(t, "failPct")
	seed := rapid.IntRange(0, 1<<20).Draw(t, "seed")
	specs := d.specs
	c := propCase{Tree: w, Start: growStart, Graph: true, Dyn: func(path string) propOutcome {
		spec, ok := specs[growTemplatePath(path)]
		switch {
		case ok && spec.until:
			if growIteration(path) >= spec.stopAt {
				return propOutcome{Output: []byte(`true`)}
			}
			return propOutcome{Output: []byte(`false`)}
		case ok:
			return propOutcome{Output: []byte(spec.overs[growHash(seed, path)%len(spec.overs)])}
		case growHash(seed, path)%100 < failPct*10:
			return propOutcome{Fail: true, Msg: "no " + path}
		}
		return propOutcome{Output: []byte(strconv.Quote(path))}
	}}
	return w, c
}

// growPlay plays the case on the reducer and the oracle together, in
// batches drawn from the outstanding actions, the running waits (and
// signals no wait takes now: kept, or repeated: ignored) and the sleeps
// due, comparing everything after every batch (see the file's comment).
func growPlay(t *rapid.T, w ast.Node, c propCase) job.Job {
	o := oracleStart(c)
	tr, err := job.New("grow", w, job.StartedAt(c.Start))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	j := tr.Job
	byID := map[string]job.Action{}
	var ran []string
	single := true // the step answered one action and did nothing else
	compare := func(tr job.Transition) {
		t.Helper()
		j := tr.Job
		for _, a := range tr.Actions {
			byID[a.ID] = a
		}
		// The actions a step dispatches, in order when one result made
		// them (a batch is a set: the order of what it starts is the
		// reducer's), and as a set otherwise.
		wantRan := append([]string(nil), o.ran[len(ran):]...)
		gotRan := propIDs(tr.Actions)
		if !single {
			sort.Strings(wantRan)
			sort.Strings(gotRan)
		}
		if diff := cmp.Diff(wantRan, gotRan); diff != "" {
			t.Fatalf("step %d: actions dispatched (-oracle +reducer):\n%s\n%s%s", o.step, diff, growShow(w), job.Describe(j))
		}
		ran = append(ran[:0:0], o.ran...)
		want := append([]string(nil), o.queue...)
		sort.Strings(want)
		if diff := cmp.Diff(want, propSortedIDs(j.Outstanding())); diff != "" {
			t.Fatalf("step %d: outstanding actions (-oracle +reducer):\n%s\n%s%s", o.step, diff, growShow(w), job.Describe(j))
		}
		oracleCheckActions(t, o, tr.Actions)
		if diff := cmp.Diff(o.states(), propStates(j)); diff != "" {
			t.Fatalf("step %d: node states (-oracle +reducer):\n%s\n%s%s", o.step, diff, growShow(w), job.Describe(j))
		}
		var sleeps, timers []string
		for p, n := range o.sleeping() {
			sleeps = append(sleeps, ast.ShowPath(p)+"@sleep "+n.due.Format(time.RFC3339))
		}
		for _, tm := range j.Timers() {
			timers = append(timers, tm.ID+" "+tm.Due.Format(time.RFC3339))
		}
		sort.Strings(sleeps)
		sort.Strings(timers)
		if diff := cmp.Diff(sleeps, timers); diff != "" {
			t.Fatalf("step %d: timers (-oracle +reducer):\n%s\n%s%s", o.step, diff, growShow(w), job.Describe(j))
		}
		kept, _ := j.Signals()
		var got, wantKept []string
		for _, k := range kept {
			got = append(got, k.Name+"/"+k.ID+" "+string(k.Payload))
		}
		for _, k := range o.kept {
			wantKept = append(wantKept, k.Name+"/"+k.ID+" "+string(k.Payload))
		}
		if diff := cmp.Diff(wantKept, got); diff != "" {
			t.Fatalf("step %d: kept signals (-oracle +reducer):\n%s\n%s%s", o.step, diff, growShow(w), job.Describe(j))
		}
	}
	compare(tr)
	var sigIDs []string
	var applied []job.Result
	sent := map[string]oracleSignal{}
	for steps := 0; !o.root.status().Settled(); steps++ {
		if steps > 400 {
			t.Fatalf("no end after 400 steps\n%s%s", growShow(w), job.Describe(j))
		}
		at := c.Start.Add(time.Duration(o.step+1) * time.Minute)
		perm := rapid.Permutation(o.queue).Draw(t, "order")
		ids := perm[:rapid.IntRange(0, len(perm)).Draw(t, "results")]
		waits := o.runningWaits()
		var names []string
		for _, name := range waits {
			names = append(names, name)
		}
		sort.Strings(names)
		var sigs []oracleSignal
		progress := len(ids) > 0
		for range rapid.IntRange(0, 2).Draw(t, "signals") {
			s := oracleSignal{Name: rapid.SampledFrom(append(names, growSignals...)).Draw(t, "signal"), Payload: []byte(rapid.SampledFrom(growPayloads).Draw(t, "payload"))}
			if len(sigIDs) > 0 && rapid.IntRange(0, 4).Draw(t, "repeat") == 0 {
				// Sent again, as a sender does: the same name, ID and payload.
				s = sent[rapid.SampledFrom(sigIDs).Draw(t, "old id")]
			} else {
				s.ID = strconv.Itoa(len(sigIDs))
				sigIDs = append(sigIDs, s.ID)
			}
			sigs = append(sigs, s)
			sent[s.ID] = s
			progress = progress || slices.Contains(names, s.Name)
		}
		var fires []string
		var sleeping []string
		for p := range o.sleeping() {
			sleeping = append(sleeping, p)
		}
		sort.Strings(sleeping)
		for _, p := range sleeping {
			if rapid.IntRange(0, 2).Draw(t, "fire") == 0 {
				fires = append(fires, p)
				progress = true
			}
		}
		if !progress {
			// Something must move: an action, a wait or a sleep.
			switch {
			case len(o.queue) > 0:
				ids = o.queue[:1]
			case len(names) > 0:
				s := oracleSignal{Name: names[0], ID: strconv.Itoa(len(sigIDs))}
				sigIDs = append(sigIDs, s.ID)
				sigs = append(sigs, s)
				sent[s.ID] = s
			case len(sleeping) > 0:
				fires = sleeping[:1]
			default:
				t.Fatalf("step %d: the oracle's job runs with nothing to move\n%s", o.step, growShow(w))
			}
		}
		var batch []job.Result
		for _, id := range ids {
			r := c.result(byID[id])
			r.At = at
			batch = append(batch, r)
		}
		for _, s := range sigs {
			batch = append(batch, job.SignalResult(j.ID(), job.Signal{Name: s.Name, ID: s.ID, Payload: s.Payload, At: at}))
		}
		for _, p := range fires {
			batch = append(batch, job.Result{JobID: j.ID(), ActionID: ast.ShowPath(p) + "@sleep", At: at})
		}
		var again *job.Result
		want := job.IgnoredDuplicate
		if len(applied) > 0 && rapid.IntRange(0, 3).Draw(t, "again") == 0 {
			// A result applied before, sent again: a duplicate, or stale
			// once its loop has moved to another iteration (before this
			// batch, whose results apply first).
			r := rapid.SampledFrom(applied).Draw(t, "old result")
			again = &r
			batch = append(batch, r)
			if o.leaves[r.ActionID].stale() {
				want = job.IgnoredStale
			}
		}
		batch = rapid.Permutation(batch).Draw(t, "batch order")
		single = len(ids) == 1 && len(sigs) == 0 && len(fires) == 0 && again == nil
		o.deliverEvents(at, slices.Clone(ids), sigs, fires)
		tr = growRestart(t, j, batch)
		if again != nil {
			if !slices.ContainsFunc(tr.Ignored, func(ig job.Ignored) bool { return ig.Result.ActionID == again.ActionID && ig.Reason == want }) {
				t.Fatalf("step %d: %s sent again, ignored %v, want it ignored as %s\n%s%s", o.step, again.ActionID, tr.Ignored, want, growShow(w), job.Describe(tr.Job))
			}
		}
		for _, r := range batch {
			if slices.Contains(ids, r.ActionID) {
				applied = append(applied, r)
			}
		}
		j = tr.Job
		compare(tr)
	}
	if !j.Done() {
		t.Fatalf("the oracle's job settled, the reducer's is %s\n%s%s", j.Status(), growShow(w), job.Describe(j))
	}
	if got, want := j.Status(), oracleOutcome(c, &c.Tree, ""); got != want && want != job.StatusIdle {
		t.Fatalf("job %s, oracleOutcome %s\n%s%s", got, want, growShow(w), job.Describe(j))
	}
	return j
}

// growRestart restarts j with batch and checks the contracts of one step:
// Restart leaves its input alone, gives the same bytes and actions again,
// with the batch reversed (a batch is a set), and from j stored and
// reloaded; the job made passes Check and
// survives Encode/Decode unchanged.
func growRestart(t propT, j job.Job, batch []job.Result) job.Transition {
	t.Helper()
	before, desc := propEnc(t, j), job.Describe(j)
	tr, err := job.Restart(j, batch)
	if err != nil {
		t.Fatalf("Restart: %v", err)
	}
	if !bytes.Equal(before, propEnc(t, j)) || desc != job.Describe(j) {
		t.Fatalf("Restart modified its input job")
	}
	again, err := job.Restart(j, slices.Clone(batch))
	if err != nil {
		t.Fatalf("Restart again: %v", err)
	}
	enc := propEnc(t, tr.Job)
	if !bytes.Equal(enc, propEnc(t, again.Job)) || fmt.Sprint(tr.Actions, tr.Stops, tr.Timers, tr.Ignored) != fmt.Sprint(again.Actions, again.Stops, again.Timers, again.Ignored) {
		t.Fatalf("Restart is not deterministic")
	}
	rev := slices.Clone(batch)
	slices.Reverse(rev)
	permuted, err := job.Restart(j, rev)
	if err != nil {
		t.Fatalf("Restart of the batch reversed: %v", err)
	}
	if !bytes.Equal(enc, propEnc(t, permuted.Job)) || fmt.Sprint(tr.Actions, tr.Stops, tr.Timers) != fmt.Sprint(permuted.Actions, permuted.Stops, permuted.Timers) {
		t.Fatalf("the batch reversed gives another transition:\n%s\n%s", job.Describe(tr.Job), job.Describe(permuted.Job))
	}
	stored, err := job.Decode(before)
	if err != nil {
		t.Fatalf("Decode of the job before the step: %v", err)
	}
	fromStored, err := job.Restart(stored, slices.Clone(batch))
	if err != nil {
		t.Fatalf("Restart of the stored job: %v", err)
	}
	if !bytes.Equal(enc, propEnc(t, fromStored.Job)) || fmt.Sprint(tr.Actions) != fmt.Sprint(fromStored.Actions) {
		t.Fatalf("the job stored and reloaded restarts otherwise:\n%s\n%s", job.Describe(tr.Job), job.Describe(fromStored.Job))
	}
	propRoundTrip(t, tr.Job)
	changedCheck(t, "the step", j, tr.Job)
	if tr.Job.Running() != len(tr.Job.Outstanding()) {
		t.Fatalf("Running %d, Outstanding %d", tr.Job.Running(), len(tr.Job.Outstanding()))
	}
	return tr
}

// growShow is the tree as JSON, for failure messages.
func growShow(w ast.Node) string {
	b, _ := ast.Encode(w)
	return "tree " + string(b) + "\n"
}

// TestOracleGrowLockstep: maps and loops (nested, limited, with need,
// over arrays and what is not one) among seqs, pars, tries and races.
func TestOracleGrowLockstep(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		w, c := growCase(t, &growDrawer{maps: true})
		growPlay(t, w, c)
	})
}

// TestOracleSignalLockstep: waits (transient or not) and sleeps, and races
// of the two, among seqs, pars, tries and races, with signals early,
// late, repeated and for no wait.
func TestOracleSignalLockstep(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		w, c := growCase(t, &growDrawer{signals: true})
		growPlay(t, w, c)
	})
}

// TestOracleGrowSignalLockstep: everything together: waits and sleeps
// in maps' copies and loops' iterations.
func TestOracleGrowSignalLockstep(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		w, c := growCase(t, &growDrawer{maps: true, signals: true})
		growPlay(t, w, c)
	})
}
