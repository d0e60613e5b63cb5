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

// cancelNodeFlow waits for the signal approval in a try whose rescue runs ok:
// cancelling the wait (the node called gate) is rescued.
const cancelNodeFlow = `{"version":3,"root":{"try":{"seq":[{"wait":"approval","name":"gate"},{"act":"ok","payload":"after","name":"after"}]},"rescue":{"act":"ok","payload":"rescued","name":"rescued"}}}`

// testCancelNode: POST /api/v1/jobs/{id}/nodes/{name}/cancel cancels the
// running node called name (202, sent): it fails with kind cancelled and
// the reason, the try around it rescues it and the job succeeds; a node
// not running is 202, not sent, and changes nothing; a missing job, a
// bad name, a node the job lacks, a bad body and a finished job are
// problems that change nothing.
func testCancelNode(t *testing.T, cfg Config) {
	e := NewEnv(t, cfg, nil)
	ctx := ctxOf(t)
	e.Submit(t, "cn", cancelNodeFlow)
	e.Running(t, "cn", "body.seq[0]")
	e.Unchanged(t, func() {
		for _, c := range []struct {
			path, body string
			status     int
			code       server.Code
			detail     string
		}{
			{"/api/v1/jobs/nope/nodes/gate/cancel", "", 404, server.CodeJobNotFound, "job nope not found"},
			{"/api/v1/jobs/cn/nodes/no%20good/cancel", "", 400, server.CodeBadRequest, "(in the path)"},
			{"/api/v1/jobs/cn/nodes/nosuch/cancel", "", 404, server.CodeNodeNotFound, "job cn has no node called nosuch"},
			{"/api/v1/jobs/cn/nodes/gate/cancel", `{"reason":1}`, 400, server.CodeBadJSON, "the body"},
			{"/api/v1/jobs/cn/nodes/gate/cancel", `{"why":"x"}`, 400, server.CodeBadJSON, "unknown field"},
			{"/api/v1/jobs/cn/nodes/gate/cancel", `{"reason":"` + strings.Repeat("x", server.MaxCancelReason+1) + `"}`, 400, server.CodeBadRequest, "the reason is"},
		} {
			p := e.Do(t, "POST", c.path, nil, c.body).Problem(t, c.status, c.code)
			if !strings.Contains(p.Detail, c.detail) {
				t.Errorf("POST %s: detail %q, want one saying %q", c.path, p.Detail, c.detail)
			}
		}
		// A node not running is left as it is.
		out, err := e.Client.CancelNode(ctx, "cn", "after", "")
		if err != nil || out.Sent || out.Status != "idle" || out.Path != "body.seq[1]" || out.Node != "after" || out.Summary.ID != "cn" {
			t.Errorf("cancel of an idle node: %+v, %v", out, err)
		}
	})
	a := e.Do(t, "POST", "/api/v1/jobs/cn/nodes/gate/cancel", nil, `{"reason":"no answer"}`)
	var out api.NodeCancelled
	if a.Status != http.StatusAccepted || json.Unmarshal(a.Body, &out) != nil || !out.Sent || out.Job != "cn" || out.Node != "gate" || out.Path != "body.seq[0]" || out.Summary.ID != "cn" {
		t.Fatalf("cancel of the running wait: %d %s", a.Status, a.Body)
	}
	j := e.Settled(t, "cn")
	if j.Status != "succeeded" {
		t.Fatalf("the job whose node was cancelled: %+v", j.Summary)
	}
	for _, n := range j.Nodes {
		switch n.Name {
		case "gate":
			if n.Status != "failed" || n.Failure == nil || n.Failure.Kind != job.KindCancelled || !strings.Contains(n.Failure.Message, "no answer") {
				t.Errorf("the cancelled wait: %+v, failure %+v", n, n.Failure)
			}
		case "rescued":
			if n.Status != "succeeded" {
				t.Errorf("the rescue: %+v", n)
			}
		}
	}
	e.Unchanged(t, func() {
		e.Do(t, "POST", "/api/v1/jobs/cn/nodes/gate/cancel", nil, "").Problem(t, 409, server.CodeJobFinished)
	})
}
