package web_test

import (
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/batonwf/baton/internal/browsertest"
)

// TestBrowserSignalForm: on the page of a job whose wait runs, the wait's
// panel has the signal form; a user types a payload and presses the
// button, the browser posts the form and lands on the job's page, which
// shows the job succeed; the wait took the payload typed.
func TestBrowserSignalForm(t *testing.T) {
	s := startContract(t)
	close(s.gate)
	const id = "sig"
	s.submit(t, id, []byte(`{"version":3,"root":{"seq":[{"wait":"approval","name":"answer"},{"act":"log","payload":"after"}]}}`))
	s.until(t, id, "waiting", func(m map[string]string, _ string) bool { return m["seq[0]"] == "running" })
	p := browsertest.NewPage(t)
	p.Navigate(s.jobURL(id, "node="+url.QueryEscape("seq[0]")))
	p.WaitDrawn()
	p.Wait(`document.getElementById('send-signal')?.textContent.includes('approval') === true`)
	p.Do("type a payload and send the signal", chromedp.Evaluate[chromedp.Void](
		`document.getElementById('signal-payload').value = '{"ok": true}'; setTimeout(() => document.getElementById('send-signal').click(), 0)`))
	// The browser posts the form and follows the redirect to the job's
	// page (a poll of the page while it navigates loses its document:
	// the requests and the API tell it instead), where the job is seen
	// to succeed.
	s.until(t, id, "succeeded", func(_ map[string]string, st string) bool { return st == "succeeded" })
	post, page := s.URL+"/jobs/sig/signals/approval", s.URL+"/jobs/sig"
	for !followed(p.Requests(), post, page) {
		select {
		case <-t.Context().Done():
			t.Fatalf("the form was not posted, or its redirect not followed: %q", p.Requests())
		case <-time.After(10 * time.Millisecond):
		}
	}
	p.Navigate(s.jobURL(id, ""))
	p.WaitDrawn()
	p.Wait(`document.getElementById('job').dataset.status === 'succeeded'`)
	j, err := s.st.Load(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	if out, _ := j.Output("answer"); string(out) != `{"ok":true}` {
		t.Errorf("the wait's output is %s, want the payload typed in the form", out)
	}
}

// followed reports whether reqs holds first, then later then.
func followed(reqs []string, first, then string) bool {
	i := slices.Index(reqs, first)
	return i >= 0 && slices.Contains(reqs[i+1:], then)
}
