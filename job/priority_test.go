package job_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
)

// priorityOf maps the path of every leaf of w to its priority.
func priorityOf(w ast.Node) map[string]int {
	m := map[string]int{}
	ast.Walk(w, func(path string, n *ast.Node) bool {
		if n.Kind == ast.KindAct {
			m[path] = n.Priority
		}
		return true
	})
	return m
}

// priorityCheck fails t unless every action carries its leaf's priority,
// and returns the actions' IDs with their priorities, "ID:P" in order.
func priorityCheck(t *testing.T, want map[string]int, acts []job.Action) string {
	t.Helper()
	var got []string
	for _, a := range acts {
		path, _, err := job.SplitActionID(a.ID)
		p, ok := want[path]
		if err != nil || !ok {
			t.Fatalf("action %s: no leaf at its path (%v)", a.ID, err)
		}
		if a.Priority != p {
			t.Errorf("action %s has priority %d, its leaf %d", a.ID, a.Priority, p)
		}
		got = append(got, fmt.Sprintf("%s:%d", a.ID, a.Priority))
	}
	return strings.Join(got, " ")
}

// TestPriorityCarried: every action of a leaf carries the leaf's priority,
// whoever dispatches it: New, Restart (the next step of a seq, a rescue, a
// finally, a dag child), a retry's next attempt, and recovery
// (Outstanding), also after Encode and Decode.
func TestPriorityCarried(t *testing.T) {
	a := func(name string, p int) ast.Node { return ast.Act(name, nil).WithPriority(p) }
	w := ast.Par(
		ast.Seq(a("first", 7), a("second", -7)),
		ast.Try(a("charge", 1000).WithRetry(ast.Retry{Attempts: 2, Initial: time.Second}),
			ast.Rescue(a("refund", 3)), ast.Finally(a("release", -1000))),
		ast.Dag(a("x", 1).Named("x"), ast.Act("y", nil).Named("y").WithAfter("x")),
	)
	want := priorityOf(w)
	tr, err := job.New("p", w, job.StartedAt(t0))
	if err != nil {
		t.Fatal(err)
	}
	if got := priorityCheck(t, want, tr.Actions); got != "par[0].seq[0]#1:7 par[1].body#1:1000 par[2].dag[0]#1:1" {
		t.Fatalf("New dispatched %s", got)
	}
	step := func(rs ...job.Result) job.Transition {
		t.Helper()
		next, err := job.Restart(tr.Job, rs)
		if err != nil {
			t.Fatal(err)
		}
		if len(next.Ignored) > 0 {
			t.Fatalf("ignored %v", next.Ignored)
		}
		// Recovery, before and after a store and a load, dispatches the
		// same priorities.
		priorityCheck(t, want, next.Job.Outstanding())
		enc, err := job.Encode(next.Job)
		if err != nil {
			t.Fatal(err)
		}
		back, err := job.Decode(enc)
		if err != nil {
			t.Fatal(err)
		}
		if got, again := priorityCheck(t, want, back.Outstanding()), priorityCheck(t, want, next.Job.Outstanding()); got != again {
			t.Errorf("recovered after Decode %s, before %s", got, again)
		}
		tr = next
		return next
	}
	first, charge, x := tr.Actions[0], tr.Actions[1], tr.Actions[2]
	next := step(first.Succeed(nil), failAt(charge, "502", t0.Add(time.Second)), x.Succeed(nil))
	if got := priorityCheck(t, want, next.Actions); got != "par[0].seq[1]#1:-7 par[2].dag[1]#1:0" {
		t.Fatalf("after the first batch: %s", got)
	}
	if len(next.Timers) != 1 {
		t.Fatalf("timers %v", next.Timers)
	}
	second, y := next.Actions[0], next.Actions[1]
	next = step(next.Timers[0].Fire(next.Timers[0].Due))
	if got := priorityCheck(t, want, next.Actions); got != "par[1].body#2:1000" {
		t.Fatalf("the retry dispatched %s", got)
	}
	if got := priorityCheck(t, want, tr.Job.Outstanding()); got != "par[0].seq[1]#1:-7 par[1].body#2:1000 par[2].dag[1]#1:0" {
		t.Fatalf("Outstanding %s", got)
	}
	next = step(next.Actions[0].Fail("declined"), second.Succeed(nil), y.Succeed(nil))
	if got := priorityCheck(t, want, next.Actions); got != "par[1].rescue#1:3" {
		t.Fatalf("after the last attempt failed: %s", got)
	}
	next = step(next.Actions[0].Succeed(nil))
	if got := priorityCheck(t, want, next.Actions); got != "par[1].finally#1:-1000" {
		t.Fatalf("after the rescue: %s", got)
	}
	next = step(next.Actions[0].Succeed(nil))
	if next.Job.Status() != job.StatusSucceeded {
		t.Fatalf("the job ended %s", next.Job.Status())
	}
}

// TestPriorityActionJSON: an action's priority is in its JSON (for the
// transports that send actions as JSON), left out when 0.
func TestPriorityActionJSON(t *testing.T) {
	tr, err := job.New("p", ast.Par(ast.Act("a", nil).WithPriority(-12), ast.Act("b", nil)))
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{`"Priority":-12`, ""} {
		b, err := json.Marshal(tr.Actions[i])
		if err != nil {
			t.Fatal(err)
		}
		if want == "" && strings.Contains(string(b), "Priority") || want != "" && !strings.Contains(string(b), want) {
			t.Errorf("action %s as JSON: %s", tr.Actions[i].ID, b)
		}
		var back job.Action
		if err := json.Unmarshal(b, &back); err != nil || back.Priority != tr.Actions[i].Priority {
			t.Errorf("action %s back from JSON: priority %d, %v", tr.Actions[i].ID, back.Priority, err)
		}
	}
}

// TestPriorityFormat: Encode writes format 5 exactly when a leaf has a
// priority other than 0, and the oldest format that holds the job
// otherwise; Decode refuses a priority in an older format.
func TestPriorityFormat(t *testing.T) {
	a := ast.Act("a", nil)
	clock := job.StartedAt(t0)
	inc := job.WithIncarnation(9)
	tests := []struct {
		name   string
		w      ast.Node
		opts   []job.Option
		format int
	}{
		{"a priority alone", a.WithPriority(1), nil, 5},
		{"the lowest priority", a.WithPriority(ast.MinPriority), nil, 5},
		{"a priority deep down", ast.Seq(a, ast.Try(a, ast.Finally(ast.Par(a, a.WithPriority(-1))))), nil, 5},
		{"a priority and time", a.WithPriority(1).WithRetry(ast.Retry{Attempts: 2}), []job.Option{clock, inc}, 5},
		{"a priority and a dag", ast.Dag(a.Named("x").WithPriority(2)), []job.Option{inc}, 5},
		{"priority 0", a.WithPriority(0), nil, 1},
		{"priority 0 and an incarnation", ast.Seq(a.WithPriority(0)), []job.Option{inc}, 2},
		{"priority 0 and a dag", ast.Dag(a.Named("x").WithPriority(0)), nil, 3},
		{"priority 0 and time", a.WithPriority(0).WithTimeout(time.Second), nil, 4},
		{"priority 0 and a clock", a.WithPriority(0), []job.Option{clock}, 4},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := job.New("f", tc.w, tc.opts...)
			if err != nil {
				t.Fatal(err)
			}
			for _, j := range []job.Job{tr.Job, goldenFinish(t, tr.Job)} {
				enc, err := job.Encode(j)
				if err != nil {
					t.Fatal(err)
				}
				if prefix := fmt.Sprintf(`{"format":%d,`, tc.format); !bytes.HasPrefix(enc, []byte(prefix)) {
					t.Fatalf("encoded as %.20s, want format %d", enc, tc.format)
				}
				if tc.format != 5 {
					continue
				}
				// The same bytes in an older format are corrupt.
				for old := 1; old < 5; old++ {
					doc := bytes.Replace(enc, []byte(`{"format":5,`), fmt.Appendf(nil, `{"format":%d,`, old), 1)
					_, err := job.Decode(doc)
					if !errors.Is(err, job.ErrCorrupt) || errors.Is(err, job.ErrFutureFormat) {
						t.Fatalf("Decode of format %d: %v, want ErrCorrupt", old, err)
					}
					if want := fmt.Sprintf("in format %d (format ", old); !strings.Contains(err.Error(), want) {
						t.Errorf("Decode of format %d: %v, want it to name the format", old, err)
					}
				}
				if _, err := job.Decode(enc); err != nil {
					t.Fatalf("Decode: %v", err)
				}
			}
		})
	}
	// The message for a priority, when it is the only thing the older
	// format lacks.
	tr, err := job.New("f", ast.Act("a", nil).WithPriority(1).WithTimeout(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	enc, _ := job.Encode(tr.Job)
	_, err = job.Decode(bytes.Replace(enc, []byte(`{"format":5,`), []byte(`{"format":4,`), 1))
	if want := `job "f": a workflow with action priorities in format 4 (format 5 holds them)`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Decode of format 4: %v, want %q", err, want)
	}
	// A format-5 job without priorities, as a newer baton might write
	// one, is read; Encode writes the oldest format that holds it.
	tr, err = job.New("f", ast.Act("a", nil))
	if err != nil {
		t.Fatal(err)
	}
	enc, _ = job.Encode(tr.Job)
	doc := bytes.Replace(enc, []byte(`{"format":1,`), []byte(`{"format":5,`), 1)
	doc = bytes.ReplaceAll(doc, []byte(`0,0,0,0]`), []byte(`0,0,0,0,0]`))
	j, err := job.Decode(doc)
	if err != nil {
		t.Fatalf("Decode of %s: %v", doc, err)
	}
	if again, _ := job.Encode(j); !bytes.Equal(again, enc) {
		t.Errorf("re-encoded as %s, want %s", again, enc)
	}
}

// TestGoldenPriority decodes the format-5 goldens and runs them to their
// end: the actions recovered, and every action after, carry their
// leaves' priorities.
func TestGoldenPriority(t *testing.T) {
	for name, recovered := range map[string]string{
		"f5-priority-retry": "par[0]#2:100 par[2]#1:-20",
		"f5-priority-only":  "body.seq[1]#1:1000",
	} {
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(goldenDir, name+".json"))
			if err != nil {
				t.Fatal(err)
			}
			j, err := job.Decode(bytes.TrimSuffix(data, []byte("\n")))
			if err != nil {
				t.Fatal(err)
			}
			want := priorityOf(j.Workflow())
			out := j.Outstanding()
			if got := priorityCheck(t, want, out); got != recovered {
				t.Fatalf("recovered %s, want %s", got, recovered)
			}
			var seen []string
			for step := 0; !j.Done(); step++ {
				if step > 20 || len(out) == 0 {
					t.Fatalf("no end in sight at step %d:\n%s", step, job.Describe(j))
				}
				var rs []job.Result
				for _, a := range out {
					rs = append(rs, a.Succeed(nil))
				}
				tr, err := job.Restart(j, rs)
				if err != nil {
					t.Fatal(err)
				}
				if got := priorityCheck(t, want, tr.Actions); got != "" {
					seen = append(seen, got)
				}
				j, out = tr.Job, tr.Actions
			}
			if j.Status() != job.StatusSucceeded {
				t.Errorf("ended %s", j.Status())
			}
			t.Logf("dispatched after recovery: %s", strings.Join(seen, ", "))
		})
	}
}
