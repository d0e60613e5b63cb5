package main

// This file and zk.go are everything that calls baton's runners and
// stores: the "memory" and "bolt" engines here, the ZooKeeper ones there.
// The rest of the program does not import them.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	"github.com/batonwf/baton/runner/inmem"
	"github.com/batonwf/baton/store"
	"github.com/batonwf/baton/store/bolt"
)

// memoryEngine is runner/inmem on a fresh store.NewMemory per run.
func memoryEngine() engine {
	return engine{Name: "memory", Handler: true, Steps: true, Curve: true,
		About: "runner/inmem on store.NewMemory",
		Run: func(ctx context.Context, sc scenario, run int, o runOpts) (sample, error) {
			st := store.NewMemory()
			s, err := runBaton(ctx, sc, run, o.Workers, st)
			return s, errors.Join(err, st.Close())
		}}
}

// boltEngine is runner/inmem on store/bolt: a fresh file per run, fsync on
// (the default options).
func boltEngine() engine {
	return engine{Name: "bolt", Handler: true, Steps: true,
		About: "runner/inmem on store/bolt, fsync on",
		Run: func(ctx context.Context, sc scenario, run int, o runOpts) (sample, error) {
			path := filepath.Join(o.Dir, fmt.Sprintf("bolt-%s-%d.db", sc.Name, run))
			st, err := bolt.Open(path, &bolt.Options{})
			if err != nil {
				return sample{}, err
			}
			s0 := st.Stats()
			s, err := runBaton(ctx, sc, run, o.Workers, st)
			s1 := st.Stats()
			s.Store = &storeStats{
				WriteTxns:    int64(s1.WriteTxs - s0.WriteTxs),
				BytesWritten: int64(s1.BytesWritten - s0.BytesWritten),
				PageBytes:    int64(s1.PageBytes - s0.PageBytes),
			}
			return s, errors.Join(err, st.Close(), os.Remove(path))
		}}
}

// workflow returns the tree of one job of sc, with the payloads of
// sc.Payloads in tree order.
func workflow(sc scenario) ast.Node {
	if sc.growing() {
		return growingWorkflow(sc)
	}
	pay := sc.Payloads()
	acts := make([]ast.Node, len(pay))
	for i, p := range pay {
		acts[i] = ast.Act(actionName, json.RawMessage(p))
	}
	switch sc.Shape {
	case shapeFanIn:
		return ast.Seq(ast.Par(acts[:sc.Width]...), acts[sc.Width])
	case shapeSeq:
		return ast.Seq(acts...)
	default:
		return ast.Par(acts...)
	}
}

// runBaton starts a runner on st with the typed handler, then measures sc
// from the first Submit to the end of the last job. The runner is started
// before the clock and runs no job before the measured ones.
func runBaton(ctx context.Context, sc scenario, run, workers int, st store.Store) (_ sample, err error) {
	reg := runner.NewRegistry()
	if err := runner.Handle(reg, actionName, handle); err != nil {
		return sample{}, err
	}
	if sc.growing() {
		if err := registerGrowing(reg, sc); err != nil {
			return sample{}, err
		}
	}
	var c runner.Counters
	r, err := inmem.New(inmem.Options{WorkerOptions: runner.WorkerOptions{Registry: reg, Workers: workers, Hooks: c.Hooks(nil)}, Store: st})
	if err != nil {
		return sample{}, err
	}
	runErr := make(chan error, 1)
	go func() { runErr <- r.Run(ctx) }()
	defer func() { err = errors.Join(err, r.Close(), <-runErr) }()
	wf := workflow(sc)
	ids := make([]job.ID, sc.Jobs)
	for i := range ids {
		ids[i] = job.ID(fmt.Sprintf("%s-%d-%d", sc.Name, run, i))
	}
	settle()
	steps0 := c.Snapshot().Steps

	m := startMeter()
	errs := make([]error, len(ids))
	if len(ids) == 1 {
		errs[0] = submitWait(ctx, r, ids[0], wf)
	} else {
		var wg sync.WaitGroup
		for i, id := range ids {
			wg.Go(func() { errs[i] = submitWait(ctx, r, id, wf) })
		}
		wg.Wait()
	}
	s := m.stop()

	s.Steps = c.Snapshot().Steps - steps0
	return s, errors.Join(errs...)
}

// submitWaiter is a runner: runner/inmem's or runner/zk's.
type submitWaiter interface {
	Submit(ctx context.Context, id job.ID, root ast.Node) error
	Wait(ctx context.Context, id job.ID) (job.Job, error)
}

// submitWait submits a job, waits for it, and checks that it succeeded.
func submitWait(ctx context.Context, r submitWaiter, id job.ID, wf ast.Node) error {
	if err := r.Submit(ctx, id, wf); err != nil {
		return err
	}
	j, err := r.Wait(ctx, id)
	if err != nil {
		return err
	}
	if j.Status() != job.StatusSucceeded {
		return fmt.Errorf("job %s: %s, want succeeded", id, j.Status())
	}
	return nil
}
