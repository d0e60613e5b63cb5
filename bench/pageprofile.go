package main

// The -page mode's profile: where the browser's main thread spends its
// time before the baton:drawn mark, per phase (parse, style, layout,
// paint, script), from a trace of the page load. The loads that are timed
// are not traced (tracing slows them); the profile loads each page again.
// Its figures are thread time (CPU), not wall time, so a loaded machine
// moves them less than the times to the mark.

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/chromedp/cdproto/tracing"
	"github.com/chromedp/chromedp"

	"github.com/batonwf/baton/internal/browsertest"
)

// pagePhases are the phases a profile reports, in order.
var pagePhases = []string{"parse", "style", "layout", "paint", "script", "other"}

// phaseOf names the phase of a main-thread trace event by its name.
func phaseOf(name string) string {
	switch name {
	case "ParseHTML", "DecodedDataDocumentParser::AppendBytes", "HTMLDocumentParser::MaybeFetchQueuedPreloads":
		return "parse"
	case "UpdateLayoutTree", "ParseAuthorStyleSheet", "RecalculateStyles", "ScheduleStyleRecalculation":
		return "style"
	case "Layout", "IntersectionObserverController::computeIntersections":
		return "layout"
	case "PrePaint", "Paint", "PaintImage", "Layerize", "Commit", "UpdateLayer", "CompositeLayers":
		return "paint"
	case "EvaluateScript", "FunctionCall", "v8.compile", "v8.compileModule", "v8.run", "TimerFire", "EventDispatch", "MajorGC", "MinorGC", "V8.GC_SCAVENGER", "BlinkGC.AtomicPhase":
		return "script"
	}
	return "other"
}

// pageProfile is one traced load: the main thread's time before the mark,
// in all and per phase (an event's own time, its children's taken off).
type pageProfile struct {
	CPU    time.Duration
	Phases map[string]time.Duration
}

// traceEvent is what a profile reads of a trace event.
type traceEvent struct {
	Name string  `json:"name"`
	Ph   string  `json:"ph"`
	Ts   float64 `json:"ts"`   // microseconds
	Dur  float64 `json:"dur"`  // wall, microseconds
	Tdur float64 `json:"tdur"` // thread time, microseconds
	Pid  int     `json:"pid"`
	Tid  int     `json:"tid"`
}

// profilePage loads url in a fresh tab with tracing on, waits for the
// mark, and returns where the main thread's time went until then.
func profilePage(ctx context.Context, b *browsertest.Browser, url string) (pageProfile, error) {
	var mu sync.Mutex
	var evs []traceEvent
	done := make(chan struct{})
	var once sync.Once
	tab, closeTab, err := b.NewTab(func(ev any) {
		switch e := ev.(type) {
		case *tracing.EventDataCollected:
			mu.Lock()
			defer mu.Unlock()
			for _, v := range e.Value {
				var x traceEvent
				if json.Unmarshal([]byte(v), &x) == nil {
					evs = append(evs, x)
				}
			}
		case *tracing.EventTracingComplete:
			once.Do(func() { close(done) })
		}
	})
	if err != nil {
		return pageProfile{}, err
	}
	defer closeTab()
	tctx, cancel := context.WithTimeout(tab, pageMaxLoad)
	defer cancel()
	cats := []string{"devtools.timeline", "disabled-by-default-devtools.timeline", "blink.user_timing", "loading"}
	if _, err := chromedp.Call(tctx, tracing.Start, tracing.StartParams{TraceConfig: &tracing.TraceConfig{IncludedCategories: cats}}); err != nil {
		return pageProfile{}, fmt.Errorf("start tracing: %w", err)
	}
	if err := chromedp.Do(tctx, chromedp.Navigate(url)); err != nil {
		return pageProfile{}, fmt.Errorf("navigate to %s: %w", url, err)
	}
	if _, err := chromedp.Run(tctx, chromedp.Poll[float64](drawnMark,
		chromedp.WithPollingInterval(pagePollMark), chromedp.WithPollingTimeout(0))); err != nil {
		return pageProfile{}, fmt.Errorf("%s: no baton:drawn mark: %w", url, err)
	}
	if _, err := chromedp.Call(tctx, tracing.End, struct{}{}); err != nil {
		return pageProfile{}, fmt.Errorf("end tracing: %w", err)
	}
	select {
	case <-done:
	case <-tctx.Done():
		return pageProfile{}, fmt.Errorf("%s: the trace did not complete: %w", url, tctx.Err())
	}
	mu.Lock()
	defer mu.Unlock()
	return profileOf(evs)
}

// profileOf reads a page load's trace: the main thread is the one that
// parsed the HTML; its complete events up to the baton:drawn mark are
// nested by time, and each counts its thread time less its children's.
func profileOf(evs []traceEvent) (pageProfile, error) {
	var mark float64
	parsed := map[[2]int]int{}
	for _, e := range evs {
		if e.Name == "baton:drawn" && mark == 0 {
			mark = e.Ts
		}
		if e.Name == "ParseHTML" {
			parsed[[2]int{e.Pid, e.Tid}]++
		}
	}
	if mark == 0 || len(parsed) == 0 {
		return pageProfile{}, fmt.Errorf("the trace has no baton:drawn mark or no HTML parsed")
	}
	var main [2]int
	for k, n := range parsed {
		if n > parsed[main] || n == parsed[main] && (k[0] < main[0] || k[0] == main[0] && k[1] < main[1]) {
			main = k
		}
	}
	var xs []traceEvent
	for _, e := range evs {
		if e.Ph == "X" && e.Pid == main[0] && e.Tid == main[1] && e.Ts <= mark {
			xs = append(xs, e)
		}
	}
	slices.SortStableFunc(xs, func(a, b traceEvent) int {
		if a.Ts != b.Ts {
			return cmpFloat(a.Ts, b.Ts)
		}
		return cmpFloat(b.Dur, a.Dur) // the outer event first
	})
	p := pageProfile{Phases: map[string]time.Duration{}}
	own := make([]float64, len(xs)) // thread time less the children's
	var open []int                  // the events around the current one
	for i, e := range xs {
		for len(open) > 0 && e.Ts >= xs[open[len(open)-1]].Ts+xs[open[len(open)-1]].Dur {
			open = open[:len(open)-1]
		}
		own[i] = e.Tdur
		if len(open) == 0 {
			p.CPU += usDur(e.Tdur)
		} else {
			own[open[len(open)-1]] -= e.Tdur
		}
		open = append(open, i)
	}
	for i, e := range xs {
		p.Phases[phaseOf(e.Name)] += usDur(max(own[i], 0))
	}
	return p, nil
}

func usDur(us float64) time.Duration { return time.Duration(us * float64(time.Microsecond)) }

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
