package main

// This file is the Kafka engines: runner/kafka deployed as one restarter
// and 1 or 2 worker Runners ("kafka1", "kafka2"), and the raw kafka-go
// produce-to-consume round trip on the same broker, one message in
// flight ("kafkaraw") and -kafkaslots in flight ("kafkarawp"). All of them
// run against one broker, started by the driver in its own process (or
// given with -kafka), each run under a topic prefix of its own whose
// topics and groups are deleted after it; every run counts the messages
// produced to its topics from the broker's end offsets.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	kafkarunner "github.com/batonwf/baton/runner/kafka"
)

// The three kinds of Kafka engine.
const (
	kindKafka     = "kafka"     // runner/kafka: a restarter and N worker Runners
	kindKafkaRaw  = "kafkaraw"  // raw round trips, one in flight
	kindKafkaRawP = "kafkarawp" // raw round trips, -kafkaslots in flight
)

// kafkaWorkerCounts are the worker Runner counts runner/kafka is measured
// with.
var kafkaWorkerCounts = []int{1, 2}

// kafkaEngines returns the Kafka engines: runner/kafka by worker count,
// then the raw round trips.
func kafkaEngines() []engine {
	var out []engine
	for _, n := range kafkaWorkerCounts {
		out = append(out, engine{Name: fmt.Sprintf("%s%d", kindKafka, n), Handler: true, AtLeastOnce: true, Steps: true,
			Kafka: n, KafkaKind: kindKafka,
			About: fmt.Sprintf("runner/kafka: one restarter Runner (Role restarter; jobs submitted and awaited through it) and %d worker Runner(s) "+
				"(Role worker, -kafkaslots Workers each), each Runner on its own Store and connections; default partitions (12 restarter and state, 6 per action topic)", n),
			Run: func(ctx context.Context, sc scenario, run int, o runOpts) (sample, error) {
				return runKafka(ctx, sc, run, o, n)
			}})
	}
	out = append(out, engine{Name: kindKafkaRaw, KafkaKind: kindKafkaRaw,
		About: "raw kafka-go round trip, one in flight: produce one message (~100 bytes; Writer with BatchSize 1, RequiredAcks all), " +
			"read it back with a partition reader (no group), then the next; one per action; a 1-partition topic",
		Run: func(ctx context.Context, sc scenario, run int, o runOpts) (sample, error) {
			return runKafkaRaw(ctx, sc, run, o, 1)
		}})
	out = append(out, engine{Name: kindKafkaRawP, KafkaKind: kindKafkaRawP,
		About: "raw kafka-go round trips, -kafkaslots in flight: as many goroutines each doing kafkaraw's round trip through one shared Writer " +
			"(BatchSize -kafkaslots, BatchTimeout 1ms, RequiredAcks all) and one partition reader; one per action; a 1-partition topic",
		Run: func(ctx context.Context, sc scenario, run int, o runOpts) (sample, error) {
			return runKafkaRaw(ctx, sc, run, o, o.KafkaSlots)
		}})
	return out
}

// kafkaRunTimeout bounds one run of a Kafka engine, setup included.
const kafkaRunTimeout = 5 * time.Minute

// kafkaBenchPrefix is the default start of every run's topic prefix.
const kafkaBenchPrefix = "baton-bench"

// kafkaStats are what a Kafka engine counted over one run.
type kafkaStats struct {
	// Messages produced to the run's topics while it ran (and until the
	// end offsets settled after it), from the broker's end offsets; and
	// of them, those of each kind of topic.
	Messages  int64 `json:"messages"`
	Actions   int64 `json:"actions,omitempty"`   // the action topics: actions dispatched
	Restarter int64 `json:"restarter,omitempty"` // the restarter topic: results (and submits not handed in)
	State     int64 `json:"state,omitempty"`     // the state topic: steps, heads, snapshots
	Stops     int64 `json:"stops,omitempty"`     // the stops topic
	Control   int64 `json:"control,omitempty"`   // the workers' control topic: drains and published loads
	// runner/kafka's own counts: actions started (hooks), results the
	// reducer ignored (duplicates), and what it logged at Warn or above.
	Started  int64  `json:"started,omitempty"`
	Ignored  int64  `json:"ignored,omitempty"`
	Warnings int64  `json:"warnings,omitempty"`
	Warning  string `json:"warning,omitempty"`
	Probes   int    `json:"probes,omitempty"` // probe jobs run before the clock started
	// What runner/kafka logged at debug level that a steady run should
	// not have: consumer group generations, restarter partitions taken
	// over, kafka-go's errors (it retries them), and the first of them.
	Generations int64  `json:"generations,omitempty"`
	Takeovers   int64  `json:"takeovers,omitempty"`
	Retried     int64  `json:"retried,omitempty"`
	Event       string `json:"event,omitempty"`
	// Duplicates lists the messages of the action and restarter topics
	// produced more than once, when those topics did not get exactly one
	// message per handler call.
	Duplicates string `json:"duplicates,omitempty"`
}

// kafkaLog is a slog.Handler that counts what runner/kafka logs at Warn
// and above, and the debug records of a run that is not steady.
type kafkaLog struct {
	mu sync.Mutex
	n  kafkaLogCounts
}

type kafkaLogCounts struct {
	warnings, generations, takeovers, retried int64
	warning, event                            string
}

// mark returns the counts so far, and forgets the texts: those returned
// later are of records after it.
func (l *kafkaLog) mark() kafkaLogCounts {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := l.n
	l.n.warning, l.n.event = "", ""
	return n
}

func (l *kafkaLog) Enabled(context.Context, slog.Level) bool { return true }

func (l *kafkaLog) Handle(_ context.Context, r slog.Record) error {
	event := true
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case r.Level >= slog.LevelWarn:
		l.n.warnings++
	case r.Message == "generation":
		l.n.generations++
	case r.Message == "partition taken over":
		l.n.takeovers++
	case strings.HasPrefix(r.Message, "kafka-go: "), strings.HasPrefix(r.Message, "head write failed"):
		l.n.retried++
	default:
		event = false
	}
	if !event {
		return nil
	}
	var b strings.Builder
	b.WriteString(r.Time.Format("15:04:05.000000 "))
	b.WriteString(r.Message)
	r.Attrs(func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		return true
	})
	if r.Level >= slog.LevelWarn && l.n.warning == "" {
		l.n.warning = b.String()
	}
	l.n.event = b.String() // the last one
	return nil
}

func (l *kafkaLog) WithAttrs(as []slog.Attr) slog.Handler { return &kafkaLogAttrs{l, as} }
func (l *kafkaLog) WithGroup(string) slog.Handler         { return l }

// kafkaLogAttrs is a kafkaLog with attributes (the runner's name).
type kafkaLogAttrs struct {
	l  *kafkaLog
	as []slog.Attr
}

func (h *kafkaLogAttrs) Enabled(context.Context, slog.Level) bool { return true }
func (h *kafkaLogAttrs) Handle(ctx context.Context, r slog.Record) error {
	r = r.Clone()
	r.AddAttrs(h.as...)
	return h.l.Handle(ctx, r)
}
func (h *kafkaLogAttrs) WithAttrs(as []slog.Attr) slog.Handler {
	return &kafkaLogAttrs{h.l, append(append([]slog.Attr(nil), h.as...), as...)}
}
func (h *kafkaLogAttrs) WithGroup(string) slog.Handler { return h }

// kafkaRunPrefix is the topic prefix of one run: fresh for each.
func kafkaRunPrefix(o runOpts, engine string, sc scenario, run int) string {
	return fmt.Sprintf("%s.%s-%s-%d-%d", o.KafkaPrefix, engine, sc.Name, os.Getpid(), run)
}

// runKafka runs sc on runner/kafka deployed as a user would: one
// restarter Runner (Role restarter) and n worker Runners (Role worker,
// o.KafkaSlots Workers each), each on a Store of its own (its own
// connections), under a fresh prefix. Jobs are submitted and awaited
// through the restarter, which owns every partition: a submit is handed
// to its partition's loop (no message), and Wait is woken by the
// restarter's own writes. Results go from the workers to the restarter
// through the restarter topic.
//
// Before the clock starts, it waits until both groups are stable with all
// their members and partitions assigned, then runs probe jobs (one action
// each, told apart by their payload and not counted as the scenario's)
// until every worker has run one: every Runner has then dialed its
// connections and served its partitions.
func runKafka(ctx context.Context, sc scenario, run int, o runOpts, n int) (_ sample, err error) {
	ctx, cancel := context.WithTimeout(ctx, kafkaRunTimeout)
	defer cancel()
	prefix := kafkaRunPrefix(o, fmt.Sprintf("%s%d", kindKafka, n), sc, run)
	adm := newKafkaAdmin(o.Kafka)
	defer func() { err = errors.Join(err, adm.cleanup(prefix)) }()

	logs := &kafkaLog{}
	cfg := kafkarunner.Config{Brokers: o.Kafka, Prefix: prefix, Logger: slog.New(logs)}
	var counters runner.Counters
	hooks := counters.Hooks(nil)
	var stores []*kafkarunner.Store
	var runners []*kafkarunner.Runner
	runErrs := make(chan error, n+1)
	defer func() {
		// Workers first, then the restarter; then the stores.
		for i := len(runners) - 1; i >= 0; i-- {
			err = errors.Join(err, runners[i].Close(), <-runErrs)
		}
		for _, st := range stores {
			err = errors.Join(err, st.Close())
		}
	}()
	start := func(ro kafkarunner.Options) (*kafkarunner.Runner, error) {
		st, err := kafkarunner.Open(ctx, cfg)
		if err != nil {
			return nil, err
		}
		stores = append(stores, st)
		ro.Store, ro.Hooks, ro.Logger = st, hooks, cfg.Logger
		r, err := kafkarunner.New(ro)
		if err != nil {
			return nil, err
		}
		runners = append(runners, r)
		go func() { runErrs <- r.Run(ctx) }()
		return r, nil
	}

	reg := runner.NewRegistry()
	if err := runner.Handle(reg, actionName, handle); err != nil {
		return sample{}, err
	}
	rs, err := start(kafkarunner.Options{WorkerOptions: runner.WorkerOptions{Name: "restarter", Registry: reg}, Role: kafkarunner.RoleRestarter})
	if err != nil {
		return sample{}, err
	}
	probed := make([]atomic.Bool, n)
	for i := range n {
		wreg := runner.NewRegistry()
		// The handler, but a probe (payload n < 0) only marks the
		// worker that ran it.
		err := runner.Handle(wreg, actionName, func(ctx context.Context, in Req) (Resp, error) {
			if in.N < 0 {
				probed[i].Store(true)
				return Resp{ID: in.ID}, nil
			}
			return handle(ctx, in)
		})
		if err != nil {
			return sample{}, err
		}
		if _, err := start(kafkarunner.Options{WorkerOptions: runner.WorkerOptions{Name: fmt.Sprintf("w%d", i), Registry: wreg, Workers: o.KafkaSlots}, Role: kafkarunner.RoleWorker}); err != nil {
			return sample{}, err
		}
	}
	scfg := stores[0].Config()
	if err := adm.waitStable(ctx, prefix+".restarters", 1, stores[0].Partitions()); err != nil {
		return sample{}, err
	}
	if err := adm.waitStable(ctx, prefix+".workers", n, scfg.ActionPartitions); err != nil {
		return sample{}, err
	}
	if err := adm.waitClaims(ctx, prefix+".state", stores[0].Partitions()); err != nil {
		return sample{}, err
	}
	probes := 0
	for ; ; probes++ {
		all := true
		for i := range probed {
			all = all && probed[i].Load()
		}
		if all {
			break
		}
		if probes == 200 {
			return sample{}, fmt.Errorf("after %d probe jobs, not every one of %d workers ran one", probes, n)
		}
		id := job.ID(fmt.Sprintf("probe-%d-%d", run, probes))
		if err := submitWait(ctx, rs, id, ast.Act(actionName, Req{ID: "probe", N: -1})); err != nil {
			return sample{}, fmt.Errorf("probe job: %w", err)
		}
	}

	wf := workflow(sc)
	ids := make([]job.ID, sc.Jobs)
	for i := range ids {
		ids[i] = job.ID(fmt.Sprintf("%s-%d-%d", sc.Name, run, i))
	}
	off0, err := adm.settledOffsets(ctx, prefix)
	if err != nil {
		return sample{}, err
	}
	c0 := counters.Snapshot()
	l0 := logs.mark()
	calls0 := handlerCalls.Load()

	m := startMeter()
	errs := make([]error, len(ids))
	if len(ids) == 1 {
		errs[0] = submitWait(ctx, rs, ids[0], wf)
	} else {
		var wg sync.WaitGroup
		for i, id := range ids {
			wg.Go(func() { errs[i] = submitWait(ctx, rs, id, wf) })
		}
		wg.Wait()
	}
	s := m.stop()

	off1, oerr := adm.settledOffsets(ctx, prefix)
	c1 := counters.Snapshot()
	s.Steps = c1.Steps - c0.Steps
	k := off1.since(off0, prefix)
	k.Started, k.Ignored, k.Probes = c1.ActionsStarted-c0.ActionsStarted, c1.Ignored-c0.Ignored, probes
	l1 := logs.mark()
	k.Warnings, k.Generations, k.Takeovers, k.Retried = l1.warnings-l0.warnings, l1.generations-l0.generations,
		l1.takeovers-l0.takeovers, l1.retried-l0.retried
	k.Warning, k.Event = l1.warning, l1.event
	if calls := handlerCalls.Load() - calls0; oerr == nil && (k.Actions != calls || k.Restarter != calls) {
		// Not one message per action each way: say which were
		// produced more than once, and when.
		k.Duplicates = adm.duplicates(ctx, prefix, off0)
	}
	s.Kafka = &k
	return s, errors.Join(append(errs, oerr)...)
}

// runKafkaRaw measures the raw round trip of kafka-go on the broker: one
// round trip per action of sc, each a message of about 100 bytes produced
// to a 1-partition topic and read back by a partition reader (no group:
// kafka-go's quickest way to consume), with inflight round trips at once,
// each goroutine doing its own one after the other. One in flight, the
// Writer has BatchSize 1: each write goes out at once (with the default
// BatchSize, a lone message waits for BatchTimeout). More in flight, it
// has BatchSize inflight and BatchTimeout 1ms: a batch goes out once
// every round trip in flight has put its message in it, or 1ms after its
// first. Acks from all in-sync replicas, as runner/kafka asks. A few
// round trips before the clock dial the connections.
func runKafkaRaw(ctx context.Context, sc scenario, run int, o runOpts, inflight int) (_ sample, err error) {
	ctx, cancel := context.WithTimeout(ctx, kafkaRunTimeout)
	defer cancel()
	kind := kindKafkaRaw
	if inflight > 1 {
		kind = kindKafkaRawP
	}
	prefix := kafkaRunPrefix(o, kind, sc, run)
	topic := prefix + ".raw"
	adm := newKafkaAdmin(o.Kafka)
	defer func() { err = errors.Join(err, adm.cleanup(prefix)) }()
	if err := adm.createTopic(ctx, topic, 1); err != nil {
		return sample{}, err
	}
	w := &kafka.Writer{
		Addr:         kafka.TCP(o.Kafka...),
		Topic:        topic,
		BatchSize:    inflight,
		BatchTimeout: time.Millisecond,
		RequiredAcks: kafka.RequireAll,
		Transport:    &kafka.Transport{DialTimeout: 5 * time.Second, ClientID: "baton-bench"},
	}
	defer func() { err = errors.Join(err, w.Close()); w.Transport.(*kafka.Transport).CloseIdleConnections() }()

	const warmup = 20
	total := sc.Actions() + warmup
	done := make([]chan struct{}, total)
	for i := range done {
		done[i] = make(chan struct{})
	}
	rd := kafka.NewReader(kafka.ReaderConfig{
		Brokers:   o.Kafka,
		Topic:     topic,
		Partition: 0,
		Dialer:    &kafka.Dialer{ClientID: "baton-bench", Timeout: 5 * time.Second, DualStack: true},
		MinBytes:  1,
		MaxBytes:  4 << 20,
		MaxWait:   250 * time.Millisecond,
	})
	readCtx, stopReading := context.WithCancel(ctx)
	readErr := make(chan error, 1)
	go func() {
		for {
			m, err := rd.FetchMessage(readCtx)
			if err != nil {
				if readCtx.Err() != nil {
					err = nil
				}
				readErr <- err
				return
			}
			i, err := strconv.Atoi(string(m.Key))
			if err != nil || i < 0 || i >= total {
				readErr <- fmt.Errorf("read back a message with key %q", m.Key)
				return
			}
			select {
			case <-done[i]:
				readErr <- fmt.Errorf("read back message %d twice", i)
				return
			default:
				close(done[i])
			}
		}
	}()
	defer func() { stopReading(); err = errors.Join(err, <-readErr, rd.Close()) }()

	keys := make([][]byte, total)
	for i := range keys {
		keys[i] = []byte(strconv.Itoa(i))
	}
	// trips does the round trips of messages from to upto-1, inflight at
	// once.
	trips := func(from, upto int64) error {
		var next atomic.Int64
		next.Store(from)
		errs := make([]error, inflight)
		var wg sync.WaitGroup
		for g := range inflight {
			wg.Go(func() {
				for {
					i := next.Add(1) - 1
					if i >= upto {
						return
					}
					if err := w.WriteMessages(ctx, kafka.Message{Key: keys[i], Value: record[:len(record):len(record)]}); err != nil {
						errs[g] = fmt.Errorf("produce: %w", err)
						return
					}
					select {
					case <-done[i]:
					case <-ctx.Done():
						errs[g] = fmt.Errorf("reading back message %d: %w", i, ctx.Err())
						return
					}
				}
			})
		}
		wg.Wait()
		return errors.Join(errs...)
	}
	if err := trips(0, warmup); err != nil {
		return sample{}, fmt.Errorf("warm-up: %w", err)
	}
	off0, err := adm.settledOffsets(ctx, prefix)
	if err != nil {
		return sample{}, err
	}
	settle()

	m := startMeter()
	terr := trips(warmup, int64(total))
	s := m.stop()

	off1, oerr := adm.settledOffsets(ctx, prefix)
	k := off1.since(off0, prefix)
	s.Kafka = &k
	if terr == nil && oerr == nil && k.Messages != int64(sc.Actions()) {
		terr = fmt.Errorf("the broker counted %d messages for %d round trips", k.Messages, sc.Actions())
	}
	return s, errors.Join(terr, oerr)
}

// kafkaAdmin makes, watches and deletes a run's topics and groups.
type kafkaAdmin struct {
	brokers []string
	cl      *kafka.Client
}

func newKafkaAdmin(brokers []string) *kafkaAdmin {
	return &kafkaAdmin{brokers: brokers, cl: &kafka.Client{Addr: kafka.TCP(brokers...), Timeout: 10 * time.Second,
		Transport: &kafka.Transport{DialTimeout: 5 * time.Second, ClientID: "baton-bench"}}}
}

// fresh returns a client on a transport of its own, and what closes its
// connections. Its metadata is fetched at its first request: a.cl's
// transport serves metadata from a cache it refreshes every 6s (kafka-go's
// default MetadataTTL), which does not list a topic created since (an
// action topic that runner/kafka made after the run's first request);
// its topic listings, end offsets and cleanup would leave the topic out.
func (a *kafkaAdmin) fresh() (*kafka.Client, func()) {
	t := &kafka.Transport{DialTimeout: 5 * time.Second, ClientID: "baton-bench"}
	return &kafka.Client{Addr: kafka.TCP(a.brokers...), Timeout: 10 * time.Second, Transport: t}, t.CloseIdleConnections
}

func (a *kafkaAdmin) createTopic(ctx context.Context, topic string, partitions int) error {
	res, err := a.cl.CreateTopics(ctx, &kafka.CreateTopicsRequest{Topics: []kafka.TopicConfig{{
		Topic: topic, NumPartitions: partitions, ReplicationFactor: -1,
		ConfigEntries: []kafka.ConfigEntry{{ConfigName: "cleanup.policy", ConfigValue: "delete"}}}}})
	if err == nil {
		err = res.Errors[topic]
	}
	if err != nil {
		return fmt.Errorf("create topic %s: %w", topic, err)
	}
	return nil
}

// topics returns the topics whose names start with prefix and a dot, with
// their partition counts, from metadata fetched anew.
func (a *kafkaAdmin) topics(ctx context.Context, prefix string) (map[string]int, error) {
	cl, done := a.fresh()
	defer done()
	return topicsOf(ctx, cl, prefix)
}

func topicsOf(ctx context.Context, cl *kafka.Client, prefix string) (map[string]int, error) {
	md, err := cl.Metadata(ctx, &kafka.MetadataRequest{})
	if err != nil {
		return nil, fmt.Errorf("metadata: %w", err)
	}
	out := map[string]int{}
	for _, t := range md.Topics {
		if strings.HasPrefix(t.Name, prefix+".") && t.Error == nil {
			out[t.Name] = len(t.Partitions)
		}
	}
	return out, nil
}

// offsets are the end offsets of a run's topics, by topic and partition:
// the records ever produced to each.
type offsets map[string][]int64

// endOffsets reads the end offsets of the topics under prefix, from
// metadata fetched anew.
func (a *kafkaAdmin) endOffsets(ctx context.Context, prefix string) (offsets, error) {
	cl, done := a.fresh()
	defer done()
	ts, err := topicsOf(ctx, cl, prefix)
	if err != nil {
		return nil, err
	}
	req := &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{}}
	for t, n := range ts {
		for p := range n {
			req.Topics[t] = append(req.Topics[t], kafka.OffsetRequest{Partition: p, Timestamp: kafka.LastOffset})
		}
	}
	out := offsets{}
	if len(ts) == 0 {
		return out, nil
	}
	res, err := cl.ListOffsets(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("end offsets: %w", err)
	}
	for t, n := range ts {
		if got := len(res.Topics[t]); got != n {
			return nil, fmt.Errorf("end offsets of %s: %d partitions answered of %d", t, got, n)
		}
		out[t] = make([]int64, n)
		for _, po := range res.Topics[t] {
			if po.Error != nil {
				return nil, fmt.Errorf("end offset of %s/%d: %w", t, po.Partition, po.Error)
			}
			if po.Partition < 0 || po.Partition >= n {
				return nil, fmt.Errorf("end offsets of %s: partition %d answered of %d", t, po.Partition, n)
			}
			out[t][po.Partition] = po.LastOffset
		}
	}
	return out, nil
}

// settledOffsets reads the end offsets once they have not moved for
// 100ms (at most 5 s): messages that a run set off and that land after
// its clock stopped (runner/kafka writes a job's head without waiting
// for it) are counted too.
func (a *kafkaAdmin) settledOffsets(ctx context.Context, prefix string) (offsets, error) {
	last, err := a.endOffsets(ctx, prefix)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(5 * time.Second)
	for still := time.Now(); time.Since(still) < 100*time.Millisecond && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
		o, err := a.endOffsets(ctx, prefix)
		if err != nil {
			return nil, err
		}
		if !o.equal(last) {
			still = time.Now()
		}
		last = o
	}
	return last, nil
}

func (o offsets) equal(p offsets) bool {
	if len(o) != len(p) {
		return false
	}
	for t, n := range o {
		if m, ok := p[t]; !ok || !slices.Equal(m, n) {
			return false
		}
	}
	return true
}

// since returns the messages produced between before and o, by kind of
// topic of runner/kafka under prefix.
func (o offsets) since(before offsets, prefix string) kafkaStats {
	var k kafkaStats
	for t, ends := range o {
		var d int64
		for i, n := range ends {
			d += n
			if i < len(before[t]) {
				d -= before[t][i]
			}
		}
		k.Messages += d
		switch {
		case strings.HasPrefix(t, prefix+".action."):
			k.Actions += d
		case t == prefix+".restarter":
			k.Restarter += d
		case t == prefix+".state":
			k.State += d
		case t == prefix+".stops":
			k.Stops += d
		case t == prefix+".workers":
			k.Control += d
		}
	}
	return k
}

// duplicates reads the messages of the action and restarter topics
// under prefix produced since before, and lists the keys produced more
// than once: "topic/partition key at offsets (produce times), same value
// or not". It is for a run that did not get one message per
// action each way; an error reading is listed too.
func (a *kafkaAdmin) duplicates(ctx context.Context, prefix string, before offsets) string {
	after, err := a.endOffsets(ctx, prefix)
	if err != nil {
		return err.Error()
	}
	cl, done := a.fresh()
	defer done()
	var out []string
	for _, t := range slices.Sorted(maps.Keys(after)) {
		if t != prefix+".restarter" && !strings.HasPrefix(t, prefix+".action.") {
			continue
		}
		for p, end := range after[t] {
			var from int64
			if p < len(before[t]) {
				from = before[t][p]
			}
			type seen struct {
				offs, times []string
				value       []byte
				differ      bool
			}
			msgs := map[string]*seen{}
			var order []string
			for from < end {
				res, err := cl.Fetch(ctx, &kafka.FetchRequest{Topic: t, Partition: p, Offset: from, MinBytes: 1, MaxBytes: 32 << 20, MaxWait: 100 * time.Millisecond})
				if err == nil {
					err = res.Error
				}
				if err != nil {
					return strings.Join(append(out, fmt.Sprintf("reading %s/%d: %v", t, p, err)), "; ")
				}
				got := false
				for {
					r, err := res.Records.ReadRecord()
					if err != nil {
						break
					}
					if r.Offset < from {
						continue
					}
					got = true
					from = r.Offset + 1
					key, _ := kafka.ReadAll(r.Key)
					val, _ := kafka.ReadAll(r.Value)
					id := string(key)
					m := msgs[id]
					if m == nil {
						m = &seen{value: val}
						msgs[id] = m
						order = append(order, id)
					}
					m.differ = m.differ || !bytes.Equal(m.value, val)
					m.offs = append(m.offs, strconv.FormatInt(r.Offset, 10))
					m.times = append(m.times, r.Time.Format("15:04:05.000000"))
				}
				if !got {
					break
				}
			}
			for _, id := range order {
				if m := msgs[id]; len(m.offs) > 1 {
					same := "the same value"
					if m.differ {
						same = "values differ"
					}
					out = append(out, fmt.Sprintf("%s/%d %s at offsets %s (produced %s), %s", strings.TrimPrefix(t, prefix+"."), p, id,
						strings.Join(m.offs, ","), strings.Join(m.times, ","), same))
				}
			}
		}
	}
	if len(out) == 0 {
		return "no key twice"
	}
	return strings.Join(out, "; ")
}

// waitStable waits until group is stable with members members, and
// partitions partitions assigned among them.
func (a *kafkaAdmin) waitStable(ctx context.Context, group string, members, partitions int) error {
	last := "not described"
	for {
		res, err := a.cl.DescribeGroups(ctx, &kafka.DescribeGroupsRequest{GroupIDs: []string{group}})
		switch {
		case err != nil:
			last = err.Error()
		case len(res.Groups) != 1:
			last = fmt.Sprintf("%d groups described", len(res.Groups))
		case res.Groups[0].Error != nil:
			last = res.Groups[0].Error.Error()
		default:
			g := res.Groups[0]
			parts := 0
			for _, m := range g.Members {
				for _, t := range m.MemberAssignments.Topics {
					parts += len(t.Partitions)
				}
			}
			if g.GroupState == "Stable" && len(g.Members) == members && parts == partitions {
				return nil
			}
			last = fmt.Sprintf("%s, %d members, %d partitions assigned", g.GroupState, len(g.Members), parts)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("group %s not stable with %d members and %d partitions (%s): %w", group, members, partitions, last, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// waitClaims waits until every partition of the state topic holds a
// record: before any job, the restarter's claim of it.
func (a *kafkaAdmin) waitClaims(ctx context.Context, topic string, partitions int) error {
	req := &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{}}
	for p := range partitions {
		req.Topics[topic] = append(req.Topics[topic], kafka.OffsetRequest{Partition: p, Timestamp: kafka.LastOffset})
	}
	last := "not read"
	for {
		res, err := a.cl.ListOffsets(ctx, req)
		if err != nil {
			last = err.Error()
		} else {
			claimed := 0
			for _, po := range res.Topics[topic] {
				if po.Error == nil && po.LastOffset > 0 {
					claimed++
				}
			}
			if claimed == partitions {
				return nil
			}
			last = fmt.Sprintf("%d of %d claimed", claimed, partitions)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: the restarter has not claimed every partition (%s): %w", topic, last, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// cleanup deletes the topics under prefix and runner/kafka's groups of
// it, then closes the client's connections.
func (a *kafkaAdmin) cleanup(prefix string) error {
	defer a.cl.Transport.(*kafka.Transport).CloseIdleConnections()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ts, err := a.topics(ctx, prefix)
	if err != nil {
		return fmt.Errorf("clean up %s: %w", prefix, err)
	}
	var errs []error
	if len(ts) > 0 {
		req := &kafka.DeleteTopicsRequest{}
		for t := range ts {
			req.Topics = append(req.Topics, t)
		}
		res, err := a.cl.DeleteTopics(ctx, req)
		if err != nil {
			errs = append(errs, fmt.Errorf("clean up %s: delete topics: %w", prefix, err))
		} else {
			for t, e := range res.Errors {
				if e != nil {
					errs = append(errs, fmt.Errorf("clean up %s: delete topic %s: %w", prefix, t, e))
				}
			}
		}
	}
	// The groups exist only for runner/kafka's runs; a group that does
	// not exist is no error.
	res, err := a.cl.DeleteGroups(ctx, &kafka.DeleteGroupsRequest{GroupIDs: []string{prefix + ".restarters", prefix + ".workers"}})
	if err != nil {
		errs = append(errs, fmt.Errorf("clean up %s: delete groups: %w", prefix, err))
	} else {
		for g, e := range res.Errors {
			if e != nil && !errors.Is(e, kafka.GroupIdNotFound) && !errors.Is(e, kafka.GroupCoordinatorNotAvailable) {
				errs = append(errs, fmt.Errorf("clean up %s: delete group %s: %w", prefix, g, e))
			}
		}
	}
	return errors.Join(errs...)
}

// needsKafka reports whether a Kafka engine is measured on a scenario.
func (cfg *config) needsKafka() bool {
	for _, e := range cfg.Engines {
		for _, sc := range cfg.Scenarios {
			if e.KafkaKind != "" && cfg.measured(e, sc) {
				return true
			}
		}
	}
	return false
}

// startKafka sets up the Kafka engines' broker: the one at addr if
// given, else an in-process broker (kfake, one node) in the driver's
// process, listening on 127.0.0.1, kept for the whole run. With
// cpuprofile set and the broker in-process, the driver writes a CPU
// profile of its own process (the broker, for the whole run) to
// brokerProfile. It returns what stops the broker.
func (cfg *config) startKafka(addr, brokerProfile string) (stop func(), err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if addr != "" {
		cfg.Kafka = strings.Split(addr, ",")
		if _, err := newKafkaAdmin(cfg.Kafka).topics(ctx, "-"); err != nil {
			return nil, fmt.Errorf("-kafka %s: %w", addr, err)
		}
		cfg.KafkaBroker = fmt.Sprintf("the broker(s) at %s (given with -kafka: its own settings; messages are counted from the end offsets of each run's own topics)", addr)
		return func() {}, nil
	}
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		return nil, fmt.Errorf("starting an in-process Kafka broker: %w", err)
	}
	cfg.Kafka = c.ListenAddrs()
	cfg.KafkaBroker = fmt.Sprintf("an in-process broker (kfake, one node, in memory) in the driver's process on %s, started for this run", strings.Join(cfg.Kafka, ","))
	var prof *os.File
	if brokerProfile != "" {
		if prof, err = os.Create(brokerProfile); err == nil {
			err = pprof.StartCPUProfile(prof)
		}
		if err != nil {
			c.Close()
			return nil, fmt.Errorf("broker profile: %w", err)
		}
	}
	if cfg.Progress != nil {
		fmt.Fprintf(cfg.Progress, "Kafka broker (kfake) serves on %s\n", strings.Join(cfg.Kafka, ","))
	}
	return func() {
		if prof != nil {
			pprof.StopCPUProfile()
			prof.Close()
			if cfg.Notes != nil {
				fmt.Fprintf(cfg.Notes, "CPU profile of the driver's process, the in-process Kafka broker's (the whole run): %s\n", brokerProfile)
			}
		}
		c.Close()
	}, nil
}

func messagesOf(s sample) float64 {
	if s.Kafka == nil {
		return 0
	}
	return float64(s.Kafka.Messages)
}

// kafkaPrefixOK reports whether p may start the runs' topic prefixes:
// runner/kafka allows 41 bytes of letters, digits, '.', '_' and '-' in a
// prefix, and a run adds up to 25 to -kafkaprefix.
func kafkaPrefixOK(p string) bool {
	if p == "" || len(p) > 16 {
		return false
	}
	for _, c := range []byte(p) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// kafkaMessageLimit is runner/kafka's default Config.MaxMessageBytes,
// which the engines keep: the largest message it writes, a submit's
// included.
const kafkaMessageLimit = 1_000_000

var workflowSizes sync.Map // scenario -> int: ast.Encode's size of its workflow

// workflowSize returns the size of sc's workflow as ast.Encode writes it:
// about what runner/kafka's submit message of it holds.
func workflowSize(sc scenario) int {
	if n, ok := workflowSizes.Load(sc); ok {
		return n.(int)
	}
	b, err := ast.Encode(workflow(sc))
	n := len(b)
	if err != nil {
		n = -1
	}
	workflowSizes.Store(sc, n)
	return n
}

// kafkaSkip says why the Kafka engine e is not measured on sc, or "".
func (cfg *config) kafkaSkip(e engine, sc scenario) string {
	if e.KafkaKind == kindKafka {
		if n := workflowSize(sc); n > kafkaMessageLimit {
			return fmt.Sprintf("runner/kafka refuses the job: its workflow is %s bytes encoded, and a submit is one message, "+
				"over runner/kafka's MaxMessageBytes of %s (its default, and about the broker's default max.message.bytes)",
				fmtCount(int64(n)), fmtCount(kafkaMessageLimit))
		}
	}
	if sc.Actions() > cfg.KafkaMax {
		return fmt.Sprintf("%s actions, more than -kafkamax %s: at a few thousand round trips per second, a run would take half a "+
			"minute or more and a child with its warm runs minutes; -kafkamax %d runs it",
			fmtCount(int64(sc.Actions())), fmtCount(int64(cfg.KafkaMax)), sc.Actions())
	}
	return ""
}
