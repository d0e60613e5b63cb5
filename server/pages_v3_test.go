package server_test

import (
	"net/url"
	"strings"
	"testing"
)

// v3Flow uses workflow version 3: a choice whose gold case is skipped, a
// sleep, and a race of a wait and a sleep.
const v3Flow = `{"version":3,"root":{"seq":[
 {"act":"echo","payload":"silver","name":"tier"},
 {"choice":{"on":"tier","cases":[{"when":"gold","do":{"act":"log","payload":"gold path"}}],"else":{"act":"log","payload":"other"}}},
 {"sleep":"10ms"},
 {"race":[{"wait":"approval"},{"sleep":"20ms"}]},
 {"act":"log","payload":"done"}
]}}`

// TestJobPageV3: a job of workflow version 3 has its page: every node
// drawn with the API's status (the skipped case included), the tree
// fragment too, and the panel of the skipped node says its state with
// its icon.
func TestJobPageV3(t *testing.T) {
	e := newPageEnv(t, nil)
	final := e.settle(t, "v3", v3Flow)
	if final.Status != "succeeded" {
		t.Fatalf("job v3: %s, want succeeded", final.Status)
	}
	for _, path := range []string{"/jobs/v3", "/jobs/v3/tree.svg"} {
		resp, body := e.get(t, path, nil)
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s: %d\n%s", path, resp.StatusCode, body)
		}
		if path != "/jobs/v3" {
			body = `<div id="tree">` + body + `</div>`
		}
		got := treeStatuses(t, parseHTML(t, body))
		for _, n := range final.Nodes {
			if got[n.Path] != n.Status {
				t.Errorf("GET %s: node %q drawn %q, the API says %q", path, n.Path, got[n.Path], n.Status)
			}
		}
	}
	const skipped = "seq[1].choice[0]"
	_, body := e.get(t, "/jobs/v3?"+url.Values{"node": {skipped}}.Encode(), nil)
	panel := parseHTML(t, body).byID("panel")
	if p := text(panel); attrOf(panel, "data-node") != skipped || !strings.Contains(p, "↷ skipped") {
		t.Errorf("?node=%s: the panel %v: %q", skipped, panel.Attr, p)
	}
}
