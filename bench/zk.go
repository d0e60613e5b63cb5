package main

// This file is the ZooKeeper engines: runner/zk with 1, 2 and 4 worker
// Runners ("zk1", "zk2", "zk4"), the minimal reducer loop on ZooKeeper
// that they are compared with ("zkfloor1", ...), and the server's raw
// write rate ("zkraw1", ...). All of them run against one server, started
// by the driver (or given with -zk), each run under a fresh node of its
// own that is deleted after it; every run counts the server's writes from
// its zxid.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/batonwf/baton/internal/zktest"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	zkrunner "github.com/batonwf/baton/runner/zk"
)

// The three kinds of ZooKeeper engine.
const (
	kindZK      = "zk"
	kindZKFloor = "zkfloor"
	kindZKRaw   = "zkraw"
)

// zkConns are the connection (worker) counts each kind is measured with.
var zkConns = []int{1, 2, 4}

// zkEngines returns the ZooKeeper engines, by kind, then connections.
func zkEngines() []engine {
	var out []engine
	for _, n := range zkConns {
		out = append(out, engine{Name: fmt.Sprintf("%s%d", kindZK, n), Handler: true, AtLeastOnce: true, Steps: true, ZK: n, ZKKind: kindZK,
			About: fmt.Sprintf("runner/zk: %d worker Runner(s), each with its own Store (connection) and -zkslots Workers", n),
			Run: func(ctx context.Context, sc scenario, run int, o runOpts) (sample, error) {
				return runZK(ctx, sc, run, o, n)
			}})
	}
	for _, n := range zkConns {
		out = append(out, engine{Name: fmt.Sprintf("%s%d", kindZKFloor, n), Handler: true, Steps: true, ZK: n, ZKKind: kindZKFloor,
			About: fmt.Sprintf("minimal reducer loop on ZooKeeper: a job is one znode, a transition one versioned setData, over %d connection(s)", n),
			Run: func(ctx context.Context, sc scenario, run int, o runOpts) (sample, error) {
				return runZKFloor(ctx, sc, run, o, n)
			}})
	}
	for _, n := range zkConns {
		out = append(out, engine{Name: fmt.Sprintf("%s%d", kindZKRaw, n), ZK: n, ZKKind: kindZKRaw,
			About: fmt.Sprintf("the server's raw write rate: create+delete pairs (one per action) from %d connection(s), each one request at a time", n),
			Run: func(ctx context.Context, sc scenario, run int, o runOpts) (sample, error) {
				return runZKRaw(ctx, sc, run, o, n)
			}})
	}
	return out
}

// zkRunTimeout bounds one run of a ZooKeeper engine, setup included.
const zkRunTimeout = 5 * time.Minute

// zkSession is the session timeout of every connection the engines open.
const zkSession = 10 * time.Second

// zkStats are what a ZooKeeper engine counted over one run.
type zkStats struct {
	Writes    int64  `json:"writes"`              // transactions the server applied (zxid delta)
	Requests  int64  `json:"requests"`            // requests it received, reads and writes (srvr's Received delta)
	Started   int64  `json:"started,omitempty"`   // actions started (runner/zk: handler calls)
	Claims    int64  `json:"claims,omitempty"`    // runner/zk: claim multi-ops that won
	Lost      int64  `json:"lost,omitempty"`      // runner/zk: claim multi-ops another worker won
	Own       int64  `json:"own,omitempty"`       // runner/zk: actions claimed by the transition that made them
	Conflicts int64  `json:"conflicts,omitempty"` // runner/zk: commits that lost the compare-and-swap
	Warnings  int64  `json:"warnings,omitempty"`  // runner/zk: log records at Warn or above
	Warning   string `json:"warning,omitempty"`   // the first of them
}

// runRoot is the node a run keeps everything under, fresh for each run.
func runRoot(o runOpts, engine string, sc scenario, run int) string {
	return fmt.Sprintf("%s/%s-%s-%d-%d", o.ZKRoot, engine, sc.Name, os.Getpid(), run)
}

// runZK runs sc on n runner/zk Runners, each with its own Store (its own
// ZooKeeper session) and o.Slots Workers, sharing one root. Job i is
// submitted and awaited through Runner i mod n.
func runZK(ctx context.Context, sc scenario, run int, o runOpts, n int) (_ sample, err error) {
	ctx, cancel := context.WithTimeout(ctx, zkRunTimeout)
	defer cancel()
	root := runRoot(o, fmt.Sprintf("%s%d", kindZK, n), sc, run)
	admin, err := dialZK(ctx, o.ZK)
	if err != nil {
		return sample{}, err
	}
	defer func() { err = errors.Join(err, admin.cleanup(root)) }()
	if err := admin.ensure(o.ZKRoot); err != nil {
		return sample{}, err
	}

	reg := runner.NewRegistry()
	if err := runner.Handle(reg, actionName, handle); err != nil {
		return sample{}, err
	}
	var counters runner.Counters
	hooks := counters.Hooks(nil)
	logs := &logCounter{}
	runners := make([]*zkrunner.Runner, n)
	runErrs := make(chan error, n)
	stores := make([]*zkrunner.Store, 0, n)
	defer func() {
		for _, r := range runners {
			if r != nil {
				err = errors.Join(err, r.Close(), <-runErrs)
			}
		}
		for _, st := range stores {
			err = errors.Join(err, st.Close())
		}
	}()
	for i := range n {
		st, err := zkrunner.Open(ctx, zkrunner.Config{Servers: o.ZK, Root: root, SessionTimeout: zkSession})
		if err != nil {
			return sample{}, err
		}
		stores = append(stores, st)
		r, err := zkrunner.New(zkrunner.Options{
			WorkerOptions: runner.WorkerOptions{Name: fmt.Sprintf("w%d", i), Registry: reg, Workers: o.Slots, Hooks: hooks, Logger: slog.New(logs)},
			Store:         st,
		})
		if err != nil {
			return sample{}, err
		}
		runners[i] = r
		go func() { runErrs <- r.Run(ctx) }()
	}
	// Wait until every worker has announced itself: its Run is past its
	// setup and is waiting for work.
	for {
		ws, err := stores[0].Workers(ctx)
		if err != nil {
			return sample{}, err
		}
		if len(ws) == n {
			break
		}
		if ctx.Err() != nil {
			return sample{}, fmt.Errorf("%d of %d workers announced: %w", len(ws), n, ctx.Err())
		}
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond)
	wf := workflow(sc)
	ids := make([]job.ID, sc.Jobs)
	for i := range ids {
		ids[i] = job.ID(fmt.Sprintf("%s-%d-%d", sc.Name, run, i))
	}
	c0 := counters.Snapshot()
	r0 := make([]zkrunner.Stats, n)
	for i, r := range runners {
		r0[i] = r.Stats()
	}
	z0, err := srvr(o.ZK)
	if err != nil {
		return sample{}, err
	}

	m := startMeter()
	errs := make([]error, len(ids))
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Go(func() { errs[i] = submitWait(ctx, runners[i%n], id, wf) })
	}
	wg.Wait()
	s := m.stop()

	z1, zerr := settledSrvr(o.ZK)
	c1 := counters.Snapshot()
	s.Steps = c1.Steps - c0.Steps
	var r1 zkrunner.Stats
	for i, r := range runners {
		st := r.Stats()
		r1.Claims += st.Claims - r0[i].Claims
		r1.ClaimsLost += st.ClaimsLost - r0[i].ClaimsLost
		r1.ClaimedInTransition += st.ClaimedInTransition - r0[i].ClaimedInTransition
	}
	s.ZK = &zkStats{Writes: z1.Zxid - z0.Zxid, Requests: z1.Received - z0.Received, Started: c1.ActionsStarted - c0.ActionsStarted,
		Claims: r1.Claims, Lost: r1.ClaimsLost, Own: r1.ClaimedInTransition,
		Conflicts: logs.conflicts.Load(), Warnings: logs.warnings.Load()}
	if w := logs.first.Load(); w != nil {
		s.ZK.Warning = *w
	}
	return s, errors.Join(append(errs, zerr)...)
}

// logCounter is a slog.Handler that counts the runner's commit conflicts
// (its "commit conflict; reloading" debug record) and its warnings.
type logCounter struct {
	conflicts, warnings atomic.Int64
	first               atomic.Pointer[string]
}

func (l *logCounter) Enabled(context.Context, slog.Level) bool { return true }

func (l *logCounter) Handle(_ context.Context, r slog.Record) error {
	if r.Message == "commit conflict; reloading" {
		l.conflicts.Add(1)
	}
	if r.Level >= slog.LevelWarn {
		l.warnings.Add(1)
		var b strings.Builder
		b.WriteString(r.Message)
		r.Attrs(func(a slog.Attr) bool {
			fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
			return true
		})
		msg := b.String()
		l.first.CompareAndSwap(nil, &msg)
	}
	return nil
}

func (l *logCounter) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logCounter) WithGroup(string) slog.Handler      { return l }

// runZKFloor is the minimal reducer loop on ZooKeeper, the floor of any
// engine that keeps its jobs there: each job is one znode, created when
// the job starts, and each transition is one setData of it at the version
// the loop last wrote (so a second writer would fail). The loop is one
// goroutine that walks the jobs' shapes in memory as the floor does and
// reads nothing from ZooKeeper. Actions go to n*o.Slots worker goroutines
// on a channel and their results come back on another (no ZooKeeper
// write: the workers are in the loop's process). A result is applied by a
// transition of its own (no batching), and a job has one write in flight
// at a time; writes of different jobs go at once, through n*o.Slots
// writer goroutines spread over n connections. A stage's next actions are
// handed out once the write that ended it has succeeded. The znode's data
// is the job's progress and the result just applied (its output), about
// a hundred bytes: the outputs of earlier actions stay in memory, so this
// is a floor of writes, not an engine that could resume.
func runZKFloor(ctx context.Context, sc scenario, run int, o runOpts, n int) (_ sample, err error) {
	ctx, cancel := context.WithTimeout(ctx, zkRunTimeout)
	defer cancel()
	root := runRoot(o, fmt.Sprintf("%s%d", kindZKFloor, n), sc, run)
	admin, err := dialZK(ctx, o.ZK)
	if err != nil {
		return sample{}, err
	}
	defer func() { err = errors.Join(err, admin.cleanup(root)) }()
	if err := admin.ensure(o.ZKRoot); err != nil {
		return sample{}, err
	}
	if err := admin.ensure(root); err != nil {
		return sample{}, err
	}
	conns, err := dialZKs(ctx, o.ZK, n)
	defer closeAll(conns)
	if err != nil {
		return sample{}, err
	}

	type write struct {
		job     int32
		path    string
		data    []byte
		version int32
		create  bool
	}
	type written struct {
		job     int32
		version int32
		err     error
	}
	slots := max(1, o.Slots)
	tasks := make(chan task, floorBuffer)
	results := make(chan outcome, floorBuffer)
	writes := make(chan write, floorBuffer)
	writtens := make(chan written, floorBuffer)
	var wg sync.WaitGroup
	for i := range n * slots {
		c := conns[i/slots]
		wg.Go(func() {
			for t := range tasks {
				out, err := floorHandler(ctx, t.payload)
				results <- outcome{job: t.job, idx: t.idx, out: out, err: err}
			}
		})
		wg.Go(func() {
			for w := range writes {
				var st *zk.Stat
				var err error
				if w.create {
					_, err = c.c.Create(w.path, w.data, 0, zk.WorldACL(zk.PermAll))
					st = &zk.Stat{}
				} else {
					st, err = c.c.Set(w.path, w.data, w.version)
				}
				if err != nil {
					err = fmt.Errorf("%s: %w", w.path, err)
					st = &zk.Stat{}
				}
				writtens <- written{job: w.job, version: st.Version, err: err}
			}
		})
	}
	defer func() { close(tasks); close(writes); wg.Wait() }()

	// The loop's state, made before the clock starts, as the floor's: per
	// job, its outputs, the stage it is in and the results that stage
	// still waits for; and the results received but not yet written, the
	// znode's version, whether a write is in flight and whether it ends
	// the stage.
	pay := sc.Payloads()
	stages := sc.Stages()
	outs := make([][][]byte, sc.Jobs)
	for j := range outs {
		outs[j] = make([][]byte, len(pay))
	}
	type progress struct {
		stage, first, left int
		pending            []outcome
		version            int32
		created, busy      bool
		ends               bool
	}
	jobs := make([]progress, sc.Jobs)
	paths := make([]string, sc.Jobs)
	for j := range paths {
		paths[j] = root + "/j" + strconv.Itoa(j)
	}
	queue := make([]task, 0, sc.Actions())
	wq := make([]write, 0, sc.Jobs)
	enqueue := func(j int) {
		p := &jobs[j]
		p.left = stages[p.stage]
		for i := p.first; i < p.first+p.left; i++ {
			queue = append(queue, task{job: int32(j), idx: int32(i), payload: pay[i]})
		}
	}
	// next writes the transition that applies job j's first pending
	// result.
	next := func(j int) {
		p := &jobs[j]
		r := p.pending[0]
		p.pending = p.pending[1:]
		p.left--
		p.ends = p.left == 0
		p.busy = true
		wq = append(wq, write{job: int32(j), path: paths[j], data: floorRecord(p.stage, p.left, int(r.idx), r.out), version: p.version})
	}
	settle()
	z0, err := srvr(o.ZK)
	if err != nil {
		return sample{}, err
	}

	m := startMeter()
	for j := range jobs {
		jobs[j].busy = true
		wq = append(wq, write{job: int32(j), path: paths[j], data: floorRecord(0, stages[0], -1, nil), create: true})
	}
	var errs []error
	steps := int64(0)
	running := len(jobs)
	for head, whead := 0, 0; running > 0 && len(errs) == 0; {
		var send chan<- task
		var t task
		if head < len(queue) {
			send, t = tasks, queue[head]
		}
		var wsend chan<- write
		var w write
		if whead < len(wq) {
			wsend, w = writes, wq[whead]
		}
		select {
		case send <- t:
			head++
		case wsend <- w:
			whead++
		case r := <-results:
			if r.err != nil {
				errs = append(errs, r.err)
				continue
			}
			outs[r.job][r.idx] = r.out
			p := &jobs[r.job]
			p.pending = append(p.pending, r)
			if !p.busy {
				next(int(r.job))
			}
		case w := <-writtens:
			if w.err != nil {
				errs = append(errs, w.err)
				continue
			}
			steps++
			j := int(w.job)
			p := &jobs[j]
			p.version, p.busy = w.version, false
			switch {
			case !p.created:
				p.created = true
				enqueue(j)
			case p.ends:
				p.ends = false
				p.first += stages[p.stage]
				if p.stage++; p.stage == len(stages) {
					running--
				} else {
					enqueue(j)
				}
			}
			if len(p.pending) > 0 {
				next(j)
			}
		case <-ctx.Done():
			errs = append(errs, ctx.Err())
		}
	}
	s := m.stop()

	z1, zerr := settledSrvr(o.ZK)
	s.Steps = steps
	s.ZK = &zkStats{Writes: z1.Zxid - z0.Zxid, Requests: z1.Received - z0.Received}
	return s, errors.Join(append(errs, zerr)...)
}

// floorRecord is the data of a zkfloor job's znode: its progress and the
// result just applied (action -1: none, at creation).
func floorRecord(stage, left, action int, out []byte) []byte {
	b := make([]byte, 0, 64+len(out))
	b = append(b, `{"stage":`...)
	b = strconv.AppendInt(b, int64(stage), 10)
	b = append(b, `,"left":`...)
	b = strconv.AppendInt(b, int64(left), 10)
	b = append(b, `,"action":`...)
	b = strconv.AppendInt(b, int64(action), 10)
	if out != nil {
		b = append(b, `,"out":`...)
		b = append(b, out...)
	}
	return append(b, '}')
}

// runZKRaw measures the server's raw write rate: one create+delete pair
// per action of sc (a node of about 100 bytes, created and deleted again),
// from n connections, each a synchronous client: one goroutine doing its
// pairs one after the other, one request outstanding at a time. (More
// requests in flight per connection would let the server fsync more
// writes at once; the raw rate is that of n clients.)
func runZKRaw(ctx context.Context, sc scenario, run int, o runOpts, n int) (_ sample, err error) {
	ctx, cancel := context.WithTimeout(ctx, zkRunTimeout)
	defer cancel()
	root := runRoot(o, fmt.Sprintf("%s%d", kindZKRaw, n), sc, run)
	admin, err := dialZK(ctx, o.ZK)
	if err != nil {
		return sample{}, err
	}
	defer func() { err = errors.Join(err, admin.cleanup(root)) }()
	if err := admin.ensure(o.ZKRoot); err != nil {
		return sample{}, err
	}
	if err := admin.ensure(root); err != nil {
		return sample{}, err
	}
	conns, err := dialZKs(ctx, o.ZK, n)
	defer closeAll(conns)
	if err != nil {
		return sample{}, err
	}
	total := int64(sc.Actions())
	paths := make([]string, total)
	for i := range paths {
		paths[i] = root + "/r" + strconv.Itoa(i)
	}
	var taken atomic.Int64
	errs := make([]error, n)
	acl := zk.WorldACL(zk.PermAll)
	settle()
	z0, err := srvr(o.ZK)
	if err != nil {
		return sample{}, err
	}

	m := startMeter()
	var wg sync.WaitGroup
	for g, c := range conns {
		wg.Go(func() {
			for ctx.Err() == nil {
				i := taken.Add(1) - 1
				if i >= total {
					return
				}
				if _, err := c.c.Create(paths[i], record[:len(record):len(record)], 0, acl); err != nil {
					errs[g] = err
					return
				}
				if err := c.c.Delete(paths[i], 0); err != nil {
					errs[g] = err
					return
				}
			}
		})
	}
	wg.Wait()
	s := m.stop()

	z1, zerr := settledSrvr(o.ZK)
	s.ZK = &zkStats{Writes: z1.Zxid - z0.Zxid, Requests: z1.Received - z0.Received}
	return s, errors.Join(append(errs, zerr, ctx.Err())...)
}

// zkConn is a go-zookeeper connection with a session.
type zkConn struct{ c *zk.Conn }

// dialZK connects to servers and waits for a session.
func dialZK(ctx context.Context, servers []string) (*zkConn, error) {
	c, events, err := zk.Connect(servers, zkSession, zk.WithLogger(quietZK{}))
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", strings.Join(servers, ","), err)
	}
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				return nil, fmt.Errorf("connect to %s: closed before it had a session", strings.Join(servers, ","))
			}
			if ev.State == zk.StateHasSession {
				zc := &zkConn{c: c}
				go func() {
					for range events {
					}
				}()
				return zc, nil
			}
		case <-ctx.Done():
			c.Close()
			return nil, fmt.Errorf("connect to %s: no session: %w", strings.Join(servers, ","), ctx.Err())
		}
	}
}

// dialZKs opens n connections; on error, those it opened are returned
// too, for closeAll.
func dialZKs(ctx context.Context, servers []string, n int) ([]*zkConn, error) {
	var out []*zkConn
	for range n {
		c, err := dialZK(ctx, servers)
		if err != nil {
			return out, err
		}
		out = append(out, c)
	}
	return out, nil
}

func closeAll(cs []*zkConn) {
	for _, c := range cs {
		c.c.Close()
	}
}

// quietZK drops go-zookeeper's log lines.
type quietZK struct{}

func (quietZK) Printf(string, ...any) {}

// ensure creates the persistent node p if it is missing.
func (c *zkConn) ensure(p string) error {
	_, err := c.c.Create(p, nil, 0, zk.WorldACL(zk.PermAll))
	if err != nil && !errors.Is(err, zk.ErrNodeExists) {
		return fmt.Errorf("create %s: %w", p, err)
	}
	return nil
}

// cleanup deletes root and everything under it, then closes c.
func (c *zkConn) cleanup(root string) error {
	defer c.c.Close()
	return c.deleteTree(root)
}

// deleteTree deletes p and everything under it, leaves in multi-ops of up
// to 1,000 deletes.
func (c *zkConn) deleteTree(p string) error {
	kids, _, err := c.c.Children(p)
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("clean up %s: %w", p, err)
	}
	var ops []any
	flush := func() error {
		if len(ops) == 0 {
			return nil
		}
		_, err := c.c.Multi(ops...)
		ops = ops[:0]
		if err != nil {
			return fmt.Errorf("clean up under %s: %w", p, err)
		}
		return nil
	}
	for _, k := range kids {
		kp := path.Join(p, k)
		_, st, err := c.c.Exists(kp)
		if err != nil {
			return fmt.Errorf("clean up %s: %w", kp, err)
		}
		if st.NumChildren > 0 {
			if err := c.deleteTree(kp); err != nil {
				return err
			}
			continue
		}
		ops = append(ops, &zk.DeleteRequest{Path: kp, Version: -1})
		if len(ops) == 1000 {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := flush(); err != nil {
		return err
	}
	if err := c.c.Delete(p, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
		return fmt.Errorf("clean up %s: %w", p, err)
	}
	return nil
}

// srvrCounts are the counters of the server's srvr four-letter command
// that a run reads.
type srvrCounts struct {
	// Zxid is the last zxid ("Zxid: 0x..."). Its low 32 bits count the
	// transactions of the leader's epoch, so the difference of two
	// readings in one epoch is the number of writes the server applied
	// between them (failed writes included: a write that fails, a
	// multi-op whose version check fails, still gets its zxid).
	Zxid int64
	// Received counts the requests the server received ("Received: N"),
	// reads and writes, and sessions' pings.
	Received int64
}

// srvr reads the server's counters.
func srvr(servers []string) (srvrCounts, error) {
	out, err := zktest.FourLetter(servers[0], "srvr")
	if err != nil {
		return srvrCounts{}, fmt.Errorf("srvr: %w", err)
	}
	var c srvrCounts
	found := 0
	for _, line := range strings.Split(out, "\n") {
		k, v, ok := strings.Cut(line, ": ")
		if !ok || k != "Zxid" && k != "Received" {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(v), 0, 64)
		if err != nil {
			return srvrCounts{}, fmt.Errorf("srvr: %s %q: %w", k, v, err)
		}
		if k == "Zxid" {
			c.Zxid = n
		} else {
			c.Received = n
		}
		found++
	}
	if found != 2 {
		return srvrCounts{}, fmt.Errorf("srvr of %s lacks its Zxid or Received line: %q", servers[0], out)
	}
	return c, nil
}

// settledSrvr reads the server's counters once the zxid has not moved for
// 100ms (at most 5 s): writes that the run set off and that land after
// its clock stopped (a superseded snapshot deleted after the last step)
// are counted too.
func settledSrvr(servers []string) (srvrCounts, error) {
	last, err := srvr(servers)
	if err != nil {
		return srvrCounts{}, err
	}
	deadline := time.Now().Add(5 * time.Second)
	for still := time.Now(); time.Since(still) < 100*time.Millisecond && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
		c, err := srvr(servers)
		if err != nil {
			return srvrCounts{}, err
		}
		if c.Zxid != last.Zxid {
			still = time.Now()
		}
		last = c
	}
	return last, nil
}

// zkBenchRoot is the node under which every run of the ZooKeeper engines
// makes its own (and deletes it after).
const zkBenchRoot = "/baton-bench"

// needsZK reports whether a ZooKeeper engine is measured on a scenario.
func (cfg *config) needsZK() bool {
	for _, e := range cfg.Engines {
		for _, sc := range cfg.Scenarios {
			if e.ZK > 0 && cfg.measured(e, sc) {
				return true
			}
		}
	}
	return false
}

// startZK sets up the ZooKeeper engines' server: the one at addr if
// given, else a standalone server started for this run in a directory
// under cfg.Dir, with ZooKeeper's default forceSync=yes and tick of 2 s.
// Without ZooKeeper, and with optional set (the engines were not named
// with -engines), it drops the ZooKeeper engines, saying why. It returns
// what stops the server.
func (cfg *config) startZK(addr string, optional bool) (stop func(), err error) {
	if addr != "" {
		cfg.ZK = strings.Split(addr, ",")
		v, err := zkVersion(cfg.ZK)
		if err != nil {
			return nil, fmt.Errorf("-zk %s: %w", addr, err)
		}
		cfg.ZKServer = fmt.Sprintf("ZooKeeper %s at %s (given with -zk: its own settings; nothing else may write to it during the run, or the write counts are off)", v, addr)
		return func() {}, nil
	}
	if err := zktest.Available(); err != nil {
		if !optional {
			return nil, fmt.Errorf("the zk engines need a ZooKeeper server: %w; or give one with -zk host:port", err)
		}
		var kept []engine
		for _, e := range cfg.Engines {
			if e.ZK == 0 {
				kept = append(kept, e)
			}
		}
		cfg.Engines = kept
		note := fmt.Sprintf("the zk engines were not run: %v; or give a server with -zk host:port", err)
		cfg.ZKNotes = append(cfg.ZKNotes, note)
		if cfg.Progress != nil {
			fmt.Fprintln(cfg.Progress, note)
		}
		return func() {}, nil
	}
	dir, err := os.MkdirTemp(cfg.Dir, "baton-bench-zk-")
	if err != nil {
		return nil, err
	}
	opts := []zktest.Option{zktest.ForceSync(true), zktest.TickTime(2 * time.Second), zktest.Heap(zkHeap)}
	if cfg.Progress != nil {
		p := cfg.Progress
		opts = append(opts, zktest.Logf(func(format string, args ...any) { fmt.Fprintf(p, format+"\n", args...) }))
	}
	begin := time.Now()
	srv, err := zktest.Launch(dir, opts...)
	if err != nil {
		return nil, errors.Join(err, os.RemoveAll(dir))
	}
	stop = func() {
		if err := errors.Join(srv.Close(), os.RemoveAll(dir)); err != nil && cfg.Notes != nil {
			fmt.Fprintf(cfg.Notes, "stopping the ZooKeeper server: %v\n", err)
		}
	}
	cfg.ZK = srv.Addrs()
	v, err := zkVersion(cfg.ZK)
	if err != nil {
		stop()
		return nil, err
	}
	cfg.ZKServer = fmt.Sprintf("standalone ZooKeeper %s started for this run (forceSync=yes, tickTime=2000, -Xmx%s, data in %s)", v, zkHeap, cfg.Dir)
	if cfg.Progress != nil {
		fmt.Fprintf(cfg.Progress, "ZooKeeper %s serves on %s (pid %d), ready in %v\n", v, srv.Addr(), srv.PID(), time.Since(begin).Round(time.Millisecond))
	}
	return stop, nil
}

// zkHeap is the JVM heap of the server the program starts.
const zkHeap = "1g"

// zkVersion is the server's version, from srvr ("Zookeeper version: ...").
func zkVersion(servers []string) (string, error) {
	out, err := zktest.FourLetter(servers[0], "srvr")
	if err != nil {
		return "", fmt.Errorf("srvr: %w", err)
	}
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(line, "Zookeeper version: "); ok {
			v, _, _ = strings.Cut(v, ",")
			v, _, _ = strings.Cut(v, "-${") // Debian's build leaves a placeholder: 3.8.0-${mvngit.commit.id}
			return strings.TrimSpace(v), nil
		}
	}
	return "", fmt.Errorf("srvr of %s has no version line: %q", servers[0], out)
}

func writesOf(s sample) float64 {
	if s.ZK == nil {
		return 0
	}
	return float64(s.ZK.Writes)
}
