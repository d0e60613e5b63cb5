package job_test

import (
	"encoding/json"
	"fmt"
	"runtime"
	"testing"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
)

// The reducer's allocations on the engine benchmark's shape (seq(par(10
// actions), 1 action)), counted exactly, so this guard cannot flake: a
// change that makes every job or every result dearer fails here before
// it shows, thinly, in the benchmark. Raise a bound only with the reason
// in the commit.
func TestReducerAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector; scripts/test.sh runs this test without it")
	}
	acts := make([]ast.Node, 11)
	for i := range acts {
		acts[i] = ast.Act("noop", json.RawMessage(fmt.Sprintf(`{"id":"o-%d","n":%d}`, i, i)))
	}
	wf := ast.Seq(ast.Par(acts[:10]...), acts[10])
	made, err := job.New("j", wf)
	if err != nil {
		t.Fatal(err)
	}
	const maxNew, maxStep = 9, 3
	if n := testing.AllocsPerRun(50, func() {
		if _, err := job.New("j", wf); err != nil {
			t.Fatal(err)
		}
	}); n > maxNew {
		t.Errorf("job.New of 12 nodes: %v allocations, want at most %d", n, maxNew)
	}
	res := []job.Result{made.Actions[3].Succeed([]byte(`{"id":"o-3","n":4}`))}
	if n := testing.AllocsPerRun(50, func() {
		if _, err := job.Restart(made.Job, res); err != nil {
			t.Fatal(err)
		}
	}); n > maxStep {
		t.Errorf("Restart with one result that starts nothing: %v allocations, want at most %d", n, maxStep)
	}
}

// TestRestartBytes bounds the bytes one result costs in a par of 1,000
// and in a seq of 1,000: a step copies the trie nodes on its path (and
// makes its results chunk and its step), so the nodes' size is what the
// garbage collector pays for at every step. 16-wide inner nodes and
// 8-wide leaves made these 1,088 and 1,248 bytes (1,792 and 1,952 with
// 32-wide inner nodes and 16-wide leaves). Counted exactly
// (runtime.MemStats.TotalAlloc), so it cannot flake.
func TestRestartBytes(t *testing.T) {
	if raceEnabled {
		t.Skip("allocations differ under the race detector; scripts/test.sh runs this test without it")
	}
	for _, c := range []struct {
		name string
		wf   ast.Node
		max  uint64
	}{
		{"par of 1,000", benchParTree(1000), 1200},
		{"seq of 1,000", benchSeqTree(1000), 1400},
	} {
		made, err := job.New("j", c.wf)
		if err != nil {
			t.Fatal(err)
		}
		res := []job.Result{made.Actions[0].Succeed([]byte(`{"ok":true}`))}
		const runs = 100
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range runs {
			if _, err := job.Restart(made.Job, res); err != nil {
				t.Fatal(err)
			}
		}
		runtime.ReadMemStats(&after)
		per := (after.TotalAlloc - before.TotalAlloc) / runs
		t.Logf("%s: %d bytes per result", c.name, per)
		if per > c.max {
			t.Errorf("%s: Restart with one result: %d bytes, want at most %d", c.name, per, c.max)
		}
	}
}
