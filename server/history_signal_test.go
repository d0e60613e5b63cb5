package server_test

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"
)

// signalFlow waits for approval beside a gate that a node cancel stops
// (its rescue echoes), then for a signal sent before its wait began.
const signalFlow = `{"version":3,"root":{"seq":[
	{"par":[{"wait":"approval","name":"answer"},{"try":{"wait":"hold","name":"gate"},"rescue":{"act":"echo","payload":"rescued"}}]},
	{"wait":"later","name":"late"}]}}`

// TestHistoryNamesSignals: the history route (checked against the
// OpenAPI document) and the job page's steps say what a signal and a
// node's cancel were: the signal's name, ID and the wait that took it or
// "kept", the node cancelled and the reason; none is a timer firing.
func TestHistoryNamesSignals(t *testing.T) {
	e := newPageEnv(t, nil)
	ctx := t.Context()
	e.waitRunning(t, "s", signalFlow, "seq[0].par[1].body")
	if _, err := e.client.Signal(ctx, "s", "later", "l1", json.RawMessage(`"early"`)); err != nil {
		t.Fatal(err)
	}
	if _, err := e.client.Signal(ctx, "s", "approval", "a1", json.RawMessage(`{"ok":true}`)); err != nil {
		t.Fatal(err)
	}
	// The runner applies the signals in turn; the gate's cancel after them.
	for {
		h, err := e.client.History(ctx, "s", 0, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(h.Steps) >= 3 {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the signals never applied: %+v", h)
		case <-time.After(5 * time.Millisecond):
		}
	}
	if _, err := e.client.CancelNode(ctx, "s", "gate", "no answer"); err != nil {
		t.Fatal(err)
	}
	if s, err := e.client.Wait(ctx, "s"); err != nil || s.Status != "succeeded" {
		t.Fatalf("the job: %+v, %v", s, err)
	}
	h, err := e.client.History(ctx, "s", 0, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.MarshalIndent(h, "", " ")
	var kept, taken, cancel bool
	var took []string
	for _, st := range h.Steps {
		for _, r := range st.Results {
			if r.Timer {
				t.Errorf("v%d: %s is a timer\n%s", st.Version, r.ActionID, b)
			}
			switch {
			case r.Signal != nil && r.Signal.Name == "later":
				kept = r.Signal.Kept && !r.Signal.Taken && r.Path == "" && r.Output == `"early"`
			case r.Signal != nil && r.Signal.Name == "approval":
				taken = r.Signal.Taken && r.Signal.ID == "a1" && r.Path == "seq[0].par[0]"
			case r.NodeCancel != nil:
				cancel = r.NodeCancel.Node == "gate" && r.NodeCancel.Reason == "no answer" && r.Path == "seq[0].par[1].body"
			}
		}
		for _, tk := range st.Taken {
			took = append(took, tk.Name+"/"+tk.ID+" by "+tk.Path)
		}
	}
	if !kept || !taken || !cancel || strings.Join(took, ",") != "later/l1 by seq[1]" {
		t.Errorf("kept %v, taken %v, node cancel %v, taken later %q:\n%s", kept, taken, cancel, took, b)
	}

	// The page's steps, all of them.
	_, body := e.get(t, "/jobs/s?"+url.Values{"steps_from": {"1"}}.Encode(), map[string]string{"Authorization": "Bearer " + pageWriteToken})
	d := parseHTML(t, body)
	results := d.all(func(n *html.Node) bool { _, ok := attr(n, "data-result-path"); return ok })
	var words []string
	for _, n := range results {
		words = append(words, attrOf(n, "data-status")+": "+strings.Join(strings.Fields(text(n)), " "))
	}
	all := strings.Join(words, "\n")
	for _, want := range []string{
		"signal: @signal/later/l1 ✉ signal signal later (id l1) kept for a wait to come → \"early\"",
		"signal: @signal/approval/a1 ✉ signal signal approval (id a1) taken by the wait at seq[0].par[0] → {\"ok\":true}",
		"cancelled: @cancel/gate ⊘ cancelled node gate at seq[0].par[1].body cancelled: no answer",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("the page's results lack %q:\n%s", want, all)
		}
	}
	if strings.Contains(all, "timer") {
		t.Errorf("the page shows a timer:\n%s", all)
	}
	var tk []string
	for _, n := range d.all(func(n *html.Node) bool { return n.Data == "p" && hasClass(n, "taken") }) {
		tk = append(tk, strings.Join(strings.Fields(text(n)), " "))
	}
	if len(tk) != 1 || tk[0] != "Signals kept before, taken now: signal later (id l1) by the wait at seq[1]" {
		t.Errorf("the steps' signals taken later: %q", tk)
	}
}
