package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	"github.com/batonwf/baton/runner/inmem"
	kafkarunner "github.com/batonwf/baton/runner/kafka"
	zkrunner "github.com/batonwf/baton/runner/zk"
	"github.com/batonwf/baton/store"
	"github.com/batonwf/baton/store/bolt"
)

// The -signals mode measures issue 19's "a signal round trip on each
// runner against a result round trip on the same runner: within 1.5x".
// On each runner, in one process, trial by trial interleaved:
//
//   - signal: job A is one wait (ast.Wait("go")). Once its wait is
//     running (polled from the store, outside the clock), the clock runs
//     from calling Runner.Signal until Runner.Wait returns A finished.
//   - result: job B is one action whose handler, once called, blocks on a
//     channel. Once the handler is running (outside the clock), the
//     clock runs from releasing the channel until Runner.Wait returns B
//     finished.
//
// Both are the time from an outside event (a signal sent, an action's
// work done) to the job settled as its submitter sees it: the signal's
// path (Signal's checks and its carrying: runner/inmem's applier,
// runner/zk's signal node, runner/kafka's restarter topic) against the
// result's (the worker's result carried to the job by the same runner).
// The report gives each one's median and p90 over the trials, the ratio
// of the medians and the median of the per-trial ratios, and whether the
// target (at most 1.5) is met.
//
// The runners: memory (runner/inmem on store.NewMemory), bolt (the same
// on store/bolt, fsync on, a file under -dir), zk (one runner/zk Runner
// on the ZooKeeper server the bench starts as for its zk engines, or
// -zk), kafka (a restarter and one worker Runner of runner/kafka, on the
// in-process kfake broker as for the Kafka engines, or -kafka; jobs are
// submitted, signalled and awaited through the restarter). Unlike the
// engines, the mode runs in the driver's own process (the broker
// included), which falls on both figures alike. Each runner first runs
// -sigwarm untimed pairs, then -sigtrials timed ones (default 200 on
// memory and bolt, 50 on zk and kafka). kafka sends its signals through
// the restarter, which owns the job's partition and applies the signal
// at once (the message is written to the restarter topic as well); kafkaw
// sends them through the worker Runner, as a process that does not own
// the job's partition would: the restarter applies them once it reads
// the message.

// sigRunners are the runners -signals measures, in order.
var sigRunners = []string{"memory", "bolt", "zk", "kafka", "kafkaw"}

// sigOptions are -signals' settings.
type sigOptions struct {
	Runners []string // of sigRunners
	Trials  int      // timed pairs per runner; 0 for the defaults
	Warm    int      // untimed pairs before them
	Dir     string
	ZK      string // -zk, or "" to start a server
	Kafka   string // -kafka, or "" to start kfake
	ZKRoot  string
	Prefix  string // the Kafka topics' prefix start
}

// sigTrials is the default count of timed pairs on runner name.
func sigTrials(name string) int {
	if name == "zk" || strings.HasPrefix(name, "kafka") {
		return 50
	}
	return 200
}

// sigRunner is what the mode needs of a runner.
type sigRunner interface {
	submitWaiter
	signaller
}

// signaller sends signals: a runner, or for kafkaw a worker Runner.
type signaller interface {
	Signal(ctx context.Context, id job.ID, name, sigID string, payload json.RawMessage) error
}

// sigSetup is one runner ready to measure: its runner, the store that
// tells when a wait is running, and what stops them.
type sigSetup struct {
	About string
	R     sigRunner
	Sig   signaller // where signals are sent: R, or another Runner
	Load  func(context.Context, job.ID) (job.Job, error)
	Close func() error
}

// gate is the action of job B: its handler hands the bench a channel and
// blocks until the bench closes it.
type gate struct{ entered chan chan struct{} }

func (g gate) handle(ctx context.Context, _ job.Action) ([]byte, error) {
	release := make(chan struct{})
	select {
	case g.entered <- release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	select {
	case <-release:
		return nil, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// sigResult is the figures of one runner.
type sigResult struct {
	Runner, About  string
	Signal, Result []time.Duration // per trial, in order
}

// signalsMain runs -signals and prints its table on stdout.
func signalsMain(o sigOptions, stdout, progress io.Writer) error {
	cfg := config{Dir: o.Dir, Progress: progress, Notes: progress}
	var servers []string
	if slices.Contains(o.Runners, "zk") {
		stop, err := cfg.startZK(o.ZK, false)
		if err != nil {
			return err
		}
		defer stop()
		servers = cfg.ZK
	}
	if slices.Contains(o.Runners, "kafka") || slices.Contains(o.Runners, "kafkaw") {
		stop, err := cfg.startKafka(o.Kafka, "")
		if err != nil {
			return err
		}
		defer stop()
	}
	var res []sigResult
	for _, name := range o.Runners {
		trials := o.Trials
		if trials == 0 {
			trials = sigTrials(name)
		}
		r, err := sigRun(name, trials, o, servers, cfg.Kafka)
		if err != nil {
			return fmt.Errorf("-signals on %s: %w", name, err)
		}
		if progress != nil {
			fmt.Fprintf(progress, "signals on %s: %d trials, signal median %s, result median %s\n",
				name, trials, fmtDur(medianDur(r.Signal)), fmtDur(medianDur(r.Result)))
		}
		res = append(res, r)
	}
	sigReport(stdout, res, cfg.ZKServer, cfg.KafkaBroker)
	return nil
}

// sigRun sets runner name up, measures trials pairs on it after o.Warm
// untimed ones, and stops it.
func sigRun(name string, trials int, o sigOptions, zk, kafka []string) (_ sigResult, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	g := gate{entered: make(chan chan struct{})}
	reg := runner.NewRegistry()
	if err := reg.Register("gate", g.handle); err != nil {
		return sigResult{}, err
	}
	tag := fmt.Sprintf("sig%d", time.Now().UnixNano()%1e6)
	var s sigSetup
	switch name {
	case "memory", "bolt":
		s, err = sigInmem(ctx, name, reg, filepath.Join(o.Dir, "baton-bench-"+tag+".db"))
	case "zk":
		s, err = sigZK(ctx, reg, zk, o.ZKRoot, o.ZKRoot+"/"+tag)
	case "kafka", "kafkaw":
		s, err = sigKafka(ctx, reg, kafka, o.Prefix+"."+tag, name == "kafkaw")
	default:
		err = fmt.Errorf("no runner %q (have %s)", name, strings.Join(sigRunners, ", "))
	}
	if err != nil {
		return sigResult{}, err
	}
	defer func() { err = errors.Join(err, s.Close()) }()
	if s.Sig == nil {
		s.Sig = s.R
	}
	out := sigResult{Runner: name, About: s.About}
	for i := range o.Warm + trials {
		a, b, err := sigPair(ctx, s, g, fmt.Sprintf("%s-%d", tag, i))
		if err != nil {
			return sigResult{}, fmt.Errorf("trial %d: %w", i+1, err)
		}
		if i >= o.Warm {
			out.Signal, out.Result = append(out.Signal, a), append(out.Result, b)
		}
	}
	return out, nil
}

// sigPair measures one signal round trip, then one result round trip.
func sigPair(ctx context.Context, s sigSetup, g gate, id string) (sig, res time.Duration, err error) {
	a, b := job.ID(id+"-a"), job.ID(id+"-b")
	if err := s.R.Submit(ctx, a, ast.Wait("go").Named("w")); err != nil {
		return 0, 0, err
	}
	for {
		j, err := s.Load(ctx, a)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return 0, 0, err
		}
		if err == nil && waitRunning(j) {
			break
		}
		if ctx.Err() != nil {
			return 0, 0, fmt.Errorf("job %s's wait not running: %w", a, ctx.Err())
		}
		time.Sleep(time.Millisecond)
	}
	start := time.Now()
	if err := s.Sig.Signal(ctx, a, "go", "s1", []byte(`{"ok":true}`)); err != nil {
		return 0, 0, err
	}
	if err := waitSucceeded(ctx, s.R, a); err != nil {
		return 0, 0, err
	}
	sig = time.Since(start)

	if err := s.R.Submit(ctx, b, ast.Act("gate", nil)); err != nil {
		return 0, 0, err
	}
	var release chan struct{}
	select {
	case release = <-g.entered:
	case <-ctx.Done():
		return 0, 0, fmt.Errorf("job %s's action not started: %w", b, ctx.Err())
	}
	start = time.Now()
	close(release)
	if err := waitSucceeded(ctx, s.R, b); err != nil {
		return 0, 0, err
	}
	return sig, time.Since(start), nil
}

// waitRunning reports whether j's node w is running.
func waitRunning(j job.Job) bool {
	running := false
	j.Walk(func(n job.NodeInfo) bool {
		if n.Name == "w" {
			running = n.Status == job.StatusRunning
			return false
		}
		return true
	})
	return running
}

// waitSucceeded waits for job id and checks that it succeeded.
func waitSucceeded(ctx context.Context, r submitWaiter, id job.ID) error {
	j, err := r.Wait(ctx, id)
	if err != nil {
		return err
	}
	if j.Status() != job.StatusSucceeded {
		return fmt.Errorf("job %s: %s, want succeeded", id, j.Status())
	}
	return nil
}

// sigInmem is runner/inmem on a memory store, or on store/bolt at path.
func sigInmem(ctx context.Context, name string, reg *runner.Registry, path string) (sigSetup, error) {
	var st store.Store = store.NewMemory()
	about := "runner/inmem on store.NewMemory"
	if name == "bolt" {
		b, err := bolt.Open(path, &bolt.Options{})
		if err != nil {
			return sigSetup{}, err
		}
		st, about = b, "runner/inmem on store/bolt, fsync on"
	}
	r, err := inmem.New(inmem.Options{WorkerOptions: runner.WorkerOptions{Registry: reg}, Store: st})
	if err != nil {
		return sigSetup{}, errors.Join(err, st.Close())
	}
	runErr := make(chan error, 1)
	go func() { runErr <- r.Run(ctx) }()
	return sigSetup{About: about, R: r, Load: st.Load, Close: func() error {
		err := errors.Join(r.Close(), <-runErr, st.Close())
		if name == "bolt" {
			err = errors.Join(err, os.Remove(path))
		}
		return err
	}}, nil
}

// sigZK is one runner/zk Runner under root (a child of parent, made if
// missing) on servers.
func sigZK(ctx context.Context, reg *runner.Registry, servers []string, parent, root string) (_ sigSetup, err error) {
	admin, err := dialZK(ctx, servers)
	if err != nil {
		return sigSetup{}, err
	}
	cleanup := func() error { return admin.cleanup(root) }
	if err := admin.ensure(parent); err != nil {
		return sigSetup{}, errors.Join(err, cleanup())
	}
	st, err := zkrunner.Open(ctx, zkrunner.Config{Servers: servers, Root: root, SessionTimeout: zkSession})
	if err != nil {
		return sigSetup{}, errors.Join(err, cleanup())
	}
	r, err := zkrunner.New(zkrunner.Options{WorkerOptions: runner.WorkerOptions{Name: "w0", Registry: reg,
		Logger: slog.New(slog.DiscardHandler)}, Store: st})
	if err != nil {
		return sigSetup{}, errors.Join(err, st.Close(), cleanup())
	}
	runErr := make(chan error, 1)
	go func() { runErr <- r.Run(ctx) }()
	s := sigSetup{About: "one runner/zk Runner", R: r, Load: st.Load, Close: func() error {
		return errors.Join(r.Close(), <-runErr, st.Close(), cleanup())
	}}
	for {
		ws, err := st.Workers(ctx)
		if err != nil {
			return sigSetup{}, errors.Join(err, s.Close())
		}
		if len(ws) == 1 {
			return s, nil
		}
		if ctx.Err() != nil {
			return sigSetup{}, errors.Join(fmt.Errorf("the worker did not announce itself: %w", ctx.Err()), s.Close())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// sigKafka is a runner/kafka restarter and one worker under prefix on
// brokers, their groups stable and the state partitions claimed. Jobs
// are submitted and awaited through the restarter; signals are sent
// through it too, or through the worker with viaWorker.
func sigKafka(ctx context.Context, reg *runner.Registry, brokers []string, prefix string, viaWorker bool) (_ sigSetup, err error) {
	adm := newKafkaAdmin(brokers)
	cfg := kafkarunner.Config{Brokers: brokers, Prefix: prefix, Logger: slog.New(slog.DiscardHandler)}
	var stores []*kafkarunner.Store
	var runners []*kafkarunner.Runner
	runErrs := make(chan error, 2)
	closeAll := func() error {
		var err error
		for i := len(runners) - 1; i >= 0; i-- {
			err = errors.Join(err, runners[i].Close(), <-runErrs)
		}
		for _, st := range stores {
			err = errors.Join(err, st.Close())
		}
		return errors.Join(err, adm.cleanup(prefix))
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, closeAll())
		}
	}()
	for _, role := range []kafkarunner.Role{kafkarunner.RoleRestarter, kafkarunner.RoleWorker} {
		st, err := kafkarunner.Open(ctx, cfg)
		if err != nil {
			return sigSetup{}, err
		}
		stores = append(stores, st)
		r, err := kafkarunner.New(kafkarunner.Options{WorkerOptions: runner.WorkerOptions{Name: role.String(), Registry: reg,
			Logger: cfg.Logger}, Store: st, Role: role})
		if err != nil {
			return sigSetup{}, err
		}
		runners = append(runners, r)
		go func() { runErrs <- r.Run(ctx) }()
	}
	if err := adm.waitStable(ctx, prefix+".restarters", 1, stores[0].Partitions()); err != nil {
		return sigSetup{}, err
	}
	if err := adm.waitStable(ctx, prefix+".workers", 1, stores[0].Config().ActionPartitions); err != nil {
		return sigSetup{}, err
	}
	if err := adm.waitClaims(ctx, prefix+".state", stores[0].Partitions()); err != nil {
		return sigSetup{}, err
	}
	s := sigSetup{About: "runner/kafka: a restarter and one worker Runner; signals sent through the restarter, which owns the job's partition and applies them itself",
		R: runners[0], Load: stores[0].Load, Close: closeAll}
	if viaWorker {
		s.Sig = runners[1]
		s.About = "runner/kafka as kafka, but signals sent through the worker Runner: a message on the restarter topic, read and applied by the restarter"
	}
	return s, nil
}

// medianDur is the median of ds.
func medianDur(ds []time.Duration) time.Duration {
	return time.Duration(median(durFloats(ds)))
}

// p90Dur is the 90th percentile of ds (nearest rank).
func p90Dur(ds []time.Duration) time.Duration {
	s := slices.Sorted(slices.Values(ds))
	i := (len(s)*9+9)/10 - 1
	return s[max(i, 0)]
}

// sigTarget is issue 19's: a signal round trip within 1.5x of a result
// round trip on the same runner.
const sigTarget = 1.5

// sigReport prints one line per runner: trials, each figure's median and
// p90, the ratios and the target's check.
func sigReport(w io.Writer, res []sigResult, zkServer, broker string) {
	fmt.Fprintf(w, "Signal round trip (Signal called -> Wait returns the wait's job) against result round trip\n"+
		"(a running action's handler released -> Wait returns its job), interleaved per trial; %s\n", machine())
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "runner\ttrials\tsignal med\tsignal p90\tresult med\tresult p90\tratio of medians\tpaired ratio\ttarget <=1.5x\t")
	for _, r := range res {
		paired := median(pairedRatios(durFloats(r.Signal), durFloats(r.Result)))
		sm, rm := medianDur(r.Signal), medianDur(r.Result)
		ratio := float64(sm) / float64(rm)
		verdict := "met"
		if ratio > sigTarget {
			verdict = "NOT met"
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%.2fx\t%.2fx\t%s\t\n", r.Runner, len(r.Signal),
			fmtDur(sm), fmtDur(p90Dur(r.Signal)), fmtDur(rm), fmtDur(p90Dur(r.Result)), ratio, paired, verdict)
	}
	tw.Flush()
	for _, r := range res {
		fmt.Fprintf(w, "  %s: %s\n", r.Runner, r.About)
	}
	if zkServer != "" {
		fmt.Fprintf(w, "  zk server: %s\n", zkServer)
	}
	if broker != "" {
		fmt.Fprintf(w, "  kafka broker: %s\n", broker)
	}
}
