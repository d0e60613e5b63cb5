package browsertest

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestMain(m *testing.M) { Main(m) }

// pages serves the harness's own test pages.
func pages(t *testing.T) *httptest.Server {
	mux := http.NewServeMux()
	html := func(body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, "<!doctype html><html><head><title>t</title><style>body{margin:0} .b{position:absolute;}</style></head><body>"+body+"</body></html>")
		}
	}
	// Two boxes of the palette's colours, drawn only after a delay (the
	// harness must wait for the page, not for the load event).
	mux.HandleFunc("GET /boxes", html(`
		<div id="tree"></div>
		<span data-path="seq[0]">a timeline bar: a path, no status</span>
		<script>
		setTimeout(() => {
			document.getElementById('tree').innerHTML =
				'<div class="b" data-path="" data-status="running" style="left:0;top:100px;width:100px;height:50px;background:#0072B2"></div>' +
				'<div class="b" data-path="seq[0]" data-status="succeeded" style="left:200px;top:100px;width:100px;height:50px;background:#009E73"></div>' +
				'<div class="b" data-path="seq[1]" data-status="failed" style="left:400px;top:100px;width:50px;height:50px;background:#D55E00"></div>';
			window.batonDrawn = true;
		}, 300);
		</script>`))
	mux.HandleFunc("GET /overlap", html(`
		<div class="b" data-path="a" style="left:0;top:0;width:100px;height:100px"></div>
		<div class="b" data-path="b" style="left:90px;top:90px;width:100px;height:100px"></div>
		<div class="b" data-path="c" style="left:190px;top:0;width:10px;height:10px"></div>`))
	mux.HandleFunc("GET /hostile", html(`<p id="text">hello</p><img src=x onerror=alert(1)>`))
	mux.HandleFunc("GET /clash", html(`<i data-path="a" data-status="idle"></i><i data-path="a" data-status="running"></i>`))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func TestPageWaitsAndReads(t *testing.T) {
	srv := pages(t)
	p := NewPage(t)
	p.Navigate(srv.URL + "/boxes")
	p.WaitDrawn()

	got := p.Statuses("#tree")
	want := map[string]string{"": "running", "seq[0]": "succeeded", "seq[1]": "failed"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Statuses(#tree) = %v; want %v", got, want)
	}
	if all := p.Statuses(""); fmt.Sprint(all) != fmt.Sprint(want) {
		t.Errorf("Statuses(\"\") = %v; want %v (the bar without a status is not a node)", all, want)
	}

	rs := p.Rects("#tree [data-path]")
	if len(rs) != 3 || rs[1].Path != "seq[0]" || rs[1].X != 200 || rs[1].Y != 100 || rs[1].W != 100 || rs[1].H != 50 {
		t.Errorf("Rects = %v; want three boxes, the second seq[0] at (200,100) 100x50", rs)
	}
	if o := Overlapping(rs, 0.5); len(o) != 0 {
		t.Errorf("Overlapping = %v; want none", o)
	}

	img, path := p.Screenshot("boxes", "")
	if _, err := os.Stat(path); err != nil {
		t.Errorf("the screenshot's file: %v", err)
	}
	counts := CountColors(img, 8, Hex("#0072B2"), Hex("#009E73"), Hex("#D55E00"))
	for i, want := range []int{5000, 5000, 2500} {
		if counts[i] < want*98/100 || counts[i] > want*102/100 {
			t.Errorf("CountColors = %v; want about [5000 5000 2500]", counts)
			break
		}
	}
	// Solid: a 100x50 box has 98x48 pixels with all neighbours inside.
	solid := CountSolid(img, 8, Hex("#0072B2"), Hex("#009E73"), Hex("#D55E00"), Hex("#FFFFFF"))
	if solid[0] != 98*48 || solid[1] != 98*48 || solid[2] != 48*48 || solid[3] < 1000 {
		t.Errorf("CountSolid = %v; want [4704 4704 2304 and the white page]", solid)
	}
	if n := Eval[int](p, `document.querySelectorAll('[data-path]').length`); n != 4 {
		t.Errorf("Eval = %d; want 4", n)
	}
	if d := p.Dialogs(); len(d) != 0 {
		t.Errorf("Dialogs = %v; want none", d)
	}
	if r := p.Requests(); !slices.Contains(r, srv.URL+"/boxes") {
		t.Errorf("Requests = %v; want the page's own URL among them", r)
	}
}

func TestOverlappingFindsOverlaps(t *testing.T) {
	srv := pages(t)
	p := NewPage(t)
	p.Navigate(srv.URL + "/overlap")
	rs := p.Rects("[data-path]")
	o := Overlapping(rs, 0.5)
	if len(o) != 1 || !strings.Contains(o[0], `"a"`) || !strings.Contains(o[0], `"b"`) {
		t.Errorf("Overlapping = %v; want a and b only (c touches b's edge)", o)
	}
	if !rs[0].Inside(Rect{X: 0, Y: 0, W: 100, H: 100}, 0) || rs[1].Inside(Rect{X: 0, Y: 0, W: 100, H: 100}, 0) {
		t.Errorf("Inside: a is in (0,0) 100x100 and b is not: %v", rs)
	}
}

// recorder stands for a test, recording what would fail or skip it.
type recorder struct {
	testing.TB
	errs  []string
	skips []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}
func (r *recorder) Fatal(args ...any) { r.errs = append(r.errs, fmt.Sprint(args...)) }
func (r *recorder) Fatalf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}
func (r *recorder) Skip(args ...any) { r.skips = append(r.skips, fmt.Sprint(args...)) }
func (r *recorder) Failed() bool     { return len(r.errs) > 0 }

// A page that opens a dialog fails the check, and a markup injection's
// request shows in the log: the checks the hostile-data tests rely on can
// fail.
func TestDialogFailsTheTest(t *testing.T) {
	srv := pages(t)
	rec := &recorder{TB: t}
	p := NewPage(rec)
	p.Navigate(srv.URL + "/hostile")
	p.Wait(`document.readyState === 'complete'`)
	if !slices.Contains(p.Requests(), srv.URL+"/x") {
		t.Errorf("Requests = %v; want the injected image's %s/x", p.Requests(), srv.URL)
	}
	// The dialog was dismissed: the page still answers.
	p.Wait(`document.getElementById('text').textContent === 'hello'`)
	if d := p.Dialogs(); len(d) != 1 || !strings.Contains(d[0], `alert "1"`) {
		t.Errorf("Dialogs = %v; want the alert", d)
	}
	p.Close()
	if len(rec.errs) != 1 || !strings.Contains(rec.errs[0], "JavaScript dialog") {
		t.Errorf("Close reported %q; want one error about the dialog", rec.errs)
	}
	p.Close() // twice: nothing more
	if len(rec.errs) != 1 {
		t.Errorf("a second Close reported %q", rec.errs[1:])
	}
}

// deadlined is a recorder whose test ends at *at (none while it is zero).
type deadlined struct {
	*recorder
	at *time.Time
}

func (d deadlined) Deadline() (time.Time, bool) { return *d.at, !d.at.IsZero() }

// A condition that never holds fails the test at its deadline, saying
// what the expression was worth.
func TestWaitFailsAtDeadline(t *testing.T) {
	srv := pages(t)
	rec := &recorder{TB: t}
	var at time.Time
	p := NewPage(deadlined{rec, &at})
	p.Navigate(srv.URL + "/overlap")
	at = time.Now().Add(reportMargin + 300*time.Millisecond)
	p.Wait(`document.querySelectorAll('[data-path]').length > 3`)
	if len(rec.errs) != 1 || !strings.Contains(rec.errs[0], "waiting for") || !strings.Contains(rec.errs[0], "its value now: false") {
		t.Errorf("Wait reported %q; want one failure with the expression's value", rec.errs)
	}
	rec.errs = nil
}

func TestStatusesClash(t *testing.T) {
	srv := pages(t)
	rec := &recorder{TB: t}
	p := NewPage(rec)
	p.Navigate(srv.URL + "/clash")
	p.Statuses("")
	if len(rec.errs) != 1 || !strings.Contains(rec.errs[0], "a: idle and running") {
		t.Errorf("Statuses reported %q; want the clash of a", rec.errs)
	}
	rec.errs = nil
}

func TestMissingBrowser(t *testing.T) {
	t.Setenv(Env, "/nonexistent/chromium")
	_, err := Path()
	if !errors.Is(err, ErrMissing) || !strings.Contains(err.Error(), "/nonexistent/chromium") {
		t.Fatalf("Path() = %v; want ErrMissing naming the binary", err)
	}
	for _, require := range []string{"", "1"} {
		t.Setenv("BATON_REQUIRE_INTEGRATION", require)
		rec := &recorder{TB: t}
		missing(rec, err)
		if require == "1" && (len(rec.errs) != 1 || len(rec.skips) != 0 || !strings.Contains(rec.errs[0], "CHROMIUM IS NOT INSTALLED")) {
			t.Errorf("BATON_REQUIRE_INTEGRATION=1: errors %q, skips %q; want one failure", rec.errs, rec.skips)
		}
		if require == "" && (len(rec.skips) != 1 || len(rec.errs) != 0 || !strings.Contains(rec.skips[0], "apt-get install -y chromium")) {
			t.Errorf("without it: errors %q, skips %q; want one loud skip", rec.errs, rec.skips)
		}
	}
}

func TestVersion(t *testing.T) {
	b := Shared(t)
	v, err := b.Version()
	if err != nil || !strings.Contains(v, "Chrome/") {
		t.Errorf("Version() = %q, %v; want Chrome/...", v, err)
	}
	t.Logf("%s: %s", b.Binary(), v)
}
