package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/batonwf/baton/api"
	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
)

// progressEvery is how often the progress line is redrawn.
const progressEvery = 100 * time.Millisecond

// showProgress redraws the progress line of job id from status (the
// runner's view of the store) every progressEvery, until the returned stop
// is called; stop clears the line. It draws nothing when stderr is not a
// terminal.
func (c *cli) showProgress(con *console, status func(context.Context, job.ID) (api.Summary, error), id job.ID, start time.Time) (stop func()) {
	if !con.tty {
		return func() {}
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(progressEvery)
		defer t.Stop()
		for {
			if s, err := status(ctx, id); err == nil {
				con.progress(progressLine(s, c.now().Sub(start)))
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return func() {
		cancel()
		wg.Wait()
		con.clear()
	}
}

// summaries turns a runner's Status into what showProgress reads.
func summaries(status func(context.Context, job.ID) (job.Job, error)) func(context.Context, job.ID) (api.Summary, error) {
	return func(ctx context.Context, id job.ID) (api.Summary, error) {
		j, err := status(ctx, id)
		if err != nil {
			return api.Summary{}, err
		}
		return api.SummaryOf(j), nil
	}
}

// stallEvery is how often 'baton run' looks for a job that only a signal
// can move on.
const stallEvery = 250 * time.Millisecond

// hintSignals tells, once, that job id can go on only with a signal (a
// wait runs, and no action and no timer is left), which nothing can send
// to a job that 'baton run' holds, and how to send one. Call stop when
// the job ends.
func (c *cli) hintSignals(con *console, status func(context.Context, job.ID) (job.Job, error), id job.ID, path string) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(stallEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			j, err := status(ctx, id)
			if err != nil || j.Done() || len(j.Outstanding()) > 0 || len(j.Timers()) > 0 {
				continue
			}
			var names []string
			for _, n := range api.JobOf(j, true).Nodes {
				if n.Kind == ast.KindWait.String() && n.Status == job.StatusRunning.String() && !slices.Contains(names, n.Signal) {
					names = append(names, n.Signal)
				}
			}
			if len(names) == 0 {
				continue
			}
			con.clear()
			fmt.Fprintf(con.Stderr(), "baton run: job %s can go on only with a signal (it waits for %s), and 'baton run' holds its store, so none can reach it: stop this (Ctrl-C), run it with 'baton serve --store %s', and send it with 'baton signal --server URL %s %s'\n",
				id, strings.Join(names, ", "), path, id, names[0])
			return
		}
	})
	return func() {
		cancel()
		wg.Wait()
	}
}
