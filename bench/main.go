// Command bench measures baton against plain-Go floors doing the same
// work.
//
//	go run ./bench                      every scenario and engine, text table
//	go run ./bench -format markdown     the same as Markdown tables
//	go run ./bench -only b -engines floor,memory -rounds 9
//	go run ./bench -only b -engines memory -rounds 1 -warm 300 -cpuprofile b.prof
//	                                    profile one scenario (go tool pprof -top)
//	go run ./bench -engines zk1,zk2,zk4,zkfloor1,zkfloor2,zkfloor4,zkraw1,zkraw2,zkraw4 -only a,b,c
//	                                    the ZooKeeper engines alone (see below)
//	go run ./bench -engines kafka1,kafka2,kafkaraw,kafkarawp -only a,b,c
//	                                    the Kafka engines (only when named; see below)
//	go run ./bench -serve               the HTTP API against its baselines (see below)
//	go run ./bench -page                the job page in chromium: load and live latency (see below)
//	go run ./bench -zkplace             runner/zk's placement against its baselines (zkplace.go)
//	go run ./bench -signals             a signal's round trip against a result's on each runner
//	                                    (bench/signals.go)
//	go run ./bench -maploop             maps and loops against the trees written out, and the
//	                                    cost per copy of maps of 1,000 to 100,000 (bench/maploop.go)
//	go run ./bench -rebalance           partitions moved and the pause when a Kafka worker joins,
//	                                    sticky against range (bench/rebalance.go)
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
//	a10, a100  a with 2,000 and 20,000 jobs (cost per action should match
//	   a's), on the floor and memory engines only, with 2 and 1 warm runs
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
// against. Every engine but the Kafka ones runs on every scenario it
// applies to by default, bolt on d included: it saves a few dozen large
// steps there, so a run takes well under a second (d gets fewer warm runs,
// see below).
//
// # ZooKeeper engines
//
// The ZooKeeper engines run against one standalone server that the
// program starts for the run (Debian's zookeeper package, through
// internal/zktest's Launch, with ZooKeeper's defaults of forceSync=yes,
// every write fsynced before it is acknowledged, and tickTime=2000; its
// data in a directory under -dir), or against the server given with -zk.
// Each of their runs makes its nodes under a fresh node below -zkroot and
// deletes them after, outside the clock. Each comes with 1, 2 and 4
// connections:
//
//   - zk1, zk2, zk4: runner/zk with 1, 2 or 4 worker Runners in the
//     child, each with its own Store (its own ZooKeeper session) and
//     -zkslots Workers (default 8: as many actions at once per Runner),
//     all on one root. Job i is submitted and awaited through Runner i
//     mod N. Each action costs a claim (one multi-op) and its share of
//     the transition that applies its result (one multi-op per result),
//     and each job a creation: 2 + jobs/actions writes per action.
//   - zkfloor1, zkfloor2, zkfloor4: the minimal reducer loop on
//     ZooKeeper, the floor of any engine that keeps its jobs there. Each
//     job is one znode, created when the job starts; one goroutine walks
//     the jobs' shapes in memory as the floor does, reads nothing from
//     ZooKeeper, and writes each transition with one setData at the
//     version it last wrote. Actions reach N x -zkslots worker goroutines
//     on a channel and their results come back on another, with no
//     ZooKeeper write (the workers are in the loop's process); each result
//     is applied by a transition of its own, one write in flight per job,
//     writes of different jobs at once through N x -zkslots writer
//     goroutines over N connections; a stage's next actions go out once
//     the write that ended it succeeded. The znode holds the job's
//     progress and the result just applied (about a hundred bytes): a
//     floor of writes, not an engine that could resume. 1 + jobs/actions
//     writes per action.
//   - zkraw1, zkraw2, zkraw4: the server's raw write rate: one
//     create+delete pair of a node of about 100 bytes per action of the
//     scenario, from N connections, each a synchronous client (one request
//     at a time). Its actions/s are pairs per second; 2 writes per pair.
//
// Every run of them counts the server's writes: it reads the zxid (srvr's
// "Zxid: 0x...") before the clock starts and once it has settled after
// the run (unchanged for 100ms), and the difference is the number of
// transactions the server applied, failed ones included (a multi-op whose
// version check fails still takes a zxid and is logged). zkraw and zkfloor
// check the counting: exactly 2 per pair, exactly one per transition.
// srvr's "Received" counts the requests the server got over the same
// span: less the writes, that is the reads (sessions' pings included).
//
// With one worker, runner/zk's count is the theory's. With several, it
// is more, for two reasons the breakdown shows: every worker lists the
// queue and claims entries in the same order (by name), so workers race
// for the same entry and the losers' claims fail, a write each ("rest");
// and the results of one job applied by several workers at once conflict
// on its record's compare-and-swap, a failed write each, reloaded and
// retried ("failed commits"), and a worker that still conflicts after
// runner.EngineOptions' retries hands its action back to be run again
// ("re-runs").
// runner/zk's writes are broken down with its hooks (actions started:
// successful claims; steps: committed transitions) and its log (each
// "commit conflict; reloading" is a failed commit): the rest are claims
// lost to another worker and housekeeping. runner/zk may run an action
// more than once (a worker hands an action back when it cannot apply its
// result), so its check after each run wants every action run and counts
// the calls beyond one per action.
//
// They are slow (every action is one or more fsynced writes): they get
// -zkrounds rounds (default 3: they run in the scenario's first three
// rounds) and -zkwarm warm runs per process (default 2), and skip
// scenarios of more than -zkmax actions (default 10,000, so d is left
// out, saying why). When ZooKeeper is not installed and the engines were
// not named with -engines, they are left out, saying so.
//
// # Kafka engines
//
// The Kafka engines run only when named with -engines: on two cores,
// scenarios a to c take about four minutes on them (b alone is a
// thousand actions one after the other, several milliseconds each), and
// the default run must stay quick. They run against one broker for the
// whole run: by default an in-process one (kfake, franz-go's fake Kafka
// broker: one node, records in memory, the real wire protocol) that the
// driver starts in its own process on 127.0.0.1, so that the broker is a
// process of its own as in a deployment; or the broker given with -kafka.
// kfake is not Apache Kafka: its figures say how runner/kafka compares
// with kafka-go itself on the same broker, not what a real cluster
// would do. Each run makes its topics under a fresh prefix (-kafkaprefix,
// then the engine, the scenario, the child's process ID and the run),
// and deletes them and its groups after, outside the clock.
//
//   - kafka1, kafka2: runner/kafka deployed as a user would: one
//     restarter Runner (Role restarter) and 1 or 2 worker Runners (Role
//     worker, each with -kafkaslots Workers, default 8, runner/kafka's
//     default), all in the child process, each on a Store of its own (its
//     own connections), with runner/kafka's defaults otherwise (12
//     partitions for the restarter and state topics, 6 per action topic).
//     Jobs are submitted and awaited through the restarter, which owns
//     every partition: Submit hands a job to its partition's loop (no
//     message), and Wait is woken by the restarter's own writes; results
//     go from the workers to the restarter through the restarter topic.
//     Before the clock starts, both consumer groups are stable with all
//     their members and partitions, every state partition holds the
//     restarter's claim, and probe jobs (one action each, payload n -1,
//     which the handler tells apart and does not count) have run until
//     every worker ran one: every Runner has dialed its connections and
//     serves its partitions. runner/kafka cannot run d: a submit is one
//     message, and d's workflow (about 5.2 MB encoded) is over its
//     MaxMessageBytes (1,000,000 by default, about the broker's default
//     max.message.bytes), so it is left out, saying why.
//   - kafkaraw: kafka-go's raw produce-to-consume round trip on the same
//     broker, one per action of the scenario, one in flight: produce a
//     message of about 100 bytes and wait for its acks from all in-sync
//     replicas (RequiredAcks all, as runner/kafka asks), read it back
//     with a partition reader (no group: kafka-go's quickest way to
//     consume; MinBytes 1, MaxWait 250ms as runner/kafka's readers), then
//     the next. The Writer has BatchSize 1, so each write goes out at once:
//     with the default BatchSize, a lone message waits for BatchTimeout
//     (1ms set, about 1.5ms measured here, which made the round trip
//     about eight times slower). Its actions/s are round trips per second.
//   - kafkarawp: the same round trip with -kafkaslots in flight: as many
//     goroutines, each doing its round trips one after the other through
//     one shared Writer (BatchSize -kafkaslots, BatchTimeout 1ms: a batch
//     goes out once every round trip in flight has put its message in it,
//     or 1ms after its first) and one partition reader.
//
// Every run counts the messages produced to its topics (restarter, state,
// stops and action topics, or the raw topic) from the broker: it reads the
// end offsets of every partition of every topic under its prefix before
// the clock starts (once they have not moved for 100ms) and once they have
// settled after the run (runner/kafka writes a job's head without waiting
// for it), and the difference is the records the broker appended.
// Requests that append no record (fetches, offset commits, heartbeats)
// are not counted. Messages per action are that over the scenario's
// actions, broken down by topic; the report cross-checks the broker's
// counts with runner/kafka's own: in every run the action topic and the
// restarter topic should each get exactly one message per handler call,
// as many as the hooks saw actions start. A run where they did not lists
// the keys produced twice, with their offsets and produce times.
// runner/kafka's debug log is watched while the clock runs: consumer group
// generations, restarter partitions taken over, and kafka-go's errors
// (which kafka-go retries: a reader's fetch that timed out reconnects)
// are counted and reported.
//
// The target of runner/kafka (issue 9): actions per second at least a
// third of the raw round-trip rate divided by its messages per action.
// The raw rate is kafkaraw's, one round trip in flight, on the same
// scenario in the same run: the produce-to-consume round trip,
// and a latency: each message of an action's chain is one such round
// trip. kafkarawp's rate depends on how many are in flight and on the
// Writer's batch settings (with 8 in flight, from about 3,000 to over
// 20,000 a second here as those change); the report gives the same check
// against it for reference, not as the target.
//
// The Kafka engines get -kafkarounds rounds (default 3) and -kafkawarm
// warm runs per process (default 2), and skip scenarios of more than
// -kafkamax actions (default 10,000: d, on which the raw engines would
// take minutes with runner/kafka not there to compare).
//
// # The HTTP API (-serve)
//
// -serve measures the HTTP API instead of the engines (only when asked:
// -rounds, -warm, -scale, -dir, -format and -q apply to it, other flags
// are refused). Its server is package server as 'baton serve' ships it:
// server.New wired as 'baton serve' wires it: runner/inmem with 4
// workers behind server.Local, a write token, one JSON log line per
// request (a slog JSON handler on a file), metrics (package metrics on a
// registry of its own: the runner's hooks, the store wrapper, the
// middleware inside the server, /metrics served by it), a live.Hub
// notified at each step, server.HTTPServer with 'baton serve's limits,
// on 127.0.0.1, called through package client by 8 goroutines at once. Every figure runs in a fresh child per round, the
// rounds interleaved (a round runs every figure once, in order); a child
// makes a cold run, then -warm runs (default 5) whose median is the
// round's figure; the report gives medians over rounds, and ratios
// paired by round. Baselines, in the same run: (a) the Go API in the same
// process (runner/inmem's Submit, which waits for nothing more than the
// submit; store Load and api.SummaryOf), (c) a bare net/http handler on
// loopback that reads the body and writes a fixed JSON answer, called
// through the same client.
//
//	submit bolt     400 submits of a one-action job, runner/inmem on store/bolt (a file, fsync on): HTTP over (a), at least 0.8x
//	submit memory   2,000 the same on store.NewMemory: HTTP over (a) at least 0.04x, over (c) at least 0.5x
//	status          4,000 GET /api/v1/jobs/{id}?nodes=false of a job of 10 actions on memory: over (c) at least 0.6x, over (a) 0.04x
//	status flat     the same of a job of 100,000 actions: at most 2x the time of the 10's
//	list flat       GET /api/v1/jobs (first page, 100 jobs) of 100,000 jobs stored: at most 2x the time with 1,000
//	events          100 streams on one job of runner/inmem, a step every 110ms: from Hooks.Step to the
//	                step event read by each client, median at most 50ms, p99 at most 250ms
//	idle            1,000 streams opened on a running job and left idle: at most 50 MB more resident memory
//
// The event figures are measured on server/live's Hub directly (live.New
// and ServeJob on an httptest server on loopback, notified by the
// runner's Hooks.Step), not through the server's event route, which was
// being wired when this mode was written; the report says so. The idle
// streams' clients are raw sockets in the same process, which read up to
// the snapshot and then nothing; the memory is the process's VmRSS
// (Linux), measured after a garbage collection before and after opening
// them.
//
// # The job page (-page)
//
// -page measures the job page of the server in a real browser instead of
// the engines (only when asked: -rounds, -scale, -dir, -format and -q
// apply to it, other flags are refused). Its server is server.New as
// 'baton serve' wires it (a live.Hub notified by runner/inmem's
// Hooks.Step, 4 workers, store/bolt with fsync on, no tokens) on
// 127.0.0.1, with one handler of the bench's own beside it: the floor.
// The browser is chromium through chromedp (internal/browsertest's
// Launch: $BATON_CHROMIUM or chromium on PATH, headless). All of it runs
// in this one process and the browser's.
//
//	floor   a static HTML page of the 1,000-node job's nodes, one line each (kind, action,
//	        payload, state), its mark set by a script at the end of its body
//	page    /jobs/{id} of a settled par of 10 seqs of 99 actions (1,001 nodes; a third of
//	        the seqs fail two thirds of the way, the rest of them idle): at most 2x the
//	        floor (paired by round) and at most 500ms
//	big     /jobs/{id} of a settled par of 100,000 actions: at most 3s
//	live    a seq of gate actions with 100 event streams open on the job and its page
//	        open: each action is let end 110ms after the last step; from Hooks.Step to
//	        the page's #job data-version showing that version (a MutationObserver
//	        stamps performance.timeOrigin + performance.now()), 50 steps: median at
//	        most 100ms, p99 at most 500ms
//
// A page load is timed from the navigation's start to the page's own
// performance mark "baton:drawn" (its script sets it once the tree and
// the timeline are drawn), read from performance.getEntriesByName in a
// fresh tab of a new browser context (nothing cached), -rounds times
// (default 9 here), the figures interleaved. The report gives the median,
// p90, smallest and largest of each, the page's ratio to the floor paired
// by round, and the targets' lines. The browser's clock and Go's are the
// same machine's wall clock: the latency is their difference.
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
// the round's "warm" figure. Each run also records the CPU time the
// child used (user and system, from getrusage), which, unlike wall time,
// does not grow when other processes share the machine; the report gives
// it beside the wall time for a10 and a100 against a. After every run the
// child checks that the handler ran once per action, each time with that
// action's payload. It prints its figures as one JSON line on stdout; a
// child that fails or prints anything else stops the program with an
// error naming the scenario, the engine and the child's stderr.
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
// per step. With the ZooKeeper engines, a fourth gives for each of them
// and each scenario: the warm time, actions per second, writes per action
// counted against the theory, the time over zkfloor with as many
// connections (paired by round), and the check of the throughput against
// the raw write rate: actions/s at least half of zkraw's writes/s (same
// connections) divided by the engine's writes per action. A fifth breaks
// runner/zk's writes down. The targets checked for runner/zk: at most 4
// writes per action, within 4x of zkfloor on a to c, and that throughput.
// With the Kafka engines, a sixth table gives for each of them and each
// scenario: the warm time, actions per second (round trips per second for
// the raw ones), messages per action counted by the broker, kafkaraw's
// rate, the target and its check, and the same against kafkarawp; a
// seventh breaks runner/kafka's messages down by topic.
//
// Other flags: -only and -engines pick scenarios and engines; -workers
// sets the runner's Workers and the floor's worker count (default 2 per
// CPU); -scale multiplies the scenarios' sizes (for quick checks); -dir
// is where the durable engines make their files (a tmpfs there makes
// fsync free); -q drops the progress lines on stderr; -zk, -zkroot,
// -zkslots, -zkrounds, -zkwarm and -zkmax set up the ZooKeeper engines,
// and -kafka, -kafkaprefix, -kafkaslots, -kafkarounds, -kafkawarm and
// -kafkamax the Kafka engines (see above). -cpuprofile and
// -memprofile are passed to the child of the first round of each
// scenario and engine, and cover its cold and warm runs; with more than
// one scenario or engine, the file name gets "-<scenario>-<engine>" before
// its extension. With the in-process Kafka broker, -cpuprofile also makes
// the driver profile its own process, the broker's, over the whole run,
// to the file named with "-broker" before its extension. The program says
// on stderr where each profile went.
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
	if spec := os.Getenv(serveChildEnv); spec != "" {
		os.Exit(serveChildMain(spec, os.Stdout, os.Stderr))
	}
	if spec := os.Getenv(placeChildEnv); spec != "" {
		os.Exit(placeChildMain(spec, os.Stdout, os.Stderr))
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
	only := fs.String("only", "", "comma-separated scenarios to run (a,b,c,d,a10,a100); empty runs all")
	engines := fs.String("engines", strings.Join(defaultEngineNames(), ","), "comma-separated engines to run (the Kafka engines only when named)")
	format := fs.String("format", "text", "output format: text or markdown")
	workers := fs.Int("workers", runtime.NumCPU()*2, "inmem Workers, and the floor's worker goroutines")
	scale := fs.Float64("scale", 1, "multiply every scenario's size by this (at least 1 job and 1 action)")
	dir := fs.String("dir", os.TempDir(), "directory for the durable engines' files")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile of a child process (see the package doc) to this file")
	memprofile := fs.String("memprofile", "", "write an allocation profile of a child process to this file")
	quiet := fs.Bool("q", false, "do not print progress to stderr")
	zkAddr := fs.String("zk", "", "host:port[,host:port] of a ZooKeeper server for the zk engines; empty starts one (forceSync on) for the run")
	zkRoot := fs.String("zkroot", zkBenchRoot, "the node under which each run of the zk engines makes its own, deleted after it")
	zkSlots := fs.Int("zkslots", 8, "the zk engines' concurrency per connection: runner/zk's Workers per Runner, the zkfloor and zkraw goroutines per connection")
	zkRounds := fs.Int("zkrounds", 3, "rounds for the zk engines (they are slow)")
	zkWarm := fs.Int("zkwarm", 2, "warm runs per process for the zk engines")
	zkDrains := fs.Int("zkdrains", 20, "trials of -zkplace's drain figure")
	zkFigs := fs.String("zkfigs", strings.Join(placeFigures, ","), "the figures -zkplace measures, comma-separated")
	zkMax := fs.Int("zkmax", 10_000, "the zk engines skip scenarios of more actions than this (d has 100,000)")
	kafkaAddr := fs.String("kafka", "", "host:port[,host:port] of a Kafka broker for the Kafka engines; empty starts an in-process one (kfake) in the driver")
	kafkaPrefix := fs.String("kafkaprefix", kafkaBenchPrefix, "the start of the topic prefix each run of the Kafka engines makes its topics under (deleted after it)")
	kafkaSlots := fs.Int("kafkaslots", 8, "runner/kafka's Workers per worker Runner, and kafkarawp's round trips in flight")
	kafkaRounds := fs.Int("kafkarounds", 3, "rounds for the Kafka engines")
	kafkaWarm := fs.Int("kafkawarm", 2, "warm runs per process for the Kafka engines")
	kafkaMax := fs.Int("kafkamax", 10_000, "the Kafka engines skip scenarios of more actions than this (d has 100,000)")
	serve := fs.Bool("serve", false, "measure the HTTP API (package server as shipped) against its baselines instead of the engines (see the package doc)")
	page := fs.Bool("page", false, "measure the job page in chromium (page load and live latency) instead of the engines (see the package doc)")
	zkPlace := fs.Bool("zkplace", false, "measure runner/zk's placement (soft affinity and pins against none, placement.Decide against a listing) instead of the engines (see zkplace.go)")
	rebalance := fs.Bool("rebalance", false, "measure what a Kafka worker's join moves and pauses, sticky against range, instead of the engines (-rounds rounds, default 5)")
	signals := fs.Bool("signals", false, "measure a signal's round trip against a result's on each runner instead of the engines (see signals.go)")
	sigRunnerList := fs.String("sigrunners", strings.Join(sigRunners, ","), "the runners -signals measures, comma-separated")
	sigTrialCount := fs.Int("sigtrials", 0, "-signals' timed trials per runner (0: 200 on memory and bolt, 50 on zk and kafka)")
	sigWarm := fs.Int("sigwarm", 5, "-signals' untimed trials per runner before the timed ones")
	mapLoop := fs.Bool("maploop", false, "measure maps and loops against the trees written out on the memory engine instead of the engines (see maploop.go; -rounds, -warm, -scale, -workers, -format apply)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	enginesGiven := false
	fs.Visit(func(f *flag.Flag) { enginesGiven = enginesGiven || f.Name == "engines" })
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
	case *zkSlots < 1:
		return fmt.Errorf("-zkslots %d: want at least 1", *zkSlots)
	case *zkRounds < 1:
		return fmt.Errorf("-zkrounds %d: want at least 1", *zkRounds)
	case *zkWarm < 1:
		return fmt.Errorf("-zkwarm %d: want at least 1", *zkWarm)
	case !placeFiguresOK(*zkFigs):
		return fmt.Errorf("-zkfigs %q: want some of %s", *zkFigs, strings.Join(placeFigures, ","))
	case *zkDrains < 1:
		return fmt.Errorf("-zkdrains %d: want at least 1", *zkDrains)
	case *zkMax < 1:
		return fmt.Errorf("-zkmax %d: want at least 1", *zkMax)
	case !strings.HasPrefix(*zkRoot, "/") || strings.HasSuffix(*zkRoot, "/"):
		return fmt.Errorf("-zkroot %q: want an absolute node path such as %s", *zkRoot, zkBenchRoot)
	case *kafkaSlots < 1:
		return fmt.Errorf("-kafkaslots %d: want at least 1", *kafkaSlots)
	case *kafkaRounds < 1:
		return fmt.Errorf("-kafkarounds %d: want at least 1", *kafkaRounds)
	case *kafkaWarm < 1:
		return fmt.Errorf("-kafkawarm %d: want at least 1", *kafkaWarm)
	case *kafkaMax < 1:
		return fmt.Errorf("-kafkamax %d: want at least 1", *kafkaMax)
	case !kafkaPrefixOK(*kafkaPrefix):
		return fmt.Errorf("-kafkaprefix %q: want 1 to 16 letters, digits, '.', '_' or '-'", *kafkaPrefix)
	}
	if *serve && *page {
		return errors.New("-serve and -page: pick one")
	}
	if *zkPlace {
		var progress io.Writer
		if !*quiet {
			progress = stderr
		}
		return zkPlaceMain(config{Dir: *dir, Progress: progress, ZKRoot: *zkRoot}, *zkAddr, placeOptions{Rounds: *zkRounds, Drains: *zkDrains, Figures: *zkFigs}, stdout)
	}
	if *signals {
		var progress io.Writer
		if !*quiet {
			progress = stderr
		}
		names := strings.Split(*sigRunnerList, ",")
		for _, n := range names {
			if !slices.Contains(sigRunners, n) {
				return fmt.Errorf("-sigrunners: no runner %q (have %s)", n, strings.Join(sigRunners, ","))
			}
		}
		if *sigTrialCount < 0 || *sigWarm < 0 {
			return errors.New("-sigtrials and -sigwarm: want at least 0")
		}
		return signalsMain(sigOptions{Runners: names, Trials: *sigTrialCount, Warm: *sigWarm, Dir: *dir,
			ZK: *zkAddr, Kafka: *kafkaAddr, ZKRoot: *zkRoot, Prefix: *kafkaPrefix}, stdout, progress)
	}
	if *mapLoop {
		var progress io.Writer
		if !*quiet {
			progress = stderr
		}
		exe, err := mapLoopExe()
		if err != nil {
			return err
		}
		return mapLoopMain(context.Background(), mapLoopOptions{Exe: exe, Rounds: *rounds, Warm: *warm, Scale: *scale,
			Workers: *workers, Dir: *dir}, *format, stdout, progress)
	}
	if *rebalance {
		roundsGiven := false
		fs.Visit(func(f *flag.Flag) { roundsGiven = roundsGiven || f.Name == "rounds" })
		if !roundsGiven {
			*rounds = 5
		}
		return rebalanceMain(*rounds, stdout, stderr, *quiet)
	}
	if *page {
		roundsGiven := false
		fs.Visit(func(f *flag.Flag) { roundsGiven = roundsGiven || f.Name == "rounds" })
		if !roundsGiven {
			*rounds = pageRounds
		}
		return pageMain(fs, pageConfig{Rounds: *rounds, Scale: *scale, Dir: *dir}, *format, *quiet, stdout, stderr)
	}
	if *serve {
		return serveMain(fs, serveConfig{Rounds: *rounds, Warm: *warm, Scale: *scale, Dir: *dir}, *format, *quiet, stdout, stderr)
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
		ZKSlots: *zkSlots, ZKRounds: *zkRounds, ZKWarm: *zkWarm, ZKMax: *zkMax, ZKRoot: *zkRoot,
		KafkaPrefix: *kafkaPrefix, KafkaSlots: *kafkaSlots, KafkaRounds: *kafkaRounds, KafkaWarm: *kafkaWarm, KafkaMax: *kafkaMax,
	}
	if !*quiet {
		cfg.Progress = stderr
	}
	if cfg.needsZK() {
		stop, err := cfg.startZK(*zkAddr, !enginesGiven)
		if err != nil {
			return err
		}
		defer stop()
	}
	if cfg.needsKafka() {
		brokerProfile := ""
		if *cpuprofile != "" {
			ext := filepath.Ext(*cpuprofile)
			brokerProfile = strings.TrimSuffix(*cpuprofile, ext) + "-broker" + ext
		}
		stop, err := cfg.startKafka(*kafkaAddr, brokerProfile)
		if err != nil {
			return err
		}
		defer stop()
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
			var names []string
			for _, s := range all {
				names = append(names, s.Name)
			}
			return nil, fmt.Errorf("-only: no scenario %q (have %s)", name, strings.Join(names, ", "))
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

	// The ZooKeeper engines': the server (ZK, described by ZKServer), the
	// node their runs make theirs under, their concurrency per connection,
	// rounds and warm runs, and the largest scenario they run.
	ZK       []string
	ZKServer string
	ZKRoot   string
	ZKSlots  int
	ZKRounds int
	ZKWarm   int
	ZKMax    int
	ZKNotes  []string // engines dropped, and why

	// The Kafka engines': the broker (Kafka, described by KafkaBroker),
	// the start of their runs' topic prefixes, runner/kafka's Workers per
	// worker Runner (and kafkarawp's round trips in flight), rounds, warm
	// runs, and the largest scenario they run.
	Kafka       []string
	KafkaBroker string
	KafkaPrefix string
	KafkaSlots  int
	KafkaRounds int
	KafkaWarm   int
	KafkaMax    int
}

// rounds is how many rounds e is measured in.
func (cfg *config) rounds(e engine) int {
	if e.ZK > 0 {
		return cfg.ZKRounds
	}
	if e.KafkaKind != "" {
		return cfg.KafkaRounds
	}
	return cfg.Rounds
}

// warm is how many warm runs a child of e makes on sc.
func (cfg *config) warm(e engine, sc scenario) int {
	if e.ZK > 0 {
		return cfg.ZKWarm
	}
	if e.KafkaKind != "" {
		return cfg.KafkaWarm
	}
	return sc.Warm
}

// skip says why the ZooKeeper or Kafka engine e is not measured on sc,
// or "".
func (cfg *config) skip(e engine, sc scenario) string {
	if e.ZK > 0 && sc.Actions() > cfg.ZKMax {
		return fmt.Sprintf("%s actions, more than -zkmax %s: a run takes half a minute or more, and the floors' several minutes "+
			"(one fsynced write per action, at about a thousand a second), with minutes more to delete the nodes; -zkmax %d runs it",
			fmtCount(int64(sc.Actions())), fmtCount(int64(cfg.ZKMax)), sc.Actions())
	}
	if e.KafkaKind != "" {
		return cfg.kafkaSkip(e, sc)
	}
	return ""
}

// measured reports whether e is measured on sc.
func (cfg *config) measured(e engine, sc scenario) bool {
	return e.appliesTo(sc) && cfg.skip(e, sc) == ""
}

// run measures every scenario: for each, as many rounds as its engines
// have (Rounds, ZKRounds for the ZooKeeper engines), each running every
// engine that applies and has rounds left once, in its own child process.
func run(ctx context.Context, cfg config) (*report, error) {
	rep := &report{Machine: machine(), Rounds: cfg.Rounds, Workers: cfg.Workers, Scenarios: cfg.Scenarios,
		ZKServer: cfg.ZKServer, ZKSlots: cfg.ZKSlots, ZKRounds: cfg.ZKRounds, ZKWarm: cfg.ZKWarm,
		KafkaBroker: cfg.KafkaBroker, KafkaSlots: cfg.KafkaSlots, KafkaRounds: cfg.KafkaRounds, KafkaWarm: cfg.KafkaWarm}
	rep.Notes = append(rep.Notes, cfg.ZKNotes...)
	start := time.Now()
	pairs := 0
	for _, sc := range cfg.Scenarios {
		var skipped [][]string // runs of engines skipped for the same reason
		var why []string
		for _, e := range cfg.Engines {
			if cfg.measured(e, sc) {
				pairs++
			} else if w := cfg.skip(e, sc); w != "" && e.appliesTo(sc) {
				if len(skipped) == 0 || why[len(why)-1] != w {
					skipped, why = append(skipped, nil), append(why, w)
				}
				skipped[len(skipped)-1] = append(skipped[len(skipped)-1], e.Name)
			}
		}
		for i := range skipped {
			note := fmt.Sprintf("scenario %s not run on %s: %s", sc.Name, strings.Join(skipped[i], ", "), why[i])
			rep.Notes = append(rep.Notes, note)
			if cfg.Progress != nil {
				fmt.Fprintln(cfg.Progress, note)
			}
		}
	}
	for _, sc := range cfg.Scenarios {
		var cells []*cell
		rounds := 0
		for _, e := range cfg.Engines {
			if cfg.measured(e, sc) {
				cells = append(cells, &cell{Scenario: sc, Engine: e})
				rounds = max(rounds, cfg.rounds(e))
			}
		}
		if len(cells) == 0 {
			continue
		}
		for round := range rounds {
			for _, c := range cells {
				n := cfg.rounds(c.Engine)
				if round >= n {
					continue
				}
				sp := childSpec{Scenario: sc, Engine: c.Engine.Name, Warm: cfg.warm(c.Engine, sc), Workers: cfg.Workers, Dir: cfg.Dir}
				if c.Engine.ZK > 0 {
					sp.ZK, sp.ZKRoot, sp.ZKSlots = cfg.ZK, cfg.ZKRoot, cfg.ZKSlots
				}
				if c.Engine.KafkaKind != "" {
					sp.Kafka, sp.KafkaPrefix, sp.KafkaSlots = cfg.Kafka, cfg.KafkaPrefix, cfg.KafkaSlots
				}
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
					extra := ""
					if res.Cold.ZK != nil {
						extra = fmt.Sprintf(" writes/action %s", fmtFloat(medianOf(res.Warm, writesOf)/float64(sc.Actions())))
					}
					if res.Cold.Kafka != nil {
						extra = fmt.Sprintf(" messages/action %s", fmtFloat(medianOf(res.Warm, messagesOf)/float64(sc.Actions())))
					}
					fmt.Fprintf(cfg.Progress, "%s round %d/%d  %-13s cold %-8s warm %-8s%s  (%s)\n",
						sc.Name, round+1, n, c.Engine.Name, fmtDur(res.Cold.Wall),
						fmtDur(time.Duration(medianOf(res.Warm, wallOf))), extra, time.Since(start).Round(time.Second))
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
