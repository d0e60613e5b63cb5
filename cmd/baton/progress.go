package main

import (
	"context"
	"sync"
	"time"

	"github.com/batonwf/baton/job"
)

// progressEvery is how often the progress line is redrawn.
const progressEvery = 100 * time.Millisecond

// showProgress redraws the progress line of job id from status (the
// runner's view of the store) every progressEvery, until the returned stop
// is called; stop clears the line. It draws nothing when stderr is not a
// terminal.
func (c *cli) showProgress(con *console, status func(context.Context, job.ID) (job.Job, error), id job.ID, start time.Time) (stop func()) {
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
			if j, err := status(ctx, id); err == nil {
				con.progress(progressLine(j, c.now().Sub(start)))
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
