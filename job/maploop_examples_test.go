package job_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
)

// growExample is a hand-worked example of the rules of maps, loops, waits
// and sleeps: a tree, how its leaves end, a script of batches, and what
// the note's rules say must come of it.
type growExample struct {
	name string
	tree ast.Node
	// out gives the outcome of the leaf at a path: its output, or, when
	// it starts with "!", its failure's message. A leaf not listed
	// succeeds with its path as a JSON string.
	out map[string]string
	// script is the batches played, in order, each a list of events:
	// "acts" (every outstanding action), "sig NAME ID [PAYLOAD]", "fire
	// PATH" (a sleep's timer). After it, the outstanding actions are
	// answered one at a time, oldest first, until the job ends.
	script [][]string
	ran    []string // every action dispatched, in order
	status job.Status
	// nodes is what some nodes must be: "status", or "status output",
	// or "status failure" as propNodeState.Failure writes it.
	nodes map[string]string
	// inputs are the inputs some actions must carry: name=output, in order.
	inputs map[string]string
}

func (e growExample) outcome(path string) propOutcome {
	o, ok := e.out[path]
	switch {
	case !ok:
		return propOutcome{Output: []byte(strconv.Quote(path))}
	case strings.HasPrefix(o, "!"):
		return propOutcome{Fail: true, Msg: o[1:]}
	}
	return propOutcome{Output: []byte(o)}
}

// growExamples are the examples, each worked out from the note's rules
// (numbers in the comments).
func growExamples() []growExample {
	a := func(name string) ast.Node { return ast.Act(name, nil) }
	xs := func(do ast.Node) ast.Node { return ast.Seq(a("l").Named("xs"), ast.Map("xs", do).Named("m")) }
	item := a("x").WithInputs(ast.InputItem, ast.InputIndex)
	big := "[" + strings.Repeat("0,", ast.MaxCopies) + "0]"
	return []growExample{
		// 13, 17, 18: a copy per element, item as compact JSON, index as
		// a number; the output is the array of the copies' outputs.
		{name: "map of a leaf", tree: xs(item), out: map[string]string{"seq[0]": `[ "a" , {"k": 1} ]`},
			ran:    []string{"seq[0]#1", "seq[1].map[0]#1", "seq[1].map[1]#1"},
			status: job.StatusSucceeded,
			nodes: map[string]string{
				"seq[1]":        `succeeded ["seq[1].map[0]","seq[1].map[1]"]`,
				"seq[1].map[1]": `succeeded "seq[1].map[1]"`,
			},
			inputs: map[string]string{"seq[1].map[0]#1": `item="a" index=0`, "seq[1].map[1]#1": `item={"k":1} index=1`}},
		// 14: empty succeeds as it starts, no copy.
		{name: "map over an empty array", tree: xs(item), out: map[string]string{"seq[0]": `[]`},
			ran: []string{"seq[0]#1"}, status: job.StatusSucceeded, nodes: map[string]string{"seq[1]": "succeeded []"}},
		// 14: not an array fails at start, as does null and no output.
		{name: "map over a string", tree: xs(item), out: map[string]string{"seq[0]": `"x"`},
			ran: []string{"seq[0]#1"}, status: job.StatusFailed,
			nodes: map[string]string{"seq[1]": `failed seq[1] (): "the output of xs is not an array: \"x\"" +0`}},
		{name: "map over null", tree: xs(item), out: map[string]string{"seq[0]": `null`},
			ran: []string{"seq[0]#1"}, status: job.StatusFailed,
			nodes: map[string]string{"seq[1]": `failed seq[1] (): "the output of xs is not an array: null" +0`}},
		{name: "map over no output", tree: xs(item), out: map[string]string{"seq[0]": ``},
			ran: []string{"seq[0]#1"}, status: job.StatusFailed,
			nodes: map[string]string{"seq[1]": `failed seq[1] (): "the output of xs is not an array: null" +0`}},
		{name: "map over too many", tree: xs(item), out: map[string]string{"seq[0]": big},
			ran: []string{"seq[0]#1"}, status: job.StatusFailed,
			nodes: map[string]string{"seq[1]": `failed seq[1] (): "the output of xs has more than 10000 elements" +0`}},
		// 15: at most limit copies at once, in index order.
		{name: "map with a limit", tree: ast.Seq(a("l").Named("xs"), ast.Map("xs", item).WithLimit(1).Named("m")), out: map[string]string{"seq[0]": `[1,2,3]`},
			script: [][]string{{"acts"}, {"acts"}},
			ran:    []string{"seq[0]#1", "seq[1].map[0]#1", "seq[1].map[1]#1", "seq[1].map[2]#1"},
			status: job.StatusSucceeded, nodes: map[string]string{"seq[1]": `succeeded ["seq[1].map[0]","seq[1].map[1]","seq[1].map[2]"]`}},
		// 15, 16: a failed copy freezes the map: the copies not started never start.
		{name: "map: a failed copy", tree: ast.Seq(a("l").Named("xs"), ast.Map("xs", item).WithLimit(1)), out: map[string]string{"seq[0]": `[1,2,3]`, "seq[1].map[0]": "!down"},
			ran: []string{"seq[0]#1", "seq[1].map[0]#1"}, status: job.StatusFailed,
			nodes: map[string]string{"seq[1]": `failed seq[1].map[0] (x): "down" +0`, "seq[1].map[1]": "cancelled", "seq[1].map[2]": "cancelled"}},
		// 16: running copies go on after a failure; their waits are withdrawn.
		{name: "map: a failure withdraws a copy's wait", tree: xs(ast.Seq(a("x"), ast.Wait("go"))), out: map[string]string{"seq[0]": `[1,2]`, "seq[1].map[1].seq[0]": "!down"},
			script: [][]string{{"acts"}, {"act seq[1].map[0].seq[0]#1"}, {"act seq[1].map[1].seq[0]#1"}},
			ran:    []string{"seq[0]#1", "seq[1].map[0].seq[0]#1", "seq[1].map[1].seq[0]#1"},
			status: job.StatusFailed,
			nodes: map[string]string{"seq[1].map[0].seq[1]": `failed seq[1].map[0].seq[1] (): "the wait for signal go was withdrawn" +0`,
				"seq[1]": `failed seq[1].map[1].seq[0] (x): "down" +1`}},
		// Need: won once N copies have; the others are stopped.
		{name: "map with need", tree: ast.Seq(a("l").Named("xs"), ast.Map("xs", item).WithNeed(1).Named("m")), out: map[string]string{"seq[0]": `[1,2]`},
			ran: []string{"seq[0]#1", "seq[1].map[0]#1", "seq[1].map[1]#1"}, status: job.StatusSucceeded,
			nodes: map[string]string{"seq[1].map[1]": "cancelled"}},
		// 16: a copy's failure freezes a map with need too, when it comes
		// before the need is met.
		{name: "map with need, a failure first", tree: ast.Seq(a("l").Named("xs"), ast.Map("xs", item).WithNeed(2)), out: map[string]string{"seq[0]": `[1,2,3]`, "seq[1].map[0]": "!down"},
			ran: []string{"seq[0]#1", "seq[1].map[0]#1", "seq[1].map[1]#1", "seq[1].map[2]#1"}, status: job.StatusFailed,
			nodes: map[string]string{"seq[1]": `failed seq[1].map[0] (x): "down" +0`}},
		{name: "map with need, a failure after it is met", tree: ast.Seq(a("l").Named("xs"), ast.Map("xs", item).WithNeed(2)), out: map[string]string{"seq[0]": `[1,2,3]`, "seq[1].map[2]": "!down"},
			ran: []string{"seq[0]#1", "seq[1].map[0]#1", "seq[1].map[1]#1", "seq[1].map[2]#1"}, status: job.StatusSucceeded,
			nodes: map[string]string{"seq[1].map[2]": "cancelled"}},
		{name: "map with need over fewer elements", tree: ast.Seq(a("l").Named("xs"), ast.Map("xs", item).WithNeed(3)), out: map[string]string{"seq[0]": `[1,2]`},
			ran: []string{"seq[0]#1", "seq[1].map[0]#1", "seq[1].map[1]#1"}, status: job.StatusSucceeded},
		// 17: names are per copy; item is the innermost copy's.
		{name: "names per copy, nested maps", tree: xs(ast.Seq(a("y").Named("ys").WithInputs(ast.InputItem), ast.Map("ys", a("z").WithInputs("ys", ast.InputItem, ast.InputIndex)).Named("m2"))),
			out: map[string]string{"seq[0]": `[1,2]`, "seq[1].map[0].seq[0]": `["p"]`, "seq[1].map[1].seq[0]": `["q","r"]`},
			ran: []string{"seq[0]#1", "seq[1].map[0].seq[0]#1", "seq[1].map[1].seq[0]#1",
				"seq[1].map[0].seq[1].map[0]#1", "seq[1].map[1].seq[1].map[0]#1", "seq[1].map[1].seq[1].map[1]#1"},
			status: job.StatusSucceeded,
			inputs: map[string]string{
				"seq[1].map[1].seq[0]#1":        `item=2`,
				"seq[1].map[1].seq[1].map[1]#1": `ys=["q","r"] item="r" index=1`,
				"seq[1].map[0].seq[1].map[0]#1": `ys=["p"] item="p" index=0`,
			},
			nodes: map[string]string{"seq[1]": "succeeded", "seq[1].map[1].seq[1]": `succeeded ["seq[1].map[1].seq[1].map[0]","seq[1].map[1].seq[1].map[1]"]`}},
		// 19, 21: iterations until the until leaf matches; the output is the last's.
		{name: "loop until a match", tree: ast.Loop(a("u").Named("u"), "u", true, 3).Named("lp"), out: map[string]string{"loop[0]": `false`, "loop[1]": `true`},
			ran: []string{"loop[0]#1", "loop[1]#1"}, status: job.StatusSucceeded, nodes: map[string]string{"": "succeeded true"}},
		{name: "loop to its limit", tree: ast.Loop(a("u").Named("u"), "u", true, 2), out: map[string]string{"loop[0]": `false`, "loop[1]": `1`},
			ran: []string{"loop[0]#1", "loop[1]#1"}, status: job.StatusFailed,
			nodes: map[string]string{"": `failed  (): "2 iterations, and the output of u never equalled true" +0`}},
		{name: "loop: a failed iteration", tree: ast.Loop(ast.Seq(a("p"), a("u").Named("u")), "u", 1.0, 3), out: map[string]string{"loop[0].seq[1]": `2`, "loop[1].seq[0]": "!down"},
			ran: []string{"loop[0].seq[0]#1", "loop[0].seq[1]#1", "loop[1].seq[0]#1"}, status: job.StatusFailed,
			nodes: map[string]string{"": `failed loop[1].seq[0] (p): "down" +0`, "loop[1].seq[1]": "idle"}},
		// 2: numbers compare as numbers.
		{name: "loop: 1 equals 1.0", tree: ast.Loop(ast.Seq(a("p").Named("p"), a("u").Named("u").WithInputs("p")), "u", 1.0, 3), out: map[string]string{"loop[0].seq[1]": `1e0`},
			ran: []string{"loop[0].seq[0]#1", "loop[0].seq[1]#1"}, status: job.StatusSucceeded,
			inputs: map[string]string{"loop[0].seq[1]#1": `p="loop[0].seq[0]"`}},
		// 20: names per iteration.
		{name: "loop of a map", tree: ast.Loop(ast.Seq(a("l").Named("xs"), ast.Map("xs", a("x").WithInputs("xs", ast.InputItem)), a("u").Named("u")), "u", true, 2),
			out:    map[string]string{"loop[0].seq[0]": `[1]`, "loop[1].seq[0]": `[2,3]`, "loop[0].seq[2]": `false`, "loop[1].seq[2]": `true`},
			ran:    []string{"loop[0].seq[0]#1", "loop[0].seq[1].map[0]#1", "loop[0].seq[2]#1", "loop[1].seq[0]#1", "loop[1].seq[1].map[0]#1", "loop[1].seq[1].map[1]#1", "loop[1].seq[2]#1"},
			status: job.StatusSucceeded,
			inputs: map[string]string{"loop[1].seq[1].map[1]#1": `xs=[2,3] item=3`}},
		// 12: a wait's output is the payload; a sleep's firing succeeds it.
		{name: "wait and sleep", tree: ast.Seq(ast.Wait("go").Named("w"), ast.Sleep(time.Minute), a("b").WithInputs("w")),
			script: [][]string{{"sig go 1 {\"a\": 1}"}, {"fire seq[1]"}},
			ran:    []string{"seq[2]#1"}, status: job.StatusSucceeded,
			nodes: map[string]string{"seq[0]": `succeeded {"a":1}`, "seq[1]": "succeeded"}, inputs: map[string]string{"seq[2]#1": `w={"a":1}`}},
		// 9, 10: a signal before its wait is kept, then taken; in the
		// batch of the result that starts the wait too.
		{name: "a signal kept, then taken", tree: ast.Seq(a("a"), ast.Wait("go"), a("b")),
			script: [][]string{{"sig go 1 7"}, {"acts"}},
			ran:    []string{"seq[0]#1", "seq[2]#1"}, status: job.StatusSucceeded, nodes: map[string]string{"seq[1]": "succeeded 7"}},
		{name: "a signal in the batch that starts its wait", tree: ast.Seq(a("a"), ast.Wait("go"), a("b")),
			script: [][]string{{"acts", "sig go 1 7"}},
			ran:    []string{"seq[0]#1", "seq[2]#1"}, status: job.StatusSucceeded, nodes: map[string]string{"seq[1]": "succeeded 7"}},
		// 9: a transient wait takes only what comes while it runs.
		{name: "a transient wait", tree: ast.Seq(a("a"), ast.Wait("go").OnlyWhileRunning(), a("b")),
			script: [][]string{{"sig go 1 7"}, {"acts"}, {"sig go 2 8"}},
			ran:    []string{"seq[0]#1", "seq[2]#1"}, status: job.StatusSucceeded, nodes: map[string]string{"seq[1]": "succeeded 8"}},
		// 8: a repeated name/ID is ignored.
		{name: "a repeated signal", tree: ast.Seq(ast.Wait("go"), ast.Wait("go")),
			script: [][]string{{"sig go 1 7"}, {"sig go 1 7"}, {"sig go 2 8"}},
			status: job.StatusSucceeded, nodes: map[string]string{"seq[0]": "succeeded 7", "seq[1]": "succeeded 8"}},
		// 12 and the race: the wait wins, the sleep is withdrawn.
		{name: "race of a wait and a sleep", tree: ast.Race(ast.Wait("ok"), ast.Sleep(time.Hour)),
			script: [][]string{{"sig ok 1 true"}},
			status: job.StatusSucceeded,
			nodes:  map[string]string{"race[0]": "succeeded true", "race[1]": `failed race[1] (): "the sleep of 1h0m0s was withdrawn" +0`}},
		{name: "race of a wait and a sleep: timed out", tree: ast.Race(ast.Wait("ok"), ast.Sleep(time.Hour)),
			script: [][]string{{"fire race[1]"}},
			status: job.StatusSucceeded,
			nodes:  map[string]string{"race[0]": `failed race[0] (): "the wait for signal ok was withdrawn" +0`, "race[1]": "succeeded"}},
		// A signal beats a firing of the same batch.
		{name: "race of a wait and a sleep: both in one batch", tree: ast.Race(ast.Wait("ok"), ast.Sleep(time.Hour)),
			script: [][]string{{"fire race[1]", "sig ok 1 2"}},
			status: job.StatusSucceeded,
			nodes:  map[string]string{"race[0]": "succeeded 2", "race[1]": `failed race[1] (): "the sleep of 1h0m0s was withdrawn" +0`}},
		// 10, 18: waits as copies take signals in index order; the map's
		// output is their payloads.
		{name: "map of waits", tree: xs(ast.Wait("go")), out: map[string]string{"seq[0]": `[1,2]`},
			script: [][]string{{"acts"}, {"sig go b 2", "sig go a 1"}},
			ran:    []string{"seq[0]#1"}, status: job.StatusSucceeded,
			nodes: map[string]string{"seq[1]": "succeeded [1,2]"}},
	}
}

// TestOracleGrowExamples plays each example on the oracle, which must
// give what the rules say, and on the reducer, which must agree with the
// oracle on every node.
func TestOracleGrowExamples(t *testing.T) {
	for _, e := range growExamples() {
		t.Run(e.name, func(t *testing.T) {
			if err := ast.Validate(e.tree); err != nil {
				t.Fatalf("Validate: %v", err)
			}
			c := propCase{Tree: e.tree, Start: growStart, Dyn: e.outcome}
			o := oracleStart(c)
			tr, err := job.New("ex", e.tree, job.StartedAt(c.Start))
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			j := tr.Job
			byID := map[string]job.Action{}
			var acts []job.Action
			note := func(tr job.Transition) {
				for _, a := range tr.Actions {
					byID[a.ID] = a
				}
				acts = append(acts, tr.Actions...)
			}
			note(tr)
			step := 0
			play := func(events []string) {
				step++
				at := growStart.Add(time.Duration(step) * time.Minute)
				var ids, fires []string
				var sigs []oracleSignal
				var batch []job.Result
				for _, ev := range events {
					f := strings.SplitN(ev, " ", 4)
					switch f[0] {
					case "acts":
						ids = append(ids, o.queue...)
					case "act":
						ids = append(ids, f[1])
					case "sig":
						s := oracleSignal{Name: f[1], ID: f[2]}
						if len(f) > 3 {
							s.Payload = []byte(f[3])
						}
						sigs = append(sigs, s)
						batch = append(batch, job.SignalResult("ex", job.Signal{Name: s.Name, ID: s.ID, Payload: s.Payload, At: at}))
					case "fire":
						fires = append(fires, f[1])
						batch = append(batch, job.Result{JobID: "ex", ActionID: ast.ShowPath(f[1]) + "@sleep", At: at})
					}
				}
				for _, id := range ids {
					r := c.result(byID[id])
					r.At = at
					batch = append(batch, r)
				}
				o.deliverEvents(at, ids, sigs, fires)
				tr, err := job.Restart(j, batch)
				if err != nil {
					t.Fatalf("Restart: %v", err)
				}
				j = tr.Job
				note(tr)
			}
			for _, b := range e.script {
				play(b)
			}
			for i := 0; len(o.queue) > 0; i++ {
				if i > 100 {
					t.Fatal("no end")
				}
				play([]string{"act " + o.queue[0]})
			}
			if len(o.bad) > 0 {
				t.Errorf("the oracle read inputs that had not succeeded: %v", o.bad)
			}
			if diff := cmp.Diff(e.ran, o.ran); diff != "" {
				t.Errorf("oracle ran (-want +got):\n%s", diff)
			}
			if got := o.root.status(); got != e.status {
				t.Errorf("oracle: %s, want %s", got, e.status)
			}
			if got := oracleOutcome(c, &c.Tree, ""); got != e.status && got != job.StatusIdle {
				t.Errorf("oracleOutcome: %s, want %s", got, e.status)
			}
			states := map[string]propNodeState{}
			for _, s := range o.states() {
				states[s.Path] = s
			}
			for path, want := range e.nodes {
				s, ok := states[path]
				got := s.Status
				switch {
				case !ok:
					got = "(no node)"
				case s.Failure != "":
					got += " " + s.Failure
				case s.Output != "":
					got += " " + s.Output
				}
				if got != want {
					t.Errorf("oracle: node %q is %s, want %s", path, got, want)
				}
			}
			for id, want := range e.inputs {
				var parts []string
				for _, in := range o.inputs[id] {
					parts = append(parts, fmt.Sprintf("%s=%s", in.Name, in.Output))
				}
				if got := strings.Join(parts, " "); got != want {
					t.Errorf("oracle: inputs of %s are %s, want %s", id, got, want)
				}
			}
			if diff := cmp.Diff(o.states(), propStates(j)); diff != "" {
				t.Errorf("node states (-oracle +reducer):\n%s\n%s", diff, job.Describe(j))
			}
			var ran []string
			for _, a := range acts {
				ran = append(ran, a.ID)
			}
			if diff := cmp.Diff(o.ran, ran); diff != "" {
				t.Errorf("dispatched (-oracle +reducer):\n%s", diff)
			}
			for _, a := range acts {
				if diff := cmp.Diff(o.inputs[a.ID], a.Inputs); diff != "" {
					t.Errorf("inputs of %s (-oracle +reducer):\n%s", a.ID, diff)
				}
			}
		})
	}
}
