package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/batonwf/baton/job"
)

// progressLine is the live line shown while a job runs.
func progressLine(j job.Job, took time.Duration) string {
	settled, total := j.Progress()
	return fmt.Sprintf("[run] %d/%d actions settled, %d running, %.1fs", settled, total, j.Running(), took.Seconds())
}

// summaryLine is the one line that ends a run:
//
//	job hello-20260101T120000.000Z succeeded: 6/6 actions settled, v7, 1.2s
//	job fail-... failed at par[1] (fail): boom: 2/3 actions settled, v4, 0.3s
//	job order-7 cancelled (not needed): 1/3 actions settled, v3, 4ms
func summaryLine(j job.Job, took time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "job %s %s", j.ID(), j.Status())
	if f, ok := j.Failure(); ok {
		fmt.Fprintf(&b, " at %s", f)
	}
	if why, ok := j.Cancelled(); ok {
		fmt.Fprintf(&b, " (%s)", job.Clip(why))
	}
	settled, total := j.Progress()
	fmt.Fprintf(&b, ": %d/%d actions settled, v%d", settled, total, j.Version())
	if took > 0 {
		fmt.Fprintf(&b, ", %s", took.Round(time.Millisecond))
	}
	return b.String()
}
