package main

import (
	"context"
	"sync"

	"github.com/batonwf/baton/job"
)

// The floor does the scenario's work with plain goroutines: the same no-op
// handler, the same shape, no reducer, no store, no queues. It is what the
// work costs in Go, and what baton's figures are compared with.

// floorEngine returns the plain-Go engine.
func floorEngine() engine {
	return engine{Name: "floor", Run: runFloor}
}

func runFloor(ctx context.Context, sc scenario, rep int) (sample, error) {
	ids := sc.JobIDs(rep)
	m := startMeter()
	var wg sync.WaitGroup
	for _, id := range ids {
		wg.Go(func() { floorJob(ctx, sc, id) })
	}
	wg.Wait()
	return m.stop(), nil
}

// floorJob runs one job's shape.
func floorJob(ctx context.Context, sc scenario, id job.ID) {
	a := job.Action{JobID: id, ID: "x#1", Name: noopName, Attempt: 1}
	switch sc.Shape {
	case shapeFanIn:
		floorPar(ctx, a, sc.Width)
		floorSeq(ctx, a, 1)
	case shapeSeq:
		floorSeq(ctx, a, sc.Width)
	default:
		floorPar(ctx, a, sc.Width)
	}
}

// floorPar runs n no-ops in n goroutines and waits for all of them.
func floorPar(ctx context.Context, a job.Action, n int) {
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() { _, _ = noop(ctx, a) })
	}
	wg.Wait()
}

// floorSeq runs n no-ops one after the other, each handed to a goroutine
// and awaited before the next starts.
func floorSeq(ctx context.Context, a job.Action, n int) {
	done := make(chan struct{})
	for range n {
		go func() {
			_, _ = noop(ctx, a)
			done <- struct{}{}
		}()
		<-done
	}
}
