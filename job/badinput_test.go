package job_test

// Bad input to package job: results routed to the wrong job, broken IDs,
// invalid trees, corrupt and future encodings, broken journals. Each must
// be a clear error (or, for results, an ignored result with its reason),
// never a panic and never a silently wrong job.

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
)

// badTree is par(seq(a, b), c): nodes 0 par, 1 seq, 2 a, 3 b, 4 c.
const badTree = `{"par":[{"seq":[{"act":"a"},{"act":"b"}]},{"act":"c"}]}`

// badDoc returns an encoded job of badTree (or workflow, if given) with
// the given nodes and results.
func badDoc(nodes, results string, workflow ...string) string {
	w := badTree
	if len(workflow) > 0 {
		w = workflow[0]
	}
	return `{"format":1,"id":"j","version":3,"workflow":` + w + `,"nodes":[` + nodes + `],"results":[` + results + `]}`
}

// badRunning is the state of badTree right after New: a and c running.
const badRunning = `[0,1,0,0,0,0,0,0,0],[1,1,0,0,0,0,0,0,0],[2,1,0,1,0,0,0,0,0],[4,1,0,1,0,0,0,0,0]`

func badNew(t *testing.T) (job.Job, []job.Action) {
	t.Helper()
	w, err := ast.Decode([]byte(`{"version":1,"root":` + badTree + `}`))
	if err != nil {
		t.Fatal(err)
	}
	trJ, err := job.New("j", w)
	j, acts := trJ.Job, trJ.Actions
	if err != nil {
		t.Fatal(err)
	}
	return j, acts
}

func TestBadResultForAnotherJob(t *testing.T) {
	j, acts := badNew(t)
	before := propEnc(t, j)
	stray := job.Result{JobID: "other-job", ActionID: acts[0].ID}
	for _, batch := range [][]job.Result{
		{stray},
		{acts[0].Succeed(nil), stray, acts[1].Fail("x")},
	} {
		trNext, err := job.Restart(j, batch)
		if err == nil {
			t.Fatalf("Restart accepted a result of another job")
		}
		if !errors.Is(err, job.ErrWrongJob) {
			t.Errorf("error %q does not wrap job.ErrWrongJob", err)
		}
		for _, want := range []string{"job j:", `"other-job"`, acts[0].ID} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not name %s", err, want)
			}
		}
		if trNext.Changed() || len(trNext.Actions) != 0 || len(trNext.Ignored) != 0 {
			t.Fatalf("a batch with a stray result returned a transition: %+v", trNext)
		}
	}
	if !bytes.Equal(propEnc(t, j), before) {
		t.Fatalf("Restart changed its input")
	}
}

func TestBadZeroJob(t *testing.T) {
	var zero job.Job
	if _, err := job.Restart(zero, nil); err == nil || !strings.Contains(err.Error(), "zero Job") {
		t.Errorf("Restart of a zero Job: %v", err)
	}
	if _, err := job.Encode(zero); err == nil || !strings.Contains(err.Error(), "zero Job") {
		t.Errorf("Encode of a zero Job: %v", err)
	}
	if _, err := job.Replay(zero, nil); err == nil || !strings.Contains(err.Error(), "zero Job") {
		t.Errorf("Replay of a zero Job: %v", err)
	}
	if got := job.Describe(zero); got != "job <zero>\n" {
		t.Errorf("Describe of a zero Job = %q", got)
	}
	if zero.Done() || zero.Status() != job.StatusIdle || zero.Running() != 0 || len(zero.Outstanding()) != 0 {
		t.Errorf("zero Job reports %s, done %v", zero.Status(), zero.Done())
	}
	zero.Walk(func(job.NodeInfo) bool { t.Errorf("Walk of a zero Job called f"); return false })
}

func TestBadJobID(t *testing.T) {
	w := ast.Act("a", nil)
	tests := []struct {
		id   job.ID
		want string
	}{
		{"", "job: empty job ID"},
		{job.ID(strings.Repeat("x", job.MaxIDLen+1)), "job ID is 201 bytes long (at most 200)"},
		{"a b", `job ID "a b" has ' ' at byte 1`},
		{"a/b", `job ID "a/b" has '/' at byte 1`},
		{"a\tb", `job ID "a\tb" has '\t' at byte 1`},
		{"a\x00", `job ID "a\x00" has '\x00' at byte 1`},
		{"\xffa", `job ID "\xffa" is not valid UTF-8`},
		{"a\u00a0b", `has '\u00a0' at byte 1`},
		{".", `job ID "." is not allowed`},
		{"..", `job ID ".." is not allowed`},
		{"a\ufffdb", `has '�' at byte 1`},
		{"a\ufff0", `has '\ufff0' at byte 1`},
	}
	for _, tc := range tests {
		tr, err := job.New(tc.id, w)
		acts := tr.Actions
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%q): %v, want an error containing %q", tc.id, err, tc.want)
		}
		if acts != nil {
			t.Errorf("New(%q) returned actions with its error", tc.id)
		}
	}
	for _, ok := range []job.ID{"x", "order-7", "ünï.cödé_42", "...", ".a", "a..", job.ID(strings.Repeat("x", job.MaxIDLen))} {
		if err := ok.Check(); err != nil {
			t.Errorf("ID %q: %v", ok, err)
		}
	}
}

func TestBadTreeToNew(t *testing.T) {
	tests := []struct {
		name string
		n    ast.Node
		want []string
	}{
		{"zero node", ast.Node{}, []string{"job j-1: workflow: root: unknown node kind 0"}},
		{"empty par", ast.Seq(ast.Act("a", nil), ast.Par()), []string{"job j-1: workflow: seq[1]: par has no children"}},
		{"bad name and payload", ast.Par(ast.Act("", nil), ast.Act("b", make(chan int))),
			[]string{"job j-1: workflow: 2 problems:", "par[0]: action name is empty", "par[1]: payload does not marshal to JSON"}},
		{"try without body", ast.Seq(ast.Node{Kind: ast.KindTry}), []string{"seq[0]: try has no body"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			trJ, err := job.New("j-1", tc.n)
			j, acts := trJ.Job, trJ.Actions
			if err == nil {
				t.Fatalf("New accepted an invalid tree")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			var ae *ast.Error
			if !errors.As(err, &ae) {
				t.Errorf("error %v does not wrap an *ast.Error", err)
			}
			if acts != nil || j.Workflow().Kind != ast.KindInvalid {
				t.Errorf("New returned a job or actions with its error")
			}
		})
	}
}

// TestBadResultIDs sends results whose IDs name nothing: each is ignored
// as unknown with a detail saying what did not match.
func TestBadResultIDs(t *testing.T) {
	j, _ := badNew(t)
	tests := []struct{ id, detail string }{
		{"", "has no '#attempt'"},
		{"par[0].seq[0]", "has no '#attempt'"},
		{"par[0].seq[0]#", "bad attempt"},
		{"par[0].seq[0]#0", "bad attempt"},
		{"par[0].seq[0]#-1", "bad attempt"},
		{"par[0].seq[0]#01", "bad attempt"},
		{"par[0].seq[0]#x", "bad attempt"},
		{"#1", "empty path"},
		{"root#1", "path names a par node, not an action"},
		{"par[0]#1", "path names a seq node, not an action"},
		{"par[2]#1", `step "par[2]": no such child`},
		{"par[01]#1", `step "par[01]": no such child`},
		{"par[-1]#1", `step "par[-1]": no such child`},
		{"seq[0]#1", `step "seq[0]" under a par (want par[i])`},
		{"par[0].seq[0].x#1", `step "x" below an action`},
		{"par[0].#1", "path ends with '.'"},
		{"par[0]..seq[0]#1", "empty step in the path"},
		{"body#1", `step "body" under a par`},
		{"par[99999999999]#1", "no such child"},
	}
	var batch []job.Result
	for _, tc := range tests {
		batch = append(batch, job.Result{JobID: "j", ActionID: tc.id})
	}
	trNext, err := job.Restart(j, batch)
	next, acts := trNext.Job, trNext.Actions
	if err != nil || len(acts) != 0 || next.Version() != j.Version() {
		t.Fatalf("Restart: %v, %d actions, v%d", err, len(acts), next.Version())
	}
	if len(trNext.Ignored) != len(tests) {
		t.Fatalf("%d results ignored, want %d: %v", len(trNext.Ignored), len(tests), trNext.Ignored)
	}
	details := map[string]job.Ignored{}
	for _, ig := range trNext.Ignored {
		details[ig.Result.ActionID] = ig
	}
	for _, tc := range tests {
		ig := details[tc.id]
		if ig.Reason != job.IgnoredUnknown || !strings.Contains(ig.Detail, tc.detail) {
			t.Errorf("%q: ignored as %q (%s), want unknown with %q", tc.id, ig.Reason, ig.Detail, tc.detail)
		}
		if !strings.Contains(ig.String(), "unknown action") {
			t.Errorf("%q: Ignored.String() = %q", tc.id, ig.String())
		}
	}
}

// TestBadDecode feeds Decode corrupt and future encodings. Every one is an
// error wrapping ErrCorrupt (or ErrFutureFormat) that says what is wrong.
func TestBadDecode(t *testing.T) {
	if _, err := job.Decode([]byte(badDoc(badRunning, ""))); err != nil {
		t.Fatalf("the valid base document does not decode: %v", err)
	}
	tests := []struct {
		name   string
		doc    string
		future bool
		want   string
	}{
		{"empty", ``, false, "EOF"},
		{"not JSON", `hello`, false, "invalid character"},
		{"array", `[1,2]`, false, "cannot unmarshal array"},
		{"null", `null`, false, "no format version"},
		{"no format", strings.Replace(badDoc(badRunning, ""), `"format":1,`, ``, 1), false, "no format version"},
		{"format 0", strings.Replace(badDoc(badRunning, ""), `"format":1`, `"format":0`, 1), false, "format 0"},
		{"format negative", strings.Replace(badDoc(badRunning, ""), `"format":1`, `"format":-1`, 1), false, "format -1"},
		{"format string", strings.Replace(badDoc(badRunning, ""), `"format":1`, `"format":"1"`, 1), false, "format"},
		{"future format", strings.Replace(badDoc(badRunning, ""), `"format":1`, `"format":11`, 1), true, "format 11 (this baton reads up to 10)"},
		{"incarnation in format 1", strings.Replace(badDoc(badRunning, ""), `"id":"j",`, `"id":"j","incarnation":7,`, 1), false, "incarnation 7 in format 1"},
		{"incarnation 0 in format 2", strings.Replace(strings.Replace(badDoc(badRunning, ""), `"format":1`, `"format":2`, 1), `"id":"j",`, `"id":"j","incarnation":0,`, 1), false, "incarnation 0 in format 2"},
		{"negative incarnation", strings.Replace(strings.Replace(badDoc(badRunning, ""), `"format":1`, `"format":2`, 1), `"id":"j",`, `"id":"j","incarnation":-1,`, 1), false, "incarnation"},
		{"far future format", strings.Replace(badDoc(badRunning, ""), `"format":1`, `"format":9999`, 1), true, "format 9999"},
		{"unknown field", strings.Replace(badDoc(badRunning, ""), `"version":3`, `"version":3,"owner":"me"`, 1), false, `unknown field "owner"`},
		{"trailing data", badDoc(badRunning, "") + ` {}`, false, "data after the job"},
		{"no id", strings.Replace(badDoc(badRunning, ""), `"id":"j",`, ``, 1), false, "empty job ID"},
		{"bad id", strings.Replace(badDoc(badRunning, ""), `"id":"j"`, `"id":"a/b"`, 1), false, `job ID "a/b" has '/'`},
		{"version 0", strings.Replace(badDoc(badRunning, ""), `"version":3`, `"version":0`, 1), false, "version 0"},
		{"negative version", strings.Replace(badDoc(badRunning, ""), `"version":3`, `"version":-1`, 1), false, "version"},
		{"no workflow", strings.Replace(badDoc(badRunning, ""), `"workflow":`+badTree+`,`, ``, 1), false, "workflow"},
		{"invalid workflow", badDoc(`[0,1,0,0,0,0,0,0,0]`, "", `{"seq":[]}`), false, "workflow: workflow: root: seq has no children"},
		{"unknown node kind", badDoc(`[0,1,0,0,0,0,0,0,0]`, "", `{"repeat":[]}`), false, "root: node has none of the keys"},
		{"nodes not an array", strings.Replace(badDoc(badRunning, ""), `"nodes":[`+badRunning+`]`, `"nodes":5`, 1), false, "cannot unmarshal"},
		{"8 fields", badDoc(`[0,1,0,0,0,0,0,0]`, ""), false, "nodes[0] has 8 fields, want 9"},
		{"10 fields", badDoc(badRunning+`,[3,0,0,0,0,0,0,0,0,0]`, ""), false, "nodes[4] has 10 fields, want 9"},
		{"no fields", badDoc(`[]`, ""), false, "nodes[0] has 0 fields, want 9"},
		{"index out of range", badDoc(badRunning+`,[5,1,0,1,0,0,0,0,0]`, ""), false, "nodes[4] names node 5 (want increasing indexes below 5)"},
		{"negative index", badDoc(`[-1,1,0,0,0,0,0,0,0],`+badRunning, ""), false, "nodes[0] names node -1"},
		{"index repeated", badDoc(badRunning+`,[4,1,0,1,0,0,0,0,0]`, ""), false, "nodes[4] names node 4"},
		{"indexes decreasing", badDoc(`[1,1,0,0,0,0,0,0,0],[0,1,0,0,0,0,0,0,0],[2,1,0,1,0,0,0,0,0],[4,1,0,1,0,0,0,0,0]`, ""), false, "nodes[1] names node 0"},
		{"field negative", badDoc(`[0,1,0,0,0,0,0,0,0],[1,1,0,0,0,0,0,0,0],[2,1,0,-1,0,0,0,0,0],[4,1,0,1,0,0,0,0,0]`, ""), false, "nodes[2] field 3 is -1"},
		{"field too large", badDoc(`[0,1,0,0,0,0,0,0,0],[1,1,0,0,0,0,0,0,0],[2,1,0,2147483648,0,0,0,0,0],[4,1,0,1,0,0,0,0,0]`, ""), false, "field 3 is 2147483648"},
		{"field not an integer", badDoc(`[0,1,0,0,0,0,0,0,0],[1,1,0,0,0,0,0,0,0],[2,1,0,1.5,0,0,0,0,0],[4,1,0,1,0,0,0,0,0]`, ""), false, "cannot unmarshal"},
		{"status out of range", badDoc(`[0,1,0,0,0,0,0,0,0],[1,1,0,0,0,0,0,0,0],[2,7,0,1,0,0,0,0,0],[4,1,0,1,0,0,0,0,0]`, ""), false, "node 2 has status 7/0"},
		{"outcome out of range", badDoc(`[0,1,5,0,0,0,0,0,0],[1,1,0,0,0,0,0,0,0],[2,1,0,1,0,0,0,0,0],[4,1,0,1,0,0,0,0,0]`, ""), false, "node 0 has status 1/5"},
		{"par with wrong counts", badDoc(`[0,1,0,0,0,1,0,0,0],[1,1,0,0,0,0,0,0,0],[2,1,0,1,0,0,0,0,0],[4,1,0,1,0,0,0,0,0]`, ""), false,
			"node 0 (root, par): counts done=1 nfail=0"},
		{"par with a failure it does not count", badDoc(`[0,1,0,0,0,1,0,0,0],[1,1,0,0,0,0,0,0,0],[2,1,0,1,0,0,0,0,0],[4,3,0,1,0,0,0,5,0]`, `{"node":4,"error":"x"}`), false,
			"node 0 (root, par): counts done=1 nfail=0"},
		{"par settled with a running child", badDoc(`[0,2,0,0,0,2,0,0,0],[1,1,0,0,0,0,0,0,0],[2,1,0,1,0,0,0,0,0],[4,2,0,1,0,0,0,0,0]`, `{"node":4}`), false,
			"node 0 (root, par): counts"},
		{"running under an idle parent", badDoc(`[2,1,0,1,0,0,0,0,0]`, ""), false, "node 2 (par[0].seq[0], act): running under an idle parent"},
		{"seq position out of range", badDoc(`[0,1,0,0,0,0,0,0,0],[1,1,0,0,5,0,0,0,0],[2,1,0,1,0,0,0,0,0],[4,1,0,1,0,0,0,0,0]`, ""), false, "seq position 5 of 2"},
		{"seq ahead of its children", badDoc(`[0,1,0,0,0,0,0,0,0],[1,1,0,0,1,0,0,0,0],[2,1,0,1,0,0,0,0,0],[4,1,0,1,0,0,0,0,0]`, ""), false, "child 0 is running, want succeeded"},
		{"action with seq state", badDoc(`[0,1,0,0,0,0,0,0,0],[1,1,0,0,0,0,0,0,0],[2,1,0,1,1,0,0,0,0],[4,1,0,1,0,0,0,0,0]`, ""), false, "action has composite state"},
		{"running action never dispatched", badDoc(`[0,1,0,0,0,0,0,0,0],[1,1,0,0,0,0,0,0,0],[2,1,0,0,0,0,0,0,0],[4,1,0,1,0,0,0,0,0]`, ""), false, "running action with attempt 0"},
		{"running action with a result", badDoc(badRunning, `{"node":2,"output":1}`), false, "running action with attempt 1, waiting=false, result true"},
		{"succeeded action without a result", badDoc(`[0,1,0,0,0,0,0,0,0],[1,1,0,0,1,0,0,0,0],[2,2,0,1,0,0,0,0,0],[3,1,0,1,0,0,0,0,0],[4,1,0,1,0,0,0,0,0]`, ""), false,
			"succeeded action without a matching result"},
		{"succeeded action with an error", badDoc(`[0,1,0,0,0,0,0,0,0],[1,1,0,0,1,0,0,0,0],[2,2,0,1,0,0,0,0,0],[3,1,0,1,0,0,0,0,0],[4,1,0,1,0,0,0,0,0]`, `{"node":2,"error":"x"}`), false,
			"succeeded action without a matching result"},
		{"failed action caused elsewhere", badDoc(`[0,1,0,0,0,1,1,5,0],[1,1,0,0,0,0,0,0,0],[2,1,0,1,0,0,0,0,0],[4,3,0,1,0,0,0,3,0]`, `{"node":4,"error":"x"}`), false,
			"cause 3 is not a failed action or an expired node under it"},
		{"cause out of range", badDoc(`[0,1,0,0,0,1,1,99,0],[1,1,0,0,0,0,0,0,0],[2,1,0,1,0,0,0,0,0],[4,3,0,1,0,0,0,5,0]`, `{"node":4,"error":"x"}`), false,
			"node 0 (root, par): cause 99 is not a failed action or an expired node under it"},
		{"cause without a failure", badDoc(`[0,1,0,0,0,0,0,3,0],[1,1,0,0,0,0,0,0,0],[2,1,0,1,0,0,0,0,0],[4,1,0,1,0,0,0,0,0]`, ""), false,
			"cause 3 and others 0 without a failure"},
		{"cancelled action dispatched", badDoc(`[0,3,4,0,0,2,1,3,0],[1,3,0,0,0,0,0,3,0],[2,3,0,1,0,0,0,3,0],[4,4,0,1,0,0,0,0,0]`, `{"node":2,"error":"x"}`), false,
			"node 4 (par[1], act): cancelled action was dispatched"},
		{"result for a seq", badDoc(badRunning, `{"node":1}`), false, "results[0] is for node 1, a seq"},
		{"result out of range", badDoc(badRunning, `{"node":5}`), false, "results[0] names node 5"},
		{"results repeated", badDoc(badRunning, `{"node":2},{"node":2}`), false, "results[1] names node 2"},
		{"output and output_b64", badDoc(badRunning, `{"node":2,"output":1,"output_b64":"AA=="}`), false, "results[0] has both output and output_b64"},
		{"output_b64 not base64", badDoc(badRunning, `{"node":2,"output_b64":"!!"}`), false, "illegal base64"},
		{"result with an unknown field", badDoc(badRunning, `{"node":2,"attempt":1}`), false, `unknown field "attempt"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			j, err := job.Decode([]byte(tc.doc))
			badWantDecodeError(t, j, err, tc.future, tc.want)
		})
	}
}

func badWantDecodeError(t *testing.T, j job.Job, err error, future bool, want string) {
	t.Helper()
	if err == nil {
		t.Fatalf("Decode accepted it:\n%s", job.Describe(j))
	}
	if future {
		if !errors.Is(err, job.ErrFutureFormat) || errors.Is(err, job.ErrCorrupt) {
			t.Errorf("error %q: want ErrFutureFormat and not ErrCorrupt", err)
		}
	} else if !errors.Is(err, job.ErrCorrupt) || errors.Is(err, job.ErrFutureFormat) {
		t.Errorf("error %q: want ErrCorrupt and not ErrFutureFormat", err)
	}
	if !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not contain %q", err, want)
	}
	if j.Workflow().Kind != ast.KindInvalid {
		t.Errorf("Decode returned a job with its error")
	}
}

// TestBadDecodeTruncated cuts a real encoding at every byte: every prefix
// is corrupt, and none makes Decode panic.
func TestBadDecodeTruncated(t *testing.T) {
	j, err := goldenPlay(nil, "cut", ast.Par(ast.Seq(ast.Act("a", 1), ast.Act("b", nil)), ast.Try(ast.Act("c", nil), ast.Rescue(ast.Act("r", nil)), ast.Finally(ast.Act("f", nil)))),
		map[string]string{"par[0].seq[0]#1": `ok:{"x":1}`, "par[1].body#1": "fail:no"})
	if err != nil {
		t.Fatal(err)
	}
	enc := propEnc(t, j)
	for n := 0; n < len(enc); n++ {
		if _, err := job.Decode(enc[:n]); err == nil || !errors.Is(err, job.ErrCorrupt) {
			t.Fatalf("Decode of the first %d of %d bytes: %v, want ErrCorrupt", n, len(enc), err)
		}
	}
	if _, err := job.Decode(enc); err != nil {
		t.Fatalf("the whole encoding: %v", err)
	}
}

// TestBadDecodeTrailingBracket: a valid encoding followed by a stray '}'
// or ']' is not a valid document, like one followed by any other data.
func TestBadDecodeTrailingBracket(t *testing.T) {
	for _, tail := range []string{"}", "]", " }", "}}"} {
		j, err := job.Decode([]byte(badDoc(badRunning, "") + tail))
		t.Run(fmt.Sprintf("%q", tail), func(t *testing.T) {
			badWantDecodeError(t, j, err, false, "after the job")
		})
	}
}

// TestBadDecodeCheckGaps are states no run of the reducer can produce and
// that break the semantics; Decode promises to check every invariant, so
// each must be ErrCorrupt.
func TestBadDecodeCheckGaps(t *testing.T) {
	seqAB := `{"seq":[{"act":"a"},{"act":"b"}]}`
	tests := []struct {
		name, doc, why string
	}{
		{"idle root", badDoc(``, ``, `{"act":"a"}`),
			"a job is running, succeeded or failed; an idle root has nothing outstanding and never ends"},
		{"cancelled root", badDoc(`[0,4,0,0,0,0,0,0,0]`, ``, `{"act":"a"}`),
			"the root is never cancelled"},
		{"seq succeeded before its last child ran", badDoc(`[0,2,0,0,0,0,0,0,0],[1,2,0,1,0,0,0,0,0]`, `{"node":1}`, seqAB),
			"a seq succeeds after its last child"},
		{"try settled without running its finally", badDoc(`[0,2,2,0,0,0,0,0,0],[1,2,0,1,0,0,0,0,0]`, `{"node":1}`, `{"try":{"act":"a"},"finally":{"act":"f"}}`),
			"a finally runs exactly once after the body"},
		{"try failed without running its rescue", badDoc(`[0,3,3,0,0,0,0,2,0],[1,3,0,1,0,0,0,2,0]`, `{"node":1,"error":"x"}`, `{"try":{"act":"a"},"rescue":{"act":"r"}}`),
			"the rescue runs (or is cancelled) when the body fails"},
		{"cancelled with no failed par above", badDoc(`[0,1,4,0,0,1,0,0,0],[1,1,0,1,0,0,0,0,0],[2,4,0,0,0,0,0,0,0]`, ``, `{"par":[{"act":"a"},{"act":"b"}]}`),
			"only a frozen par cancels; once a succeeds this job ends cancelled"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			j, err := job.Decode([]byte(tc.doc))
			if err == nil {
				t.Fatalf("Decode accepted an impossible state (%s):\n%s", tc.why, job.Describe(j))
			}
			if !errors.Is(err, job.ErrCorrupt) {
				t.Fatalf("error %q does not wrap ErrCorrupt", err)
			}
		})
	}
}

// TestBadVersionOverflow: Decode accepts any version up to MaxUint64, so
// the next Restart must not wrap it around to an encoding Decode refuses.
func TestBadVersionOverflow(t *testing.T) {
	doc := strings.Replace(badDoc(badRunning, ""), `"version":3`, fmt.Sprintf(`"version":%d`, uint64(math.MaxUint64)), 1)
	j, err := job.Decode([]byte(doc))
	if err != nil {
		return // refusing the version is a fine answer
	}
	acts := j.Outstanding()
	trNext, err := job.Restart(j, []job.Result{acts[0].Succeed(nil)})
	next := trNext.Job
	if err != nil {
		return // refusing to go past the last version is a fine answer too
	}
	if next.Version() <= j.Version() {
		t.Errorf("version went from %d to %d", j.Version(), next.Version())
	}
	if _, err := job.Decode(propEnc(t, next)); err != nil {
		t.Errorf("the job Restart returned does not decode: %v", err)
	}
}

// TestBadErrorMessageNotUTF8: an action's error message is whatever the
// handler returned, valid UTF-8 or not. The job must still survive
// Encode/Decode unchanged, or a stored job and the live one differ.
func TestBadErrorMessageNotUTF8(t *testing.T) {
	j, acts := badNew(t)
	trJ, err := job.Restart(j, []job.Result{acts[1].Fail("disk \xff\xfe full")})
	j = trJ.Job
	if err != nil {
		t.Fatal(err)
	}
	enc := propEnc(t, j)
	d, err := job.Decode(enc)
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	if again := propEnc(t, d); !bytes.Equal(again, enc) {
		t.Errorf("Encode(Decode(Encode(j))) differs from Encode(j):\n%s\n%s", enc, again)
	}
	if a, b := job.Describe(j), job.Describe(d); a != b {
		t.Errorf("Describe differs after Encode/Decode:\n%q\n%q", a, b)
	}
}

// TestBadReplay feeds Replay broken journals.
func TestBadReplay(t *testing.T) {
	origin, acts := badNew(t)
	trJ1, err := job.Restart(origin, []job.Result{acts[0].Succeed(nil)})
	j1, more := trJ1.Job, trJ1.Actions
	if err != nil {
		t.Fatal(err)
	}
	trJ2, err := job.Restart(j1, []job.Result{more[0].Succeed(nil), acts[1].Succeed(nil)})
	j2 := trJ2.Job
	if err != nil || !j2.Done() {
		t.Fatalf("%v %s", err, j2)
	}
	s1, s2 := trJ1.Step, trJ2.Step
	if got, err := job.Replay(origin, []job.Step{s1, s2}); err != nil || !bytes.Equal(propEnc(t, got), propEnc(t, j2)) {
		t.Fatalf("the good journal: %v", err)
	}
	tests := []struct {
		name  string
		steps []job.Step
		want  string
	}{
		{"gap", []job.Step{s2}, "job j: replay step 0 has version 3, want 2 (a gap in the history)"},
		{"empty step", []job.Step{{Version: 2}}, "replay step 0 (version 2) has no results"},
		{"result that no longer applies", []job.Step{s1, {Version: 3, Results: []job.Result{acts[0].Succeed(nil)}}},
			"replay step 1 (version 3) does not apply as recorded: 1 of 1 results ignored (first: par[0].seq[0]#1: duplicate)"},
		{"unknown action", []job.Step{{Version: 2, Results: []job.Result{{JobID: "j", ActionID: "nope#1"}}}}, "does not apply as recorded"},
		{"another job's step", []job.Step{{Version: 2, Results: []job.Result{{JobID: "k", ActionID: acts[0].ID}}}},
			`job j: replay step 0 (version 2): job j: result 0 (action "par[0].seq[0]#1") belongs to job "k"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := job.Replay(origin, tc.steps)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Replay: %v, want an error containing %q", err, tc.want)
			}
		})
	}
}
