package kafka_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	"github.com/batonwf/baton/store"

	kafkarunner "github.com/batonwf/baton/runner/kafka"
)

// conns records the connections a configuration's transports make
// (kafkarunner.WithDial), and which of them are still open.
type conns struct {
	mu   sync.Mutex
	open map[*trackedConn]bool
	made int
}

func trackConns(cfg kafkarunner.Config) (kafkarunner.Config, *conns) {
	c := &conns{open: map[*trackedConn]bool{}}
	return kafkarunner.WithDial(cfg, c.dial), c
}

func (c *conns) dial(ctx context.Context, network, address string) (net.Conn, error) {
	var d net.Dialer
	nc, err := d.DialContext(ctx, network, address)
	if err != nil {
		return nil, err
	}
	tc := &trackedConn{Conn: nc, c: c}
	c.mu.Lock()
	c.open[tc] = true
	c.made++
	c.mu.Unlock()
	return tc, nil
}

// snapshot returns the connections open now.
func (c *conns) snapshot() map[*trackedConn]bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[*trackedConn]bool{}
	for tc := range c.open {
		out[tc] = true
	}
	return out
}

// waitClosed fails the test unless, within 5s, every connection open now
// but not in keep is closed. It returns how many it waited for.
func (c *conns) waitClosed(t *testing.T, what string, keep map[*trackedConn]bool) int {
	t.Helper()
	n := 0
	for tc := range c.snapshot() {
		if !keep[tc] {
			n++
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		var left []string
		for tc := range c.snapshot() {
			if !keep[tc] {
				left = append(left, tc.LocalAddr().String()+"->"+tc.RemoteAddr().String())
			}
		}
		if len(left) == 0 {
			return n
		}
		if time.Now().After(deadline) {
			t.Errorf("%s: %d of the connections made are still open 5s later: %s", what, len(left), strings.Join(left, ", "))
			return n
		}
		time.Sleep(20 * time.Millisecond)
	}
}

type trackedConn struct {
	net.Conn
	c    *conns
	once sync.Once
}

func (tc *trackedConn) Close() error {
	tc.once.Do(func() {
		tc.c.mu.Lock()
		delete(tc.c.open, tc)
		tc.c.mu.Unlock()
	})
	return tc.Conn.Close()
}

// createTopic creates topic with partitions and configs, as a user's
// tool would.
func createTopic(t *testing.T, brokers []string, topic string, partitions int, configs ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tr := &kafka.Transport{}
	defer tr.CloseIdleConnections()
	tc := kafka.TopicConfig{Topic: topic, NumPartitions: partitions, ReplicationFactor: -1}
	for i := 0; i+1 < len(configs); i += 2 {
		tc.ConfigEntries = append(tc.ConfigEntries, kafka.ConfigEntry{ConfigName: configs[i], ConfigValue: configs[i+1]})
	}
	res, err := (&kafka.Client{Addr: kafka.TCP(brokers...), Transport: tr}).CreateTopics(ctx, &kafka.CreateTopicsRequest{Topics: []kafka.TopicConfig{tc}})
	if err == nil {
		err = res.Errors[topic]
	}
	if err != nil {
		t.Fatalf("create topic %s: %v", topic, err)
	}
}

// TestOpenClosesOnError: an Open that fails (here on a state topic that is
// not compacted, after it connected and created the other topics) leaves
// no connection open.
func TestOpenClosesOnError(t *testing.T) {
	cfg, cs := trackConns(testConfig(t))
	createTopic(t, cfg.Brokers, cfg.Prefix+".state", 4, "cleanup.policy", "delete")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := kafkarunner.Open(ctx, cfg)
	if err == nil {
		st.Close()
		t.Fatal("Open succeeded on a state topic that is not compacted")
	}
	if !strings.Contains(err.Error(), cfg.Prefix+".state has cleanup.policy") {
		t.Errorf("Open: %v; want the state topic's cleanup policy named", err)
	}
	if n := cs.waitClosed(t, "after a failed Open", nil); n == 0 && cs.made == 0 {
		t.Error("Open made no connection through the test's dialer: the test checks nothing")
	}
}

// TestCloseWithoutRun: a runner used only to deliver (as a client that
// never runs) releases its writers' connections on Close; and Run after
// Close returns at once, with nothing left open.
func TestCloseWithoutRun(t *testing.T) {
	cfg, cs := trackConns(testConfig(t))
	st := openStore(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, run := range []bool{false, true} {
		keep := cs.snapshot() // the store's
		made := cs.made
		r, err := kafkarunner.New(kafkarunner.Options{Store: st, Role: kafkarunner.RoleClient})
		if err != nil {
			t.Fatal(err)
		}
		// A result for a job no restarter holds: it is written to the
		// restarter topic, through the runner's writer.
		if err := r.Deliver(ctx, job.Result{JobID: "nobody", ActionID: "root#1", Output: []byte(`1`)}); err != nil {
			t.Fatal(err)
		}
		if cs.made == made {
			t.Fatal("Deliver made no connection through the test's dialer: the test checks nothing")
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		if run {
			done := make(chan error, 1)
			go func() { done <- r.Run(ctx) }()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("Run after Close: %v", err)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("Run after Close did not return within 5s")
			}
		}
		cs.waitClosed(t, fmt.Sprintf("Close without Run (then Run: %v)", run), keep)
		if err := r.Deliver(ctx, job.Result{JobID: "nobody", ActionID: "root#1"}); !errors.Is(err, kafkarunner.ErrClosed) {
			t.Errorf("Deliver after Close: %v, want ErrClosed", err)
		}
	}
}

// TestOpenSlowMetadata: a broker that takes 700ms to answer metadata
// requests for its first 2 seconds (as over a slow handshake, or on a
// loaded machine): the first metadata fetch of a transport, which
// kafka-go bounds by the metadata TTL (500ms), fails; Open waits for a
// later one within its context instead of failing with "Broker Not
// Available", and the store works.
func TestOpenSlowMetadata(t *testing.T) {
	c := privateCluster(t)
	start := time.Now()
	var slowed atomic.Int32
	c.ControlKey(int16(kmsg.Metadata), func(kmsg.Request) (kmsg.Response, error, bool) {
		if time.Since(start) < 2*time.Second {
			slowed.Add(1)
			c.SleepControl(func() { time.Sleep(700 * time.Millisecond) })
		}
		return nil, nil, false // then answered as usual
	})
	cfg := testConfig(t)
	cfg.Brokers = c.ListenAddrs()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	st, err := kafkarunner.Open(ctx, cfg)
	if err != nil {
		t.Fatalf("Open on a broker slow to answer metadata at first: %v", err)
	}
	defer st.Close()
	if err := st.ClaimAll(ctx); err != nil {
		t.Fatal(err)
	}
	if slowed.Load() == 0 {
		t.Error("no metadata request was slowed: the test checks nothing")
	}
	t.Logf("%d metadata requests slowed; Open took %v", slowed.Load(), time.Since(start).Round(time.Millisecond))
}

// TestOpenRefusedFast: a broker that refuses the connection fails Open
// at once, naming the broker: only a metadata request that timed out is
// waited for again.
func TestOpenRefusedFast(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	cfg := testConfig(t)
	cfg.Brokers = []string{addr}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	begin := time.Now()
	st, err := kafkarunner.Open(ctx, cfg)
	if err == nil {
		st.Close()
		t.Fatal("Open succeeded with no broker")
	}
	if d := time.Since(begin); d > 3*time.Second {
		t.Errorf("Open took %v to fail on a refused connection", d)
	}
	if !strings.Contains(err.Error(), addr) {
		t.Errorf("Open: %v; want the broker %s named", err, addr)
	}
	t.Logf("Open: %v", err)
}

// TestNoCreate: with Config.NoCreate, Open sends no CreateTopics (here
// the broker refuses them, as to a user without the permission): on a
// prefix without topics it fails naming the missing topics and the
// prefix, creates nothing and leaves no connection open; on one whose
// topics exist it opens them, and still checks their configuration.
func TestNoCreate(t *testing.T) {
	c := privateCluster(t)
	base := testConfig(t)
	base.Brokers = c.ListenAddrs()
	openStore(t, base).Close() // creates the topics of base.Prefix
	createTopic(t, base.Brokers, base.Prefix+"-bad.restarter", 4)
	createTopic(t, base.Brokers, base.Prefix+"-bad.state", 4, "cleanup.policy", "delete")
	createTopic(t, base.Brokers, base.Prefix+"-bad.stops", 1)
	createTopic(t, base.Brokers, base.Prefix+"-part.restarter", 4)
	createTopic(t, base.Brokers, base.Prefix+"-part.state", 4, "cleanup.policy", "compact")

	var creates atomic.Int32
	c.ControlKey(int16(kmsg.CreateTopics), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		creates.Add(1)
		res := req.ResponseKind().(*kmsg.CreateTopicsResponse)
		res.SetVersion(req.GetVersion())
		for _, rt := range req.(*kmsg.CreateTopicsRequest).Topics {
			st := kmsg.NewCreateTopicsResponseTopic()
			st.Topic, st.ErrorCode = rt.Topic, kerr.TopicAuthorizationFailed.Code
			res.Topics = append(res.Topics, st)
		}
		return res, nil, true
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// Topics that exist: opened, without NoCreate refused by the broker.
	cfg := base
	if st, err := kafkarunner.Open(ctx, cfg); err == nil {
		st.Close()
		t.Error("Open without NoCreate succeeded though the broker refuses CreateTopics: the test checks nothing")
	}
	sent := creates.Load()
	cfg.NoCreate = true
	st, err := kafkarunner.Open(ctx, cfg)
	if err != nil {
		t.Fatalf("Open with NoCreate on existing topics: %v", err)
	}
	if st.Partitions() != 4 {
		t.Errorf("%d partitions, want 4", st.Partitions())
	}
	if _, err := st.Load(ctx, "nosuch"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Load of a job that does not exist: %v", err)
	}
	st.Close()

	// A prefix without topics: a clear error, and nothing created.
	cfg, cs := trackConns(base)
	cfg.Prefix, cfg.NoCreate = base.Prefix+"-typo", true
	st, err = kafkarunner.Open(ctx, cfg)
	if err == nil {
		st.Close()
		t.Fatal("Open with NoCreate succeeded on a prefix without topics")
	}
	var mt *kafkarunner.MissingTopicsError
	if !errors.As(err, &mt) {
		t.Fatalf("Open: %v (%T), want a *MissingTopicsError", err, err)
	}
	want := []string{cfg.Prefix + ".restarter", cfg.Prefix + ".state", cfg.Prefix + ".stops"}
	if mt.Prefix != cfg.Prefix || strings.Join(mt.Topics, " ") != strings.Join(want, " ") {
		t.Errorf("missing topics %q under prefix %q, want %q under %q", mt.Topics, mt.Prefix, want, cfg.Prefix)
	}
	for _, s := range append(want, "prefix "+cfg.Prefix, cfg.Brokers[0]) {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("Open: %v; want %q in it", err, s)
		}
	}
	t.Logf("Open: %v", err)
	cs.waitClosed(t, "after Open with NoCreate failed", nil)

	// Only some topics: those missing are named; those that exist are
	// checked.
	cfg.Prefix = base.Prefix + "-part"
	_, err = kafkarunner.Open(ctx, cfg)
	if !errors.As(err, &mt) || strings.Join(mt.Topics, " ") != cfg.Prefix+".stops" {
		t.Errorf("Open with NoCreate, the stops topic missing: %v", err)
	}
	cfg.Prefix = base.Prefix + "-bad"
	_, err = kafkarunner.Open(ctx, cfg)
	if err == nil || !strings.Contains(err.Error(), cfg.Prefix+".state has cleanup.policy") {
		t.Errorf("Open with NoCreate, the state topic not compacted: %v", err)
	}
	if n := creates.Load() - sent; n != 0 {
		t.Errorf("%d CreateTopics requests sent with NoCreate", n)
	}
}

// TestLifecycleErrors: the runner's ErrRunning and ErrClosed are the
// runner package's too (runner.Lifecycle's), so that errors.Is matches
// either.
func TestLifecycleErrors(t *testing.T) {
	st := openStore(t, testConfig(t))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := kafkarunner.New(kafkarunner.Options{Store: st, Role: kafkarunner.RoleClient})
	if err != nil {
		t.Fatal(err)
	}
	// Two Runs at once: one runs, the other is refused.
	ret := make(chan error, 2)
	for range 2 {
		go func() { ret <- r.Run(ctx) }()
	}
	if err := <-ret; !errors.Is(err, kafkarunner.ErrRunning) || !errors.Is(err, runner.ErrRunning) {
		t.Errorf("second Run: %v, want kafka.ErrRunning and runner.ErrRunning", err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-ret; err != nil {
		t.Errorf("Run: %v, want nil once closed", err)
	}
	err = r.Deliver(ctx, job.Result{JobID: "nobody", ActionID: "root#1"})
	if !errors.Is(err, kafkarunner.ErrClosed) || !errors.Is(err, runner.ErrClosed) {
		t.Errorf("Deliver after Close: %v, want kafka.ErrClosed and runner.ErrClosed", err)
	}
	if err := r.Close(); err != nil {
		t.Errorf("Close twice: %v", err)
	}
}
