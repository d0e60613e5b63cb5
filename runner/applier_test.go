package runner_test

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
)

// item is what the tests queue: a job and a number.
type item struct {
	id job.ID
	n  int
}

// recorder is an ApplyFunc that records the batches it applies, per job,
// and can be held: then every apply blocks until released.
type recorder struct {
	mu      sync.Mutex
	batches map[job.ID][][]int
	hold    chan struct{} // nil: do not block
	entered chan job.ID   // told when an apply starts, if not nil
}

func newRecorder() *recorder { return &recorder{batches: map[job.ID][][]int{}} }

func (r *recorder) apply(_ context.Context, id job.ID, batch []item) []item {
	if r.entered != nil {
		r.entered <- id
	}
	if r.hold != nil {
		<-r.hold
	}
	ns := make([]int, len(batch))
	for i, it := range batch {
		if it.id != id {
			panic(fmt.Sprintf("item of %s in a batch of %s", it.id, id))
		}
		ns[i] = it.n
	}
	r.mu.Lock()
	r.batches[id] = append(r.batches[id], ns)
	r.mu.Unlock()
	return nil
}

func (r *recorder) of(id job.ID) [][]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.batches[id])
}

func newApplier(maxBatch int) *runner.Applier[item] {
	return runner.NewApplier(runner.ApplierOptions[item]{Job: func(it item) job.ID { return it.id }, MaxBatch: maxBatch})
}

// TestApplierCoalesces: N items added while a batch of their job is
// applied are applied in ONE next batch, in the order added, by the
// goroutine already applying; the Adds return at once.
func TestApplierCoalesces(t *testing.T) {
	const n = 50
	a := newApplier(0)
	rec := newRecorder()
	rec.hold, rec.entered = make(chan struct{}), make(chan job.ID, 1)
	first := make(chan struct{})
	go func() { a.Add(context.Background(), rec.apply, item{"j", 0}); close(first) }()
	<-rec.entered // the first batch is being applied
	for i := 1; i <= n; i++ {
		a.Add(context.Background(), rec.apply, item{"j", i}) // returns at once: another goroutine applies j
	}
	close(rec.hold)
	<-rec.entered // the second batch
	<-first       // Add returns once its job has nothing left
	got := rec.of("j")
	want := [][]int{{0}, make([]int, 0, n)}
	for i := 1; i <= n; i++ {
		want[1] = append(want[1], i)
	}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("batches = %v, want %v", got, want)
	}
	a.Wait()
}

// TestApplierAddApplies: with nobody applying its job, Add applies in the
// calling goroutine and returns once applied.
func TestApplierAddApplies(t *testing.T) {
	a := newApplier(0)
	rec := newRecorder()
	a.Add(context.Background(), rec.apply, item{"a", 1}, item{"b", 2}, item{"a", 3})
	if got := rec.of("a"); !slices.EqualFunc(got, [][]int{{1, 3}}, slices.Equal) {
		t.Errorf("a's batches = %v", got)
	}
	if got := rec.of("b"); !slices.EqualFunc(got, [][]int{{2}}, slices.Equal) {
		t.Errorf("b's batches = %v", got)
	}
}

// TestApplierMaxBatch: no batch holds more than MaxBatch items, nor more
// than MaxBytes (but at least one item); every item is applied once, in
// order.
func TestApplierMaxBatch(t *testing.T) {
	for _, tc := range []struct {
		name  string
		o     runner.ApplierOptions[item]
		sizes []int // of the batches, after the first ({0})
	}{
		{"count", runner.ApplierOptions[item]{MaxBatch: 3}, []int{3, 3, 3, 1}},
		// Item n weighs n bytes: 1+2+3 = 6 <= 7, then 4 (4+5 > 7), 5, 6, 7, 8, 9, 10 (each alone, over the bound).
		{"bytes", runner.ApplierOptions[item]{MaxBatch: 100, MaxBytes: 7, Size: func(it item) int { return it.n }}, []int{3, 1, 1, 1, 1, 1, 1, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.o.Job = func(it item) job.ID { return it.id }
			a := runner.NewApplier(tc.o)
			rec := newRecorder()
			rec.hold, rec.entered = make(chan struct{}), make(chan job.ID, 100)
			a.Go(context.Background(), rec.apply, item{"j", 0})
			<-rec.entered
			for i := 1; i <= 10; i++ {
				a.Go(context.Background(), rec.apply, item{"j", i})
			}
			close(rec.hold)
			a.Wait()
			got := rec.of("j")
			var sizes, all []int
			for _, b := range got[1:] {
				sizes = append(sizes, len(b))
				all = append(all, b...)
			}
			if !slices.Equal(sizes, tc.sizes) {
				t.Errorf("batch sizes = %v, want %v (batches %v)", sizes, tc.sizes, got)
			}
			if want := []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}; !slices.Equal(all, want) {
				t.Errorf("items applied = %v, want %v", all, want)
			}
		})
	}
}

// TestApplierOrderAndWait: many jobs, items added from many goroutines in
// the background: each job's items are applied once each, a job's items
// from one goroutine in the order added, never two batches of one job at
// once; after Wait, nothing is left and no goroutine of the Applier runs.
func TestApplierOrderAndWait(t *testing.T) {
	before := runtime.NumGoroutine()
	const jobs, adders, per = 20, 4, 200
	a := newApplier(7)
	var mu sync.Mutex
	active := map[job.ID]bool{}
	got := map[job.ID][]item{}
	apply := func(_ context.Context, id job.ID, batch []item) []item {
		mu.Lock()
		if active[id] {
			mu.Unlock()
			panic("two batches of " + string(id) + " at once")
		}
		active[id] = true
		mu.Unlock()
		runtime.Gosched()
		mu.Lock()
		got[id] = append(got[id], batch...)
		active[id] = false
		mu.Unlock()
		return nil
	}
	var wg sync.WaitGroup
	for w := range adders {
		wg.Go(func() {
			for i := range per {
				id := job.ID(fmt.Sprintf("j%d", i%jobs))
				a.Go(context.Background(), apply, item{id, w*per + i})
			}
		})
	}
	wg.Wait()
	a.Wait()
	mu.Lock()
	total := 0
	for id, its := range got {
		total += len(its)
		last := map[int]int{} // adder -> last n seen
		for _, it := range its {
			w := it.n / per
			if prev, ok := last[w]; ok && it.n <= prev {
				t.Errorf("job %s: item %d after %d from the same adder", id, it.n, prev)
			}
			last[w] = it.n
		}
	}
	mu.Unlock()
	if total != adders*per {
		t.Errorf("%d items applied, want %d", total, adders*per)
	}
	// The goroutines Go started return right after the Applier lets go of
	// their jobs: wait for them within the test's deadline.
	for runtime.NumGoroutine() > before {
		if d, ok := t.Deadline(); ok && time.Until(d) < time.Second {
			t.Fatalf("%d goroutines after Wait, %d before", runtime.NumGoroutine(), before)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestApplierAgain: what an ApplyFunc hands back is applied again, in the
// next batch, ahead of what was added meanwhile.
func TestApplierAgain(t *testing.T) {
	a := newApplier(0)
	var batches [][]int
	tries := 0
	var apply runner.ApplyFunc[item]
	apply = func(ctx context.Context, id job.ID, batch []item) []item {
		var ns []int
		for _, it := range batch {
			ns = append(ns, it.n)
		}
		batches = append(batches, ns)
		tries++
		if tries == 1 {
			a.Go(ctx, apply, item{"j", 9}) // joins the next batch, after the items handed back
			return batch[1:]
		}
		return nil
	}
	a.Add(context.Background(), apply, item{"j", 1}, item{"j", 2}, item{"j", 3})
	a.Wait()
	if want := [][]int{{1, 2, 3}, {2, 3, 9}}; !slices.EqualFunc(batches, want, slices.Equal) {
		t.Errorf("batches = %v, want %v", batches, want)
	}
}

// TestApplierWaitIdle: Wait with nothing added returns at once.
func TestApplierWaitIdle(t *testing.T) {
	newApplier(0).Wait()
}

// BenchmarkApplierAdd: one result added and applied, no other goroutine:
// the path of every action's result in runner/inmem. It allocates
// nothing once warm.
func BenchmarkApplierAdd(b *testing.B) {
	a := newApplier(0)
	apply := func(context.Context, job.ID, []item) []item { return nil }
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		a.Add(ctx, apply, item{"j", i})
	}
}

// TestApplierBacklogArray: results that pile up while a batch is applied
// go into an array with room for as many as the last batch held, not one
// grown a doubling at a time (a par of 1,000 on runner/inmem gathers
// batches of dozens). Five backlogs of 100 cost one allocation each after
// the first; counted exactly, so it cannot flake.
func TestApplierBacklogArray(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector; scripts/test.sh runs this test without it")
	}
	a := runner.NewApplier(runner.ApplierOptions[int]{Job: func(int) job.ID { return "j" }})
	ctx := context.Background()
	round := 0
	apply := func(_ context.Context, _ job.ID, batch []int) []int {
		if round < 5 {
			round++
			for i := range 100 {
				if a.Queue(i) {
					t.Fatal("Queue claimed a job being applied")
				}
			}
		}
		return nil
	}
	n := testing.AllocsPerRun(20, func() {
		round = 0
		if !a.Queue(0) {
			t.Fatal("Queue did not claim an idle job")
		}
		a.Drain(ctx, apply, "j")
	})
	// The first backlog grows from nothing (8 doublings to 128); the
	// four after it take one array each.
	t.Logf("five backlogs of 100 results: %v allocations", n)
	if n > 13 {
		t.Errorf("five backlogs of 100 results: %v allocations, want at most 13", n)
	}
}
