// Command bench measures baton against a plain-Go floor, in one process and
// one run, so that the ratios compare like with like.
//
//	go run ./bench                      every scenario, text table
//	go run ./bench -only a,c -reps 9    some scenarios, more runs
//	go run ./bench -format markdown     a table for the README
//	go run ./bench -engines memory -only b -reps 300 -budget 0 -cpuprofile b.prof
//	                                    profile one scenario (go tool pprof -top)
//
// Other flags: -workers (inmem Workers, default 2 per CPU; 1 to 16 measured
// alike on 2 CPUs), -budget (stop repeating a slow engine after this long),
// -memprofile, -q (no progress on stderr).
//
// Scenarios, every action a no-op handler:
//
//	a  200 jobs, each seq(par(10 actions), 1 action), submitted at once
//	b  one seq of 1,000 actions
//	c  one par of 1,000 actions
//	d  one par of 100,000 actions (cost per action should match c)
//
// Engines: "floor" does the same shape with goroutines and WaitGroups;
// "memory" is runner/inmem on store.NewMemory; "bolt" is runner/inmem on
// store/bolt with a fresh file per run and fsync on. Each run is timed from
// the first Submit to the end of the last job (runner start-up, a warm-up
// job and store set-up excluded); allocations are runtime.MemStats deltas
// over the same span.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"time"
)

func main() {
	if err := mainErr(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func mainErr(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	reps := fs.Int("reps", 0, "runs per scenario and engine (0: 5, and 3 for d)")
	only := fs.String("only", "", "comma-separated scenarios to run (a,b,c,d); empty runs all")
	engines := fs.String("engines", "floor,memory,bolt", "comma-separated engines to run")
	format := fs.String("format", "text", "output format: text or markdown")
	workers := fs.Int("workers", runtime.NumCPU()*2, "inmem Workers")
	budget := fs.Duration("budget", 20*time.Second, "after this much time on one scenario and engine, stop repeating")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	memprofile := fs.String("memprofile", "", "write an allocation profile to this file at the end")
	quiet := fs.Bool("q", false, "do not print progress to stderr")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	if *format != "text" && *format != "markdown" {
		return fmt.Errorf("-format %q: want text or markdown", *format)
	}
	scs, err := pickScenarios(defaultScenarios(), *only)
	if err != nil {
		return err
	}
	engs, cleanup, err := pickEngines(*engines, *workers)
	if err != nil {
		return err
	}
	defer cleanup()

	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	if *memprofile != "" {
		runtime.MemProfileRate = 64 << 10
	}

	cfg := config{Scenarios: scs, Engines: engs, Reps: *reps, Budget: *budget, Workers: *workers}
	if !*quiet {
		cfg.Progress = stderr
	}
	rep, err := run(context.Background(), cfg)
	if err != nil {
		return err
	}
	if *format == "markdown" {
		rep.markdown(stdout)
	} else {
		rep.text(stdout)
	}
	if *memprofile != "" {
		f, err := os.Create(*memprofile)
		if err != nil {
			return err
		}
		defer f.Close()
		return pprof.Lookup("allocs").WriteTo(f, 0)
	}
	return nil
}

// pickScenarios keeps the scenarios named in only (all when empty).
func pickScenarios(all []scenario, only string) ([]scenario, error) {
	if only == "" {
		return all, nil
	}
	var out []scenario
	for _, name := range strings.Split(only, ",") {
		i := slices.IndexFunc(all, func(s scenario) bool { return s.Name == strings.TrimSpace(name) })
		if i < 0 {
			return nil, fmt.Errorf("-only: no scenario %q (have a, b, c, d)", name)
		}
		out = append(out, all[i])
	}
	return out, nil
}

// config is what one run of the program measures.
type config struct {
	Scenarios []scenario
	Engines   []engine
	Reps      int           // runs per scenario and engine; 0 means the scenario's default
	Budget    time.Duration // stop repeating after this long; 0 means no limit
	Workers   int           // for the report
	Progress  io.Writer     // progress lines; nil for none
}

// run measures every scenario on every engine.
func run(ctx context.Context, cfg config) (*report, error) {
	rep := &report{Machine: machine(), Workers: cfg.Workers, Engines: engineNames(cfg.Engines)}
	var progress func(string)
	if cfg.Progress != nil {
		progress = func(s string) { fmt.Fprintln(cfg.Progress, s) }
	}
	for _, sc := range cfg.Scenarios {
		reps := cfg.Reps
		if reps <= 0 {
			reps = sc.Reps
		}
		for _, e := range cfg.Engines {
			res := measure(ctx, sc, e, reps, cfg.Budget, progress)
			if res.Err != nil {
				return nil, res.Err
			}
			rep.Results = append(rep.Results, res)
		}
	}
	return rep, nil
}

func engineNames(es []engine) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Name
	}
	return out
}

// machine describes where the figures come from.
func machine() string {
	return fmt.Sprintf("%s/%s, %d CPUs, GOMAXPROCS %d, %s",
		runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.Version())
}
