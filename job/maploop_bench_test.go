package job_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
)

// The benchmarks of maps and loops run whole jobs: New, then every
// result, batch after batch, until the job ends; one op is one whole job.
// Each is paired with the same work written out (a par of the copies, a
// seq of the iterations), so the figures compare directly:
//
//	go test -run '^$' -bench 'Map|Loop' -benchmem ./job/

// benchArray returns a JSON array of n small numbers.
func benchArray(n int) []byte {
	var b strings.Builder
	b.WriteByte('[')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(i % 10))
	}
	b.WriteByte(']')
	return []byte(b.String())
}

// benchRunJob runs root to its end: every action succeeds, with the
// output out gives it (nil for none), batch results to a Restart.
func benchRunJob(tb testing.TB, root ast.Node, batch int, out func(job.Action) []byte) {
	tr, err := job.New("bench", root)
	if err != nil {
		tb.Fatal(err)
	}
	j, queue := tr.Job, tr.Actions
	rs := make([]job.Result, 0, batch)
	for len(queue) > 0 {
		n := min(batch, len(queue))
		rs = rs[:0]
		for _, a := range queue[:n] {
			rs = append(rs, a.Succeed(out(a)))
		}
		queue = queue[n:]
		tr, err := job.Restart(j, rs)
		if err != nil {
			tb.Fatal(err)
		}
		j = tr.Job
		queue = append(queue, tr.Actions...)
	}
	if j.Status() != job.StatusSucceeded {
		tb.Fatalf("job ended %s: %v", j.Status(), j)
	}
}

// benchMapTree is a leaf listing n elements, then a map of a no-op leaf
// over them; benchWrittenTree the same leaf, then a par of n leaves.
func benchMapTree() ast.Node {
	return ast.Seq(ast.Act("list", nil).Named("xs"), ast.Map("xs", ast.Act("task", nil)))
}

func benchWrittenTree(n int) ast.Node {
	return ast.Seq(ast.Act("list", nil).Named("xs"), benchParTree(n))
}

// benchNestedMapTree is a map of outer copies, each listing inner
// elements and mapping a no-op leaf over them: outer*inner copies.
func benchNestedMapTree() ast.Node {
	return ast.Seq(ast.Act("list", nil).Named("xs"),
		ast.Map("xs", ast.Seq(ast.Act("list", nil).Named("ys"), ast.Map("ys", ast.Act("task", nil)))))
}

// benchLists answers the list leaves with arrays of n elements.
func benchLists(n int) func(job.Action) []byte {
	arr := benchArray(n)
	return func(a job.Action) []byte {
		if a.Name == "list" {
			return arr
		}
		return nil
	}
}

// BenchmarkMapVsPar runs a map of n copies of a no-op leaf and a par of
// n leaves written out (after the same listing leaf), one result per
// Restart and in batches of 100. Issue 19 asks for the map within 1.5x
// of the par at 10,000.
func BenchmarkMapVsPar(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		for _, batch := range []int{1, 100} {
			suffix := "/n=" + strconv.Itoa(n) + "/batch=" + strconv.Itoa(batch)
			b.Run("map"+suffix, func(b *testing.B) {
				w := benchMapTree()
				for b.Loop() {
					benchRunJob(b, w, batch, benchLists(n))
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/copy")
			})
			b.Run("par"+suffix, func(b *testing.B) {
				w := benchWrittenTree(n)
				for b.Loop() {
					benchRunJob(b, w, batch, benchLists(n))
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/copy")
			})
		}
	}
}

// BenchmarkMapFlatness reports the cost per copy of maps of 1,000,
// 10,000 and 100,000 copies (the last a map of 10 copies each mapping
// 10,000, and of 100 each mapping 1,000: ast.MaxCopies bounds one map),
// and of 2,000 copies each mapping 10, in batches of 100. The first map
// start of a Restart copies the tree as it is then, and the others of
// the same Restart add to that copy, so nested maps cost
// O(Restarts that start maps × tree) beside O(copies): here each batch
// of 100 results starts up to 100 inner maps.
func BenchmarkMapFlatness(b *testing.B) {
	for _, c := range []struct {
		name         string
		w            ast.Node
		outer, inner int
	}{
		{"copies=1000", benchMapTree(), 1000, 1},
		{"copies=10000", benchMapTree(), 10000, 1},
		{"copies=100000(10x10000)", benchNestedMapTree(), 10, 10000},
		{"copies=100000(100x1000)", benchNestedMapTree(), 100, 1000},
		{"copies=20000(2000x10)", benchNestedMapTree(), 2000, 10},
	} {
		b.Run(c.name, func(b *testing.B) {
			outer, inner := benchArray(c.outer), benchArray(c.inner)
			out := func(a job.Action) []byte {
				if a.Name != "list" {
					return nil
				}
				if a.ID == "seq[0]#1" {
					return outer
				}
				return inner
			}
			for b.Loop() {
				benchRunJob(b, c.w, 100, out)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(c.outer*c.inner), "ns/copy")
		})
	}
}

// BenchmarkLoopVsSeq runs a loop of 1,000 iterations of one leaf (its
// until matching at the last) and a seq of 1,000 leaves. Issue 19 asks
// for the loop within 1.5x of the seq.
func BenchmarkLoopVsSeq(b *testing.B) {
	const n = 1000
	b.Run("loop", func(b *testing.B) {
		w := ast.Loop(ast.Act("task", nil).Named("done"), "done", true, n)
		last := "loop[" + strconv.Itoa(n-1) + "]#1"
		out := func(a job.Action) []byte {
			if a.ID == last {
				return []byte("true")
			}
			return []byte("false")
		}
		for b.Loop() {
			benchRunJob(b, w, 1, out)
		}
	})
	b.Run("seq", func(b *testing.B) {
		w := benchSeqTree(n)
		for b.Loop() {
			benchRunJob(b, w, 1, func(job.Action) []byte { return []byte("false") })
		}
	})
}

// BenchmarkChoiceStep compares the transition that starts a choice (its
// selected case a leaf) with one that starts a leaf in its place: one
// op is New and the first result.
func BenchmarkChoiceStep(b *testing.B) {
	for _, c := range []struct {
		name string
		w    ast.Node
	}{
		{"choice", ast.Seq(ast.Act("a", nil).Named("a"), ast.Choice("a", ast.When("x", ast.Act("b", nil)), ast.Else(ast.Act("c", nil))))},
		{"leaf", ast.Seq(ast.Act("a", nil).Named("a"), ast.Act("b", nil))},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				tr, err := job.New("c", c.w)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := job.Restart(tr.Job, []job.Result{tr.Actions[0].Succeed([]byte(`"x"`))}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
