package main

// -zkplace's SIGKILL figure: a worker process (this program again, with
// placeChildEnv set) holds the pins of 3 running jobs; it is killed with
// SIGKILL, and the figure is the time from the kill to the moves of the
// pins to the in-process workers (their runner.Hooks' Placement events),
// beside the ZooKeeper session timeout plus the grace that the package
// doc promises as the bound.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	zkrunner "github.com/batonwf/baton/runner/zk"
)

// placeChildEnv makes the program a ZooKeeper worker process, its value
// a placeChildSpec in JSON: it prints "ready" once its runner runs, and
// runs until it is killed.
const placeChildEnv = "BATON_BENCH_ZKWORKER"

type placeChildSpec struct {
	Servers []string      `json:"servers"`
	Root    string        `json:"root"`
	Name    string        `json:"name"`
	Slots   int           `json:"slots"`
	Session time.Duration `json:"session"`
	Grace   time.Duration `json:"grace"`
}

// placeChildMain is the program as a worker process.
func placeChildMain(spec string, stdout, stderr io.Writer) int {
	var sp placeChildSpec
	if err := json.Unmarshal([]byte(spec), &sp); err != nil {
		fmt.Fprintf(stderr, "bench worker: bad %s: %v\n", placeChildEnv, err)
		return 2
	}
	ctx := context.Background()
	quiet := slog.New(slog.DiscardHandler)
	st, err := zkrunner.Open(ctx, zkrunner.Config{Servers: sp.Servers, Root: sp.Root, SessionTimeout: sp.Session, Logger: quiet})
	if err != nil {
		fmt.Fprintf(stderr, "bench worker: %v\n", err)
		return 1
	}
	reg := runner.NewRegistry()
	if err := runner.Handle(reg, sleepName, sleepHandle); err != nil {
		fmt.Fprintf(stderr, "bench worker: %v\n", err)
		return 1
	}
	r, err := zkrunner.New(zkrunner.Options{WorkerOptions: runner.WorkerOptions{Name: sp.Name, Registry: reg, Workers: sp.Slots, Logger: quiet}, Store: st, Grace: sp.Grace})
	if err != nil {
		fmt.Fprintf(stderr, "bench worker: %v\n", err)
		return 1
	}
	fmt.Fprintln(stdout, "ready")
	if err := r.Run(ctx); err != nil {
		fmt.Fprintf(stderr, "bench worker: %v\n", err)
		return 1
	}
	return 0
}

// killFigure: SIGKILL the holder of 3 pinned jobs' pins; from the kill to
// the pins' moves, over trials.
func killFigure(ctx context.Context, cfg config, po placeOptions, out io.Writer, progress func(string, ...any)) error {
	const trials, jobs, width, ms, slots = 3, 3, 40, 100, 4
	const session, grace = 4 * time.Second, 2 * time.Second
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	var firsts, lasts []float64
	for trial := range trials {
		progress("SIGKILL: trial %d of %d", trial+1, trials)
		first, last, err := killTrial(ctx, cfg, exe, trial, jobs, width, ms, slots, session, grace)
		if err != nil {
			return err
		}
		firsts, lasts = append(firsts, first.Seconds()), append(lasts, last.Seconds())
	}
	fmt.Fprintf(out, "SIGKILL (a worker process holding the pins of %d running jobs of seq %d of %d ms actions, 2 in-process workers of capacity %d; session timeout %v, grace %v), over %d trials:\n",
		jobs, width, ms, slots, session, grace, trials)
	lo, hi := spread(lasts)
	placeFigure(out, nil, "SIGKILL to every pin moved", fmt.Sprintf("median %.2f s [%.2f, %.2f] (the first pin: median %.2f s), beside session timeout plus grace %.1f s",
		median(lasts), lo, hi, median(firsts), (session+grace).Seconds()), "")
	return nil
}

// killTrial runs one trial of killFigure: it returns the times from the
// kill to the first and to the last pin move.
func killTrial(ctx context.Context, cfg config, exe string, trial, jobs, width, ms, slots int, session, grace time.Duration) (first, last time.Duration, err error) {
	var mu sync.Mutex
	var moves []time.Time
	hooks := &runner.Hooks{Placement: func(e runner.PlacementEvent) {
		if e.Kind == runner.PlacementPinMoved {
			mu.Lock()
			moves = append(moves, time.Now())
			mu.Unlock()
		}
	}}
	c, err := startPlace(ctx, cfg.ZK, cfg.ZKRoot, "kill", 0, slots, nil)
	if err != nil {
		return 0, 0, err
	}
	defer func() { err = errors.Join(err, c.close()) }()
	if err := c.add(ctx, "submitter", 0, nil); err != nil {
		return 0, 0, err
	}
	spec, err := json.Marshal(placeChildSpec{Servers: c.servers, Root: c.root, Name: "victim", Slots: slots, Session: session, Grace: grace})
	if err != nil {
		return 0, 0, err
	}
	cmd := exec.CommandContext(ctx, exe)
	cmd.Env = append(os.Environ(), placeChildEnv+"="+string(spec))
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return 0, 0, err
	}
	if err := cmd.Start(); err != nil {
		return 0, 0, err
	}
	killed := false
	defer func() {
		if !killed {
			_ = cmd.Process.Kill()
		}
		_ = cmd.Wait()
	}()
	if line, _ := bufio.NewReader(stdout).ReadString('\n'); line != "ready\n" {
		return 0, 0, fmt.Errorf("the worker process said %q, want ready", line)
	}
	if err := c.waitLive(ctx, "victim"); err != nil {
		return 0, 0, err
	}
	sub := c.runners[0]
	ids := make([]job.ID, jobs)
	for i := range ids {
		ids[i] = job.ID(fmt.Sprintf("k%d-%d", trial, i))
		wf := timedJobs(1, width, true, sleepName, ms, func(int) *ast.Affinity { return &ast.Affinity{Scope: ast.ScopeJob} })[0]
		if err := sub.Submit(ctx, ids[i], wf); err != nil {
			return 0, 0, err
		}
	}
	for {
		pins, err := c.stores[0].Pins(ctx)
		if err != nil {
			return 0, 0, err
		}
		held := 0
		for _, p := range pins {
			if p.Worker == "victim" {
				held++
			}
		}
		if held == jobs {
			break
		}
		if ctx.Err() != nil {
			return 0, 0, ctx.Err()
		}
		time.Sleep(10 * time.Millisecond)
	}
	for i := range 2 {
		if err := c.add(ctx, fmt.Sprintf("w%d", i), slots, hooks); err != nil {
			return 0, 0, err
		}
	}
	if err := c.waitLive(ctx, "w0", "w1"); err != nil {
		return 0, 0, err
	}
	begin := time.Now()
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		return 0, 0, err
	}
	killed = true
	for _, id := range ids {
		j, err := sub.Wait(ctx, id)
		if err != nil {
			return 0, 0, err
		}
		if j.Status() != job.StatusSucceeded {
			return 0, 0, fmt.Errorf("job %s: %s, want succeeded", id, j.Status())
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(moves) != jobs {
		return 0, 0, fmt.Errorf("%d pins moved after the kill, want %d", len(moves), jobs)
	}
	return moves[0].Sub(begin), moves[len(moves)-1].Sub(begin), nil
}
