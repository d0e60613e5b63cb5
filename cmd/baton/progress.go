package main

import (
	"context"
	"sync"
	"time"

	"github.com/batonwf/baton/api"
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
