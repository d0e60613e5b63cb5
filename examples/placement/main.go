// Command placement shows where baton runs work on ZooKeeper: three named
// workers (w1, w2, w3; capacity 2, at most one sleep at once, a grace of
// 5s) in one program, each a zkrunner.Runner with its own session, as it
// would be in its own process. It submits the workflow of
// examples/placement.json, built with the Go DSL:
//
//	seq(
//	  seq(sleep 5s, log ...)       affinity {scope: job}: pinned to one worker
//	  par(log ..., log ...)        affinity "dataset-42": a soft key
//	  sleep 1s                     replicas 3: copies on distinct workers
//	  log "done ..."
//	)
//
// While the pinned sleep runs, it drains the worker that runs it
// (Store.Drain): that worker still runs the pin's second action, takes
// nothing else, and deregisters once the job has released the pin. It
// prints what each worker runs, the workers' states (Store.Workers), and
// where each attempt ran (the job's history: job.Result.Worker).
//
// Start ZooKeeper, then:
//
//	go run ./examples/placement -zk 127.0.0.1:2181
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	zkrunner "github.com/batonwf/baton/runner/zk"
)

func main() {
	servers := flag.String("zk", "127.0.0.1:2181", "the ZooKeeper servers, `HOST:PORT[,HOST:PORT...]`")
	root := flag.String("root", "/baton-placement", "the node `PATH` the example keeps its jobs and workers under")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := example(ctx, strings.Split(*servers, ","), *root, os.Stdout); err != nil {
		log.Fatal(err)
	}
}

// workflow is examples/placement.json's workflow.
func workflow() ast.Node {
	return ast.Seq(
		ast.Seq(
			ast.Act("sleep", "5s"),
			ast.Act("log", "read back what the step before left on this worker's disk"),
		).WithAffinity(ast.Affinity{Scope: ast.ScopeJob}),
		ast.Par(
			ast.Act("log", "score part 1 of dataset-42 (from the warm cache)"),
			ast.Act("log", "score part 2 of dataset-42 (from the warm cache)"),
		).WithAffinity(ast.Affinity{Key: "dataset-42"}),
		ast.Act("sleep", "1s").WithReplicas(3),
		ast.Act("log", "done: one of three copies of the sleep won"),
	)
}

// example starts three workers on root, submits the workflow, drains the
// worker that holds its pin, and prints what ran where.
func example(ctx context.Context, servers []string, root string, out io.Writer) error {
	var mu sync.Mutex // one line at a time from the workers
	say := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(out, format+"\n", args...)
	}
	pinned := make(chan string, 1) // the worker that runs the pin's first action

	var wg sync.WaitGroup
	runCtx, stop := context.WithCancel(ctx)
	defer wg.Wait() // the workers have stopped and closed their sessions
	defer stop()
	names := []string{"w1", "w2", "w3"}
	done := map[string]chan struct{}{} // closed when the worker's Run returns
	runners := map[string]*zkrunner.Runner{}
	for _, name := range names {
		st, err := zkrunner.Open(ctx, zkrunner.Config{Servers: servers, Root: root})
		if err != nil {
			return err
		}
		reg := runner.NewRegistry()
		_ = runner.Handle(reg, "log", func(ctx context.Context, msg string) (string, error) {
			a, _ := runner.ActionFrom(ctx)
			say("%s: %s (%s)", name, msg, a.ID)
			return msg, nil
		})
		_ = runner.Handle(reg, "sleep", func(ctx context.Context, d string) (string, error) {
			a, _ := runner.ActionFrom(ctx)
			dur, err := time.ParseDuration(d)
			if err != nil {
				return "", runner.Final(err)
			}
			say("%s: sleep %s (%s)", name, d, a.ID)
			if strings.HasPrefix(a.ID, "seq[0].seq[0]#") {
				select {
				case pinned <- name:
				default:
				}
			}
			select {
			case <-time.After(dur):
				return "slept " + d, nil
			case <-ctx.Done():
				return "", context.Cause(ctx)
			}
		})
		r, err := zkrunner.New(zkrunner.Options{
			WorkerOptions: runner.WorkerOptions{Name: name, Registry: reg, Workers: 2},
			Store:         st,
			Limits:        map[string]int{"sleep": 1},
			Grace:         5 * time.Second,
		})
		if err != nil {
			st.Close()
			return err
		}
		runners[name] = r
		done[name] = make(chan struct{})
		wg.Go(func() {
			defer close(done[name])
			defer st.Close()
			if err := r.Run(runCtx); err != nil && !errors.Is(err, context.Canceled) {
				say("%s: %v", name, err)
			}
		})
	}

	// A client: it submits, waits and drains, and runs nothing.
	st, err := zkrunner.Open(ctx, zkrunner.Config{Servers: servers, Root: root})
	if err != nil {
		return err
	}
	defer st.Close()
	client, err := zkrunner.New(zkrunner.Options{Store: st, NoResume: true})
	if err != nil {
		return err
	}
	defer client.Close()
	if err := waitFor(ctx, "the three workers live", func() (bool, error) {
		ws, err := st.Workers(ctx)
		live := 0
		for _, w := range ws {
			if w.Live {
				live++
			}
		}
		return live == len(names), err
	}); err != nil {
		return err
	}
	if err := printWorkers(ctx, st, say); err != nil {
		return err
	}

	id := job.ID("placement-" + time.Now().UTC().Format("20060102T150405.000Z"))
	if err := client.Submit(ctx, id, workflow()); err != nil {
		return err
	}
	var holder string
	select {
	case holder = <-pinned:
	case <-ctx.Done():
		return fmt.Errorf("the pinned sleep did not start: %w", ctx.Err())
	}
	if _, err := st.Drain(ctx, holder, zkrunner.DrainOptions{}); err != nil {
		return err
	}
	say("drain %s: it holds the pin of seq[0], so it runs the pin's next action and nothing else", holder)
	if err := printWorkers(ctx, st, say); err != nil {
		return err
	}

	j, err := client.Wait(ctx, id)
	if err != nil {
		return err
	}
	select {
	case <-done[holder]:
	case <-ctx.Done():
		return fmt.Errorf("%s did not deregister: %w", holder, ctx.Err())
	}
	if rep, ok := runners[holder].Drained(); ok {
		say("%s drained: %d actions finished, %d pins released; deregistered", holder, rep.Finished, rep.PinsReleased)
	} else {
		return fmt.Errorf("%s stopped without draining", holder)
	}
	if err := printWorkers(ctx, st, say); err != nil {
		return err
	}

	h, err := st.History(ctx, id)
	if err != nil {
		return err
	}
	say("where each attempt ran:")
	for _, s := range h.Steps {
		for _, r := range s.Results {
			if r.Worker == "" {
				continue
			}
			outcome := "ok"
			if r.Error != "" {
				outcome = "failed: " + r.Error
			} else if len(r.Output) > 0 {
				var o string
				if json.Unmarshal(r.Output, &o) == nil && strings.HasPrefix(o, "slept ") {
					outcome = o
				}
			}
			say("  %s on %s: %s", r.ActionID, r.Worker, outcome)
		}
	}
	say("job %s %s", id, j.Status())
	if j.Status() != job.StatusSucceeded {
		return fmt.Errorf("job %s %s", id, j.Status())
	}
	return nil
}

// printWorkers prints the registered workers: name, state, running
// actions over capacity, pins held.
func printWorkers(ctx context.Context, st *zkrunner.Store, say func(string, ...any)) error {
	ws, err := st.Workers(ctx)
	if err != nil {
		return err
	}
	var parts []string
	for _, w := range ws {
		parts = append(parts, fmt.Sprintf("%s %s %d/%d pins %d", w.Name, w.State, len(w.Running), w.Capacity, w.Pins))
	}
	say("workers: %s", strings.Join(parts, ", "))
	return nil
}

// waitFor polls cond every 50ms until it holds, an error, or ctx ends.
func waitFor(ctx context.Context, what string, cond func() (bool, error)) error {
	for {
		ok, err := cond()
		if ok || err != nil {
			return err
		}
		select {
		case <-time.After(50 * time.Millisecond):
		case <-ctx.Done():
			return fmt.Errorf("%s: %w", what, ctx.Err())
		}
	}
}
