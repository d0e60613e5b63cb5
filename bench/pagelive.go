package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/internal/browsertest"
	"github.com/batonwf/baton/server/live"
)

// pageStepGap is the pause before each live step: longer than the hub's
// gap between two events of a stream (1/DefaultMaxRate), so that what is
// measured is the delivery, not the coalescing.
const pageStepGap = time.Second/live.DefaultMaxRate + 10*time.Millisecond

// observeVersion installs, in the job page, a MutationObserver that stamps
// every change of #job's data-version (the script sets it once a live
// patch is drawn) with the wall clock in milliseconds since the epoch
// (performance.timeOrigin + performance.now()).
const observeVersion = `(() => {
	window.batonBenchSeen = [];
	const main = document.getElementById('job');
	new MutationObserver(ms => {
		const t = performance.timeOrigin + performance.now();
		for (const m of ms) window.batonBenchSeen.push([Number(m.target.getAttribute('data-version')) || 0, t]);
	}).observe(main, {attributes: true, attributeFilter: ['data-version']});
	return Number(main.getAttribute('data-version')) || 0;
})()`

// measureLive opens the live job's page with sz.Streams event streams open
// on the job, lets its actions end one at a time, and returns for each
// step the time from Hooks.Step (the save) to the page's DOM showing that
// version.
func (e *pageEnv) measureLive(ctx context.Context, b *browsertest.Browser, sz pageSizes) ([]time.Duration, error) {
	acts := make([]ast.Node, sz.Steps+1)
	for i := range acts {
		acts[i] = ast.Act("gate", nil)
	}
	if err := e.runner.Submit(ctx, pageLiveJob, ast.Seq(acts...)); err != nil {
		return nil, err
	}
	defer func() { _ = e.runner.Cancel(context.WithoutCancel(ctx), pageLiveJob, "bench done") }()

	sctx, stopStreams := context.WithCancel(ctx)
	var streams sync.WaitGroup
	defer func() { stopStreams(); streams.Wait() }()
	opened := make(chan error, sz.Streams)
	for range sz.Streams {
		streams.Go(func() {
			req, err := http.NewRequestWithContext(sctx, http.MethodGet, e.base+"/api/v1/jobs/"+string(pageLiveJob)+"/events", nil)
			if err != nil {
				opened <- err
				return
			}
			resp, err := http.DefaultClient.Do(req)
			if err == nil && resp.StatusCode != http.StatusOK {
				err = fmt.Errorf("event stream: %s", resp.Status)
			}
			opened <- err
			if err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
	for range sz.Streams {
		if err := <-opened; err != nil {
			return nil, err
		}
	}

	tab, closeTab, err := b.NewTab()
	if err != nil {
		return nil, err
	}
	defer closeTab()
	tctx, cancel := context.WithTimeout(tab, pageMaxLoad)
	defer cancel()
	if err := chromedp.Do(tctx, chromedp.Navigate(e.base+"/jobs/"+string(pageLiveJob))); err != nil {
		return nil, err
	}
	if _, err := chromedp.Run(tctx, chromedp.Poll[bool](`window.batonDrawn === true`, chromedp.WithPollingTimeout(0))); err != nil {
		return nil, fmt.Errorf("the live job's page was never drawn: %w", err)
	}
	if _, err := chromedp.Run(tctx, chromedp.Evaluate[int](observeVersion)); err != nil {
		return nil, err
	}
	var out []time.Duration
	for range sz.Steps {
		time.Sleep(pageStepGap)
		for len(e.stepped) > 0 { // steps before this one (the first dispatch)
			<-e.stepped
		}
		select {
		case e.gate <- struct{}{}:
		case <-tctx.Done():
			return nil, errors.New("no gate action running to let end")
		}
		var v uint64
		select {
		case v = <-e.stepped:
		case <-tctx.Done():
			return nil, errors.New("no step after an action ended")
		}
		e.mu.Lock()
		at := e.stepAt[v]
		e.mu.Unlock()
		seen, err := chromedp.Run(tctx, chromedp.Poll[float64](fmt.Sprintf(
			`(() => { const s = window.batonBenchSeen.find(x => x[0] >= %d); return s ? s[1] : false; })()`, v),
			chromedp.WithPollingInterval(pagePollMark), chromedp.WithPollingTimeout(0)))
		if err != nil {
			return nil, fmt.Errorf("the page never showed version %d: %w", v, err)
		}
		out = append(out, time.UnixMicro(int64(seen*1000)).Sub(at))
	}
	return out, nil
}
