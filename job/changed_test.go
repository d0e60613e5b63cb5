package job_test

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"pgregory.net/rapid"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
)

// changedOracle is what Changed must return, the naive way: both jobs
// walked whole, and new's node wherever the two differ (an empty output
// is no output, as after Decode).
func changedOracle(old, new job.Job) []job.NodeInfo {
	var was []job.NodeInfo
	old.Walk(func(n job.NodeInfo) bool {
		was = append(was, n)
		return true
	})
	var diff []job.NodeInfo
	i := 0
	new.Walk(func(n job.NodeInfo) bool {
		if i >= len(was) || !cmp.Equal(was[i], n, cmpopts.EquateEmpty()) {
			diff = append(diff, n)
		}
		i++
		return true
	})
	return diff
}

// changedCheck fails unless Changed(old, new) is changedOracle's answer.
func changedCheck(t propT, what string, old, new job.Job) {
	t.Helper()
	got, want := job.Changed(old, new), changedOracle(old, new)
	if d := cmp.Diff(want, got, cmpopts.EquateEmpty()); d != "" {
		t.Fatalf("Changed(%s) differs from a diff of Walks (-want +got):\n%s\nold:\n%s\nnew:\n%s", what, d, job.Describe(old), job.Describe(new))
	}
}

// TestPropChanged plays random timed workflows (retries, timeouts,
// deadlines, cancels) under random schedules and checks Changed against
// a full diff of Walks: between each version and the next, between two
// versions drawn at random in either order, between versions that went
// through Encode and Decode (which share nothing), and from the zero Job.
func TestPropChanged(t *testing.T) {
	timedCheck(t, func(t *rapid.T, shape propShape) {
		c := timedDrawCase(t, shape)
		run := timedPlay(t, c, timedRandom(t, c, true, true), false, false)
		changedCheck(t, "zero, v1", job.Job{}, run.Steps[0].Job)
		for i := 1; i < len(run.Steps); i++ {
			changedCheck(t, fmt.Sprintf("step %d, step %d", i-1, i), run.Steps[i-1].Job, run.Steps[i].Job)
		}
		last := len(run.Steps) - 1
		a := rapid.IntRange(0, last).Draw(t, "a")
		b := rapid.IntRange(0, last).Draw(t, "b")
		x, y := run.Steps[a].Job, run.Steps[b].Job
		changedCheck(t, fmt.Sprintf("step %d, step %d", a, b), x, y)
		changedCheck(t, fmt.Sprintf("decoded step %d, step %d", a, b), propRoundTrip(t, x), y)
		changedCheck(t, fmt.Sprintf("step %d, decoded step %d", a, b), x, propRoundTrip(t, y))
	})
}

// TestChangedOtherJob: a version of another job, or of another
// incarnation, counts as nothing known: every node is changed. The zero
// Job as new has no nodes.
func TestChangedOtherJob(t *testing.T) {
	tree := ast.Seq(ast.Act("a", nil), ast.Act("b", nil))
	mine, err := job.New("mine", tree)
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := job.New("theirs", tree)
	if err != nil {
		t.Fatal(err)
	}
	again, err := job.New("mine", tree, job.WithIncarnation(7))
	if err != nil {
		t.Fatal(err)
	}
	other, err := job.New("mine", ast.Par(ast.Act("a", nil), ast.Act("c", nil)))
	if err != nil {
		t.Fatal(err)
	}
	for _, old := range []job.Job{theirs.Job, again.Job, other.Job, {}} {
		if got := job.Changed(old, mine.Job); len(got) != 3 {
			t.Errorf("Changed(%v, %v) gives %d nodes, want all 3", old, mine.Job, len(got))
		}
	}
	if got := job.Changed(mine.Job, job.Job{}); got != nil {
		t.Errorf("Changed(job, zero) = %v, want nil", got)
	}
	if got := job.Changed(mine.Job, mine.Job); got != nil {
		t.Errorf("Changed(j, j) = %v, want nil", got)
	}
}

// TestChangedOneResultInBigPar: one result in a par of 100,000 actions
// changes one node, which Changed finds without growing with the tree: it
// allocates as much as in a par of 10.
func TestChangedOneResultInBigPar(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a job of 100,000 leaves")
	}
	allocs := map[int]float64{}
	for _, n := range []int{10, 100000} {
		old := benchMidFlight(t, n)
		a := old.Outstanding()[0]
		tr, err := job.Restart(old, []job.Result{a.Succeed(benchOutput)})
		if err != nil {
			t.Fatal(err)
		}
		got := job.Changed(old, tr.Job)
		if len(got) != 1 || got[0].Path != a.Path() || got[0].Status != job.StatusSucceeded || string(got[0].Output) != string(benchOutput) {
			t.Fatalf("par of %d: Changed gives %+v, want only %s succeeded", n, got, a.Path())
		}
		allocs[n] = testing.AllocsPerRun(20, func() { job.Changed(old, tr.Job) })
	}
	if allocs[100000] > allocs[10] {
		t.Errorf("Changed allocates %v times in a par of 100,000, %v in a par of 10", allocs[100000], allocs[10])
	}
}

// BenchmarkChanged measures Changed over one step of one result, as a
// server does for every event of a job's stream.
func BenchmarkChanged(b *testing.B) {
	for _, n := range []int{10, 1000, 100000} {
		b.Run(fmt.Sprintf("par/%d", n), func(b *testing.B) {
			old := benchMidFlight(b, n)
			tr, err := job.Restart(old, []job.Result{old.Outstanding()[0].Succeed(benchOutput)})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if len(job.Changed(old, tr.Job)) != 1 {
					b.Fatal("not one node changed")
				}
			}
		})
	}
}
