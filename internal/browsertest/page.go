package browsertest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// Bounds on every wait.
const (
	reportMargin    = 10 * time.Second // left before the test's deadline, for its report
	defaultWait     = 2 * time.Minute  // when the test has no deadline
	pollEvery       = 20 * time.Millisecond
	closeScreenshot = 10 * time.Second // for what a failing test still asks of the page
)

// Page is one tab of the shared browser, for one test. Its methods are
// called from the test's goroutine (they fail the test with t.Fatal);
// Requests, Dialogs and Console may be called from any goroutine.
type Page struct {
	t      testing.TB
	ctx    context.Context
	cancel context.CancelFunc
	start  time.Time
	dir    string // the test's temporary directory: screenshots

	mu       sync.Mutex
	dialogs  []string
	requests []string
	console  []string
	shots    []string
	closed   bool
}

// NewPage opens a new tab (in a new browser context: no cookies) of the
// test binary's shared browser, skipping or failing t as Shared does when
// there is none. The tab is closed when t ends, after the checks of Close.
func NewPage(t testing.TB) *Page {
	t.Helper()
	b := Shared(t)
	p := &Page{t: t, dir: t.TempDir(), start: time.Now()}
	ctx, cancel, err := b.NewTab(p.listen)
	if err != nil {
		t.Fatalf("%v\n%s", err, b.Output())
	}
	p.ctx, p.cancel = ctx, cancel
	t.Cleanup(p.Close) // after t.TempDir's cleanup was registered, so it runs before it
	return p
}

// listen records what the page does; it runs in the tab's event loop.
func (p *Page) listen(ev any) {
	switch ev := ev.(type) {
	case *page.EventJavascriptDialogOpening:
		p.mu.Lock()
		p.dialogs = append(p.dialogs, fmt.Sprintf("%s %q", ev.Type, ev.Message))
		p.mu.Unlock()
		// The dialog blocks the page until it is answered; a listener may
		// send no command, so answer it from another goroutine.
		go func() {
			_, _ = chromedp.Call(p.ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
		}()
	case *network.EventRequestWillBeSent:
		if ev.Request != nil {
			p.mu.Lock()
			p.requests = append(p.requests, ev.Request.URL)
			p.mu.Unlock()
		}
	case *runtime.EventConsoleAPICalled:
		var args []string
		for _, a := range ev.Args {
			if a.Value != nil {
				args = append(args, string(a.Value))
			} else {
				args = append(args, a.Description)
			}
		}
		p.log(fmt.Sprintf("console.%s: %s", ev.Type, strings.Join(args, " ")))
	case *runtime.EventExceptionThrown:
		if d := ev.ExceptionDetails; d != nil {
			text := d.Text
			if d.Exception != nil && d.Exception.Description != "" {
				text += " " + d.Exception.Description
			}
			p.log(fmt.Sprintf("exception at %s:%d: %s", d.URL, d.LineNumber+1, text))
		}
	}
}

func (p *Page) log(line string) {
	p.mu.Lock()
	p.console = append(p.console, line)
	p.mu.Unlock()
}

// Context returns the tab's chromedp context, for actions the helpers do
// not cover. Bound a call on it with Bound.
func (p *Page) Context() context.Context { return p.ctx }

// Bound returns a context of the tab that ends at the test's deadline
// (less a margin for the report), or defaultWait after the page opened
// when the test has none.
func (p *Page) Bound() (context.Context, context.CancelFunc) {
	return context.WithDeadline(p.ctx, p.deadline())
}

func (p *Page) deadline() time.Time {
	if d, ok := p.t.(interface{ Deadline() (time.Time, bool) }); ok {
		if dl, ok := d.Deadline(); ok {
			return dl.Add(-reportMargin)
		}
	}
	return p.start.Add(defaultWait)
}

// Do runs actions in the tab, failing the test if one fails.
func (p *Page) Do(what string, actions ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	ctx, cancel := p.Bound()
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		p.t.Fatalf("browsertest: %s: %v", what, err)
	}
}

// Navigate loads url in the tab and waits for its load event.
func (p *Page) Navigate(url string) {
	p.t.Helper()
	p.Do("navigate to "+url, chromedp.Navigate(url))
}

// Wait polls the JavaScript expression in the page until it is truthy,
// failing the test at its deadline (with the expression's last value).
func (p *Page) Wait(expr string) {
	p.t.Helper()
	ctx, cancel := p.Bound()
	defer cancel()
	_, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](expr,
		chromedp.WithPollingInterval(pollEvery), chromedp.WithPollingTimeout(0)))
	if err != nil {
		lctx, lcancel := context.WithTimeout(p.ctx, closeScreenshot)
		defer lcancel()
		last, lerr := chromedp.Run(lctx, chromedp.Evaluate[string](`String(JSON.stringify(`+expr+`))`))
		if lerr != nil {
			last = lerr.Error()
		}
		p.t.Fatalf("browsertest: waiting for %s: %v (its value now: %s)", expr, err, last)
	}
}

// WaitDrawn waits until the page's script says the page is drawn
// (window.batonDrawn, set beside the performance mark "baton:drawn").
func (p *Page) WaitDrawn() {
	p.t.Helper()
	p.Wait(`window.batonDrawn === true`)
}

// Eval evaluates a JavaScript expression in p's page and returns its value
// decoded into T (as chromedp.Evaluate does: []byte is raw JSON), failing
// the test on an error or an exception.
func Eval[T any](p *Page, expr string) T {
	p.t.Helper()
	ctx, cancel := p.Bound()
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		p.t.Fatalf("browsertest: evaluate %s: %v", expr, err)
	}
	return v
}

// Requests returns the URL of every request the page has made so far, in
// order (the documents, scripts, style sheets, images, fetches and streams;
// data: URLs included).
func (p *Page) Requests() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.requests...)
}

// Dialogs returns the JavaScript dialogs opened so far, as type and
// message ("alert \"1\"").
func (p *Page) Dialogs() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.dialogs...)
}

// Console returns the console messages and uncaught exceptions so far.
func (p *Page) Console() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.console...)
}

// Close runs the page's end checks and closes the tab: a dialog that
// opened fails the test; when the test has failed, a last screenshot is
// taken, every screenshot is moved to a directory kept after the test and
// its path printed, and the console is printed. It runs when the test ends;
// calling it before is allowed, and calling it twice does nothing.
func (p *Page) Close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	dialogs := append([]string(nil), p.dialogs...)
	p.mu.Unlock()
	defer p.cancel()
	if len(dialogs) > 0 {
		p.t.Errorf("browsertest: %d JavaScript dialog(s) opened: %s", len(dialogs), strings.Join(dialogs, ", "))
	}
	if !p.t.Failed() {
		return
	}
	ctx, cancel := context.WithTimeout(p.ctx, closeScreenshot)
	if png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)); err == nil {
		if path, err := p.save("at-failure", png); err == nil {
			p.mu.Lock()
			p.shots = append(p.shots, path)
			p.mu.Unlock()
		}
	}
	cancel()
	if c := p.Console(); len(c) > 0 {
		p.t.Logf("browsertest: the page's console:\n\t%s", strings.Join(c, "\n\t"))
	}
	p.keepShots()
}

// keepShots moves the screenshots out of the test's temporary directory
// (removed when the test ends) and prints where they are.
func (p *Page) keepShots() {
	p.mu.Lock()
	shots := append([]string(nil), p.shots...)
	p.mu.Unlock()
	if len(shots) == 0 {
		return
	}
	base := os.Getenv("BATON_ARTIFACTS")
	if base == "" {
		base = filepath.Join(os.TempDir(), "browsertest-artifacts")
	}
	dir, err := mkdirKept(base, p.t.Name())
	if err != nil {
		p.t.Logf("browsertest: screenshots (in the test's temporary directory, removed when it ends; %v): %s", err, strings.Join(shots, " "))
		return
	}
	var kept []string
	for _, s := range shots {
		to := filepath.Join(dir, filepath.Base(s))
		if err := os.Rename(s, to); err != nil {
			if b, rerr := os.ReadFile(s); rerr == nil && os.WriteFile(to, b, 0o644) == nil {
				err = nil
			}
		}
		if err != nil {
			p.t.Logf("browsertest: keep screenshot %s: %v", s, err)
			continue
		}
		kept = append(kept, to)
	}
	p.t.Logf("browsertest: screenshots of the failed test:\n\t%s", strings.Join(kept, "\n\t"))
}

func mkdirKept(base, test string) (string, error) {
	if err := os.MkdirAll(base, 0o755); err != nil {
		return "", err
	}
	name := strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == ':' || r < ' ' {
			return '_'
		}
		return r
	}, test)
	return os.MkdirTemp(base, name+"-")
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
