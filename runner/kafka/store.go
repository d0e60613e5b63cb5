package kafka

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/store"
)

// Errors of the store, wrapped with the job or partition; test with
// errors.Is.
var (
	// ErrNotOwner is returned by a write to a job whose partition this
	// Store does not own: only the restarter that owns a partition writes
	// its jobs.
	ErrNotOwner = errors.New("kafka: this process does not own the job's partition")
	// ErrReclaim is returned for a partition after a write to it failed:
	// the write may or may not have landed, so the cache is not trusted
	// until the owner claims the partition again (which rebuilds it).
	ErrReclaim = errors.New("kafka: a state write failed; the partition must be claimed again")
)

// Store keeps jobs in the state topic. It implements store.Store,
// store.Lister, store.Historian and store.Deleter. Its methods are safe for
// concurrent use.
//
// Only the owner of a partition writes its jobs: a Runner's restarter
// claims the partitions its group assigns it; ClaimAll makes a Store the
// owner of every partition, for a process that runs alone. Load and List
// of a partition this Store does not own read it to its current end
// first; History reads the job's partition from its start.
type Store struct {
	cfg    Config
	log    *slog.Logger
	cl     *kafka.Client
	adm    *admin
	w      *producer // state topic
	cw     *producer // control topic (PREFIX.workers)
	nparts int
	limit  int // the largest message baton writes, overhead included
	chunk  int // the largest snapshot chunk
	name   string
	parts  []*partition
	stats  storeStats

	mu      sync.Mutex
	closed  bool
	all     bool                // ClaimAll: claims again by itself after a failed write
	waiters map[job.ID]*waiters // of a change of a job (changes)
	bg      sync.WaitGroup      // head writes not waited for
}

// The store's interfaces: a store.Store that lists, tells a job's Info
// (with the timestamps of its records), keeps history and deletes.
var (
	_ store.Store     = (*Store)(nil)
	_ store.Lister    = (*Store)(nil)
	_ store.Stater    = (*Store)(nil)
	_ store.Historian = (*Store)(nil)
	_ store.Deleter   = (*Store)(nil)
)

type storeStats struct {
	fenced, malformedState atomic.Int64
}

// Open connects to the cluster, creates the restarter, state and stops
// topics that do not exist (with Config.NoCreate, it fails with a
// *MissingTopicsError instead), checks those that do (the state topic
// must be compacted and have as many partitions as the restarter topic;
// the others must not be compacted), and returns a Store that owns no
// partition. An Open that fails leaves no connection open.
func Open(ctx context.Context, cfg Config) (_ *Store, err error) {
	if err := cfg.fill(); err != nil {
		return nil, err
	}
	adm := newAdmin(&cfg)
	cl := adm.cl
	defer func() {
		if err != nil {
			closeTransport(cl.Transport)
		}
	}()
	restarter, state, stops := adm.specs()
	infos, err := adm.ensure(ctx, restarter, state, stops)
	if err != nil {
		return nil, err
	}
	if infos[0].partitions != infos[1].partitions {
		return nil, fmt.Errorf("kafka: topic %s has %d partitions and %s %d: they must have as many (a job's results and state share a partition number)",
			restarter.name, infos[0].partitions, state.name, infos[1].partitions)
	}
	limit := cfg.MaxMessageBytes
	for _, in := range infos {
		if in.maxMessage > 0 && in.maxMessage-2*messageOverhead < limit {
			limit = in.maxMessage - 2*messageOverhead
		}
	}
	if limit < 4096 {
		return nil, fmt.Errorf("kafka: the topics' max.message.bytes leave %d bytes for a message; baton needs at least 4096", limit)
	}
	host, _ := os.Hostname()
	s := &Store{
		cfg: cfg, log: cfg.Logger, cl: cl, adm: adm, nparts: infos[0].partitions, limit: limit,
		chunk: limit - 1024, name: fmt.Sprintf("%s-%d-%04x", host, os.Getpid(), rand.Uint32()&0xffff),
		waiters: map[job.ID]*waiters{},
	}
	s.cfg.MaxMessageBytes = limit
	s.w = cfg.writer(cfg.stateTopic(), jobBalancer{}, limit, adm.exists)
	s.cw = cfg.writer(cfg.controlTopic(), jobBalancer{}, limit, adm.exists)
	s.parts = make([]*partition, s.nparts)
	for i := range s.parts {
		s.parts[i] = &partition{id: i, mu: newChanMutex()}
		s.parts[i].reset()
	}
	return s, nil
}

// Partitions returns the partition count of the restarter and state topics.
func (s *Store) Partitions() int { return s.nparts }

// MaxMessageBytes returns the bound on every message baton writes.
func (s *Store) MaxMessageBytes() int { return s.limit }

// Config returns the store's configuration, defaults filled in.
func (s *Store) Config() Config { return s.cfg }

func (s *Store) usable(ctx context.Context) error {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return store.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("kafka: %w", err)
	}
	return nil
}

func (s *Store) part(id job.ID) *partition { return s.parts[partitionOf(id, s.nparts)] }

// waiters are those who wait for a change of one job: ch is closed at
// the change; n counts them.
type waiters struct {
	ch chan struct{}
	n  int
}

// notify wakes whoever waits for a change of the jobs ids (changes).
func (s *Store) notify(ids ...job.ID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		if w := s.waiters[id]; w != nil {
			close(w.ch)
			delete(s.waiters, id)
		}
	}
}

// changes returns a channel closed at the next change of job id this
// Store sees (a write of its own, or a read that found something new of
// it), and what the caller calls once it no longer waits.
func (s *Store) changes(id job.ID) (<-chan struct{}, func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := s.waiters[id]
	if w == nil {
		w = &waiters{ch: make(chan struct{})}
		s.waiters[id] = w
	}
	w.n++
	return w.ch, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if w.n--; w.n == 0 && s.waiters[id] == w {
			delete(s.waiters, id)
		}
	}
}

// ClaimAll makes this Store the owner of every partition: it claims each
// and rebuilds it. It is for a process that runs alone, with no restarter
// group (tests, tools): after a failed write it claims the partition again
// by itself. A restarter that joins the group later takes partitions over
// from it, fencing its writes.
func (s *Store) ClaimAll(ctx context.Context) error {
	if err := s.usable(ctx); err != nil {
		return err
	}
	s.mu.Lock()
	s.all = true
	s.mu.Unlock()
	for _, p := range s.parts {
		if err := p.mu.lock(ctx); err != nil {
			return err
		}
		_, _, err := s.claimLocked(ctx, p, 0, true, s.name)
		p.mu.unlock()
		if err != nil {
			return err
		}
	}
	return nil
}

// claim makes this Store the owner of partition part, which generation
// gen of the restarter group assigned it (fresh: just now; else it claims
// again after a failed write): it reads the partition to its end, writes
// a claim with a fresh token and an epoch above every claim read, reads
// on past its claim, and returns the token and the IDs of the unfinished
// jobs, sorted.
func (s *Store) claim(ctx context.Context, part int, gen int32, fresh bool, owner string) (uint64, []job.ID, error) {
	if err := s.usable(ctx); err != nil {
		return 0, nil, err
	}
	p := s.parts[part]
	if err := p.mu.lock(ctx); err != nil {
		return 0, nil, err
	}
	defer p.mu.unlock()
	return s.claimLocked(ctx, p, gen, fresh, owner)
}

// claimLocked claims p for owner (a name, for people); gen 0 means no
// group (ClaimAll). Once its claim counts, it deletes with tombstones the
// claims it supersedes that no record depends on (claimLog.superseded).
func (s *Store) claimLocked(ctx context.Context, p *partition, gen int32, fresh bool, owner string) (uint64, []job.ID, error) {
	p.reset()
	if err := s.catchUp(ctx, p); err != nil {
		p.reset()
		return 0, nil, fmt.Errorf("kafka: claim state partition %d: %w", p.id, err)
	}
	last := p.epoch
	ep := epoch{era: last.era, gen: uint64(gen)}
	switch g := uint64(gen); {
	case gen == 0:
		ep = epoch{last.era, last.gen, last.seq + 1}
	case g > last.gen:
	case g == last.gen:
		ep.seq = last.seq + 1
	case fresh:
		// A live generation below one recorded: the group was deleted
		// and made anew, and counts its generations from 1 again.
		s.log.Warn("the restarter group's generation is below one recorded in the state partition (the group was made anew?): starting a new era",
			"partition", p.id, "generation", gen, "recorded", last)
		ep = epoch{era: last.era + 1, gen: g}
	default:
		p.reset()
		return 0, nil, fmt.Errorf("kafka: claim state partition %d again: %w: generation %d is over (the partition was claimed in generation %d)",
			p.id, ErrNotOwner, gen, last.gen)
	}
	tok := rand.Uint64() | 1
	v, _ := json.Marshal(claimMsg{V: wireFormat, Partition: p.id, Owner: owner, Epoch: ep.String(), At: time.Now().UTC()})
	m := kafka.Message{Key: []byte(claimKey(p.id, tok)), Value: v, Headers: []kafka.Header{
		{Key: hdrPartition, Value: []byte(strconv.Itoa(p.id))}, tokenHeader(tok), {Key: hdrEpoch, Value: []byte(ep.String())}}}
	if err := s.w.WriteMessages(ctx, m); err != nil {
		p.reset()
		return 0, nil, fmt.Errorf("kafka: claim state partition %d: %w", p.id, err)
	}
	if err := s.catchUp(ctx, p); err != nil {
		p.reset()
		return 0, nil, fmt.Errorf("kafka: claim state partition %d: %w", p.id, err)
	}
	if p.fence != tok {
		p.reset()
		return 0, nil, fmt.Errorf("kafka: claim state partition %d: %w: a claim of a higher epoch was read", p.id, ErrNotOwner)
	}
	p.token = tok
	if keys := p.claims.superseded(); len(keys) > 0 {
		msgs := make([]kafka.Message, len(keys))
		for i, k := range keys {
			msgs[i] = kafka.Message{Key: []byte(k), Headers: []kafka.Header{{Key: hdrPartition, Value: []byte(strconv.Itoa(p.id))}, tokenHeader(tok)}}
		}
		// Best effort: a claim left is deleted by the next claim.
		if err := s.w.WriteMessages(ctx, msgs...); err != nil {
			s.log.Debug("deleting superseded claims", "partition", p.id, "claims", len(keys), "err", err)
		}
	}
	var ids []job.ID
	for id, e := range p.jobs {
		if e.broken == nil && !e.latest.Done() {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	s.log.Debug("claimed state partition", "partition", p.id, "jobs", len(p.jobs), "unfinished", len(ids))
	return tok, ids, nil
}

// release gives partition part up, if this Store still holds it under
// token: its jobs are forgotten, and read again when asked for.
func (s *Store) release(part int, token uint64) {
	p := s.parts[part]
	p.mu.lock(context.Background())
	defer p.mu.unlock()
	if p.token == token {
		p.reset()
	}
}

// dirty reports whether partition part needs claiming again.
func (s *Store) dirty(part int) bool {
	p := s.parts[part]
	p.mu.lock(context.Background())
	defer p.mu.unlock()
	return p.dirty
}

// owned checks, with p.mu held, that this Store owns p and trusts its
// cache; a ClaimAll store claims again after a failed write.
func (s *Store) owned(ctx context.Context, p *partition) error {
	if p.token != 0 && !p.dirty {
		return nil
	}
	s.mu.Lock()
	all := s.all
	s.mu.Unlock()
	switch {
	case all:
		_, _, err := s.claimLocked(ctx, p, 0, false, s.name)
		return err
	case p.dirty:
		return fmt.Errorf("state partition %d: %w", p.id, ErrReclaim)
	}
	return fmt.Errorf("state partition %d: %w", p.id, ErrNotOwner)
}

// view returns p's entry for id, reading p first if this Store does not
// own it. p.mu is held.
func (s *Store) view(ctx context.Context, p *partition) error {
	if p.token != 0 || s.isAll() {
		return s.owned(ctx, p)
	}
	return s.catchUp(ctx, p)
}

func (s *Store) isAll() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.all
}

// Create implements store.Store: it writes the job's origin snapshot.
func (s *Store) Create(ctx context.Context, j job.Job) error {
	if err := store.CheckCreate(j); err != nil {
		return err
	}
	if err := s.usable(ctx); err != nil {
		return err
	}
	id := j.ID()
	p := s.part(id)
	if err := p.mu.lock(ctx); err != nil {
		return err
	}
	if err := s.owned(ctx, p); err != nil {
		p.mu.unlock()
		return fmt.Errorf("job %s: %w", id, err)
	}
	if _, ok := p.jobs[id]; ok {
		p.mu.unlock()
		return fmt.Errorf("%w: %s", store.ErrExists, id)
	}
	enc, err := job.Encode(j)
	if err != nil {
		p.mu.unlock()
		return err
	}
	e := &entry{latest: j, creating: true}
	e.begin()
	p.jobs[id] = e
	tok := p.token
	p.mu.unlock()

	msgs, keys := s.snapshotMessages(id, 1, tok, enc)
	at := stamp(msgs)
	err = s.write(ctx, msgs)

	p.mu.lock(context.Background())
	defer p.mu.unlock()
	e.end()
	if err != nil {
		if p.jobs[id] == e {
			delete(p.jobs, id)
		}
		s.failed(p, tok)
		return fmt.Errorf("job %s: create: %w", id, err)
	}
	if p.jobs[id] != e {
		return nil // the partition was read again meanwhile: it knows
	}
	e.creating = false
	e.snapVer, e.snapBytes, e.keys = 1, uint64(len(enc)), keys
	e.created, e.updated = at, at
	p.settledAt(j)
	s.notify(id)
	return nil
}

// Save implements store.Store: it appends the step (and a snapshot, when
// store.SnapshotDue says so).
func (s *Store) Save(ctx context.Context, j job.Job, step job.Step) error {
	if err := store.CheckSave(j, step); err != nil {
		return err
	}
	if err := s.usable(ctx); err != nil {
		return err
	}
	id := j.ID()
	p := s.part(id)
	if err := p.mu.lock(ctx); err != nil {
		return err
	}
	if err := s.owned(ctx, p); err != nil {
		p.mu.unlock()
		return fmt.Errorf("job %s: %w", id, err)
	}
	e, err := p.settled(ctx, id)
	if err == nil {
		err = s.owned(ctx, p)
	}
	switch {
	case err != nil:
		p.mu.unlock()
		return fmt.Errorf("job %s: %w", id, err)
	case e == nil || e.creating:
		p.mu.unlock()
		return fmt.Errorf("%w: %s", store.ErrNotFound, id)
	case e.broken != nil:
		p.mu.unlock()
		return e.broken
	case e.latest.Version() != j.Version()-1:
		have := e.latest.Version() // read under p.mu: a writer may change e.latest once it is given up
		p.mu.unlock()
		return fmt.Errorf("%w: job %s is at version %d, save of version %d", store.ErrConflict, id, have, j.Version())
	case e.latest.Incarnation() != j.Incarnation():
		have := e.latest.Incarnation()
		p.mu.unlock()
		return fmt.Errorf("%w: job %s is incarnation %x, save of incarnation %x (the job was deleted and made again)",
			store.ErrConflict, id, have, j.Incarnation())
	}
	e.begin()
	tok := p.token
	old := *e
	p.mu.unlock()

	rec := job.EncodeStep(step)
	key := stepKey(id, j.Version(), tok)
	msgs := []kafka.Message{{Key: []byte(key), Value: rec, Headers: []kafka.Header{tokenHeader(tok)}}}
	if n := size(msgs[0]); n > s.limit {
		err = fmt.Errorf("%w: job %s: the step to version %d is %d bytes, over the state topic's limit of %d bytes (MaxMessageBytes)", errTooLarge, id, j.Version(), n, s.limit)
	}
	var snap []byte
	var snapKeys []string
	if err == nil && store.SnapshotDue(old.sinceSteps+1, old.sinceBytes+uint64(len(rec)), old.snapBytes, s.cfg.SnapshotEvery) {
		if snap, err = job.Encode(j); err == nil {
			var sm []kafka.Message
			sm, snapKeys = s.snapshotMessages(id, j.Version(), tok, snap)
			msgs = append(msgs, sm...)
			for _, k := range old.snapKeys { // the snapshot it supersedes
				msgs = append(msgs, kafka.Message{Key: []byte(k), Headers: []kafka.Header{tokenHeader(tok)}})
			}
		}
	}
	var at time.Time
	if err == nil {
		at = stamp(msgs)
		err = s.write(ctx, msgs)
	}

	p.mu.lock(context.Background())
	defer p.mu.unlock()
	mine := p.jobs[id] == e
	e.end()
	if err != nil {
		if !errors.Is(err, errTooLarge) {
			s.failed(p, tok)
		}
		return err
	}
	if !mine {
		return nil // the partition was read again meanwhile: it knows
	}
	e.prev, e.latest, e.dispatched = e.latest, j, false
	e.updated = at
	p.settledAt(j)
	e.keys = append(e.keys, key)
	if snap != nil {
		e.keys = append(slices.DeleteFunc(e.keys, func(k string) bool { return slices.Contains(old.snapKeys, k) }), snapKeys...)
		e.snapVer, e.snapKeys, e.snapBytes, e.sinceSteps, e.sinceBytes = j.Version(), snapKeys, uint64(len(snap)), 0, 0
	} else {
		e.sinceSteps++
		e.sinceBytes += uint64(len(rec))
	}
	s.notify(id)
	return nil
}

// stamp gives msgs the time now as their timestamp, and returns it: the
// time store.Info tells of the write (a topic whose brokers stamp the
// append time instead tells that after a reread).
func stamp(msgs []kafka.Message) time.Time {
	now := time.Now().UTC().Truncate(time.Millisecond) // Kafka keeps milliseconds
	for i := range msgs {
		msgs[i].Time = now
	}
	return now
}

// info is what List tells of the job.
func (e *entry) info() store.Info {
	in := store.InfoOf(e.latest)
	in.Created, in.Updated = e.created.UTC(), e.updated.UTC()
	return in
}

// begin marks e as being written. p.mu is held.
func (e *entry) begin() {
	e.writing = true
	e.written = make(chan struct{})
}

// end marks the write of e over. p.mu is held.
func (e *entry) end() {
	if e.writing {
		e.writing = false
		close(e.written)
	}
}

// settled waits, with p.mu held, until the job id is not being written,
// and returns its entry (nil if there is none). It gives p.mu up while it
// waits.
func (p *partition) settled(ctx context.Context, id job.ID) (*entry, error) {
	for {
		e := p.jobs[id]
		if e == nil || !e.writing {
			return e, nil
		}
		ch := e.written
		p.mu.unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			p.mu.lock(context.Background())
			return nil, fmt.Errorf("kafka: %w", ctx.Err())
		}
		if err := p.mu.lock(ctx); err != nil {
			p.mu.lock(context.Background())
			return nil, err
		}
	}
}

// errTooLarge marks a write refused before it was tried.
var errTooLarge = errors.New("kafka: message too large")

// failed records that a write to p under tok failed. p.mu is held.
func (s *Store) failed(p *partition, tok uint64) {
	if p.token == tok {
		p.dirty = true
		s.log.Warn("a state write failed: the partition will be claimed again and rebuilt", "partition", p.id)
	}
}

// snapshotMessages returns the chunks of the snapshot enc of job id at
// version v, and their keys.
func (s *Store) snapshotMessages(id job.ID, v, tok uint64, enc []byte) ([]kafka.Message, []string) {
	n := max(1, (len(enc)+s.chunk-1)/s.chunk)
	msgs := make([]kafka.Message, 0, n)
	keys := make([]string, 0, n)
	for k := range n {
		part := enc[k*len(enc)/n : (k+1)*len(enc)/n]
		key := chunkKey(id, v, tok, k)
		keys = append(keys, key)
		msgs = append(msgs, kafka.Message{Key: []byte(key), Value: part, Headers: []kafka.Header{
			tokenHeader(tok), {Key: hdrChunks, Value: []byte(strconv.Itoa(n))}}})
	}
	return msgs, keys
}

// write produces msgs to the state topic and waits for every in-sync
// replica.
func (s *Store) write(ctx context.Context, msgs []kafka.Message) error {
	if err := s.w.WriteMessages(ctx, msgs...); err != nil {
		return fmt.Errorf("kafka: write to %s: %w", s.cfg.stateTopic(), err)
	}
	return nil
}

// markDispatched records that the actions of job id's version v were all
// dispatched: its head is rewritten with "dispatched":true, without
// waiting (a head lost in a crash only makes the next owner dispatch
// those actions again).
func (s *Store) markDispatched(id job.ID, v uint64) {
	p := s.part(id)
	p.mu.lock(context.Background())
	e := p.jobs[id]
	if e == nil || e.broken != nil || p.token == 0 || e.latest.Version() != v || e.dispatched {
		p.mu.unlock()
		return
	}
	e.dispatched = true
	tok, head := p.token, headValue(e.latest, true)
	p.mu.unlock()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.bg.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.bg.Done()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := s.w.WriteMessages(ctx, kafka.Message{Key: []byte(headKey(id)), Value: head, Headers: []kafka.Header{tokenHeader(tok)}}); err != nil {
			s.log.Debug("head write failed (the job's last actions may be dispatched again after a crash)", "job", id, "err", err)
		}
	}()
}

// suspects returns the outstanding actions of job id that may not have
// been dispatched: none once the job's latest step was marked
// dispatched; else those its latest step made, or, when the job before it
// is not known, all.
func (s *Store) suspects(id job.ID) (ids map[string]bool, all bool, version uint64) {
	p := s.part(id)
	p.mu.lock(context.Background())
	defer p.mu.unlock()
	e := p.jobs[id]
	if e == nil || e.broken != nil {
		return nil, true, 0
	}
	version = e.latest.Version()
	if e.dispatched {
		return map[string]bool{}, false, version
	}
	if e.prev.ID() == "" || e.prev.Version()+1 != version {
		return nil, true, version
	}
	before := map[string]bool{}
	for _, a := range e.prev.Outstanding() {
		before[a.ID] = true
	}
	ids = map[string]bool{}
	for _, a := range e.latest.Outstanding() {
		if !before[a.ID] {
			ids[a.ID] = true
		}
	}
	return ids, false, version
}

// Load implements store.Store.
func (s *Store) Load(ctx context.Context, id job.ID) (job.Job, error) {
	return s.load(ctx, id, nil)
}

// load loads job id; a partition this Store does not own is read to its
// end first, unless read says it was already (read, if not nil, records
// the partitions read).
func (s *Store) load(ctx context.Context, id job.ID, read map[int]bool) (j job.Job, err error) {
	err = s.with(ctx, id, read, func(e *entry) { j = e.latest })
	return j, err
}

// Stat implements store.Stater: the Info of job id, with the timestamps
// of its first and newest records, as List tells it; a partition this
// Store does not own is read to its end first.
func (s *Store) Stat(ctx context.Context, id job.ID) (in store.Info, err error) {
	err = s.with(ctx, id, nil, func(e *entry) { in = e.info() })
	return in, err
}

// with calls f with the entry of job id, under its partition's lock, as
// load says; or returns why there is none to read.
func (s *Store) with(ctx context.Context, id job.ID, read map[int]bool, f func(*entry)) error {
	if err := s.usable(ctx); err != nil {
		return err
	}
	p := s.part(id)
	if err := p.mu.lock(ctx); err != nil {
		return err
	}
	defer p.mu.unlock()
	if !read[p.id] {
		if err := s.view(ctx, p); err != nil {
			return fmt.Errorf("job %s: %w", id, err)
		}
		if read != nil {
			read[p.id] = true
		}
	}
	e, err := p.settled(ctx, id)
	switch {
	case err != nil:
		return fmt.Errorf("job %s: %w", id, err)
	case e == nil || e.creating:
		return fmt.Errorf("%w: %s", store.ErrNotFound, id)
	case e.broken != nil:
		return e.broken
	}
	f(e)
	return nil
}

// List implements store.Lister: every partition this Store does not own is
// read to its end first. A job whose records do not replay is listed with
// Info.Damaged set (the error Load returns for it, wrapping
// job.ErrCorrupt) and its other fields zero.
func (s *Store) List(ctx context.Context, q store.Query) ([]store.Info, error) {
	if err := s.usable(ctx); err != nil {
		return nil, err
	}
	var out []store.Info
	for _, p := range s.parts {
		if err := p.mu.lock(ctx); err != nil {
			return nil, err
		}
		if err := s.view(ctx, p); err != nil {
			p.mu.unlock()
			return nil, err
		}
		for id, e := range p.jobs {
			var in store.Info
			switch {
			case e.broken != nil:
				// One job that does not replay hides no other: it is
				// listed as damaged, its status unknown.
				in = store.Info{ID: id, Damaged: e.broken}
			case e.latest.ID() == "" || e.creating:
				continue
			default:
				in = e.info()
			}
			if q.Match(in) {
				out = append(out, in)
			}
		}
		p.mu.unlock()
	}
	slices.SortFunc(out, func(a, b store.Info) int { return cmp.Compare(a.ID, b.ID) })
	if q.Limit > 0 && len(out) > q.Limit {
		out = out[:q.Limit]
	}
	return out, nil
}

// History implements store.Historian: it reads the job's partition from
// its start.
func (s *Store) History(ctx context.Context, id job.ID) (store.History, error) {
	if err := s.usable(ctx); err != nil {
		return store.History{}, err
	}
	part := partitionOf(id, s.nparts)
	var (
		fence      uint64
		fenceEpoch epoch
		origin     map[uint64]*gathering // by token
		first      *gathering            // the first origin read whole
		steps      map[uint64][]byte
	)
	resetJob := func() { origin, first, steps = map[uint64]*gathering{}, nil, map[uint64][]byte{} }
	resetJob()
	_, err := s.readState(ctx, part, 0, func(off int64, m kafka.Message) {
		k, err := parseStateKey(string(m.Key))
		if err != nil {
			return
		}
		tokHdr, _ := header(m, hdrToken)
		tok, terr := parseInc(tokHdr)
		if k.kind == recClaim {
			eh, _ := header(m, hdrEpoch)
			if ep, ok := parseEpoch(eh); ok && m.Value != nil && terr == nil && tok == k.token && (fence == 0 || fenceEpoch.less(ep)) {
				fence, fenceEpoch = tok, ep
			}
			return
		}
		if k.id != id || terr != nil || tok != fence {
			return
		}
		switch {
		case k.kind == recHead && m.Value == nil:
			resetJob()
		case k.kind == recStep && m.Value != nil:
			if _, ok := steps[k.version]; !ok {
				steps[k.version] = m.Value
			}
		case k.kind == recChunk && m.Value != nil && k.version == 1 && first == nil:
			nh, _ := header(m, hdrChunks)
			n, err := strconv.Atoi(nh)
			if err != nil || n < 1 || k.chunk >= n {
				return
			}
			g := origin[k.token]
			if g == nil {
				g = &gathering{parts: make([][]byte, n)}
				origin[k.token] = g
			}
			if k.chunk < len(g.parts) && g.parts[k.chunk] == nil {
				g.parts[k.chunk] = m.Value
				if g.got++; g.got == len(g.parts) {
					first = g
				}
			}
		}
	})
	if err != nil {
		return store.History{}, fmt.Errorf("job %s: history: %w", id, err)
	}
	if first == nil {
		if len(origin) == 0 && len(steps) == 0 {
			return store.History{}, fmt.Errorf("%w: %s", store.ErrNotFound, id)
		}
		return store.History{}, fmt.Errorf("%w: job %s in state partition %d: its origin snapshot is missing or incomplete", job.ErrCorrupt, id, part)
	}
	var enc []byte
	for _, b := range first.parts {
		enc = append(enc, b...)
	}
	o, err := job.Decode(enc)
	if err != nil {
		return store.History{}, fmt.Errorf("job %s: origin: %w", id, err)
	}
	h := store.History{Origin: o}
	for v := uint64(2); ; v++ {
		rec, ok := steps[v]
		if !ok {
			break
		}
		st, err := job.DecodeStep(id, v, rec)
		if err != nil {
			return store.History{}, fmt.Errorf("job %s: step of version %d: %w", id, v, err)
		}
		h.Steps = append(h.Steps, st)
	}
	if len(steps) != len(h.Steps) {
		return store.History{}, fmt.Errorf("%w: job %s in state partition %d: %d steps, of which %d follow the origin without a gap",
			job.ErrCorrupt, id, part, len(steps), len(h.Steps))
	}
	return h, nil
}

// Delete implements store.Deleter: it writes tombstones for every record
// of the job, its head last. Only the owner of the job's partition
// deletes.
func (s *Store) Delete(ctx context.Context, id job.ID) error {
	if err := s.usable(ctx); err != nil {
		return err
	}
	p := s.part(id)
	if err := p.mu.lock(ctx); err != nil {
		return err
	}
	if err := s.owned(ctx, p); err != nil {
		p.mu.unlock()
		return fmt.Errorf("job %s: %w", id, err)
	}
	e, ok := p.jobs[id]
	if !ok {
		p.mu.unlock()
		return fmt.Errorf("%w: %s", store.ErrNotFound, id)
	}
	tok := p.token
	var msgs []kafka.Message
	for _, k := range e.keys {
		msgs = append(msgs, kafka.Message{Key: []byte(k), Headers: []kafka.Header{tokenHeader(tok)}})
	}
	msgs = append(msgs, kafka.Message{Key: []byte(headKey(id)), Headers: []kafka.Header{tokenHeader(tok)}})
	delete(p.jobs, id)
	p.mu.unlock()
	if err := s.write(ctx, msgs); err != nil {
		p.mu.lock(context.Background())
		s.failed(p, tok)
		p.mu.unlock()
		return fmt.Errorf("job %s: delete: %w", id, err)
	}
	s.notify(id)
	return nil
}

// Close implements store.Store. It waits for the head writes in flight.
// Calling it twice is safe.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	s.bg.Wait()
	err := errors.Join(closeWriter(s.w), closeWriter(s.cw))
	closeTransport(s.cl.Transport)
	return err
}
