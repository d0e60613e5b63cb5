package main

import (
	"context"
	"errors"
	"sync"
)

// The floors do a scenario's work in plain Go: the same actions with the
// same payloads, each decoded into Req, handled and its Resp encoded, but
// no store, no job state and no engine. They are what the work costs in
// Go, and what baton's figures are compared with.

// floorEngine returns "floor": one reducer goroutine walks the jobs'
// shapes and hands actions to Workers goroutines on a channel; they send
// the results back on another. A sequence sends its next action when the
// previous result arrives; a parallel group sends all its actions and
// counts the results; the jobs of scenario a are walked interleaved.
func floorEngine() engine {
	return engine{Name: "floor", Handler: true, Curve: true,
		About: "plain Go: one reducer goroutine, N workers on channels",
		Run:   runFloor}
}

// task is an action handed to a floor worker.
type task struct {
	job, idx int32
	payload  []byte
}

// outcome is a floor worker's result of a task.
type outcome struct {
	job, idx int32
	out      []byte
	err      error
}

// floorBuffer is the capacity of the floor's two channels.
const floorBuffer = 1024

func runFloor(ctx context.Context, sc scenario, _ int, o runOpts) (sample, error) {
	pay := sc.Payloads()
	stages := sc.Stages()
	tasks := make(chan task, floorBuffer)
	results := make(chan outcome, floorBuffer)
	var wg sync.WaitGroup
	for range max(1, o.Workers) {
		wg.Go(func() {
			for t := range tasks {
				out, err := floorHandler(ctx, t.payload)
				results <- outcome{job: t.job, idx: t.idx, out: out, err: err}
			}
		})
	}
	defer func() { close(tasks); wg.Wait() }()

	// The reducer's state, made before the clock starts: per job, the
	// outputs, the stage it is in and the results that stage still waits
	// for; the queue of actions not yet handed to a worker.
	outs := make([][][]byte, sc.Jobs)
	for j := range outs {
		outs[j] = make([][]byte, len(pay))
	}
	type progress struct{ stage, first, left int }
	jobs := make([]progress, sc.Jobs)
	queue := make([]task, 0, sc.Actions())
	enqueue := func(j int) {
		p := &jobs[j]
		p.left = stages[p.stage]
		for i := p.first; i < p.first+p.left; i++ {
			queue = append(queue, task{job: int32(j), idx: int32(i), payload: pay[i]})
		}
	}
	settle()

	m := startMeter()
	for j := range jobs {
		enqueue(j)
	}
	var errs []error
	running := len(jobs)
	for head := 0; running > 0; {
		var send chan<- task
		var next task
		if head < len(queue) {
			send, next = tasks, queue[head]
		}
		select {
		case send <- next:
			head++
		case r := <-results:
			if r.err != nil {
				errs = append(errs, r.err)
			}
			outs[r.job][r.idx] = r.out
			p := &jobs[r.job]
			if p.left--; p.left > 0 {
				continue
			}
			p.first += stages[p.stage]
			if p.stage++; p.stage == len(stages) {
				running--
			} else {
				enqueue(int(r.job))
			}
		}
	}
	s := m.stop()
	return s, errors.Join(errs...)
}

// spawnEngine returns "go-per-action", the program's former floor: a
// goroutine per job, and a goroutine per action awaited with a WaitGroup
// (a sequence starts one goroutine per action and awaits it before the
// next). Same handler work as the floor.
func spawnEngine() engine {
	return engine{Name: "go-per-action", Handler: true,
		About: "plain Go: a goroutine per action, WaitGroup per stage",
		Run:   runSpawn}
}

func runSpawn(ctx context.Context, sc scenario, _ int, _ runOpts) (sample, error) {
	pay := sc.Payloads()
	stages := sc.Stages()
	outs := make([][][]byte, sc.Jobs)
	errs := make([][]error, sc.Jobs)
	for j := range outs {
		outs[j] = make([][]byte, len(pay))
		errs[j] = make([]error, len(pay))
	}

	m := startMeter()
	var jobs sync.WaitGroup
	for j := range sc.Jobs {
		jobs.Go(func() {
			first := 0
			for _, n := range stages {
				var wg sync.WaitGroup
				for i := first; i < first+n; i++ {
					wg.Go(func() { outs[j][i], errs[j][i] = floorHandler(ctx, pay[i]) })
				}
				wg.Wait()
				first += n
			}
		})
	}
	jobs.Wait()
	s := m.stop()

	var all []error
	for _, e := range errs {
		all = append(all, e...)
	}
	return s, errors.Join(all...)
}
