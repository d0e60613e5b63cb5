package job_test

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"pgregory.net/rapid"
)

// signalTree draws a workflow of waits, sleeps and actions: a par of
// seqs, each a few steps of an action, a wait on one of three names
// (transient or not), a sleep, or a race of a wait and a sleep.
func signalTree(t *rapid.T) (root ast.Node, transient bool) {
	names := []string{"a", "b", "c"}
	var branches []ast.Node
	for i := range rapid.IntRange(1, 3).Draw(t, "branches") {
		var steps []ast.Node
		for k := range rapid.IntRange(1, 4).Draw(t, "steps") {
			switch rapid.IntRange(0, 3).Draw(t, "kind") {
			case 0:
				steps = append(steps, ast.Act(fmt.Sprintf("act%d_%d", i, k), nil))
			case 1:
				w := ast.Wait(rapid.SampledFrom(names).Draw(t, "name"))
				if rapid.Bool().Draw(t, "transient") {
					w = w.OnlyWhileRunning()
					transient = true
				}
				steps = append(steps, w)
			case 2:
				steps = append(steps, ast.Sleep(time.Duration(rapid.IntRange(1, 60).Draw(t, "minutes"))*time.Minute))
			case 3:
				steps = append(steps, ast.Race(ast.Wait(rapid.SampledFrom(names).Draw(t, "name")), ast.Sleep(time.Hour)))
			}
		}
		branches = append(branches, ast.Seq(steps...))
	}
	if len(branches) == 1 {
		return branches[0], transient
	}
	return ast.Par(branches...), transient
}

// TestSignalsProperties plays random signals, results and firings on
// random trees of waits and sleeps, and checks after each batch: the job
// passes Check; the signals ignored as duplicates or sent to a settled
// job are exactly those a naive model of idempotence says; Restart is deterministic (the same batch gives the same
// bytes) and never modifies its input; permuting the batch changes
// nothing (signals apply by time, then ID, whatever their order); and
// splitting a batch of signals with distinct times into one batch per
// signal, in time order, reaches the same job state while the job runs
// and no wait is transient
// (the order of application is the same; only the versions differ).
func TestSignalsProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		root, transient := signalTree(t)
		tr, err := job.New("p", root, job.StartedAt(t0))
		if err != nil {
			t.Fatal(err)
		}
		j := tr.Job
		now := t0
		seen := map[string]bool{} // the naive model of idempotence
		names := waitNames(root)
		for range rapid.IntRange(1, 12).Draw(t, "batches") {
			var batch []job.Result
			var sigs []job.Result
			for range rapid.IntRange(1, 5).Draw(t, "size") {
				now = now.Add(time.Minute)
				switch rapid.IntRange(0, 2).Draw(t, "op") {
				case 0:
					s := job.Signal{Name: rapid.SampledFrom([]string{"a", "b", "c"}).Draw(t, "sig"),
						ID: rapid.SampledFrom([]string{"1", "2", "3", "4"}).Draw(t, "id"), Payload: []byte(fmt.Sprint(rapid.IntRange(0, 9).Draw(t, "payload"))), At: now}
					r := job.SignalResult(j.ID(), s)
					batch = append(batch, r)
					sigs = append(sigs, r)
				case 1:
					if out := j.Outstanding(); len(out) > 0 {
						r := rapid.SampledFrom(out).Draw(t, "action").Succeed([]byte("1"))
						r.At = now
						batch = append(batch, r)
					}
				case 2:
					if ts := j.Timers(); len(ts) > 0 {
						batch = append(batch, rapid.SampledFrom(ts).Draw(t, "timer").Fire(now))
					}
				}
			}
			if len(batch) == 0 {
				continue
			}
			before := propEnc(t, j)
			a, err := job.Restart(j, batch)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(before, propEnc(t, j)) {
				t.Fatal("Restart modified its input")
			}
			if err := job.Check(a.Job); err != nil {
				t.Fatalf("Check: %v\n%s", err, job.Describe(a.Job))
			}
			// The model: a signal to a settled job is ignored as such;
			// else a name/ID seen before (in this batch too) is a
			// duplicate, and every other one is applied (taken, kept or
			// dropped by a full queue).
			want := map[string]job.IgnoreReason{}
			for _, r := range sigs {
				key := r.ActionID
				switch {
				case j.Done():
					want[key] = job.IgnoredJobSettled
				case seen[key]:
					want[key] = job.IgnoredDuplicate
				default:
					seen[key] = true
				}
			}
			got := map[string]job.IgnoreReason{}
			for _, ig := range a.Ignored {
				if _, ok := ig.Result.AsSignal(); ok && ig.Reason != job.IgnoredQueueFull {
					got[ig.Result.ActionID] = ig.Reason
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("signals ignored %v, the model says %v", got, want)
			}
			// SignalSeen agrees with the model: true for every name and ID
			// applied so far, after the job settled too, false for the
			// others; SignalNames are the waits' names as written.
			for _, name := range []string{"a", "b", "c"} {
				for _, id := range []string{"1", "2", "3", "4"} {
					if got, want := a.Job.SignalSeen(name, id), seen[job.SignalResult(j.ID(), job.Signal{Name: name, ID: id}).ActionID]; got != want {
						t.Fatalf("SignalSeen(%s, %s) = %v, the model says %v", name, id, got, want)
					}
				}
			}
			if got := a.Job.SignalNames(); !slices.Equal(got, names) {
				t.Fatalf("SignalNames = %q, the tree's waits take %q", got, names)
			}
			kept, _ := a.Job.Signals()
			if len(kept) > job.MaxKeptSignals {
				t.Fatalf("%d signals kept", len(kept))
			}
			again, _ := job.Restart(j, slices.Clone(batch))
			if !bytes.Equal(propEnc(t, a.Job), propEnc(t, again.Job)) {
				t.Fatal("Restart is not deterministic")
			}
			perm := slices.Clone(batch)
			slices.Reverse(perm)
			p, _ := job.Restart(j, perm)
			if !bytes.Equal(propEnc(t, a.Job), propEnc(t, p.Job)) {
				t.Fatalf("a permuted batch gives another job:\n%s\n%s", job.Describe(a.Job), job.Describe(p.Job))
			}
			if len(sigs) == len(batch) && !a.Job.Done() && !transient {
				// Signals only: one by one, in time order, is the same
				// while the job runs (a job settled by one signal ignores
				// the next one by one, and keeps it in one batch; a
				// transient wait begun by one signal takes the next one
				// by one, and not in one batch, where it begins after).
				s := j
				for _, r := range sigs {
					n, err := job.Restart(s, []job.Result{r})
					if err != nil {
						t.Fatal(err)
					}
					s = n.Job
				}
				if sigDigest(s) != sigDigest(a.Job) {
					t.Fatalf("signals one by one differ from one batch:\n%s\n%s", job.Describe(s), job.Describe(a.Job))
				}
			}
			j = a.Job
		}
	})
}

// waitNames returns the names of the signals root's waits take, sorted
// and once each.
func waitNames(root ast.Node) []string {
	var names []string
	var walk func(n ast.Node)
	walk = func(n ast.Node) {
		if n.Kind == ast.KindWait && !slices.Contains(names, n.Signal) {
			names = append(names, n.Signal)
		}
		for _, c := range n.Children {
			walk(c)
		}
	}
	walk(root)
	slices.Sort(names)
	return names
}

// sigDigest is what the split of a batch of signals keeps: each node's
// status and output, the signals kept and taken (not the versions, nor
// the due times of sleeps begun, which count from the clock of the
// batch that begins them).
func sigDigest(j job.Job) string {
	var b bytes.Buffer
	j.Walk(func(n job.NodeInfo) bool {
		fmt.Fprintf(&b, "%s %s %s\n", n.Path, n.Status, n.Output)
		return true
	})
	kept, taken := j.Signals()
	// Which wait took which signal, not in what order: a wait a batch
	// begins takes a kept signal after the signals that batch applied.
	slices.SortFunc(taken, func(x, y job.TakenSignal) int { return strings.Compare(x.Path, y.Path) })
	fmt.Fprintf(&b, "%v %v %s", kept, taken, j.Status())
	return b.String()
}
