package api_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/batonwf/baton/api"
	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/store"
)

func TestClip(t *testing.T) {
	for _, c := range []struct {
		in    string
		limit int
		want  string
		cut   bool
	}{
		{"abc", 3, "abc", false},
		{"abcd", 3, "abc", true},
		{"aé", 2, "a", true}, // é is 2 bytes: never cut inside a rune
		{"日本", 4, "日", true},
		{"", 0, "", false},
	} {
		got, cut := api.Clip(c.in, c.limit)
		if got != c.want || cut != c.cut {
			t.Errorf("Clip(%q, %d) = %q, %v; want %q, %v", c.in, c.limit, got, cut, c.want, c.cut)
		}
	}
}

// TestHistoryOf: a failed attempt, its retry's timer (on the root: path
// ""), the success, each attempt with the worker that ran it; from and
// limit page through the steps.
func TestHistoryOf(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	root := ast.Act("flaky", 1).WithRetry(ast.Retry{Attempts: 2, Initial: time.Second})
	tr, err := job.New("h", root, job.StartedAt(t0))
	if err != nil {
		t.Fatal(err)
	}
	h := store.History{Origin: tr.Job}
	step := func(rs ...job.Result) job.Transition {
		t.Helper()
		next, err := job.Restart(tr.Job, rs)
		if err != nil {
			t.Fatal(err)
		}
		h.Steps = append(h.Steps, next.Step)
		return next
	}
	a := tr.Actions[0]
	fail := a.Fail("boom")
	fail.At, fail.Worker = t0.Add(time.Second), "w1"
	tr = step(fail)
	tr = step(tr.Timers[0].Fire(t0.Add(2 * time.Second)))
	ok := tr.Actions[0].Succeed([]byte(`"done"`))
	ok.At, ok.Worker = t0.Add(3*time.Second), "w2"
	step(ok)

	got, err := api.HistoryOf(h, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.MarshalIndent(got, "", " ")
	if got.Latest != 4 || got.Status != "succeeded" || len(got.Steps) != 4 || !got.Steps[0].Created {
		t.Fatalf("history:\n%s", b)
	}
	if r := got.Steps[1].Results[0]; r.OK || r.Error != "boom" || r.Path != "" || r.Action != "flaky" || !r.At.Equal(t0.Add(time.Second)) || r.Worker != "w1" {
		t.Errorf("the failure: %+v", r)
	}
	if r := got.Steps[2].Results[0]; !r.Timer || r.Path != "" || r.Worker != "" || len(got.Steps[2].Dispatched) != 1 {
		t.Errorf("the retry's timer: %+v\n%s", r, b)
	}
	if r := got.Steps[3].Results[0]; !r.OK || r.Output != `"done"` || r.Worker != "w2" || got.Steps[3].Status != "succeeded" || got.Steps[3].Settled != 1 {
		t.Errorf("the success: %+v", got.Steps[3])
	}
	page, err := api.HistoryOf(h, 1, 2)
	if err != nil || len(page.Steps) != 2 || page.Steps[0].Version != 2 || page.Steps[1].Version != 3 {
		t.Errorf("from 1, limit 2: %+v, %v", page, err)
	}
	if end, err := api.HistoryOf(h, 4, 0); err != nil || len(end.Steps) != 0 || end.Steps == nil {
		t.Errorf("from the newest: %+v, %v", end, err)
	}
}

func TestSummaryOfClipsTheFailure(t *testing.T) {
	tr, err := job.New("f", ast.Act("x", nil))
	if err != nil {
		t.Fatal(err)
	}
	next, err := job.Restart(tr.Job, []job.Result{tr.Actions[0].Fail(strings.Repeat("e", 300))})
	if err != nil {
		t.Fatal(err)
	}
	s := api.SummaryOf(next.Job)
	if s.Failure == nil || len(s.Failure.Message) != api.ClipBytes || !s.Failure.Clipped || s.Status != "failed" {
		t.Errorf("summary: %+v", s)
	}
}

func ExampleSummaryOf() {
	tr, _ := job.New("order-7", ast.Seq(ast.Act("charge", 7), ast.Act("ship", 7)),
		job.StartedAt(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)))
	b, _ := json.Marshal(api.SummaryOf(tr.Job))
	fmt.Println(string(b))
	// Output:
	// {"id":"order-7","status":"running","version":1,"settled":0,"total":2,"outstanding":1,"updated":"2026-01-02T03:04:05Z"}
}
