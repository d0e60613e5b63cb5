package job_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
)

// TestMapLoopRun: New runs a workflow with a map or a loop (it refused
// them before the reducer ran them), starting what starts with the job.
func TestMapLoopRun(t *testing.T) {
	for _, tc := range []struct {
		w    ast.Node
		want []string
	}{
		{ast.Seq(ast.Act("l", nil).Named("xs"), ast.Map("xs", ast.Act("x", nil).WithInputs("item"))), []string{"seq[0]#1"}},
		{ast.Par(ast.Act("a", nil), ast.Loop(ast.Act("p", nil).Named("p"), "p", true, 3)), []string{"par[0]#1", "par[1].loop[0]#1"}},
	} {
		tr, err := job.New("j", tc.w)
		if err != nil {
			t.Fatalf("New: %v", err)
		}
		if len(tr.Actions) != len(tc.want) {
			t.Fatalf("actions %v, want %v", tr.Actions, tc.want)
		}
		for i, a := range tr.Actions {
			if a.ID != tc.want[i] {
				t.Errorf("action %d is %s, want %s", i, a.ID, tc.want[i])
			}
		}
	}
}

// mlStep applies rs to j, checking the job and failing on an error.
func mlStep(t *testing.T, j job.Job, rs ...job.Result) job.Transition {
	t.Helper()
	tr, err := job.Restart(j, rs)
	if err != nil {
		t.Fatal(err)
	}
	if err := job.Check(tr.Job); err != nil {
		t.Fatalf("check: %v\n%s", err, job.Describe(tr.Job))
	}
	return tr
}

// mlOK returns the success of the outstanding action id of j.
func mlOK(t *testing.T, j job.Job, id, out string) job.Result {
	t.Helper()
	a, ok := j.Pending(id)
	if !ok {
		t.Fatalf("%s is not outstanding:\n%s", id, job.Describe(j))
	}
	if out == "" {
		return a.Succeed(nil)
	}
	return a.Succeed([]byte(out))
}

// mlFail returns the failure of the outstanding action id of j.
func mlFail(t *testing.T, j job.Job, id string) job.Result {
	t.Helper()
	a, ok := j.Pending(id)
	if !ok {
		t.Fatalf("%s is not outstanding:\n%s", id, job.Describe(j))
	}
	return a.Fail("boom " + id)
}

// TestMapTooLarge: a map over more than ast.MaxCopies elements fails as
// it starts, kind map_too_large; one of exactly MaxCopies runs them all.
func TestMapTooLarge(t *testing.T) {
	w := ast.Seq(ast.Act("list", nil).Named("xs"), ast.Map("xs", ast.Act("x", nil)))
	for _, n := range []int{ast.MaxCopies + 1, ast.MaxCopies} {
		tr, err := job.New("j", w)
		if err != nil {
			t.Fatal(err)
		}
		arr := "[" + strings.TrimSuffix(strings.Repeat("0,", n), ",") + "]"
		tr = mlStep(t, tr.Job, mlOK(t, tr.Job, "seq[0]#1", arr))
		f, failed := tr.Job.Failure()
		switch {
		case n > ast.MaxCopies && (!failed || f.Kind != job.KindMapTooLarge || f.Path != "seq[1]"):
			t.Errorf("%d elements: failure %v (%v), want map_too_large at seq[1]", n, f, failed)
		case n <= ast.MaxCopies && (failed || len(tr.Actions) != n):
			t.Errorf("%d elements: %d actions, failure %v", n, len(tr.Actions), f)
		}
	}
}

// mlCases are jobs with maps and loops, played to the middle of their
// run: the round trip and the ordering tests use them.
func mlCases(t *testing.T) map[string]job.Job {
	t.Helper()
	out := map[string]job.Job{}
	start := job.StartedAt(time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC))

	// A map with a limit, its copies seqs, one done, one halfway.
	tr, err := job.New("m", ast.Seq(ast.Act("list", nil).Named("xs"),
		ast.Map("xs", ast.Seq(ast.Act("a", nil).WithInputs("item").Named("got"), ast.Act("b", nil).WithInputs("got", "index"))).WithLimit(2).Named("all"),
		ast.Act("after", nil).WithInputs("all")))
	if err != nil {
		t.Fatal(err)
	}
	j := tr.Job
	j = mlStep(t, j, mlOK(t, j, "seq[0]#1", `["x","y","z"]`)).Job
	j = mlStep(t, j, mlOK(t, j, "seq[1].map[0].seq[0]#1", `1`), mlOK(t, j, "seq[1].map[1].seq[0]#1", `2`)).Job
	j = mlStep(t, j, mlOK(t, j, "seq[1].map[0].seq[1]#1", ``)).Job
	out["map-limit"] = j

	// A map with a need, won, a copy stopped.
	tr, err = job.New("n", ast.Seq(ast.Act("list", nil).Named("xs"), ast.Map("xs", ast.Act("ask", nil)).WithNeed(1).Named("q"), ast.Act("use", nil).WithInputs("q")))
	if err != nil {
		t.Fatal(err)
	}
	j = tr.Job
	j = mlStep(t, j, mlOK(t, j, "seq[0]#1", `[1,2]`)).Job
	out["map-need"] = mlStep(t, j, mlOK(t, j, "seq[1].map[1]#1", `"yes"`)).Job

	// A loop with a map and a deadline in its body, at iteration 2.
	tr, err = job.New("l", ast.Loop(ast.Seq(ast.Act("poll", nil).Named("ids"),
		ast.Map("ids", ast.Act("check", nil).WithInputs("item", "ids").WithDeadline(time.Hour)),
		ast.Act("ready", nil).Named("done")), "done", true, 5).WithDeadline(24*time.Hour), start)
	if err != nil {
		t.Fatal(err)
	}
	j = tr.Job
	j = mlStep(t, j, mlOK(t, j, "loop[0].seq[0]#1", `[1,2]`)).Job
	j = mlStep(t, j, mlOK(t, j, "loop[0].seq[1].map[0]#1", ``), mlOK(t, j, "loop[0].seq[1].map[1]#1", ``)).Job
	j = mlStep(t, j, mlOK(t, j, "loop[0].seq[2]#1", `false`)).Job
	j = mlStep(t, j, mlOK(t, j, "loop[1].seq[0]#1", `[3]`)).Job
	out["loop-map"] = j

	// Nested maps, the inner over naming a leaf of the outer copy.
	tr, err = job.New("nm", ast.Seq(ast.Act("regions", nil).Named("rs"),
		ast.Map("rs", ast.Seq(ast.Act("hosts", nil).WithInputs("item").Named("hs"), ast.Map("hs", ast.Act("deploy", nil).WithInputs("item", "hs"))))))
	if err != nil {
		t.Fatal(err)
	}
	j = tr.Job
	j = mlStep(t, j, mlOK(t, j, "seq[0]#1", `["eu","us"]`)).Job
	j = mlStep(t, j, mlOK(t, j, "seq[1].map[1].seq[0]#1", `["u1","u2"]`)).Job
	out["nested"] = j
	return out
}

// TestMapLoopRoundTrip: a job with maps and loops, encoded mid-run,
// decodes to the same job (the same encoding and description), and both
// go on alike.
func TestMapLoopRoundTrip(t *testing.T) {
	for name, j := range mlCases(t) {
		t.Run(name, func(t *testing.T) {
			enc, err := job.Encode(j)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(enc, []byte(`"format":10`)) || !bytes.Contains(enc, []byte(`"grown":[`)) {
				t.Errorf("encoding without format 10 or a growth log: %s", enc)
			}
			back, err := job.Decode(enc)
			if err != nil {
				t.Fatalf("Decode: %v\n%s", err, enc)
			}
			enc2, _ := job.Encode(back)
			if !bytes.Equal(enc, enc2) || job.Describe(back) != job.Describe(j) {
				t.Fatalf("round trip differs:\n%s\n%s\n%s\n%s", enc, enc2, job.Describe(j), job.Describe(back))
			}
			// Both go on alike: every outstanding action succeeds.
			for range 20 {
				acts := j.Outstanding()
				if len(acts) == 0 {
					break
				}
				var rs []job.Result
				for _, a := range acts {
					rs = append(rs, a.Succeed([]byte("true")))
				}
				j = mlStep(t, j, rs...).Job
				back = mlStep(t, back, rs...).Job
				a, _ := job.Encode(j)
				b, _ := job.Encode(back)
				if !bytes.Equal(a, b) {
					t.Fatalf("live and decoded jobs differ:\n%s\n%s", a, b)
				}
			}
		})
	}
}

// TestDecodeCorruptGrowth: a growth log that cannot apply is corrupt,
// and the error says what is wrong in it.
func TestDecodeCorruptGrowth(t *testing.T) {
	j := mlCases(t)["loop-map"]
	enc, err := job.Encode(j)
	if err != nil {
		t.Fatal(err)
	}
	good := `"grown":[[3,[1,2]],[0],[3,[3]]]`
	if !bytes.Contains(enc, []byte(good)) {
		t.Fatalf("encoding has no %s: %s", good, enc)
	}
	for _, tc := range []struct{ grown, want string }{
		{`"grown":[[3,[1,2]],[3,[3]]]`, "has copies already"},
		{`"grown":[[1,[1,2]],[0],[3,[3]]]`, "a seq"},
		{`"grown":[[99],[0],[3,[3]]]`, "not [node] or [node, elements]"},
		{`"grown":[[3,[1,2]],[0],[3,[]]]`, "not 1 to 10000 elements"},
		{`"grown":[[3,[1,2]],[0],[3,[3]],[0],[0],[0],[0]]`, "at its last iteration"},
		{`"grown":[[4,[1]],[0],[3,[3]]]`, "does not run"},
		{`"grown":[[3,[1,2]],[0]]`, ""},         // the tree is short of the copies the nodes name
		{`"grown":[[3,[1,2]],[3,[3]],[0]]`, ""}, // applies, but the states say otherwise
	} {
		bad := bytes.Replace(enc, []byte(good), []byte(tc.grown), 1)
		_, err := job.Decode(bad)
		if !errors.Is(err, job.ErrCorrupt) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Decode: %v, want ErrCorrupt saying %q", tc.grown, err, tc.want)
		}
	}
}

// TestMapTreeOrder: a map's copies come after every node in the node
// array, yet what is decided in tree order is: of two failures in one
// batch, the earlier in tree order is reported (a copy before a sibling
// after the map); timers are listed in tree order.
func TestMapTreeOrder(t *testing.T) {
	w := ast.Seq(ast.Act("list", nil).Named("xs"),
		ast.Par(ast.Map("xs", ast.Act("w", nil).WithDeadline(time.Minute)), ast.Act("b", nil).WithDeadline(time.Hour)))
	tr, err := job.New("o", w, job.StartedAt(time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)))
	if err != nil {
		t.Fatal(err)
	}
	tr = mlStep(t, tr.Job, mlOK(t, tr.Job, "seq[0]#1", `[1]`))
	j := tr.Job
	for name, ts := range map[string][]job.Timer{"Timers": j.Timers(), "Transition.Timers": tr.Timers} {
		var ids []string
		for _, tm := range ts {
			ids = append(ids, tm.ID)
		}
		if got, want := strings.Join(ids, " "), "seq[1].par[0].map[0]@deadline seq[1].par[1]@deadline"; got != want {
			t.Errorf("%s: %s, want %s", name, got, want)
		}
	}
	// Both failures reach the par in one batch (the copy's through the
	// map it fails): the copy's is reported, earlier in tree order.
	f, _ := mlStep(t, j, mlFail(t, j, "seq[1].par[1]#1"), mlFail(t, j, "seq[1].par[0].map[0]#1")).Job.Failure()
	if f.Path != "seq[1].par[0].map[0]" || f.Others != 1 {
		t.Errorf("failure %v, want the copy's (earlier in tree order), 1 more", f)
	}
}

// TestMapRaceOrder: a race whose children fail in one batch carries the
// failure of the child earliest in tree order, a copy of a map before a
// sibling after it.
func TestMapRaceOrder(t *testing.T) {
	w := ast.Seq(ast.Act("list", nil).Named("xs"), ast.Race(ast.Map("xs", ast.Act("w", nil)), ast.Act("b", nil)))
	tr, err := job.New("r", w)
	if err != nil {
		t.Fatal(err)
	}
	j := mlStep(t, tr.Job, mlOK(t, tr.Job, "seq[0]#1", `[1]`)).Job
	j = mlStep(t, j, mlFail(t, j, "seq[1].race[1]#1"), mlFail(t, j, "seq[1].race[0].map[0]#1")).Job
	f, _ := j.Failure()
	if !strings.HasPrefix(f.Message, "every child failed: seq[1].race[0]") || f.Path != "seq[1].race[0].map[0]" {
		t.Errorf("failure %+v, want the map's copy first", f)
	}
}

// TestMapLoopBadInput: New's errors for maps and loops name what and
// where (ast.Validate finds them).
func TestMapLoopBadInput(t *testing.T) {
	for _, tc := range []struct {
		w    ast.Node
		want string
	}{
		{ast.Seq(ast.Act("l", nil).Named("xs"), ast.Map("ys", ast.Act("x", nil))), `seq[1]: over "ys": no node has this name`},
		{ast.Seq(ast.Act("l", nil).WithInputs("item")), `seq[0]: input "item" is only for a leaf inside a map`},
		{ast.Loop(ast.Act("p", nil).Named("p"), "p", true, 0), "loop max 0 is out of range"},
		{ast.Loop(ast.Act("p", nil), "q", true, 3), `until "q": no node has this name`},
		{ast.Seq(ast.Act("l", nil).Named("xs"), ast.Map("xs", ast.Act("x", nil)).WithLimit(0).WithNeed(0), ast.Act("item", nil).Named("item")), "item"},
	} {
		_, err := job.New("j", tc.w)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New: %v, want %q", err, tc.want)
		}
	}
}

// TestLoopStaleTimer: a retry timer of an earlier iteration fires after
// the loop moved on: ignored as stale, naming the loop.
func TestLoopStaleTimer(t *testing.T) {
	w := ast.Loop(ast.Act("p", nil).Named("p").WithRetry(ast.Retry{Attempts: 3, Initial: time.Second}), "p", true, 3)
	tr, err := job.New("s", w)
	if err != nil {
		t.Fatal(err)
	}
	j := tr.Job
	j = mlStep(t, j, mlOK(t, j, "loop[0]#1", `false`)).Job
	r := job.Result{JobID: "s", ActionID: "loop[0]@retry#2", At: time.Now()}
	tr = mlStep(t, j, r)
	if len(tr.Ignored) != 1 || tr.Ignored[0].Reason != job.IgnoredStale || !strings.Contains(tr.Ignored[0].Detail, "iteration 0 of the loop at root, which runs iteration 1") {
		t.Errorf("ignored %v, want stale naming the loop", tr.Ignored)
	}
}

// TestMapChangedOrder: Changed lists the nodes in pre-order, a map's
// copies (after every node in the node array) before the nodes after the
// map.
func TestMapChangedOrder(t *testing.T) {
	w := ast.Seq(ast.Act("list", nil).Named("xs"), ast.Par(ast.Map("xs", ast.Act("w", nil)), ast.Act("b", nil)))
	tr, err := job.New("c", w)
	if err != nil {
		t.Fatal(err)
	}
	j := mlStep(t, tr.Job, mlOK(t, tr.Job, "seq[0]#1", `[1,2]`)).Job
	next := mlStep(t, j, mlOK(t, j, "seq[1].par[1]#1", ""), mlOK(t, j, "seq[1].par[0].map[1]#1", "")).Job
	var paths []string
	for _, n := range job.Changed(j, next) {
		paths = append(paths, n.Path)
	}
	if got, want := strings.Join(paths, " "), "seq[1].par[0].map[1] seq[1].par[1]"; got != want {
		t.Errorf("Changed: %s, want %s", got, want)
	}
}

// TestMapLoopNodeInfo: Walk tells a loop's iteration and a map's number
// of copies.
func TestMapLoopNodeInfo(t *testing.T) {
	j := mlCases(t)["loop-map"]
	got := map[string]string{}
	j.Walk(func(n job.NodeInfo) bool {
		switch n.Kind {
		case ast.KindLoop:
			got[n.Path] = fmt.Sprintf("iteration %d", n.Iteration)
		case ast.KindMap:
			got[n.Path] = fmt.Sprintf("%d copies", n.Copies)
		}
		return true
	})
	if got[""] != "iteration 1" || got["loop[1].seq[1]"] != "1 copies" || len(got) != 2 {
		t.Errorf("Walk: %v", got)
	}
}

// TestChoiceOneStep: a choice adds no transition of its own: the result
// that starts it dispatches its selected case's first action in the
// same step (one version more), as a seq's next leaf would.
func TestChoiceOneStep(t *testing.T) {
	w := ast.Seq(ast.Act("a", nil).Named("a"), ast.Choice("a", ast.When("x", ast.Seq(ast.Act("b", nil), ast.Act("c", nil)))))
	tr, err := job.New("c", w)
	if err != nil {
		t.Fatal(err)
	}
	next := mlStep(t, tr.Job, mlOK(t, tr.Job, "seq[0]#1", `"x"`))
	if next.Job.Version() != tr.Job.Version()+1 || len(next.Actions) != 1 || next.Actions[0].ID != "seq[1].choice[0].seq[0]#1" {
		t.Errorf("v%d -> v%d, actions %v: want one step dispatching the case's first action", tr.Job.Version(), next.Job.Version(), next.Actions)
	}
}

// TestLoopIterationBytes: a loop's next iteration costs O(body), not
// O(tree): in a par of 10,000 leaves beside a loop of one leaf, a result
// that starts the next iteration allocates a few kilobytes, not a copy
// of the tree's 10,000 nodes (about 2 MB).
func TestLoopIterationBytes(t *testing.T) {
	if raceEnabled {
		t.Skip("allocations differ under the race detector")
	}
	kids := []ast.Node{ast.Loop(ast.Act("poll", nil).Named("p"), "p", true, 1000)}
	for range 10000 {
		kids = append(kids, ast.Act("task", nil))
	}
	tr, err := job.New("big", ast.Par(kids...))
	if err != nil {
		t.Fatal(err)
	}
	j, a := tr.Job, tr.Actions[0]
	var before, after runtime.MemStats
	const runs = 20
	runtime.ReadMemStats(&before)
	for range runs {
		tr, err := job.Restart(j, []job.Result{a.Succeed([]byte("false"))})
		if err != nil {
			t.Fatal(err)
		}
		j, a = tr.Job, tr.Actions[0]
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / runs; per > 20000 {
		t.Errorf("an iteration allocates %d bytes, want at most 20,000", per)
	}
	if a.ID != "par[0].loop[20]#1" {
		t.Errorf("dispatched %s, want par[0].loop[20]#1", a.ID)
	}
}

// TestNestedMapStartsGrowLinearly: the inner maps that a map's copies
// start in one batch cost O(copies) each after the first, not a copy of
// the tree each (O(outer²) in all), and so does decoding the job they
// made (Decode replays every start). Bytes allocated by the Restart that
// starts an outer map of N copies, each a map of 10, and by decoding the
// job after it, for N = 100 and 400: 4x for 4x the copies when linear,
// 16x when each start copies the tree (what they did before: 15.0x and
// 14.7x, 238 MB each for 400).
func TestNestedMapStartsGrowLinearly(t *testing.T) {
	if raceEnabled {
		t.Skip("allocations differ under the race detector")
	}
	measure := func(outer int) (start, decode uint64) {
		root := ast.Seq(ast.Act("list", nil).Named("outer"), ast.Act("list", nil).Named("inner"),
			ast.Map("outer", ast.Map("inner", ast.Act("leaf", nil))))
		tr, err := job.New("nested", root)
		if err != nil {
			t.Fatal(err)
		}
		list := func(n int) []byte { b, _ := json.Marshal(make([]int, n)); return b }
		tr, err = job.Restart(tr.Job, []job.Result{tr.Actions[0].Succeed(list(outer))})
		if err != nil {
			t.Fatal(err)
		}
		j, a := tr.Job, tr.Actions[0]
		res := []job.Result{a.Succeed(list(10))}
		var next job.Job
		start = bytesAllocated(func() {
			tr, err := job.Restart(j, res)
			if err != nil {
				t.Fatal(err)
			}
			next = tr.Job
			if len(tr.Actions) != outer*10 {
				t.Fatalf("outer %d: %d actions dispatched, want %d", outer, len(tr.Actions), outer*10)
			}
		})
		b, err := job.Encode(next)
		if err != nil {
			t.Fatal(err)
		}
		decode = bytesAllocated(func() {
			if _, err := job.Decode(b); err != nil {
				t.Fatal(err)
			}
		})
		return start, decode
	}
	s1, d1 := measure(100)
	s4, d4 := measure(400)
	t.Logf("starts: %d and %d bytes (%.1fx); decode: %d and %d bytes (%.1fx)", s1, s4, float64(s4)/float64(s1), d1, d4, float64(d4)/float64(d1))
	if r := float64(s4) / float64(s1); r > 8 {
		t.Errorf("the starts of 400 outer copies allocate %.1fx what 100 do (%d and %d bytes), want at most 8x (linear: 4x)", r, s4, s1)
	}
	if r := float64(d4) / float64(d1); r > 8 {
		t.Errorf("decoding the job of 400 outer copies allocates %.1fx what 100 do (%d and %d bytes), want at most 8x (linear: 4x)", r, d4, d1)
	}
}

// bytesAllocated returns the bytes f allocates, the least of three runs,
// measured with one P as testing.AllocsPerRun does.
func bytesAllocated(f func()) uint64 {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	least := uint64(math.MaxUint64)
	for range 3 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		f()
		runtime.ReadMemStats(&after)
		least = min(least, after.TotalAlloc-before.TotalAlloc)
	}
	return least
}
