package main

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"time"
)

// engine runs a scenario once and measures it. Run does its own setup and
// teardown outside the measured part (see meter).
type engine struct {
	Name    string
	About   string // one line for the report's legend
	Handler bool   // runs the typed handler once per action (checked after each run)
	// AtLeastOnce: the handler may run an action more than once (a
	// worker hands an action back when it cannot apply its result): the
	// check after each run wants every action run, more calls allowed.
	AtLeastOnce bool
	Steps       bool   // saves job states, counted in sample.Steps
	SeqOnly     bool   // only measured on sequences (scenario b)
	Curve       bool   // also measured on the larger copies of a scenario (a10, a100)
	ZK          int    // ZooKeeper connections (workers) it uses; 0: none
	ZKKind      string // for ZK > 0: kindZK, kindZKFloor or kindZKRaw
	Kafka       int    // runner/kafka's worker Runners; 0 for the others
	KafkaKind   string // a Kafka engine's kind: kindKafka, kindKafkaRaw or kindKafkaRawP; "" for the others
	Run         func(ctx context.Context, sc scenario, run int, o runOpts) (sample, error)
}

// runOpts is what an engine needs besides the scenario.
type runOpts struct {
	Workers int      // worker goroutines: the runner's, and the floor's
	Dir     string   // where durable engines make their files
	ZK      []string // the ZooKeeper server's addresses, for the ZooKeeper engines
	ZKRoot  string   // the node under which each of their runs makes its own
	Slots   int      // the ZooKeeper engines' concurrency per connection (runner/zk's Workers)

	Kafka       []string // the Kafka broker's addresses, for the Kafka engines
	KafkaPrefix string   // the start of each of their runs' topic prefix
	KafkaSlots  int      // runner/kafka's Workers per worker Runner; kafkarawp's round trips in flight
}

// allEngines returns every engine, in the order they are measured.
func allEngines() []engine {
	out := append([]engine{floorEngine(), spawnEngine(), memoryEngine(), boltEngine(), fsyncEngine(), bboltEngine()}, zkEngines()...)
	return append(out, kafkaEngines()...)
}

// engineNames are the names of allEngines, in order.
func engineNames() []string {
	var out []string
	for _, e := range allEngines() {
		out = append(out, e.Name)
	}
	return out
}

// defaultEngineNames are the engines measured when -engines is not given:
// all but the Kafka ones, which run only when named (see the package
// doc).
func defaultEngineNames() []string {
	var out []string
	for _, e := range allEngines() {
		if e.KafkaKind == "" {
			out = append(out, e.Name)
		}
	}
	return out
}

// findEngine returns the engine called name.
func findEngine(name string) (engine, error) {
	es := allEngines()
	i := slices.IndexFunc(es, func(e engine) bool { return e.Name == name })
	if i < 0 {
		return engine{}, fmt.Errorf("no engine %q (have %s)", name, strings.Join(engineNames(), ", "))
	}
	return es[i], nil
}

// appliesTo reports whether e is measured on sc.
func (e engine) appliesTo(sc scenario) bool {
	return (!e.SeqOnly || sc.Shape == shapeSeq) && (sc.Of == "" || e.Curve)
}

// sample is one measured run.
type sample struct {
	Wall    time.Duration `json:"ns"`
	CPU     time.Duration `json:"cpu_ns"`  // CPU time of the process during the run (user and system); 0 if unknown
	Mallocs uint64        `json:"mallocs"` // runtime.MemStats.Mallocs during the run
	Bytes   uint64        `json:"bytes"`   // runtime.MemStats.TotalAlloc during the run
	Steps   int64         `json:"steps"`   // saved job states (creations included), for baton
	Calls   int64         `json:"calls"`   // handler calls
	Sum     int64         `json:"sum"`     // sum of the N the handler decoded
	Store   *storeStats   `json:"store,omitempty"`
	ZK      *zkStats      `json:"zk,omitempty"`    // the ZooKeeper engines' counts
	Kafka   *kafkaStats   `json:"kafka,omitempty"` // the Kafka engines' counts
}

// storeStats are a durable store's counters over one run.
type storeStats struct {
	WriteTxns    int64 `json:"write_txns"` // each one an fsync
	BytesWritten int64 `json:"bytes"`      // bytes of records put
	PageBytes    int64 `json:"page_bytes"` // bytes of pages the commits wrote
}

// meter measures wall time, CPU time and allocations between start and
// stop.
type meter struct {
	ms    runtime.MemStats
	start time.Time
	cpu   time.Duration
}

// startMeter collects garbage left by earlier runs, so that runs start
// alike, and starts measuring.
func startMeter() *meter {
	runtime.GC()
	m := &meter{}
	runtime.ReadMemStats(&m.ms)
	m.cpu, _ = cpuTime()
	m.start = time.Now()
	return m
}

func (m *meter) stop() sample {
	wall := time.Since(m.start)
	cpu, ok := cpuTime()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	s := sample{Wall: wall, Mallocs: ms.Mallocs - m.ms.Mallocs, Bytes: ms.TotalAlloc - m.ms.TotalAlloc}
	if ok {
		s.CPU = cpu - m.cpu
	}
	return s
}

// settle gives goroutines just started (the runner's workers, the floor's)
// time to start waiting for work, so that the clock starts on an idle,
// ready engine.
func settle() { time.Sleep(2 * time.Millisecond) }

// measureRun runs sc once on e and checks the handler's work: every action
// once, with its own payload.
func measureRun(ctx context.Context, e engine, sc scenario, run int, o runOpts) (sample, error) {
	calls0, sum0 := handlerCalls.Load(), handlerSum.Load()
	s, err := e.Run(ctx, sc, run, o)
	if err != nil {
		return s, err
	}
	s.Calls, s.Sum = handlerCalls.Load()-calls0, handlerSum.Load()-sum0
	if !e.Handler {
		return s, nil
	}
	if e.AtLeastOnce && s.Calls >= int64(sc.Actions()) && s.Sum >= sc.WantSum() {
		return s, nil
	}
	if s.Calls != int64(sc.Actions()) || s.Sum != sc.WantSum() {
		return s, fmt.Errorf("handler ran %d times with payloads adding up to %d, want %d and %d",
			s.Calls, s.Sum, sc.Actions(), sc.WantSum())
	}
	return s, nil
}
