package main

// The -page mode: the job page of the server in chromium (issue 17,
// section 3). page.go drives it and loads pages, pageenv.go is the
// server it loads them from, pagelive.go measures live latency,
// pagereport.go prints.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/batonwf/baton/internal/browsertest"
)

// pageConfig is what a -page run measures.
type pageConfig struct {
	Rounds   int     // page loads of each figure, interleaved
	Scale    float64 // multiplies the jobs' sizes, streams and live steps
	Dir      string  // where the bolt file goes
	Progress io.Writer
}

// The sizes at scale 1.
const (
	pageRounds   = 9       // -rounds' default here
	pageSeqs     = 10      // the 1,000-node job: a par of pageSeqs seqs ...
	pageSeqLen   = 99      // ... of pageSeqLen actions
	pageBig      = 100_000 // the big job: a par of this many actions
	pageStreams  = 100     // event streams open on the live job
	pageSteps    = 50      // live steps measured
	pageMaxLoad  = 2 * time.Minute
	pagePollMark = 5 * time.Millisecond
)

// Targets of issue 17, section 3.
const (
	pageRatioTarget   = 2.0                    // job page over the floor, at most
	pageLoadTarget    = 500 * time.Millisecond // job page, at most
	pageBigTarget     = 3 * time.Second        // the big job's page, at most
	pageLatencyMedian = 100 * time.Millisecond
	pageLatencyP99    = 500 * time.Millisecond
)

// pageFigure is one page loaded in every round.
type pageFigure struct {
	Name  string
	Path  string // on the server
	Nodes int
	About string
}

// pageMain runs the -page mode. Flags that pick or set up engines do not
// apply to it.
func pageMain(fs *flag.FlagSet, cfg pageConfig, format string, quiet bool, stdout, stderr io.Writer) error {
	var others []string
	fs.Visit(func(f *flag.Flag) {
		if !slices.Contains([]string{"page", "rounds", "scale", "dir", "format", "q"}, f.Name) {
			others = append(others, "-"+f.Name)
		}
	})
	if len(others) > 0 {
		return fmt.Errorf("-page measures the job page alone: %s do not apply to it", strings.Join(others, ", "))
	}
	if !quiet {
		cfg.Progress = stderr
	}
	rep, err := runPage(context.Background(), cfg)
	if err != nil {
		return err
	}
	if format == "markdown" {
		rep.markdown(stdout)
	} else {
		rep.text(stdout)
	}
	return nil
}

// runPage measures the page loads and the live latency.
func runPage(ctx context.Context, cfg pageConfig) (rep *pageReport, err error) {
	progress := func(format string, args ...any) {
		if cfg.Progress != nil {
			fmt.Fprintf(cfg.Progress, format+"\n", args...)
		}
	}
	sizes := sizesAt(cfg.Scale)
	start := time.Now()
	env, err := startPageEnv(ctx, cfg.Dir)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, env.close()) }()
	figures, err := env.loadJobs(ctx, sizes)
	if err != nil {
		return nil, err
	}
	progress("page: jobs stored and settled (%s)", time.Since(start).Round(time.Millisecond))

	b, err := browsertest.Launch(ctx)
	if err != nil {
		return nil, err
	}
	defer b.Close()
	version, err := b.Version()
	if err != nil {
		return nil, err
	}
	rep = &pageReport{Machine: machine(), Load: loadAverage(), Browser: version, Rounds: cfg.Rounds, Sizes: sizes,
		Figures: figures, Loads: map[string][]pageLoad{}}
	for round := range cfg.Rounds {
		for _, f := range figures {
			l, err := loadPage(ctx, b, env.base+f.Path)
			if err != nil {
				return nil, fmt.Errorf("-page %s, round %d: %w", f.Name, round+1, err)
			}
			rep.Loads[f.Name] = append(rep.Loads[f.Name], l)
			progress("page round %d/%d  %-6s html %s ready %s drawn %s  (%s)", round+1, cfg.Rounds, f.Name,
				fmtDur(l.HTML), fmtDur(l.Ready), fmtDur(l.Drawn), time.Since(start).Round(time.Second))
		}
	}
	// The profile: each figure loaded again with tracing on, a third as
	// many rounds, interleaved.
	rep.Profiles = map[string][]pageProfile{}
	for round := range profileRounds(cfg.Rounds) {
		for _, f := range figures {
			pr, err := profilePage(ctx, b, env.base+f.Path)
			if err != nil {
				return nil, fmt.Errorf("-page profile %s, round %d: %w", f.Name, round+1, err)
			}
			rep.Profiles[f.Name] = append(rep.Profiles[f.Name], pr)
			progress("page profile %d/%d  %-6s main thread %s  (%s)", round+1, profileRounds(cfg.Rounds), f.Name, fmtDur(pr.CPU), time.Since(start).Round(time.Second))
		}
	}
	lat, err := env.measureLive(ctx, b, sizes)
	if err != nil {
		return nil, fmt.Errorf("-page live latency: %w", err)
	}
	rep.Live = lat
	progress("page live: %d samples, median %s, p99 %s  (%s)", len(lat), fmtDur(durMedian(lat)), fmtDur(durPct(lat, 99)), time.Since(start).Round(time.Second))
	return rep, nil
}

// profileRounds is how many traced loads of each figure a run of rounds
// makes: a third, at least one.
func profileRounds(rounds int) int { return max(1, rounds/3) }

// pageSizes are what a -page run loads and measures.
type pageSizes struct {
	Seqs, SeqLen int // the 1,000-node job
	Big          int // the big job's actions
	Streams      int // streams open on the live job
	Steps        int // live steps measured
}

// sizesAt returns the sizes at scale.
func sizesAt(scale float64) pageSizes {
	return pageSizes{
		Seqs:    pageSeqs,
		SeqLen:  scaledTo(pageSeqLen, scale, 2),
		Big:     scaledTo(pageBig, scale, 10),
		Streams: scaledTo(pageStreams, scale, 2),
		Steps:   scaledTo(pageSteps, scale, 3),
	}
}

// drawnMark is truthy once the page set its mark: the mark's time, in
// milliseconds from the navigation's start (performance's time origin).
const drawnMark = `(() => { const e = performance.getEntriesByName('baton:drawn'); return e.length > 0 ? Math.max(e[0].startTime, 1e-3) : false; })()`

// pageLoad is one page load: from the navigation's start to the end of
// the HTML's response, to the DOM's being ready (DOMContentLoaded's end,
// after the deferred script ran), and to the page's baton:drawn mark.
type pageLoad struct {
	HTML  time.Duration
	Ready time.Duration
	Drawn time.Duration
	Bytes int // the HTML's size, decoded
	Boxes int // node boxes drawn in #tree
}

// loadTiming reads a loaded page's navigation timing and its tree.
const loadTiming = `(() => {
	const n = performance.getEntriesByType('navigation')[0];
	return {html: n.responseEnd, ready: n.domContentLoadedEventEnd, bytes: n.decodedBodySize,
		boxes: document.querySelectorAll('#tree [data-path][data-status]').length};
})()`

// loadPage opens url in a fresh tab (a new browser context: nothing
// cached) and measures its load.
func loadPage(ctx context.Context, b *browsertest.Browser, url string) (pageLoad, error) {
	tab, closeTab, err := b.NewTab()
	if err != nil {
		return pageLoad{}, err
	}
	defer closeTab()
	tctx, cancel := context.WithTimeout(tab, pageMaxLoad)
	defer cancel()
	if err := chromedp.Do(tctx, chromedp.Navigate(url)); err != nil {
		return pageLoad{}, fmt.Errorf("navigate to %s: %w", url, err)
	}
	ms, err := chromedp.Run(tctx, chromedp.Poll[float64](drawnMark,
		chromedp.WithPollingInterval(pagePollMark), chromedp.WithPollingTimeout(0)))
	if err != nil {
		return pageLoad{}, fmt.Errorf("%s: no baton:drawn mark: %w", url, err)
	}
	type timing struct {
		HTML  float64 `json:"html"`
		Ready float64 `json:"ready"`
		Bytes int     `json:"bytes"`
		Boxes int     `json:"boxes"`
	}
	tm, err := chromedp.Run(tctx, chromedp.Evaluate[timing](loadTiming))
	if err != nil {
		return pageLoad{}, err
	}
	msDur := func(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }
	return pageLoad{HTML: msDur(tm.HTML), Ready: msDur(tm.Ready), Drawn: msDur(ms), Bytes: tm.Bytes, Boxes: tm.Boxes}, nil
}

// durMedian is the median of ds.
func durMedian(ds []time.Duration) time.Duration { return time.Duration(median(durFloats(ds))) }

// durPct is the p-th percentile of ds (nearest rank).
func durPct(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(ds))
	return s[(len(s)*p+99)/100-1]
}
