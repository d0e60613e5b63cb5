package web_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/client"
	"github.com/batonwf/baton/internal/browsertest"
	"github.com/batonwf/baton/job"
)

// keptState is what the page shows of the signals its job keeps: whether
// it says there are none, and the rows in order as [name, ID, payload].
type keptState struct {
	None bool       `json:"none"`
	Rows [][]string `json:"rows"`
}

const keptJS = `({none: !document.getElementById('signals-none').hidden,
	rows: [...document.querySelectorAll('#signals li[data-name]')].map((li) => [li.getAttribute('data-name'), li.getAttribute('data-id'), li.querySelector('.payload').textContent])})`

// keptIDs is a JavaScript condition: the page lists the kept signals of
// these IDs, in this order.
func keptIDs(ids ...string) string {
	return `JSON.stringify([...document.querySelectorAll('#signals li[data-name]')].map((li) => li.getAttribute('data-id'))) === ` + js(jsonOfJS(ids))
}

// jsonOfJS writes ids as JSON.stringify would (no HTML escapes).
func jsonOfJS(ids []string) string {
	out := make([]string, len(ids))
	for i, id := range ids {
		b, _ := json.Marshal(id)
		out[i] = strings.NewReplacer(`\u003c`, "<", `\u003e`, ">", `\u0026`, "&").Replace(string(b))
	}
	return "[" + strings.Join(out, ",") + "]"
}

// waitVersions waits until job id's history has n versions, and
// returns them.
func waitVersions(t *testing.T, c *client.Client, id job.ID, n int) []uint64 {
	t.Helper()
	for {
		if vs := historyVersions(t, c, id); len(vs) >= n {
			return vs
		}
		select {
		case <-t.Context().Done():
			t.Fatalf("job %s never had %d versions", id, n)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// TestBrowserKeptSignals: the job page lists the signals its job keeps,
// in order: one kept before the page was opened (as the server sent
// it), one that arrives while it is open (the script adds its row).
// Once the wait starts and takes the oldest, its row goes, without a
// reload, while the job runs on; travelling to the version that kept both lists both again,
// and back to the job now it is gone. A clipped payload is shown whole
// in place. An ID and a payload with markup stay text: no element,
// dialog or request comes of them.
func TestBrowserKeptSignals(t *testing.T) {
	gate := make(chan struct{})
	s := startLive(t, filepath.Join(t.TempDir(), "jobs.db"), "127.0.0.1:0", gate, nil)
	s.submit(t, "k", ast.Seq(ast.Act("gate", 0), ast.Wait("approve").Named("answer"), ast.Act("gate", 1)))
	c := s.client()
	ctx := t.Context()
	p := browsertest.NewPage(t)
	p.Navigate(s.URL + "/jobs/k")
	p.WaitDrawn()
	if got := browsertest.Eval[keptState](p, keptJS); !got.None || len(got.Rows) != 0 {
		t.Errorf("before any signal the page shows %+v", got)
	}

	hostileID := `<img src=x onerror=alert(1)>`
	first := `"` + hostile + `"`
	long := `"` + strings.Repeat("y", 300) + `END"`
	// Written out: the client's encoding/json would escape the markup.
	resp, err := http.Post(s.URL+"/api/v1/jobs/k/signals/approve", "application/json", strings.NewReader(`{"id":"`+hostileID+`","payload":`+first+`}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("the signal: %s", resp.Status)
	}
	waitVersions(t, c, "k", 2)
	p.Navigate(s.URL + "/jobs/k")
	p.WaitDrawn()
	p.Do("mark the document", chromedp.Evaluate[chromedp.Void](`window.batonTestMark = 'same document'`))
	if got := browsertest.Eval[keptState](p, keptJS); got.None || !slices.EqualFunc(got.Rows, [][]string{{"approve", hostileID, first}}, slices.Equal) {
		t.Errorf("the page as sent shows %+v", got)
	}

	// A signal that arrives while the page is open: its row comes after.
	if _, err := c.Signal(ctx, "k", "approve", "a2", json.RawMessage(long)); err != nil {
		t.Fatal(err)
	}
	p.Wait(keptIDs(hostileID, "a2"))
	got := browsertest.Eval[keptState](p, keptJS)
	if a2 := got.Rows[1][2]; got.None || strings.HasSuffix(a2, `END"`) || !strings.HasPrefix(a2, `"yyy`) {
		t.Errorf("the live list: %+v", got)
	}
	// Its payload, clipped, is shown whole in place.
	p.Do("show a2 whole", chromedp.Click(chromedp.CSS(`#signals li[data-id="a2"] a.show-all`)))
	p.Wait(`document.querySelector('#signals li[data-id="a2"] .payload').textContent === ` + js(long) + ` && !document.querySelector('#signals li[data-id="a2"] a.show-all')`)
	vs := waitVersions(t, c, "k", 3)
	v := strconv.FormatUint(vs[len(vs)-1], 10) // both kept

	// The first gate's end starts the wait, which takes the oldest
	// signal; the job runs on, at the second gate.
	release(t, gate, 1)
	p.Wait(keptIDs("a2") + ` && ` + nodeIs("seq[2]", "running"))
	if got := browsertest.Eval[keptState](p, keptJS); got.None || got.Rows[0][2] != long {
		t.Errorf("after the wait took the oldest: %+v (a2 was shown whole: it stays so)", got)
	}

	// Time travel: the version that kept both lists both again.
	p.Wait(`!!document.querySelector('#step-` + v + ` a.v')`)
	p.Do("travel to the version that kept both", chromedp.Click(chromedp.CSS(`#step-`+v+` a.v`)))
	p.Wait(`document.getElementById('job').dataset.version === '` + v + `' && ` + keptIDs(hostileID, "a2"))
	if got := browsertest.Eval[keptState](p, keptJS); got.None || got.Rows[0][2] != first {
		t.Errorf("version %s shows %+v", v, got)
	}
	if n := browsertest.Eval[int](p, `document.querySelectorAll('img, script:not([src]), [onerror]').length`); n != 0 {
		t.Errorf("after the script listed the markup again: %d img, inline script or onerror elements; want none", n)
	}
	p.Do("back to the job now", chromedp.Click(chromedp.ID("latest-link")))
	p.Wait(`!new URL(location.href).searchParams.has('version') && ` + keptIDs("a2"))
	if m := browsertest.Eval[string](p, `window.batonTestMark || 'reloaded'`); m != "same document" {
		t.Errorf("the page was reloaded (%s)", m)
	}
	release(t, gate, 1)
	if sum, err := c.Wait(ctx, "k"); err != nil || sum.Status != "succeeded" {
		t.Fatalf("the job: %+v, %v", sum, err)
	}
	p.Wait(`document.getElementById('job').dataset.status === 'succeeded' && ` + keptIDs("a2"))

	// A past version as the server sends it lists what it kept then.
	p.Navigate(s.URL + "/jobs/k?version=" + v)
	p.WaitDrawn()
	if got := browsertest.Eval[keptState](p, keptJS); len(got.Rows) != 2 || got.Rows[0][1] != hostileID || got.Rows[0][2] != first {
		t.Errorf("/jobs/k?version=%s shows %+v", v, got)
	}
	if n := browsertest.Eval[int](p, `document.querySelectorAll('img, script:not([src]), [onerror]').length`); n != 0 {
		t.Errorf("%d img, inline script or onerror elements; want none", n)
	}
	for _, r := range p.Requests() {
		if u, err := url.Parse(r); err == nil && (strings.HasSuffix(u.Path, "/x") || u.Path == "x") {
			t.Errorf("the page requested %s: markup was taken as an image", r)
		}
	}
	if d := p.Dialogs(); len(d) > 0 {
		t.Errorf("dialogs opened: %v", d)
	}
}
