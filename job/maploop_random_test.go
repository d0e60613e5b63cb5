package job_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
)

// mlDrawer draws random workflows of maps and loops among the other
// nodes: every map over a listing leaf just before it, every loop ending
// when a leaf at the end of its body outputs true.
type mlDrawer struct {
	n     int
	named []string // the named maps and loops
}

func (d *mlDrawer) name(prefix string) string {
	d.n++
	return fmt.Sprintf("%s%d", prefix, d.n)
}

func (d *mlDrawer) tree(t *rapid.T, depth int, inMap bool) ast.Node {
	n := d.node(t, depth, inMap)
	if rapid.IntRange(0, 5).Draw(t, "deadline") == 0 {
		n = n.WithDeadline(time.Duration(rapid.IntRange(1, 3).Draw(t, "minutes")) * time.Minute)
	}
	return n
}

func (d *mlDrawer) node(t *rapid.T, depth int, inMap bool) ast.Node {
	kinds := []string{"leaf"}
	if depth > 0 {
		kinds = append(kinds, "seq", "par", "race", "try", "map", "map", "loop", "loop")
	}
	switch rapid.SampledFrom(kinds).Draw(t, "kind") {
	case "seq", "par", "race":
		a, b := d.tree(t, depth-1, inMap), d.tree(t, depth-1, inMap)
		switch rapid.IntRange(0, 2).Draw(t, "inner") {
		case 0:
			return ast.Seq(a, b)
		case 1:
			p := ast.Par(a, b)
			if rapid.Bool().Draw(t, "limit") {
				p = p.WithLimit(1)
			}
			return p
		}
		return ast.Race(a, b)
	case "try":
		return ast.Try(d.tree(t, depth-1, inMap), ast.Rescue(d.tree(t, depth-1, inMap)))
	case "map":
		list := d.name("list")
		m := ast.Map(list, d.tree(t, depth-1, true))
		if rapid.Bool().Draw(t, "mapLimit") {
			m = m.WithLimit(rapid.IntRange(1, 2).Draw(t, "l"))
		}
		if rapid.Bool().Draw(t, "mapNeed") {
			m = m.WithNeed(rapid.IntRange(1, 2).Draw(t, "n"))
		}
		if rapid.Bool().Draw(t, "mapNamed") {
			m = m.Named(d.name("m"))
			d.named = append(d.named, m.Name)
		}
		return ast.Seq(ast.Act("list", nil).Named(list), m)
	case "loop":
		until := d.name("until")
		l := ast.Loop(ast.Seq(d.tree(t, depth-1, inMap), ast.Act("until", nil).Named(until)), until, true, rapid.IntRange(1, 3).Draw(t, "max"))
		if rapid.Bool().Draw(t, "loopNamed") {
			l = l.Named(d.name("l"))
			d.named = append(d.named, l.Name)
		}
		return l
	}
	if rapid.IntRange(0, 6).Draw(t, "wait") == 0 {
		return ast.Wait("go")
	}
	leaf := ast.Act("work", nil)
	if rapid.IntRange(0, 4).Draw(t, "retry") == 0 {
		leaf = leaf.WithRetry(ast.Retry{Attempts: 2, Initial: time.Second})
	}
	if inMap && rapid.Bool().Draw(t, "item") {
		leaf = leaf.WithInputs("item", "index")
	}
	return leaf
}

// TestMapLoopRandom plays random workflows of maps and loops (with
// deadlines, retries, waits, node cancels and cancels) with random
// batches of outcomes, firings and signals, and checks after every step:
// the job's invariants (Restart's own check and job.Check), that Restart
// left its job alone and gives the same job run again, an encoding that
// decodes to the same job (the run goes on from it at random), and that a
// running job always has an action, a timer or a wait to go on with.
func TestMapLoopRandom(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		d := &mlDrawer{}
		w := d.tree(t, rapid.IntRange(1, 4).Draw(t, "depth"), false)
		tr, err := job.New("r", w)
		if err != nil {
			t.Fatalf("New: %v", err)
		}
		j := tr.Job
		for step := 0; !j.Done(); step++ {
			if step > 300 {
				t.Fatalf("no end after 300 steps:\n%s", job.Describe(j))
			}
			acts, timers := j.Outstanding(), j.Timers()
			waits := strings.Contains(job.Describe(j), "waits for signal go")
			if len(acts) == 0 && len(timers) == 0 && !waits {
				t.Fatalf("running with nothing outstanding, no timer, no wait:\n%s", job.Describe(j))
			}
			k := 0
			if len(acts) > 0 {
				k = rapid.IntRange(0, len(acts)).Draw(t, "batch")
			}
			var rs []job.Result
			if len(timers) > 0 && (k == 0 || rapid.IntRange(0, 3).Draw(t, "fire") == 0) {
				tm := rapid.SampledFrom(timers).Draw(t, "timer")
				rs = append(rs, tm.Fire(tm.Due))
			}
			if waits && (len(rs) == 0 && k == 0 || rapid.IntRange(0, 3).Draw(t, "signal") == 0) {
				rs = append(rs, job.SignalResult("r", job.Signal{Name: "go", ID: fmt.Sprint("s", step), Payload: []byte(`1`)}))
			}
			if len(rs) == 0 && k == 0 {
				k = 1
			}
			for _, a := range acts[:k] {
				switch {
				case rapid.IntRange(0, 9).Draw(t, "fail") == 0:
					rs = append(rs, a.Fail("no"))
				case a.Name == "list":
					out := rapid.SampledFrom([]string{`[]`, `[1]`, `["a",2]`, `[1,2,3]`, `{"x":1}`}).Draw(t, "list")
					rs = append(rs, a.Succeed([]byte(out)))
				case a.Name == "until":
					rs = append(rs, a.Succeed([]byte(rapid.SampledFrom([]string{"true", "false"}).Draw(t, "until"))))
				default:
					rs = append(rs, a.Succeed([]byte(`"ok"`)))
				}
			}
			if len(d.named) > 0 && rapid.IntRange(0, 10).Draw(t, "cancelNode") == 0 {
				rs = append(rs, job.CancelNodeResult("r", rapid.SampledFrom(d.named).Draw(t, "node"), "enough"))
			}
			if rapid.IntRange(0, 30).Draw(t, "cancel") == 0 {
				rs = append(rs, job.CancelResult("r", "stop"))
			}
			before, _ := job.Encode(j)
			tr, err := job.Restart(j, rs)
			if err != nil {
				t.Fatalf("Restart: %v\n%s", err, job.Describe(j))
			}
			// Restart never modifies its job, and is deterministic.
			again, err := job.Restart(j, rs)
			if err != nil {
				t.Fatal(err)
			}
			after, _ := job.Encode(j)
			a, _ := job.Encode(tr.Job)
			b, _ := job.Encode(again.Job)
			if !bytes.Equal(before, after) || !bytes.Equal(a, b) {
				t.Fatalf("Restart modified its job, or differs when run again:\n%s\n%s\n%s\n%s", before, after, a, b)
			}
			if err := job.Check(tr.Job); err != nil {
				t.Fatalf("check: %v\n%s", err, job.Describe(tr.Job))
			}
			j = tr.Job
			enc, err := job.Encode(j)
			if err != nil {
				t.Fatal(err)
			}
			back, err := job.Decode(enc)
			if err != nil {
				t.Fatalf("Decode: %v\n%s", err, enc)
			}
			if enc2, _ := job.Encode(back); !bytes.Equal(enc, enc2) {
				t.Fatalf("round trip differs:\n%s\n%s", enc, enc2)
			}
			if rapid.Bool().Draw(t, "crash") {
				j = back
			}
		}
	})
}
