package job_test

import (
	"encoding/json"
	"fmt"
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
	const maxNew, maxStep = 12, 3
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
