package api_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/batonwf/baton/api"
	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/store"
)

// TestHistoryNamesSignalsAndNodeCancels: a signal taken by its wait, a
// signal kept and taken later, a node's cancel and a sleep's timer each
// show as what they are, never as a timer firing on the root; an
// ignored signal and node cancel too.
func TestHistoryNamesSignalsAndNodeCancels(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	root := ast.Seq(
		ast.Par(
			ast.Wait("approval").Named("answer"),
			ast.Try(ast.Wait("hold").Named("gate"), ast.Rescue(ast.Act("log", "rescued"))),
		),
		ast.Sleep(time.Second),
		ast.Wait("later").Named("late"),
	)
	tr, err := job.New("s", root, job.StartedAt(t0))
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
		if len(next.Ignored) > 0 || !next.Changed() {
			t.Fatalf("step v%d ignored %v", next.Job.Version(), next.Ignored)
		}
		h.Steps = append(h.Steps, next.Step)
		return next
	}
	tr = step(job.SignalResult("s", job.Signal{Name: "later", ID: "l1", Payload: json.RawMessage(`"early"`), At: t0.Add(time.Second)}))
	tr = step(job.SignalResult("s", job.Signal{Name: "approval", ID: "a1", Payload: json.RawMessage(`{"ok":true}`), At: t0.Add(2 * time.Second)}))
	cancel := job.CancelNodeResult("s", "gate", "no answer")
	cancel.At = t0.Add(3 * time.Second)
	tr = step(cancel)
	tr = step(tr.Actions[0].Succeed(nil)) // the rescue: the sleep starts
	step(tr.Timers[0].Fire(t0.Add(5 * time.Second)))
	h.Ignored = []store.Ignored{
		{Version: 6, ActionID: job.SignalResult("s", job.Signal{Name: "approval", ID: "a1"}).ActionID, Reason: job.IgnoredDuplicate},
		{Version: 6, ActionID: job.CancelNodeResult("s", "gate", "again").ActionID, Reason: job.IgnoredJobDone, Failed: true, Error: "again"},
	}

	got, err := api.HistoryOf(h, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.MarshalIndent(got, "", " ")
	if got.Status != "succeeded" || len(got.Steps) != 6 {
		t.Fatalf("history:\n%s", b)
	}
	kept := got.Steps[1].Results[0]
	if kept.Timer || kept.Signal == nil || *kept.Signal != (api.SignalApplied{Name: "later", ID: "l1", Kept: true}) || kept.Path != "" || kept.Output != `"early"` {
		t.Errorf("the kept signal: %+v\n%s", kept, b)
	}
	taken := got.Steps[2].Results[0]
	if taken.Timer || taken.Signal == nil || *taken.Signal != (api.SignalApplied{Name: "approval", ID: "a1", Taken: true}) || taken.Path != "seq[0].par[0]" || taken.Output != `{"ok":true}` {
		t.Errorf("the signal taken: %+v\n%s", taken, b)
	}
	nc := got.Steps[3].Results[0]
	if nc.Timer || nc.NodeCancel == nil || *nc.NodeCancel != (api.NodeCancelApplied{Node: "gate", Reason: "no answer"}) || nc.Path != "seq[0].par[1].body" || !nc.At.Equal(t0.Add(3*time.Second)) {
		t.Errorf("the node's cancel: %+v\n%s", nc, b)
	}
	if len(got.Steps[3].Dispatched) != 1 {
		t.Errorf("the cancel's step dispatched %v, want the rescue", got.Steps[3].Dispatched)
	}
	fired := got.Steps[5].Results[0]
	if !fired.Timer || fired.Signal != nil || fired.NodeCancel != nil || fired.Path != "seq[1]" {
		t.Errorf("the sleep's timer: %+v\n%s", fired, b)
	}
	if want := []api.TakenSignal{{Name: "later", ID: "l1", Path: "seq[2]"}}; len(got.Steps[5].Taken) != 1 || got.Steps[5].Taken[0] != want[0] {
		t.Errorf("the step that started the late wait took %+v, want %+v\n%s", got.Steps[5].Taken, want, b)
	}
	for i, st := range got.Steps[:5] {
		if len(st.Taken) > 0 {
			t.Errorf("step %d took %+v", i, st.Taken)
		}
	}
	ig := got.Steps[5].Ignored
	if len(ig) != 2 {
		t.Fatalf("ignored: %+v", ig)
	}
	if x := ig[0]; x.Timer || x.Signal == nil || *x.Signal != (api.SignalApplied{Name: "approval", ID: "a1"}) || x.Reason != "duplicate" {
		t.Errorf("the ignored signal: %+v", x)
	}
	if x := ig[1]; x.Timer || x.Cancel || x.NodeCancel == nil || *x.NodeCancel != (api.NodeCancelApplied{Node: "gate", Reason: "again"}) || x.Path != "seq[0].par[1].body" {
		t.Errorf("the ignored node cancel: %+v", x)
	}
}
