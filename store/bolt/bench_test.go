package bolt_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/store/bolt"
)

// BenchmarkSave measures one Restart and Save of one result in a par of
// 100 and of 10,000 leaves, the way a runner drives a fan-out. Creating
// the jobs is left out of the time and of the figures. Besides ns/op it
// reports, per Save:
//
//	step-B/op   bytes of the step record
//	snap-B/op   bytes of snapshots, amortised
//	rec-B/op    bytes of every record put (step, snapshot, meta)
//	page-B/op   bytes of bbolt pages allocated for the transaction
//	tx/op       write transactions (each an fsync, except under nosync)
//
// Run it with
//
//	go test -run '^$' -bench BenchmarkSave -benchtime 20000x ./store/bolt/
func BenchmarkSave(b *testing.B) {
	for _, sync := range []bool{false, true} {
		for _, n := range []int{100, 10_000} {
			name := fmt.Sprintf("par=%d/nosync", n)
			if sync {
				name = fmt.Sprintf("par=%d/fsync", n)
			}
			b.Run(name, func(b *testing.B) { benchSave(b, n, !sync) })
		}
	}
}

func benchSave(b *testing.B, n int, noSync bool) {
	ctx := context.Background()
	s, err := bolt.Open(b.TempDir()+"/bench.db", &bolt.Options{NoSync: noSync})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	root := parOf(n)
	var (
		j       job.Job
		tr      job.Transition
		pending []job.Action
		jobs    int
		sum     bolt.Stats // of the Saves only
		before  bolt.Stats
	)
	add := func(now bolt.Stats) {
		sum.WriteTxs += now.WriteTxs - before.WriteTxs
		sum.BytesWritten += now.BytesWritten - before.BytesWritten
		sum.Steps += now.Steps - before.Steps
		sum.StepBytes += now.StepBytes - before.StepBytes
		sum.SnapshotBytes += now.SnapshotBytes - before.SnapshotBytes
		sum.Snapshots += now.Snapshots - before.Snapshots
		sum.PageBytes += now.PageBytes - before.PageBytes
	}
	output := []byte(`{"ok":true}`)
	b.ResetTimer()
	for range b.N {
		if len(pending) == 0 {
			b.StopTimer()
			if jobs > 0 {
				add(s.Stats())
			}
			jobs++
			tr, err = job.New(job.ID(fmt.Sprintf("par-%d", jobs)), root)
			j, pending = tr.Job, tr.Actions
			if err != nil {
				b.Fatal(err)
			}
			if err := s.Create(ctx, j); err != nil {
				b.Fatal(err)
			}
			before = s.Stats()
			b.StartTimer()
		}
		tr, err = job.Restart(j, []job.Result{pending[0].Succeed(output)})
		j = tr.Job
		if err != nil {
			b.Fatal(err)
		}
		pending = pending[1:]
		if err := s.Save(ctx, tr.Job, tr.Step); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	add(s.Stats())
	saves := float64(sum.Steps)
	b.ReportMetric(float64(sum.StepBytes)/saves, "step-B/op")
	b.ReportMetric(float64(sum.SnapshotBytes)/saves, "snap-B/op")
	b.ReportMetric(float64(sum.BytesWritten)/saves, "rec-B/op")
	b.ReportMetric(float64(sum.PageBytes)/saves, "page-B/op")
	b.ReportMetric(float64(sum.WriteTxs)/saves, "tx/op")
}
