package job_test

import (
	"math/rand/v2"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
)

// The benchmarks here measure the promise of the package doc: handling
// one result in a job of 100,000 leaves costs about what it costs in a job
// of 10. Every op of BenchmarkRestart is one result applied by one Restart,
// so ns/op and allocs/op read as "per result".
//
//	go test -run '^$' -bench . -benchmem ./job/
//	go test -run TestStepBytes -v ./job/

// benchOutput is the output every succeeding action reports.
var benchOutput = []byte(`{"ok":true}`)

// benchParTree returns a par of n leaves.
func benchParTree(n int) ast.Node {
	kids := make([]ast.Node, n)
	for i := range kids {
		kids[i] = ast.Act("task", nil)
	}
	return ast.Par(kids...)
}

// benchSeqTree returns a seq of n leaves.
func benchSeqTree(n int) ast.Node {
	kids := make([]ast.Node, n)
	for i := range kids {
		kids[i] = ast.Act("task", nil)
	}
	return ast.Seq(kids...)
}

// benchMixedTree returns a random tree of exactly leaves leaves using all
// four kinds, drawn from a fixed seed so every run benchmarks the same tree.
// Leaves named "flaky" fail; they are placed only where the body of a try
// with a rescue catches their failure, so the job always succeeds, but pars
// do freeze and later siblings are cancelled on the way.
func benchMixedTree(leaves int) ast.Node {
	rng := rand.New(rand.NewPCG(0xba70, 0x2024))
	return benchMixed(rng, leaves, 1, false)
}

func benchMixed(rng *rand.Rand, leaves, depth int, protected bool) ast.Node {
	if leaves == 1 {
		if protected && rng.IntN(10) == 0 {
			return ast.Act("flaky", nil)
		}
		return ast.Act("task", nil)
	}
	kind := rng.IntN(3)
	if depth >= 12 {
		kind = 1 // keep the depth well under ast.MaxDepth
	}
	switch kind {
	case 0, 1:
		k := 2 + rng.IntN(min(leaves, 8)-1)
		parts := benchSplit(rng, leaves, k)
		kids := make([]ast.Node, k)
		for i, n := range parts {
			kids[i] = benchMixed(rng, n, depth+1, protected)
		}
		if kind == 0 {
			return ast.Seq(kids...)
		}
		return ast.Par(kids...)
	default:
		hasRescue, hasFinally := rng.IntN(3) > 0, rng.IntN(2) == 0
		k := 1
		if hasRescue {
			k++
		}
		if hasFinally {
			k++
		}
		if k > leaves {
			hasFinally, k = false, k-1
		}
		if k > leaves {
			hasRescue, k = false, k-1
		}
		parts := benchSplit(rng, leaves, k)
		body := benchMixed(rng, parts[0], depth+1, protected || hasRescue)
		var opts []ast.TryOption
		if hasRescue {
			opts = append(opts, ast.Rescue(benchMixed(rng, parts[1], depth+1, protected)))
		}
		if hasFinally {
			opts = append(opts, ast.Finally(benchMixed(rng, parts[len(parts)-1], depth+1, protected)))
		}
		return ast.Try(body, opts...)
	}
}

// benchSplit splits n into k positive parts at random.
func benchSplit(rng *rand.Rand, n, k int) []int {
	parts := make([]int, k)
	for i := range parts {
		parts[i] = 1
	}
	for range n - k {
		parts[rng.IntN(k)]++
	}
	return parts
}

// benchKinds counts the nodes of each kind under n.
func benchKinds(n ast.Node, counts map[ast.Kind]int) {
	counts[n.Kind]++
	for _, c := range n.Children {
		benchKinds(c, counts)
	}
	for _, p := range []*ast.Node{n.Body, n.Rescue, n.Finally} {
		if p != nil {
			benchKinds(*p, counts)
		}
	}
}

// benchRunner plays a runner that reports one result per Restart, taking
// the outstanding actions in FIFO order. When the job is done it starts
// over from the job that New returned: Restart never modifies its input,
// so that job is still the fresh version-1 job, and re-creating it costs
// nothing (no job.New inside the timer, no StopTimer every N results). If
// Restart ever modified it, the replayed results would be ignored and next
// would fail.
type benchRunner struct {
	j0    job.Job
	acts0 []job.Action

	j       job.Job
	queue   []job.Action
	head    int
	shared  bool         // queue may be acts0's array: append only
	buf     []job.Action // an array of our own for the queue
	results [1]job.Result
	applied int // results applied, over every run
	runs    int // jobs driven to the end
}

func benchNewRunner(tb testing.TB, root ast.Node) *benchRunner {
	tb.Helper()
	trJ, err := job.New("bench", root)
	j, acts := trJ.Job, trJ.Actions
	if err != nil {
		tb.Fatal(err)
	}
	r := &benchRunner{j0: j, acts0: acts}
	r.reset()
	return r
}

func (r *benchRunner) reset() {
	r.j = r.j0
	// The full slice expression makes an append reallocate instead of
	// writing into acts0, so acts0 is never changed.
	r.queue = r.acts0[:len(r.acts0):len(r.acts0)]
	r.head, r.shared = 0, true
}

// next applies the result of the oldest outstanding action.
func (r *benchRunner) next(tb testing.TB) {
	if r.head == len(r.queue) {
		if !r.j.Done() || r.j.Status() != job.StatusSucceeded {
			tb.Fatalf("no action outstanding, job is %v", r.j)
		}
		r.runs++
		r.reset()
	}
	a := r.queue[r.head]
	r.head++
	if a.Name == "flaky" {
		r.results[0] = a.Fail("flaky")
	} else {
		r.results[0] = a.Succeed(benchOutput)
	}
	trJ, err := job.Restart(r.j, r.results[:])
	j, acts := trJ.Job, trJ.Actions
	if err != nil || j.Version() != r.j.Version()+1 {
		tb.Fatalf("Restart of %s at v%d: err %v, version %d, ignored %v", a.ID, r.j.Version(), err, j.Version(), trJ.Ignored)
	}
	r.j = j
	r.applied++
	if r.head == len(r.queue) {
		// Drained: reuse the queue's array, but never acts0's.
		if r.shared {
			r.queue, r.shared = r.buf, false
		}
		r.queue, r.head = r.queue[:0], 0
	}
	r.queue = append(r.queue, acts...)
	if !r.shared {
		r.buf = r.queue
	}
}

// benchCases are the sub-benchmarks of BenchmarkRestart.
var benchCases = []struct {
	name string
	tree func() ast.Node
}{
	{"par/10", func() ast.Node { return benchParTree(10) }},
	{"par/1000", func() ast.Node { return benchParTree(1000) }},
	{"par/100000", func() ast.Node { return benchParTree(100000) }},
	{"seq/10000", func() ast.Node { return benchSeqTree(10000) }},
	{"mixed", func() ast.Node { return benchMixedTree(3000) }},
}

// BenchmarkRestart measures one result per Restart: ns/op and allocs/op are
// per result.
func BenchmarkRestart(b *testing.B) {
	for _, c := range benchCases {
		b.Run(c.name, func(b *testing.B) {
			r := benchNewRunner(b, c.tree())
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				r.next(b)
			}
		})
	}
}

// TestBenchMixedTree checks that the mixed benchmark tree holds every kind,
// fails and rescues some actions, and runs to success.
func TestBenchMixedTree(t *testing.T) {
	root := benchMixedTree(3000)
	counts := map[ast.Kind]int{}
	benchKinds(root, counts)
	for _, k := range []ast.Kind{ast.KindAct, ast.KindSeq, ast.KindPar, ast.KindTry} {
		if counts[k] == 0 {
			t.Errorf("mixed tree has no %s node (%v)", k, counts)
		}
	}
	r := benchNewRunner(t, root)
	flaky := 0
	for r.runs == 0 {
		if r.head < len(r.queue) && r.queue[r.head].Name == "flaky" {
			flaky++
		}
		r.next(t)
	}
	if flaky == 0 {
		t.Errorf("no flaky action ran")
	}
	t.Logf("mixed tree: %d act, %d seq, %d par, %d try; %d results in a run, %d failed",
		counts[ast.KindAct], counts[ast.KindSeq], counts[ast.KindPar], counts[ast.KindTry], r.applied, flaky)
}

// BenchmarkNew measures compiling and starting a par of 100,000 leaves.
func BenchmarkNew(b *testing.B) {
	root := benchParTree(100000)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := job.New("bench", root); err != nil {
			b.Fatal(err)
		}
	}
}

// benchMidFlight returns a par of n leaves with its first half succeeded,
// applied as one batch.
func benchMidFlight(tb testing.TB, n int) job.Job {
	tb.Helper()
	trJ, err := job.New("bench", benchParTree(n))
	j, acts := trJ.Job, trJ.Actions
	if err != nil {
		tb.Fatal(err)
	}
	rs := make([]job.Result, n/2)
	for i := range rs {
		rs[i] = acts[i].Succeed(benchOutput)
	}
	trJ, err = job.Restart(j, rs)
	if err != nil || len(trJ.Ignored) > 0 {
		tb.Fatalf("Restart: %v, %d ignored", err, len(trJ.Ignored))
	}
	return trJ.Job
}

// BenchmarkEncode measures a snapshot of a mid-flight par of 100,000 leaves.
func BenchmarkEncode(b *testing.B) {
	j := benchMidFlight(b, 100000)
	enc, err := job.Encode(j)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(enc)))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := job.Encode(j); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecode measures loading that snapshot back.
func BenchmarkDecode(b *testing.B) {
	enc, err := job.Encode(benchMidFlight(b, 100000))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(enc)))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := job.Decode(enc); err != nil {
			b.Fatal(err)
		}
	}
}

// TestStepBytes checks that what a store appends per result does not grow
// with the tree: in a par of 100,000 leaves the step record of one result,
// as EncodeStep writes it for a store to append, is at least 1000 times smaller
// than the full encoding of the job, at the first, a middle and the last
// result.
func TestStepBytes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a job of 100,000 leaves")
	}
	const n = 100000
	trJ, err := job.New("bench", benchParTree(n))
	j, acts := trJ.Job, trJ.Actions
	if err != nil {
		t.Fatal(err)
	}
	one := func(i int) int {
		t.Helper()
		tr, err := job.Restart(j, []job.Result{acts[i].Succeed(benchOutput)})
		if err != nil || len(tr.Ignored) > 0 || len(tr.Step.Results) != 1 {
			t.Fatalf("Restart of %s: %v, ignored %v, step %v", acts[i].ID, err, tr.Ignored, tr.Step)
		}
		j = tr.Job
		return len(job.EncodeStep(tr.Step))
	}
	batch := func(from, to int) {
		t.Helper()
		rs := make([]job.Result, 0, to-from)
		for _, a := range acts[from:to] {
			rs = append(rs, a.Succeed(benchOutput))
		}
		tr, err := job.Restart(j, rs)
		if err != nil || len(tr.Ignored) > 0 {
			t.Fatalf("Restart of [%d, %d): %v, %d ignored", from, to, err, len(tr.Ignored))
		}
		j = tr.Job
	}
	full := func() int {
		t.Helper()
		enc, err := job.Encode(j)
		if err != nil {
			t.Fatal(err)
		}
		return len(enc)
	}

	fullNew := full()
	first := one(0)
	batch(1, n/2)
	fullMid := full()
	mid := one(n / 2)
	batch(n/2+1, n-1)
	last := one(n - 1)
	fullDone := full()
	if !j.Done() || j.Status() != job.StatusSucceeded {
		t.Fatalf("job is %v after every result", j)
	}

	// The smallest full encoding is the fresh job's; compare against it so
	// the bound is the tightest one.
	t.Logf("par/%d: step of one result: first %d B, middle %d B, last %d B", n, first, mid, last)
	t.Logf("par/%d: full Encode: fresh %d B, mid-flight %d B, done %d B", n, fullNew, fullMid, fullDone)
	for _, s := range []struct {
		name string
		size int
	}{{"first", first}, {"middle", mid}, {"last", last}} {
		ratio := float64(fullNew) / float64(s.size)
		t.Logf("par/%d: %s step is %.0fx smaller than the fresh encoding, %.0fx than the mid-flight one",
			n, s.name, ratio, float64(fullMid)/float64(s.size))
		if ratio < 1000 {
			t.Errorf("%s step is %d B, only %.0fx smaller than the %d B encoding (want at least 1000x)", s.name, s.size, ratio, fullNew)
		}
	}
}

// benchMeasure starts a job of root and applies n results to it, one per
// Restart, and returns the time, allocations and bytes per result, GC
// included. Only the results are timed.
func benchMeasure(b *testing.B, root ast.Node, n int) (ns, allocs, bytes float64) {
	b.StopTimer()
	r := benchNewRunner(b, root)
	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	b.StartTimer()
	start := time.Now()
	for range n {
		r.next(b)
	}
	d := time.Since(start)
	b.StopTimer()
	runtime.ReadMemStats(&m1)
	return float64(d.Nanoseconds()) / float64(n),
		float64(m1.Mallocs-m0.Mallocs) / float64(n),
		float64(m1.TotalAlloc-m0.TotalAlloc) / float64(n)
}

// benchFlatRounds is how many times BenchmarkRestartFlatness alternates
// between the two sizes.
const benchFlatRounds = 5

// BenchmarkRestartFlatness measures par/10 and par/100000 in the same run
// and reports the per-result cost of both and their ratio; the target is a
// ratio under 2. It alternates the two sizes benchFlatRounds times, each
// time on a fresh job with only that job live, applying b.N/benchFlatRounds
// results, and keeps each size's fastest round, so that a burst of load on
// the machine skews neither side. (testing.Benchmark cannot be called from
// inside a benchmark: it would wait on the lock the running benchmark
// holds.)
func BenchmarkRestartFlatness(b *testing.B) {
	n := max(1, b.N/benchFlatRounds)
	type best struct{ ns, allocs, bytes float64 }
	var small, large best
	for round := range benchFlatRounds {
		for _, m := range []struct {
			leaves int
			into   *best
		}{{10, &small}, {100000, &large}} {
			ns, allocs, bytes := benchMeasure(b, benchParTree(m.leaves), n)
			if round == 0 || ns < m.into.ns {
				*m.into = best{ns, allocs, bytes}
			}
		}
	}
	b.ReportMetric(small.ns, "ns/result-par10")
	b.ReportMetric(large.ns, "ns/result-par100k")
	b.ReportMetric(small.allocs, "allocs/result-par10")
	b.ReportMetric(large.allocs, "allocs/result-par100k")
	b.ReportMetric(small.bytes, "B/result-par10")
	b.ReportMetric(large.bytes, "B/result-par100k")
	b.ReportMetric(large.ns/small.ns, "x-par100k/par10")
}

// BenchmarkFanInJob is the reducer's own share of the bench program's
// scenario a: one job of seq(par(10 leaves), 1 leaf), each leaf with a
// payload like the bench's, made by New and run to its end by one
// Restart per result (as runner/inmem applies them there, a result
// arriving while its job is idle). No runner, store, handler or JSON: an
// op is one whole job, and ns/action is the reducer's cost per action,
// what a runner's figure against the bench's plain-Go floor cannot go
// below.
func BenchmarkFanInJob(b *testing.B) {
	leaves := make([]ast.Node, 11)
	for i := range leaves {
		leaves[i] = ast.Act("noop", []byte(`{"id":"o-`+strconv.Itoa(i)+`","n":`+strconv.Itoa(i)+`}`))
	}
	root := ast.Seq(ast.Par(leaves[:10]...), leaves[10])
	out := []byte(`{"id":"o-1","n":2}`)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		tr, err := job.New(job.ID("a-"+strconv.Itoa(i)), root)
		if err != nil {
			b.Fatal(err)
		}
		j, queue := tr.Job, tr.Actions
		for len(queue) > 0 {
			a := queue[0]
			queue = queue[1:]
			if tr, err = job.Restart(j, []job.Result{a.Succeed(out)}); err != nil {
				b.Fatal(err)
			}
			j, queue = tr.Job, append(queue, tr.Actions...)
		}
		if j.Status() != job.StatusSucceeded {
			b.Fatalf("job %s: %s", j.ID(), j.Status())
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(leaves)), "ns/action")
}
