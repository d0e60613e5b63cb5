package server_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/batonwf/baton/client"
	"github.com/batonwf/baton/job"
)

// keptFlow waits for the signal first, then for approve.
const keptFlow = `{"version":3,"root":{"seq":[{"wait":"first"},{"wait":"approve","name":"answer"}]}}`

// keptRow is a row of the job page's kept signals, as sent.
type keptRow struct {
	Name, ID, Payload, At, ShowAll string
}

// keptRows reads the kept signals of a page: whether it says there are
// none, and its rows in order.
func keptRows(t *testing.T, body string) (none bool, rows []keptRow) {
	t.Helper()
	d := parseHTML(t, body)
	sec := d.byID("signals")
	if sec == nil {
		t.Fatalf("the page has no section#signals")
	}
	if h := d.byID("signals-title"); h == nil || text(h) != "Kept signals" {
		t.Errorf("the section's title: %q", text(h))
	}
	empty := d.byID("signals-none")
	if empty == nil {
		t.Fatal("the section has no p#signals-none")
	}
	_, hidden := attr(empty, "hidden")
	for _, li := range within(sec, func(n *html.Node) bool { return n.Data == "li" }) {
		r := keptRow{Name: attrOf(li, "data-name"), ID: attrOf(li, "data-id")}
		for _, n := range within(li, func(*html.Node) bool { return true }) {
			switch {
			case hasClass(n, "name") && text(n) != r.Name, hasClass(n, "id") && text(n) != r.ID:
				t.Errorf("row %s/%s shows %q", r.Name, r.ID, text(n))
			case hasClass(n, "payload"):
				r.Payload = text(n)
			case n.Data == "time":
				r.At = attrOf(n, "datetime")
			case hasClass(n, "show-all"):
				r.ShowAll = attrOf(n, "href")
			}
		}
		rows = append(rows, r)
	}
	return !hidden && strings.TrimSpace(text(empty)) == "No signals kept.", rows
}

// TestJobPageKeptSignals: the job page lists the signals the job keeps
// at the version shown, oldest first (name, ID, when it arrived, the
// payload clipped as the API clips it, a link to it whole), says in
// words when there are none, and lists a signal no more once a wait took
// it; a past version lists those kept then. The link shows the payload
// whole on the page of the job's kept signals, which the script reads.
// Hostile IDs and payloads are text.
func TestJobPageKeptSignals(t *testing.T) {
	e := newPageEnv(t, nil)
	ctx := t.Context()
	e.waitRunning(t, "s", keptFlow, "seq[0]")
	long := json.RawMessage(`{"text":"` + strings.Repeat("x", 300) + `END"}`)
	hostileID := `<img src=x onerror=alert(1)>`
	hostilePayload := []byte(`"` + hostile + `"`)
	if _, err := e.client.Signal(ctx, "s", "approve", "a1", long); err != nil {
		t.Fatal(err)
	}
	waitVersion(t, e, "s", 2)
	rawSignal(t, e.url, "s", "approve", `{"id":"`+hostileID+`","payload":`+string(hostilePayload)+`}`)
	waitVersion(t, e, "s", 3)
	v3, err := e.client.Job(ctx, "s", client.JobQuery{Version: 3})
	if err != nil {
		t.Fatal(err)
	}
	if v3.Signals == nil || len(v3.Signals.Kept) != 2 {
		t.Fatalf("the API keeps %+v at version 3", v3.Signals)
	}
	if _, err := e.client.Signal(ctx, "s", "first", "f1", nil); err != nil {
		t.Fatal(err)
	}
	if s, err := e.client.Wait(ctx, "s"); err != nil || s.Status != "succeeded" {
		t.Fatalf("the job: %+v, %v", s, err)
	}

	_, body := e.get(t, "/jobs/s?version=1", nil)
	if none, rows := keptRows(t, body); !none || len(rows) != 0 {
		t.Errorf("version 1 keeps no signal; the page says none %v, rows %+v", none, rows)
	}
	_, body = e.get(t, "/jobs/s?version=3", nil)
	none, rows := keptRows(t, body)
	if none || len(rows) != 2 || rows[0].Name != "approve" || rows[0].ID != "a1" || rows[1].Name != "approve" || rows[1].ID != hostileID {
		t.Fatalf("version 3: none %v, rows %+v", none, rows)
	}
	for i, k := range v3.Signals.Kept {
		want := keptRow{Name: k.Name, ID: k.ID, Payload: k.Payload}
		if k.At != nil {
			want.At = k.At.UTC().Format(time.RFC3339)
		}
		if k.Clipped {
			want.ShowAll = "/jobs/s/signals?full=approve%2Fa1&version=3"
		}
		if rows[i] != want {
			t.Errorf("version 3, row %d:\n got %+v\nwant %+v", i, rows[i], want)
		}
	}
	if !v3.Signals.Kept[0].Clipped || v3.Signals.Kept[1].Payload != string(hostilePayload) {
		t.Errorf("the API's kept signals: %+v", v3.Signals.Kept)
	}
	if m := parseHTML(t, body).hostileMarkup(); m != "" {
		t.Errorf("version 3: %s", m)
	}

	// The job now: the wait took a1, the oldest.
	_, body = e.get(t, "/jobs/s", nil)
	if none, rows := keptRows(t, body); none || len(rows) != 1 || rows[0].ID != hostileID || rows[0].Payload != string(hostilePayload) {
		t.Errorf("now: none %v, rows %+v", none, rows)
	}
	if m := parseHTML(t, body).hostileMarkup(); m != "" {
		t.Errorf("now: %s", m)
	}

	// The link of a clipped payload: the kept signals at version 3, a1's
	// payload whole.
	resp, body := e.get(t, rows[0].ShowAll, nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", rows[0].ShowAll, resp.StatusCode, body)
	}
	pageHeaders(t, rows[0].ShowAll, resp)
	if _, full := keptRows(t, body); len(full) != 2 || full[0].Payload != string(long) || full[0].ShowAll != "" || full[1].ID != hostileID {
		t.Errorf("GET %s: %+v", rows[0].ShowAll, full)
	}
	if m := parseHTML(t, body).hostileMarkup(); m != "" {
		t.Errorf("GET %s: %s", rows[0].ShowAll, m)
	}
	for path, want := range map[string]int{
		"/jobs/s/signals":              http.StatusOK,
		"/jobs/s/signals?version=9":    http.StatusNotFound,
		"/jobs/s/signals?version=x":    http.StatusBadRequest,
		"/jobs/nope/signals":           http.StatusNotFound,
		"/jobs/s/signals?full=nope%2F": http.StatusOK,
	} {
		if resp, body := e.get(t, path, nil); resp.StatusCode != want {
			t.Errorf("GET %s: %d, want %d: %s", path, resp.StatusCode, want, body)
		}
	}
}

// rawSignal sends job id the signal name with body as written (the
// client's encoding/json would escape markup as \u003c).
func rawSignal(t *testing.T, base string, id job.ID, name, body string) {
	t.Helper()
	resp, err := http.Post(base+"/api/v1/jobs/"+string(id)+"/signals/"+name, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("send %s to %s: %s", body, id, resp.Status)
	}
}

// waitVersion waits until job id has reached version v.
func waitVersion(t *testing.T, e *pageEnv, id job.ID, v uint64) {
	t.Helper()
	for {
		j, err := e.client.Job(t.Context(), id, client.JobQuery{NoNodes: true})
		if err != nil {
			t.Fatal(err)
		}
		if j.Version >= v {
			return
		}
		select {
		case <-t.Context().Done():
			t.Fatalf("job %s never reached version %d: %+v", id, v, j.Summary)
		case <-time.After(5 * time.Millisecond):
		}
	}
}
