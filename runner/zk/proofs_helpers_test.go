package zk_test

// Helpers of the failure proofs (proofs_test.go, process_test.go,
// badinput_test.go): stores on their own connections, runners run until
// the test ends, captured logs, polls with deadlines, and the history
// check.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/batonwf/baton/internal/zktest"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	"github.com/batonwf/baton/runner/runnertest"
	zkrunner "github.com/batonwf/baton/runner/zk"
	"github.com/batonwf/baton/store"
)

// freshRoot returns a root of its own under base (a server's or an
// ensemble's Root).
func freshRoot(base string) string { return fmt.Sprintf("%s/p%d", base, roots.Add(1)) }

// openOn opens a store, on its own connection, on root of the servers
// addrs; it is closed when t ends.
func openOn(t testing.TB, addrs []string, root string, cfg zkrunner.Config) *zkrunner.Store {
	t.Helper()
	cfg.Servers, cfg.Root = addrs, root
	if cfg.SessionTimeout == 0 {
		cfg.SessionTimeout = 4 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := zkrunner.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// started is a runner whose Run runs until the test ends (or stop).
type started struct {
	*zkrunner.Runner
	done chan error
	once sync.Once
	err  error
}

// startRunner makes a runner on o and runs it; when t ends it is closed,
// Run must have returned nil within 20 s, and its Placement hook must
// have told what its Stats count (checkPlacement).
func startRunner(t testing.TB, o zkrunner.Options) *started {
	t.Helper()
	if o.DrainTimeout == 0 {
		o.DrainTimeout = 2 * time.Second
	}
	var tally *runnertest.PlacementTally
	o.Hooks, tally = runnertest.TallyPlacement(o.Hooks)
	r, err := zkrunner.New(o)
	if err != nil {
		t.Fatal(err)
	}
	s := &started{Runner: r, done: make(chan error, 1)}
	go func() { s.done <- r.Run(context.Background()) }()
	t.Cleanup(func() {
		if err := s.stop(); err != nil {
			t.Errorf("runner %s: %v", o.Name, err)
		}
		checkPlacement(tally, t, o.Name, r.Stats())
	})
	return s
}

// stop closes the runner and returns what Run returned.
func (s *started) stop() error {
	s.once.Do(func() {
		_ = s.Close()
		select {
		case s.err = <-s.done:
		case <-time.After(time.Minute): // a hang, not slowness: Close ends Run at once
			s.err = errors.New("Run did not return within a minute of Close")
		}
	})
	return s.err
}

// submitter returns a runner with no registry, not run: it submits,
// waits and reads (as baton submit does).
func submitter(t testing.TB, st *zkrunner.Store) *zkrunner.Runner {
	t.Helper()
	r, err := zkrunner.New(zkrunner.Options{WorkerOptions: runner.WorkerOptions{Name: "submitter"}, Store: st})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
}

// logBuf collects a logger's lines.
type logBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// logger logs at debug level into l.
func (l *logBuf) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// count counts the lines holding every one of subs.
func (l *logBuf) count(subs ...string) int {
	n := 0
	for line := range strings.SplitSeq(l.String(), "\n") {
		ok := line != ""
		for _, s := range subs {
			ok = ok && strings.Contains(line, s)
		}
		if ok {
			n++
		}
	}
	return n
}

// lines returns the lines holding every one of subs.
func (l *logBuf) lines(subs ...string) []string {
	var out []string
	for line := range strings.SplitSeq(l.String(), "\n") {
		ok := line != ""
		for _, s := range subs {
			ok = ok && strings.Contains(line, s)
		}
		if ok {
			out = append(out, line)
		}
	}
	return out
}

// poll polls cond every few milliseconds until it holds, and fails the
// test if it does not within timeout, or within the test's patience
// (zktest.Patience) if that is longer: a loaded machine only delays what
// the test waits for.
func poll(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	timeout = max(timeout, zktest.Patience(t))
	deadline := time.Now().Add(timeout)
	for pause := time.Millisecond; !cond(); pause = min(2*pause, 50*time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("not within %v: %s", timeout, what)
		}
		time.Sleep(pause)
	}
}

// waitJob waits (at most timeout, or the test's patience if that is
// longer) until job id has finished, and says what it looked like if it
// did not.
func waitJob(t testing.TB, r *zkrunner.Runner, id job.ID, timeout time.Duration) job.Job {
	t.Helper()
	timeout = max(timeout, zktest.Patience(t))
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	j, err := r.Wait(ctx, id)
	if err != nil {
		now, lerr := r.Status(context.Background(), id)
		desc := fmt.Sprint(lerr)
		if lerr == nil {
			desc = job.Describe(now)
		}
		t.Fatalf("job %s did not finish within %v: %v\n%s", id, timeout, err, desc)
	}
	return j
}

// checkHistory checks that the history of final's job holds every step
// once: versions follow one another from the origin, every result's
// action ID is in exactly one step, and replaying it gives final byte
// for byte, which a fresh Load gives too. It returns the history.
func checkHistory(t testing.TB, st store.Store, final job.Job) store.History {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	id := final.ID()
	h, err := store.LoadHistory(ctx, st, id)
	if err != nil {
		t.Fatalf("history of job %s: %v", id, err)
	}
	v := h.Origin.Version()
	step := map[string]uint64{}
	for _, s := range h.Steps {
		if s.Version != v+1 {
			t.Errorf("job %s: history has step v%d after v%d: a version applied twice or skipped", id, s.Version, v)
		}
		v = s.Version
		for _, r := range s.Results {
			if prev, ok := step[r.ActionID]; ok {
				t.Errorf("job %s: the result of %s was applied in step v%d and again in step v%d", id, r.ActionID, prev, s.Version)
				continue
			}
			step[r.ActionID] = s.Version
		}
	}
	latest, err := h.Latest()
	if err != nil {
		t.Fatalf("job %s: replaying its history: %v", id, err)
	}
	loaded, err := st.Load(ctx, id)
	if err != nil {
		t.Fatalf("job %s: load: %v", id, err)
	}
	want, err1 := job.Encode(final)
	got, err2 := job.Encode(latest)
	got2, err3 := job.Encode(loaded)
	if err := errors.Join(err1, err2, err3); err != nil {
		t.Fatalf("job %s: encode: %v", id, err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("job %s: its history (%d steps) replays to v%d %s, not the final job v%d %s", id, len(h.Steps), latest.Version(), latest.Status(), final.Version(), final.Status())
	}
	if !bytes.Equal(got2, want) {
		t.Errorf("job %s: Load gives v%d %s, not the final job v%d %s", id, loaded.Version(), loaded.Status(), final.Version(), final.Status())
	}
	return h
}

// resultOf returns the result the history applied for the action of the
// leaf at path (any attempt), and how many it applied.
func resultOf(h store.History, path string) (job.Result, int) {
	var last job.Result
	n := 0
	for _, s := range h.Steps {
		for _, r := range s.Results {
			if p, _, err := job.SplitActionID(r.ActionID); err == nil && p == path {
				last = r
				n++
			}
		}
	}
	return last, n
}

// registry returns a registry with the handlers given by name.
func registry(t testing.TB, hs map[string]runner.Handler) *runner.Registry {
	t.Helper()
	reg := runner.NewRegistry()
	for name, h := range hs {
		if err := reg.Register(name, h); err != nil {
			t.Fatal(err)
		}
	}
	return reg
}
