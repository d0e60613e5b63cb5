package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"runtime/pprof"
	"strings"
)

// Every measured run happens in a child: the program runs itself again
// with childEnv set to a childSpec in JSON. The child runs the scenario
// 1+Warm times on one engine, prints one childResult as a JSON line on
// stdout and exits.

// childEnv is the environment variable that makes the program a child.
const childEnv = "BATON_BENCH_CHILD"

// childSpec is what one child measures.
type childSpec struct {
	Scenario    scenario `json:"scenario"`
	Engine      string   `json:"engine"`
	Warm        int      `json:"warm"`
	Workers     int      `json:"workers"`
	Dir         string   `json:"dir"`                   // for durable files; the child makes a directory in it
	ZK          []string `json:"zk,omitempty"`          // the ZooKeeper engines' server
	ZKRoot      string   `json:"zkroot,omitempty"`      // where their runs make their nodes
	ZKSlots     int      `json:"zkslots,omitempty"`     // their concurrency per connection
	Kafka       []string `json:"kafka,omitempty"`       // the Kafka engines' broker
	KafkaPrefix string   `json:"kafkaprefix,omitempty"` // where their runs' topic prefixes start
	KafkaSlots  int      `json:"kafkaslots,omitempty"`  // runner/kafka's Workers per worker; kafkarawp's round trips in flight
	CPUProfile  string   `json:"cpuprofile,omitempty"`
	MemProfile  string   `json:"memprofile,omitempty"`
}

// childResult is what a child measured: the first run in the process,
// and the runs after it.
type childResult struct {
	Scenario string   `json:"scenario"`
	Engine   string   `json:"engine"`
	Cold     sample   `json:"cold"`
	Warm     []sample `json:"warm"`
}

// childMain is the program as a child: spec is childEnv's value. It
// returns the exit code.
func childMain(spec string, stdout, stderr io.Writer) int {
	var sp childSpec
	if err := json.Unmarshal([]byte(spec), &sp); err != nil {
		fmt.Fprintf(stderr, "bench child: bad %s: %v\n", childEnv, err)
		return 2
	}
	res, err := runChild(context.Background(), sp)
	if err != nil {
		fmt.Fprintf(stderr, "bench child: %v\n", err)
		return 1
	}
	line, err := json.Marshal(res)
	if err != nil {
		fmt.Fprintf(stderr, "bench child: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "%s\n", line)
	return 0
}

// runChild measures what sp says in this process: one cold run, then
// sp.Warm warm runs.
func runChild(ctx context.Context, sp childSpec) (res childResult, err error) {
	e, err := findEngine(sp.Engine)
	if err != nil {
		return res, err
	}
	if sp.Warm < 1 {
		return res, fmt.Errorf("%d warm runs, want at least 1", sp.Warm)
	}
	dir, err := os.MkdirTemp(sp.Dir, "baton-bench-")
	if err != nil {
		return res, err
	}
	defer func() { err = errors.Join(err, os.RemoveAll(dir)) }()
	if sp.MemProfile != "" {
		runtime.MemProfileRate = 64 << 10
	}
	if sp.CPUProfile != "" {
		f, err := os.Create(sp.CPUProfile)
		if err != nil {
			return res, err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return res, err
		}
		defer pprof.StopCPUProfile()
	}

	o := runOpts{Workers: sp.Workers, Dir: dir, ZK: sp.ZK, ZKRoot: sp.ZKRoot, Slots: sp.ZKSlots,
		Kafka: sp.Kafka, KafkaPrefix: sp.KafkaPrefix, KafkaSlots: sp.KafkaSlots}
	if e.ZK > 0 && (len(o.ZK) == 0 || o.ZKRoot == "" || o.Slots < 1) {
		return res, fmt.Errorf("engine %s needs a ZooKeeper server, a root and slots: got %q, %q, %d", e.Name, o.ZK, o.ZKRoot, o.Slots)
	}
	if e.KafkaKind != "" && (len(o.Kafka) == 0 || o.KafkaPrefix == "" || o.KafkaSlots < 1) {
		return res, fmt.Errorf("engine %s needs a Kafka broker, a prefix and slots: got %q, %q, %d", e.Name, o.Kafka, o.KafkaPrefix, o.KafkaSlots)
	}
	res = childResult{Scenario: sp.Scenario.Name, Engine: e.Name}
	for run := range 1 + sp.Warm {
		s, err := measureRun(ctx, e, sp.Scenario, run, o)
		if err != nil {
			return res, fmt.Errorf("run %d: %w", run+1, err)
		}
		if run == 0 {
			res.Cold = s
		} else {
			res.Warm = append(res.Warm, s)
		}
	}

	if sp.MemProfile != "" {
		f, err := os.Create(sp.MemProfile)
		if err != nil {
			return res, err
		}
		defer f.Close()
		if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
			return res, err
		}
	}
	return res, nil
}

// spawn runs the program at exe as a child measuring sp, and returns what
// it printed.
func spawn(ctx context.Context, exe string, sp childSpec) (childResult, error) {
	spec, err := json.Marshal(sp)
	if err != nil {
		return childResult{}, err
	}
	cmd := exec.CommandContext(ctx, exe)
	cmd.Env = append(os.Environ(), childEnv+"="+string(spec))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return childResult{}, fmt.Errorf("child failed (%v): %s", err, quoteOutput(stderr.Bytes()))
	}
	res, err := parseChild(stdout.Bytes(), sp)
	if err != nil {
		return childResult{}, fmt.Errorf("%w; child's stderr: %s", err, quoteOutput(stderr.Bytes()))
	}
	return res, nil
}

// parseChild reads a child's stdout: exactly one JSON line, for the
// scenario and engine of sp, with 1+sp.Warm positive times.
func parseChild(stdout []byte, sp childSpec) (childResult, error) {
	line := bytes.TrimSpace(stdout)
	if len(line) == 0 || bytes.ContainsRune(line, '\n') {
		return childResult{}, fmt.Errorf("child printed %s, want one JSON line", quoteOutput(stdout))
	}
	var res childResult
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&res); err != nil {
		return childResult{}, fmt.Errorf("child printed %s: %v", quoteOutput(stdout), err)
	}
	switch {
	case res.Scenario != sp.Scenario.Name || res.Engine != sp.Engine:
		return childResult{}, fmt.Errorf("child measured scenario %q on %q, want %q on %q",
			res.Scenario, res.Engine, sp.Scenario.Name, sp.Engine)
	case len(res.Warm) != sp.Warm:
		return childResult{}, fmt.Errorf("child made %d warm runs, want %d", len(res.Warm), sp.Warm)
	}
	for _, s := range append([]sample{res.Cold}, res.Warm...) {
		if s.Wall <= 0 {
			return childResult{}, fmt.Errorf("child printed a time of %v, want a positive one", s.Wall)
		}
	}
	return res, nil
}

// quoteOutput shows a child's output in an error message: quoted, and cut
// if long.
func quoteOutput(b []byte) string {
	s := strings.TrimSpace(string(b))
	if s == "" {
		return "nothing"
	}
	const limit = 2000
	if len(s) > limit {
		s = s[:limit] + "..."
	}
	return fmt.Sprintf("%q", s)
}
