package draw_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/draw"
	"github.com/batonwf/baton/job"
)

var update = flag.Bool("update", false, "rewrite testdata/*.svg from the layout (a drawing that breaks a contract is an error, never written)")

// play runs root as job id, answering each outstanding action by its
// action name, until a round answers nothing:
//
//	fail   fails with "boom"
//	explode  fails with its payload as the message
//	hold   stays running
//	emit   succeeds, its payload as its output
//	other  succeeds, its output {"ok":true}
func play(t testing.TB, id job.ID, root ast.Node) job.Job {
	t.Helper()
	tr, err := job.New(id, root)
	if err != nil {
		t.Fatal(err)
	}
	for {
		var batch []job.Result
		for _, a := range tr.Job.Outstanding() {
			switch a.Name {
			case "hold":
			case "fail":
				batch = append(batch, a.Fail("boom"))
			case "explode":
				batch = append(batch, a.Fail(string(a.Payload)))
			case "emit":
				batch = append(batch, a.Succeed(a.Payload))
			default:
				batch = append(batch, a.Succeed([]byte(`{"ok":true}`)))
			}
		}
		if len(batch) == 0 {
			// Timers (sleeps, retries) fire one at a time, the earliest
			// first, at their due time; a job waiting only on holds or
			// signals is done.
			ts := tr.Job.Timers()
			if len(ts) == 0 {
				return tr.Job
			}
			first := ts[0]
			for _, tm := range ts[1:] {
				if tm.Due.Before(first.Due) {
					first = tm
				}
			}
			batch = append(batch, first.Fire(first.Due))
		}
		if tr, err = job.Restart(tr.Job, batch); err != nil {
			t.Fatal(err)
		}
	}
}

// fresh is root as job id before anything ran.
func fresh(t testing.TB, id job.ID, root ast.Node) job.Job {
	t.Helper()
	tr, err := job.New(id, root)
	if err != nil {
		t.Fatal(err)
	}
	return tr.Job
}

func wide(n int) []ast.Node {
	kids := make([]ast.Node, n)
	for i := range kids {
		name := "log"
		switch {
		case i%10 == 3:
			name = "hold"
		case i%7 == 5:
			name = "fail"
		}
		kids[i] = ast.Act(name, map[string]int{"i": i})
	}
	return kids
}

func leaf(name, msg string) ast.Node { return ast.Act(name, map[string]string{"msg": msg}) }

// goldens are the drawings kept under testdata/NAME.svg.
var goldens = []struct {
	name string
	job  func(t testing.TB) job.Job
	o    draw.Options
}{
	{"act", func(t testing.TB) job.Job {
		return play(t, "act", leaf("log", "hello"))
	}, draw.Options{}},
	{"seq", func(t testing.TB) job.Job {
		return play(t, "seq", ast.Seq(leaf("log", "one"), leaf("log", "two"), leaf("log", "three")))
	}, draw.Options{}},
	{"par", func(t testing.TB) job.Job {
		return play(t, "par", ast.Par(leaf("log", "a"), leaf("fail", "b"), leaf("log", "c")))
	}, draw.Options{}},
	{"try", func(t testing.TB) job.Job {
		return play(t, "try", ast.Try(leaf("fail", "charge"), ast.Rescue(leaf("log", "refund")), ast.Finally(leaf("log", "close"))))
	}, draw.Options{}},
	{"dag", func(t testing.TB) job.Job {
		return play(t, "dag", ast.Dag(
			leaf("log", "fetch").Named("fetch"),
			leaf("log", "left").Named("left").WithAfter("fetch"),
			leaf("hold", "right").Named("right").WithAfter("fetch"),
			leaf("log", "join").Named("join").WithAfter("left", "right"),
			leaf("log", "alone").Named("alone"),
		))
	}, draw.Options{}},
	{"nested", func(t testing.TB) job.Job {
		return fresh(t, "nested", ast.Seq(
			ast.Par(leaf("log", "a"), ast.Try(ast.Seq(leaf("log", "b"), leaf("log", "c")), ast.Finally(leaf("log", "d")))),
			ast.Dag(leaf("log", "e").Named("e"), ast.Par(leaf("log", "f"), leaf("log", "g")).Named("fg").WithAfter("e")),
			leaf("log", "h"),
		))
	}, draw.Options{}},
	{"midrun", func(t testing.TB) job.Job {
		return play(t, "midrun", ast.Par(
			ast.Seq(leaf("log", "first"), leaf("log", "second"), leaf("hold", "third"), leaf("log", "fourth")),
			ast.Seq(leaf("fail", "first"), leaf("log", "never")),
			ast.Try(leaf("hold", "slow"), ast.Rescue(leaf("log", "fix"))),
			ast.Par(leaf("log", "done"), leaf("hold", "busy")),
		))
	}, draw.Options{}},
	{"hostile", func(t testing.TB) job.Job {
		return play(t, `<script>"&'`, ast.Par(
			ast.Act("log", json.RawMessage(`"</script><img src=x onerror=alert(1)>"`)),
			ast.Act("explode", json.RawMessage(`{"<b>":"\"quoted\" & 'single' ]]>"}`)),
		))
	}, draw.Options{}},
	{"race", func(t testing.TB) job.Job {
		return play(t, "race", ast.Seq(
			ast.Race(ast.Seq(leaf("hold", "slow mirror"), leaf("log", "slow answered")), leaf("log", "fast mirror"), leaf("fail", "down mirror")),
			leaf("hold", "copied").WithReplicas(3),
			leaf("log", "done"),
		))
	}, draw.Options{}},
	{"choice", func(t testing.TB) job.Job {
		// Workflow version 3: the chosen case runs, the other is
		// skipped; the sleep wins the race against the wait.
		return play(t, "v3", ast.Seq(
			ast.Act("emit", "silver").Named("tier"),
			ast.Choice("tier", ast.When("gold", ast.Act("log", "gold path")), ast.Else(ast.Act("log", "other"))),
			ast.Sleep(200*time.Millisecond),
			ast.Race(ast.Wait("approval"), ast.Sleep(300*time.Millisecond)),
			ast.Act("log", "done"),
		))
	}, draw.Options{}},
	{"v3", func(t testing.TB) job.Job {
		// Every node and option of version 3 mid-run: a dag's guard
		// refused, a race that needs 2, a par of limit 1, a multi
		// choice, a wait, an end.
		return play(t, "v3", ast.Seq(
			ast.Act("emit", []string{"a", "c"}).Named("plan"),
			ast.Dag(
				leaf("log", "fetch").Named("fetch"),
				leaf("log", "guarded").Named("audit").WithAfter("fetch").WithWhen("plan", "audit"),
				leaf("log", "after").Named("report").WithAfter("audit"),
			),
			ast.Choice("plan",
				ast.When("a", leaf("log", "case a")),
				ast.WhenAny([]any{"b", "c"}, leaf("log", "case b or c")),
				ast.When("d", leaf("log", "case d")),
			).AllMatching(),
			ast.Race(leaf("log", "one"), leaf("log", "two"), leaf("hold", "three")).WithNeed(2),
			ast.Par(leaf("log", "first"), ast.Wait("approval"), leaf("log", "third")).WithLimit(1),
			ast.End("all done"),
		))
	}, draw.Options{}},
	{"par150", func(t testing.TB) job.Job {
		return play(t, "par150", ast.Par(wide(150)...))
	}, draw.Options{}},
	{"par150-expanded", func(t testing.TB) job.Job {
		return play(t, "par150", ast.Par(wide(150)...))
	}, draw.Options{Expand: map[string]bool{"": true}}},
	{"par100000", func(t testing.TB) job.Job {
		return fresh(t, "par100000", ast.Par(wide(100000)...))
	}, draw.Options{Expand: map[string]bool{"": true}}},
}

func TestDrawGolden(t *testing.T) {
	for _, c := range goldens {
		t.Run(c.name, func(t *testing.T) {
			j := c.job(t)
			g, err := draw.Layout(j, c.o)
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			if err := g.SVG(&b); err != nil {
				t.Fatal(err)
			}
			if err := checkGraph(j, c.o, g, b.Bytes()); err != nil {
				t.Fatal(err)
			}
			var page bytes.Buffer
			if err := g.PageSVG(&page); err != nil {
				t.Fatal(err)
			}
			if err := checkPageSVG(g, b.Bytes(), page.Bytes()); err != nil {
				t.Fatalf("%v\n%s", err, page.Bytes())
			}
			file := filepath.Join("testdata", c.name+".svg")
			if *update {
				if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("%v (run with -update to write it)", err)
			}
			if !bytes.Equal(b.Bytes(), want) {
				t.Errorf("%s differs from the layout (run with -update and review the diff):\n%s", file, firstDiff(string(want), b.String()))
			}
		})
	}
}

// firstDiff shows the first line where got differs from want.
func firstDiff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := range max(len(wl), len(gl)) {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return fmt.Sprintf("line %d:\nwant %s\ngot  %s", i+1, w, g)
		}
	}
	return "(no line differs)"
}
