package server_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/batonwf/baton/client"
	"github.com/batonwf/baton/server"
)

// waitPageFlow waits for the signal approval, then echoes.
const waitPageFlow = `{"version":3,"root":{"seq":[{"wait":"approval","name":"answer"},{"act":"echo","payload":"after"}]}}`

// TestPageSignalForm: the panel of a running wait has a form that sends
// its signal (with an ID made for the page, so that posting it twice
// sends one signal), for a write scope only; the form's post sends it
// and goes back to the job's page, where the wait took it; a payload
// that is not JSON is refused. Other nodes' panels have no form.
func TestPageSignalForm(t *testing.T) {
	e := newPageEnv(t, func(o *server.Options) { o.Tokens = pageTokens(t) })
	read := map[string]string{"Authorization": "Bearer " + pageReadToken}
	write := map[string]string{"Authorization": "Bearer " + pageWriteToken}
	e.waitRunning(t, "s", waitPageFlow, "seq[0]")
	page := "/jobs/s?" + url.Values{"node": {"seq[0]"}}.Encode()
	_, body := e.get(t, page, read)
	if parseHTML(t, body).byID("signal-form") != nil {
		t.Error("a read token sees the signal form")
	}
	_, body = e.get(t, "/jobs/s?"+url.Values{"node": {"seq[1]"}}.Encode(), write)
	if parseHTML(t, body).byID("signal-form") != nil {
		t.Error("an idle action's panel has a signal form")
	}
	_, body = e.get(t, page, write)
	d := parseHTML(t, body)
	form := d.byID("signal-form")
	if form == nil || attrOf(form, "method") != "post" || attrOf(form, "action") != "/jobs/s/signals/approval" || d.byID("send-signal") == nil || d.byID("signal-payload") == nil {
		t.Fatalf("the running wait's panel has no signal form: %s", body)
	}
	if !strings.Contains(text(d.byID("send-signal")), "approval") {
		t.Errorf("the button %q does not name the signal", text(d.byID("send-signal")))
	}
	sigID := ""
	for _, n := range d.all(func(n *html.Node) bool { return n.Data == "input" && attrOf(n, "name") == "id" }) {
		sigID = attrOf(n, "value")
	}
	if !strings.HasPrefix(sigID, "page-") {
		t.Fatalf("the form's ID %q", sigID)
	}
	if resp, _ := e.postForm(t, "/jobs/s/signals/approval", url.Values{"id": {sigID}, "payload": {`{"ok":true}`}}, read); resp.StatusCode != http.StatusForbidden {
		t.Errorf("the signal form with a read token: %d", resp.StatusCode)
	}
	if resp, body := e.postForm(t, "/jobs/s/signals/approval", url.Values{"id": {sigID}, "payload": {"{nope"}}, write); resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "not JSON") {
		t.Errorf("a payload that is not JSON: %d %s", resp.StatusCode, body)
	}
	resp, body := e.postForm(t, "/jobs/s/signals/approval", url.Values{"id": {sigID}, "payload": {`{"ok":true}`}}, write)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/jobs/s" {
		t.Fatalf("the signal form: %d %v %s", resp.StatusCode, resp.Header, body)
	}
	for {
		j, err := e.client.Job(t.Context(), "s", client.JobQuery{NoNodes: true})
		if err != nil {
			t.Fatal(err)
		}
		if j.Status == "succeeded" {
			break
		}
		select {
		case <-t.Context().Done():
			t.Fatalf("the signalled job never succeeded: %+v", j.Summary)
		case <-time.After(5 * time.Millisecond):
		}
	}
	j, err := e.st.Load(t.Context(), "s")
	if err != nil {
		t.Fatal(err)
	}
	if out, _ := j.Output("answer"); string(out) != `{"ok":true}` {
		t.Errorf("the wait's output is %s, want the form's payload", out)
	}
	_, body = e.get(t, page, write)
	if parseHTML(t, body).byID("signal-form") != nil {
		t.Error("a settled wait's panel has a signal form")
	}
}
