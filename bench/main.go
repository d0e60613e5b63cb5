// Command bench measures baton against plain-Go floors doing the same
// work.
//
//	go run ./bench                      every scenario and engine, text table
//	go run ./bench -format markdown     the same as Markdown tables
//	go run ./bench -only b -engines floor,memory -rounds 9
//	go run ./bench -only b -engines memory -rounds 1 -warm 300 -cpuprofile b.prof
//	                                    profile one scenario (go tool pprof -top)
//
// # Scenarios
//
// Every action runs the same typed handler, registered in the engines
// with runner.Handle: its payload, a small JSON object (action i of a job
// has {"id":"o-i","n":i}), is decoded into a struct, and the handler's
// output struct is encoded as JSON.
//
//	a  200 jobs, each seq(par(10 actions), 1 action), submitted at once
//	b  one seq of 1,000 actions
//	c  one par of 1,000 actions
//	d  one par of 100,000 actions (cost per action should match c)
//
// # Engines
//
//   - floor: the plain-Go floor that baton's figures are compared with.
//     One reducer goroutine walks the jobs' shapes (a seq sends its next
//     action when the previous result arrives; a par sends all its actions
//     and counts the results; the 200 jobs of a are walked interleaved)
//     and hands actions, on a buffered channel, to as many worker
//     goroutines as the runner gets (-workers). Each worker does what
//     runner.Handle does around the handler: decode the payload into the
//     same struct, call the same handler, encode its output; it sends the
//     output back on another channel, and the reducer keeps it.
//   - go-per-action: the program's former floor, kept as an extra row: a
//     goroutine per job, and a goroutine per action awaited with a
//     WaitGroup, with the same handler work.
//   - memory: runner/inmem on store.NewMemory.
//   - bolt: runner/inmem on store/bolt, fsync on.
//   - fsync (scenario b only): per action, append about 100 bytes to a
//     file and fsync it.
//   - bboltcommit (scenario b only): per action, one bbolt transaction
//     (fsync on) putting about 100 bytes under a new key.
//
// The two durable floors run no handler: they are the least that 1,000
// durable writes in a row cost on this disk, to set bolt's figure on b
// against. Every engine runs on every scenario it applies to by default,
// bolt on d included: it saves a few dozen large steps there, so a run
// takes well under a second (d gets fewer warm runs, see below).
//
// # How it measures
//
// Every measured run happens in a fresh process: the program (the
// driver) runs its own executable again as a child for each scenario,
// engine and round, saying what to measure in an environment variable.
// For each scenario, a round runs every engine once, one after the other
// in the order of -engines, then the next round does the same, so that
// the runs of an engine are never all in a row and a slow spell of the
// machine falls on every engine alike. -rounds sets how many rounds
// (default 5).
//
// A child sets up its engine for each run outside the clock: a fresh
// store (a fresh file for bolt and the durable floors) and a freshly
// started runner, or the floor's freshly started workers, then a pause of
// 2ms so that they wait for work, and a garbage collection. A run is
// timed from the start of the work (the first Submit, for baton) to the
// end of the last job; allocations are runtime.MemStats deltas over the
// same span. The first run in the process is "cold": nothing ran before
// it, no warm-up job. The child then makes -warm more runs (default 5, and
// 2 for d; a -warm given applies to every scenario), and their median is
// the round's "warm" figure. After every run the child checks that the
// handler ran once per action, each time with that action's payload. It
// prints its figures as one JSON line on stdout; a child that fails or
// prints anything else stops the program with an error naming the
// scenario, the engine and the child's stderr.
//
// The report gives, per scenario and engine: the median over rounds of
// the cold figures and of the warm ones, each with its spread (smallest
// and largest round); the warm time per action; "x floor", the median over
// rounds of the engine's warm time divided by the floor's in the same
// round; the steps (job states saved per run, creations included, from
// the runner's counters) and the allocations per action of a warm run.
// A second table gives ratios both ways, the median of the per-round
// ratios (paired) and the ratio of the medians, warm and cold: memory over
// floor on every scenario, bolt over memory on a, and bolt over
// bboltcommit and over fsync on b. A third gives bolt's fsyncs and bytes
// per step.
//
// Other flags: -only and -engines pick scenarios and engines; -workers
// sets the runner's Workers and the floor's worker count (default 2 per
// CPU); -scale multiplies the scenarios' sizes (for quick checks); -dir
// is where the durable engines make their files (a tmpfs there makes
// fsync free); -q drops the progress lines on stderr. -cpuprofile and
// -memprofile are passed to the child of the first round of each
// scenario and engine, and cover its cold and warm runs; with more than
// one scenario or engine, the file name gets "-<scenario>-<engine>" before
// its extension. The program says on stderr where each profile went.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"
)

func main() {
	if spec := os.Getenv(childEnv); spec != "" {
		os.Exit(childMain(spec, os.Stdout, os.Stderr))
	}
	if err := mainErr(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func mainErr(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	rounds := fs.Int("rounds", 5, "rounds: fresh processes per scenario and engine, interleaved")
	warm := fs.Int("warm", 0, "warm runs per process after the cold one (0: 5, and 2 for d)")
	only := fs.String("only", "", "comma-separated scenarios to run (a,b,c,d); empty runs all")
	engines := fs.String("engines", strings.Join(engineNames(), ","), "comma-separated engines to run")
	format := fs.String("format", "text", "output format: text or markdown")
	workers := fs.Int("workers", runtime.NumCPU()*2, "inmem Workers, and the floor's worker goroutines")
	scale := fs.Float64("scale", 1, "multiply every scenario's size by this (at least 1 job and 1 action)")
	dir := fs.String("dir", os.TempDir(), "directory for the durable engines' files")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile of a child process (see the package doc) to this file")
	memprofile := fs.String("memprofile", "", "write an allocation profile of a child process to this file")
	quiet := fs.Bool("q", false, "do not print progress to stderr")
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return fmt.Errorf("unexpected arguments: %q", fs.Args())
	case *format != "text" && *format != "markdown":
		return fmt.Errorf("-format %q: want text or markdown", *format)
	case *rounds < 1:
		return fmt.Errorf("-rounds %d: want at least 1", *rounds)
	case *warm < 0:
		return fmt.Errorf("-warm %d: want at least 1 (or 0 for the defaults)", *warm)
	case *workers < 1:
		return fmt.Errorf("-workers %d: want at least 1", *workers)
	case !(*scale > 0):
		return fmt.Errorf("-scale %v: want more than 0", *scale)
	}
	scs, err := pickScenarios(defaultScenarios(), *only)
	if err != nil {
		return err
	}
	for i := range scs {
		scs[i] = scs[i].scaled(*scale)
		if *warm > 0 {
			scs[i].Warm = *warm
		}
	}
	engs, err := pickEngines(*engines)
	if err != nil {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("cannot find the program to run as a child: %w", err)
	}
	cfg := config{
		Exe: exe, Scenarios: scs, Engines: engs, Rounds: *rounds, Workers: *workers, Dir: *dir,
		CPUProfile: *cpuprofile, MemProfile: *memprofile, Notes: stderr,
	}
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

// pickEngines returns the engines named in list, in the order given.
func pickEngines(list string) ([]engine, error) {
	var out []engine
	for _, name := range strings.Split(list, ",") {
		e, err := findEngine(strings.TrimSpace(name))
		if err != nil {
			return nil, fmt.Errorf("-engines: %w", err)
		}
		if slices.ContainsFunc(out, func(x engine) bool { return x.Name == e.Name }) {
			return nil, fmt.Errorf("-engines: %q named twice", e.Name)
		}
		out = append(out, e)
	}
	return out, nil
}

// config is what one run of the program measures.
type config struct {
	Exe        string // the program, run again as each child
	Scenarios  []scenario
	Engines    []engine
	Rounds     int
	Workers    int
	Dir        string
	CPUProfile string
	MemProfile string
	Progress   io.Writer // progress lines; nil for none
	Notes      io.Writer // where profiles went; nil for nowhere
}

// run measures every scenario: for each, Rounds rounds, each running
// every engine that applies once, in its own child process.
func run(ctx context.Context, cfg config) (*report, error) {
	rep := &report{Machine: machine(), Rounds: cfg.Rounds, Workers: cfg.Workers, Scenarios: cfg.Scenarios}
	start := time.Now()
	pairs := 0
	for _, sc := range cfg.Scenarios {
		for _, e := range cfg.Engines {
			if e.appliesTo(sc) {
				pairs++
			}
		}
	}
	for _, sc := range cfg.Scenarios {
		var cells []*cell
		for _, e := range cfg.Engines {
			if e.appliesTo(sc) {
				cells = append(cells, &cell{Scenario: sc, Engine: e})
			}
		}
		if len(cells) == 0 {
			continue
		}
		for round := range cfg.Rounds {
			for _, c := range cells {
				sp := childSpec{Scenario: sc, Engine: c.Engine.Name, Warm: sc.Warm, Workers: cfg.Workers, Dir: cfg.Dir}
				if round == 0 {
					sp.CPUProfile = profileName(cfg.CPUProfile, pairs, sc, c.Engine)
					sp.MemProfile = profileName(cfg.MemProfile, pairs, sc, c.Engine)
				}
				res, err := spawn(ctx, cfg.Exe, sp)
				if err != nil {
					return nil, fmt.Errorf("scenario %s on %s, round %d: %w", sc.Name, c.Engine.Name, round+1, err)
				}
				c.Rounds = append(c.Rounds, res)
				for _, p := range []struct{ kind, file string }{{"CPU", sp.CPUProfile}, {"allocation", sp.MemProfile}} {
					if p.file != "" && cfg.Notes != nil {
						fmt.Fprintf(cfg.Notes, "%s profile of scenario %s on %s (child process of round 1, cold and warm runs): %s\n",
							p.kind, sc.Name, c.Engine.Name, p.file)
					}
				}
				if cfg.Progress != nil {
					fmt.Fprintf(cfg.Progress, "%s round %d/%d  %-13s cold %-8s warm %-8s  (%s)\n",
						sc.Name, round+1, cfg.Rounds, c.Engine.Name, fmtDur(res.Cold.Wall),
						fmtDur(time.Duration(medianOf(res.Warm, wallOf))), time.Since(start).Round(time.Second))
				}
			}
		}
		rep.Cells = append(rep.Cells, cells...)
		for _, c := range cells {
			rep.addEngine(c.Engine)
		}
	}
	if len(rep.Cells) == 0 {
		return nil, errors.New("no engine applies to the scenarios picked")
	}
	return rep, nil
}

// profileName returns the profile file for the child measuring sc on e:
// path as given if only one scenario and engine are measured, else with
// "-<scenario>-<engine>" before its extension; "" if path is "".
func profileName(path string, pairs int, sc scenario, e engine) string {
	if path == "" || pairs <= 1 {
		return path
	}
	ext := filepath.Ext(path)
	return strings.TrimSuffix(path, ext) + "-" + sc.Name + "-" + e.Name + ext
}

// machine describes where the figures come from.
func machine() string {
	return fmt.Sprintf("%s/%s, %d CPUs, GOMAXPROCS %d, %s",
		runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.Version())
}
