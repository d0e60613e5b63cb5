package servertest

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/batonwf/baton/api"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/server"
)

// waitFlow waits for the signal approval, then runs ok.
const waitFlow = `{"version":3,"root":{"seq":[{"wait":"approval","name":"answer"},{"act":"ok","payload":"after"}]}}`

// testSignal: POST /api/v1/jobs/{id}/signals/{name} sends a running wait
// its signal (202, the job goes on with the payload as the wait's
// output); the same ID again is 202 and changes nothing, after the job
// finished too; without an ID the server makes one; a new signal to a
// finished job, a missing one, a bad name, ID or payload, a payload over
// the limit are problems that change nothing.
func testSignal(t *testing.T, cfg Config) {
	e := NewEnv(t, cfg, nil)
	ctx := ctxOf(t)
	e.Submit(t, "s", waitFlow)
	e.Running(t, "s", "seq[0]")
	e.Unchanged(t, func() {
		for _, c := range []struct {
			path, body string
			status     int
			code       server.Code
			detail     string
		}{
			{"/api/v1/jobs/nope/signals/approval", `{"id":"x"}`, 404, server.CodeJobNotFound, "job nope not found"},
			{"/api/v1/jobs/s/signals/no%20good", `{"id":"x"}`, 400, server.CodeBadSignal, "(in the path)"},
			// Kept, it would wait for ever: no wait of the job takes it.
			{"/api/v1/jobs/s/signals/aproval", `{"id":"x"}`, 400, server.CodeBadSignal, "no wait of the job takes signal aproval (its waits take approval)"},
			{"/api/v1/jobs/s/signals/approval", `{"id":"x","payload":nope}`, 400, server.CodeBadJSON, "the body"},
			{"/api/v1/jobs/s/signals/approval", `{"id":"x","extra":1}`, 400, server.CodeBadJSON, "unknown field"},
			{"/api/v1/jobs/s/signals/approval", `{"id":"bad\u0001id"}`, 400, server.CodeBadSignal, "ID"},
			// An ID given empty (an unset variable) is refused, as
			// docs/api.md says; only an absent one is made.
			{"/api/v1/jobs/s/signals/approval", `{"id":"","payload":1}`, 400, server.CodeBadSignal, "ID is empty"},
			{"/api/v1/jobs/s/signals/approval", "\xef\xbb\xbf" + `{"id":"x"}`, 400, server.CodeBadJSON, "byte-order mark"},
			{"/api/v1/jobs/s/signals/approval", `{"id":"x","payload":"` + strings.Repeat("x", job.MaxSignalPayload) + `"}`,
				413, server.CodeRequestTooLarge, "over the limit of 65536 bytes of a signal's payload"},
		} {
			p := e.Do(t, "POST", c.path, nil, c.body).Problem(t, c.status, c.code)
			if !strings.Contains(p.Detail, c.detail) {
				t.Errorf("POST %s: detail %q, want one saying %q", c.path, p.Detail, c.detail)
			}
		}
	})
	a := e.Do(t, "POST", "/api/v1/jobs/s/signals/approval", nil, `{"id":"a1","payload":{"ok":true}}`)
	var sent api.SignalSent
	if a.Status != http.StatusAccepted || json.Unmarshal(a.Body, &sent) != nil || sent.Job != "s" || sent.Name != "approval" || sent.ID != "a1" || sent.Summary.ID != "s" {
		t.Fatalf("signal: %d %s", a.Status, a.Body)
	}
	if sent.Taken != "" && sent.Taken != "seq[0]" {
		t.Errorf("signal taken by %q, want seq[0] (or not applied yet)", sent.Taken)
	}
	if j := e.Settled(t, "s"); j.Status != "succeeded" {
		t.Fatalf("the signalled job: %+v", j.Summary)
	}
	if out := e.output(t, "s", "answer"); out != `{"ok":true}` {
		t.Errorf("the wait's output is %s, want the signal's payload", out)
	}
	// A finished job takes no new signal; the same ID again is a retry
	// (its first answer lost, say), answered as the first was: 202, the
	// wait that took it, nothing changed. It was the very signal that
	// finished the job.
	e.Unchanged(t, func() {
		e.Do(t, "POST", "/api/v1/jobs/s/signals/approval", nil, `{"id":"a2"}`).Problem(t, 409, server.CodeJobFinished)
		again := e.Do(t, "POST", "/api/v1/jobs/s/signals/approval", nil, `{"id":"a1","payload":{"ok":false}}`)
		var sent api.SignalSent
		if again.Status != http.StatusAccepted || json.Unmarshal(again.Body, &sent) != nil || sent.ID != "a1" || sent.Taken != "seq[0]" || sent.Summary.Status != "succeeded" {
			t.Errorf("the signal that finished the job, sent again: %d %s; want 202 taken by seq[0], the job succeeded", again.Status, again.Body)
		}
		e.Do(t, "POST", "/api/v1/jobs/s/signals/other", nil, `{"id":"a1"}`).Problem(t, 409, server.CodeJobFinished)
	})

	// Without a body: an ID is made, the payload is null; the same ID
	// again is 202 and changes nothing.
	e.Submit(t, "twice", `{"version":3,"root":{"seq":[{"wait":"approval","name":"first"},{"wait":"approval","name":"second"}]}}`)
	e.Running(t, "twice", "seq[0]")
	a = e.Do(t, "POST", "/api/v1/jobs/twice/signals/approval", nil, "")
	if a.Status != http.StatusAccepted || json.Unmarshal(a.Body, &sent) != nil || !strings.HasPrefix(sent.ID, "api-") {
		t.Fatalf("signal without a body: %d %s", a.Status, a.Body)
	}
	first := sent.ID
	e.Running(t, "twice", "seq[1]")
	again, err := e.Client.Signal(ctx, "twice", "approval", first, json.RawMessage(`"again"`))
	if err != nil || again.ID != first || again.Taken == "seq[1]" {
		t.Fatalf("the same signal again: %+v, %v", again, err)
	}
	if _, err := e.Client.Signal(ctx, "twice", "approval", "b", json.RawMessage(`2`)); err != nil {
		t.Fatal(err)
	}
	if j := e.Settled(t, "twice"); j.Status != "succeeded" {
		t.Fatalf("the signalled job: %+v", j.Summary)
	}
	if first, second := e.output(t, "twice", "first"), e.output(t, "twice", "second"); first != "" || second != "2" {
		t.Errorf("the waits took %q and %q, want null and 2 (the same ID again ignored)", first, second)
	}
}

// output is the output of job id's node called name, as stored ("" for
// null): the API's nodes give the outputs of actions only.
func (e *Env) output(t *testing.T, id job.ID, name string) string {
	t.Helper()
	j, err := e.Store.Load(ctxOf(t), id)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := j.Output(name)
	return string(out)
}
