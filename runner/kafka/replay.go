package kafka

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/batonwf/baton/job"
)

// partition is what a Store knows of one state partition: the jobs read
// from it (and, when this Store owns it, written to it), and where reading
// stopped.
type partition struct {
	id int

	// mu guards the fields below. It is held while the partition is read
	// (a claim, a catch-up), never while a Save writes.
	mu     chanMutex
	token  uint64 // this Store's claim on the partition; 0: not owned
	dirty  bool   // a write under token failed: the cache may be wrong
	fence  uint64 // the token of the claim that counts (the highest epoch read)
	epoch  epoch  // its epoch
	next   int64  // the next offset to read
	jobs   map[job.ID]*entry
	gather map[chunkID]*gathering // snapshot chunks being gathered
	expiry expiryHeap             // settled jobs, by clock (retention.go)
	claims claimLog               // the claims read (claims.go)
}

// chanMutex is a mutex that a context can give up waiting for.
type chanMutex chan struct{}

func newChanMutex() chanMutex { return make(chanMutex, 1) }

func (m chanMutex) lock(ctx context.Context) error {
	select {
	case m <- struct{}{}:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("kafka: %w", ctx.Err())
	}
}

func (m chanMutex) unlock() { <-m }

// entry is one job of a partition.
type entry struct {
	latest job.Job
	// prev is the job at latest's version minus one, when known: the
	// actions of latest's step are those outstanding in latest and not in
	// prev.
	prev job.Job
	// dispatched says the actions of latest's step were all dispatched.
	dispatched bool
	broken     error         // the job's records do not replay: Load reports this
	writing    bool          // a Save or Create of this job is in flight
	written    chan struct{} // closed when that write is over
	creating   bool          // its Create is in flight: it does not exist yet

	snapVer                           uint64   // the newest snapshot's version
	snapKeys                          []string // its chunks' keys (none for the origin: it stays)
	snapBytes, sinceSteps, sinceBytes uint64   // for store.SnapshotDue
	keys                              []string // every record key of the job but the head

	// created and updated are the timestamps of the job's origin record
	// and of its newest step or snapshot record (store.Info); zero when
	// not known.
	created, updated time.Time
}

type chunkID struct {
	id      job.ID
	version uint64
	token   uint64
}

type gathering struct {
	parts [][]byte
	got   int
	keys  []string
}

// pendJob is what one read found of one job, applied to its entry by
// settle once the read is over.
type pendJob struct {
	reset    bool // a tombstone: forget what was known before
	snap     *snapshot
	steps    map[uint64][]byte
	keys     []string
	headVer  uint64
	headDisp bool
	// originAt and lastAt are the timestamps of the origin's records and
	// of the newest step or snapshot record read.
	originAt, lastAt time.Time
}

type snapshot struct {
	version uint64
	data    []byte
	keys    []string
}

func (p *partition) reset() {
	p.token, p.dirty, p.fence, p.next, p.epoch = 0, false, 0, 0, epoch{}
	p.jobs = map[job.ID]*entry{}
	p.gather = map[chunkID]*gathering{}
	p.expiry = nil
	p.claims = claimLog{}
}

// catchUp reads the partition from where reading stopped to its end, and
// applies what it read. p.mu is held.
func (s *Store) catchUp(ctx context.Context, p *partition) error {
	pend := map[job.ID]*pendJob{}
	next, err := s.readState(ctx, p.id, p.next, func(off int64, m kafka.Message) {
		s.applyRecord(p, pend, off, m)
	})
	if err != nil {
		return err
	}
	p.next = next
	ids := make([]job.ID, 0, len(pend))
	for id, pj := range pend {
		s.settle(p, id, pj)
		ids = append(ids, id)
	}
	s.notify(ids...)
	return nil
}

// applyRecord applies one state record to pend, or, for a claim, to p.
func (s *Store) applyRecord(p *partition, pend map[job.ID]*pendJob, off int64, m kafka.Message) {
	k, err := parseStateKey(string(m.Key))
	if err != nil {
		s.log.Warn("state record with a malformed key: skipped", "partition", p.id, "offset", off, "err", err)
		s.stats.malformedState.Add(1)
		return
	}
	tokHdr, _ := header(m, hdrToken)
	tok, terr := parseInc(tokHdr)
	if k.kind == recClaim {
		eh, _ := header(m, hdrEpoch)
		ep, ok := parseEpoch(eh)
		switch {
		case m.Value == nil:
			p.claims.deleted(string(m.Key))
		case !ok || terr != nil || tok != k.token:
			s.log.Warn("claim record with bad headers: skipped", "partition", p.id, "offset", off)
		case p.fence == 0 || p.epoch.less(ep):
			p.fence, p.epoch = k.token, ep
			p.claims.counted(string(m.Key), k.token)
			s.log.Debug("claim read", "partition", p.id, "offset", off, "token", hexInc(k.token), "epoch", ep)
		default:
			p.claims.outranked(string(m.Key))
			s.log.Debug("claim read that an earlier one outranks: it does not count", "partition", p.id, "offset", off,
				"token", hexInc(k.token), "epoch", ep, "counting", p.epoch)
		}
		return
	}
	if terr == nil {
		p.claims.record(tok)
	}
	if terr != nil || tok != p.fence || tok == 0 {
		// Written under a claim that a newer one fenced, or before any
		// claim: it does not count.
		s.stats.fenced.Add(1)
		s.log.Debug("state record fenced: written under a superseded claim", "partition", p.id, "offset", off, "key", string(m.Key),
			"token", tokHdr, "claim", hexInc(p.fence))
		return
	}
	pj := pend[k.id]
	if pj == nil {
		pj = &pendJob{steps: map[uint64][]byte{}}
		pend[k.id] = pj
	}
	switch k.kind {
	case recHead:
		if m.Value == nil {
			*pj = pendJob{reset: true, steps: map[uint64][]byte{}}
			for c := range p.gather {
				if c.id == k.id {
					delete(p.gather, c)
				}
			}
			return
		}
		var h headMsg
		if err := decodeStrict(m.Value, &h); err != nil {
			s.log.Warn("malformed head record: skipped", "partition", p.id, "offset", off, "job", k.id, "err", err)
			return
		}
		switch {
		case h.Version > pj.headVer:
			pj.headVer, pj.headDisp = h.Version, h.Dispatched
		case h.Version == pj.headVer:
			pj.headDisp = pj.headDisp || h.Dispatched
		}
	case recStep:
		if m.Value == nil {
			return
		}
		pj.stamped(m.Time, false)
		if _, ok := pj.steps[k.version]; !ok {
			pj.steps[k.version] = m.Value
		}
		pj.keys = append(pj.keys, string(m.Key))
	case recChunk:
		if m.Value == nil {
			return
		}
		pj.stamped(m.Time, k.version == 1)
		pj.keys = append(pj.keys, string(m.Key))
		nh, _ := header(m, hdrChunks)
		n, err := strconv.Atoi(nh)
		if err != nil || n < 1 || k.chunk >= n {
			s.log.Warn("snapshot chunk with a bad chunk count: skipped", "partition", p.id, "offset", off, "key", string(m.Key))
			return
		}
		c := chunkID{k.id, k.version, k.token}
		g := p.gather[c]
		if g == nil {
			g = &gathering{parts: make([][]byte, n)}
			p.gather[c] = g
		}
		if k.chunk >= len(g.parts) {
			return
		}
		if g.parts[k.chunk] == nil {
			g.parts[k.chunk] = m.Value
			g.got++
			g.keys = append(g.keys, string(m.Key))
		}
		if g.got == len(g.parts) {
			delete(p.gather, c)
			if pj.snap == nil || k.version > pj.snap.version {
				var data []byte
				for _, part := range g.parts {
					data = append(data, part...)
				}
				pj.snap = &snapshot{version: k.version, data: data, keys: g.keys}
			}
		}
	}
}

// stamped records the timestamp t of a step or snapshot record read, of
// the origin's when origin.
func (pj *pendJob) stamped(t time.Time, origin bool) {
	if t.IsZero() {
		return
	}
	if origin && (pj.originAt.IsZero() || t.Before(pj.originAt)) {
		pj.originAt = t
	}
	if t.After(pj.lastAt) {
		pj.lastAt = t
	}
}

// settle applies what a read found of job id to its entry.
func (s *Store) settle(p *partition, id job.ID, pj *pendJob) {
	e := p.jobs[id]
	if pj.reset {
		delete(p.jobs, id)
		e = nil
	}
	ne := &entry{}
	if e != nil {
		*ne = *e
		ne.keys = append(append([]string(nil), e.keys...), pj.keys...)
	} else {
		ne.keys = pj.keys
	}
	if !pj.originAt.IsZero() && (ne.created.IsZero() || pj.originAt.Before(ne.created)) {
		ne.created = pj.originAt
	}
	if pj.lastAt.After(ne.updated) {
		ne.updated = pj.lastAt
	}
	broken := func(format string, args ...any) {
		ne.broken = fmt.Errorf("%w: job %s in state partition %d: %s", job.ErrCorrupt, id, p.id, fmt.Sprintf(format, args...))
		p.jobs[id] = ne
		s.log.Error("job state does not replay", "job", id, "partition", p.id, "err", ne.broken)
	}
	if ne.broken != nil {
		p.jobs[id] = ne
		return
	}
	base := ne.latest
	replayed := 0
	if sn := pj.snap; sn != nil && sn.version > base.Version() && !reaches(pj.steps, base, sn.version) {
		j, err := job.Decode(sn.data)
		switch {
		case err != nil:
			broken("snapshot at version %d: %v", sn.version, err)
			return
		case j.ID() != id || j.Version() != sn.version:
			broken("snapshot at version %d holds job %s version %d", sn.version, j.ID(), j.Version())
			return
		case base.ID() != "" && j.Incarnation() != base.Incarnation():
			broken("snapshot at version %d is of incarnation %x, not %x", sn.version, j.Incarnation(), base.Incarnation())
			return
		}
		base, ne.prev = j, job.Job{}
		ne.snapVer, ne.snapBytes, ne.sinceSteps, ne.sinceBytes = sn.version, uint64(len(sn.data)), 0, 0
		ne.snapKeys = nil
		if sn.version > 1 {
			ne.snapKeys = sn.keys
		}
	} else if sn != nil && sn.version > ne.snapVer && sn.version <= base.Version()+uint64(len(pj.steps)) {
		// A snapshot the steps reach: it is the newest one all the same.
		ne.snapVer, ne.snapBytes = sn.version, uint64(len(sn.data))
		ne.snapKeys = nil
		if sn.version > 1 {
			ne.snapKeys = sn.keys
		}
	}
	if base.ID() == "" {
		if len(pj.steps) > 0 {
			broken("steps with no origin snapshot (the job's first records are missing)")
		}
		return
	}
	for v := base.Version() + 1; ; v++ {
		rec, ok := pj.steps[v]
		if !ok {
			break
		}
		st, err := job.DecodeStep(id, v, rec)
		if err != nil {
			broken("step record of version %d: %v", v, err)
			return
		}
		nj, err := job.Replay(base, []job.Step{st})
		if err != nil {
			broken("%v", err)
			return
		}
		ne.prev, base = base, nj
		replayed++
		if v > ne.snapVer {
			ne.sinceSteps++
			ne.sinceBytes += uint64(len(rec))
		}
	}
	for v := range pj.steps {
		if v > base.Version() {
			broken("step of version %d follows version %d: the steps between are missing", v, base.Version())
			return
		}
	}
	switch {
	case pj.headVer == base.Version():
		ne.dispatched = pj.headDisp || (replayed == 0 && ne.latest.Version() == base.Version() && ne.dispatched)
	case replayed > 0 || ne.latest.Version() != base.Version():
		ne.dispatched = false
	}
	ne.latest = base
	p.jobs[id] = ne
	p.settledAt(base)
}

// reaches reports whether steps go from base's version up to v without a
// gap (base must be a job).
func reaches(steps map[uint64][]byte, base job.Job, v uint64) bool {
	if base.ID() == "" {
		return false
	}
	for w := base.Version() + 1; w <= v; w++ {
		if _, ok := steps[w]; !ok {
			return false
		}
	}
	return true
}

// readState reads state partition part from offset from to its current end,
// calling fn for each record, and returns the offset after the last one.
//
// Its first fetch asks for what is there without waiting (MinBytes 0),
// and the answer carries the partition's end as it was then (the high
// watermark): a read whose new records fit in one answer is one round
// trip, not a request for the end offset and then a fetch. When that
// fetch fails (the partition starts later than from, say), the end comes
// from ListOffsets and readRange reads on, as before.
func (s *Store) readState(ctx context.Context, part int, from int64, fn func(off int64, m kafka.Message)) (int64, error) {
	topic := s.cfg.stateTopic()
	if err := s.cfg.fault(faultRequest, topic, nil); err != nil {
		return from, err
	}
	end := int64(-1)
	res, err := s.cl.Fetch(ctx, &kafka.FetchRequest{Topic: topic, Partition: part, Offset: from,
		MinBytes: 0, MaxBytes: 32 << 20, MaxWait: 50 * time.Millisecond})
	if err == nil {
		err = res.Error
	}
	switch {
	case err == nil:
		end = res.HighWatermark
		if from, _, err = readRecords(res, topic, part, from, fn); err != nil {
			return from, err
		}
	case ctx.Err() != nil:
		return from, fmt.Errorf("kafka: read %s/%d at offset %d: %w", topic, part, from, err)
	}
	if end < 0 {
		if end, err = s.endOffset(ctx, topic, part); err != nil {
			return from, err
		}
	}
	return s.readRange(ctx, topic, part, from, end, fn)
}

// readRange reads topic/part from offset from to offset end, calling fn
// for each record, and returns the offset after the last one.
func (s *Store) readRange(ctx context.Context, topic string, part int, from, end int64, fn func(off int64, m kafka.Message)) (int64, error) {
	empty := 0
	for from < end {
		if err := ctx.Err(); err != nil {
			return from, fmt.Errorf("kafka: read %s/%d: %w", topic, part, err)
		}
		var res *kafka.FetchResponse
		var err error
		for attempt := 1; ; attempt++ {
			if err := s.cfg.fault(faultRequest, topic, nil); err != nil {
				return from, err
			}
			res, err = s.cl.Fetch(ctx, &kafka.FetchRequest{Topic: topic, Partition: part, Offset: from,
				MinBytes: 1, MaxBytes: 32 << 20, MaxWait: 50 * time.Millisecond})
			if err == nil {
				err = res.Error
			}
			// A fetch that ran out of Config.Timeout (a broker slow to
			// send a large partition) is tried again, twice.
			if err == nil || attempt == 3 || ctx.Err() != nil || !errors.Is(err, context.DeadlineExceeded) {
				break
			}
			s.cfg.Logger.Debug("kafka: a fetch timed out; trying again", "topic", topic, "partition", part, "offset", from, "attempt", attempt)
		}
		if errors.Is(err, kafka.OffsetOutOfRange) {
			// The partition starts later: compaction removed its first
			// records (tombstones included), or retention did.
			first, ferr := s.firstOffset(ctx, topic, part)
			if ferr == nil && first > from {
				s.log.Debug("the partition starts after the offset read from", "topic", topic, "partition", part, "from", from, "start", first)
				from = first
				continue
			}
		}
		if err != nil {
			return from, fmt.Errorf("kafka: read %s/%d at offset %d: %w", topic, part, from, err)
		}
		next, got, err := readRecords(res, topic, part, from, fn)
		if from = next; err != nil {
			return from, err
		}
		if got == 0 {
			// Nothing between from and the end but what compaction
			// removed: after a few empty answers, the read is over.
			if empty++; empty >= 3 {
				s.log.Debug("nothing left to read before the partition's end", "topic", topic, "partition", part, "from", from, "end", end)
				from = end
			}
		}
	}
	return from, nil
}

// readRecords calls fn for each record of res, a fetch's answer for
// topic/part at offset from, at from or after, and returns the offset
// after the last one (from if none) and how many there were.
func readRecords(res *kafka.FetchResponse, topic string, part int, from int64, fn func(off int64, m kafka.Message)) (next int64, got int, err error) {
	for {
		r, err := res.Records.ReadRecord()
		if errors.Is(err, io.EOF) {
			return from, got, nil
		}
		if err != nil {
			return from, got, fmt.Errorf("kafka: read %s/%d at offset %d: %w", topic, part, from, err)
		}
		if r.Offset < from {
			continue
		}
		m := kafka.Message{Headers: r.Headers, Time: r.Time}
		if r.Key != nil {
			if m.Key, err = kafka.ReadAll(r.Key); err != nil {
				return from, got, fmt.Errorf("kafka: read %s/%d at offset %d: %w", topic, part, r.Offset, err)
			}
		}
		if r.Value != nil {
			if m.Value, err = kafka.ReadAll(r.Value); err != nil {
				return from, got, fmt.Errorf("kafka: read %s/%d at offset %d: %w", topic, part, r.Offset, err)
			}
			if m.Value == nil {
				m.Value = []byte{}
			}
		}
		fn(r.Offset, m)
		from = r.Offset + 1
		got++
	}
}

// backlogEnd returns the offset after the last record of topic/part, if a
// reader starting at from (an offset, or kafka.FirstOffset) has records to
// read before it; else 0.
func (s *Store) backlogEnd(ctx context.Context, topic string, part int, from int64) (int64, error) {
	end, err := s.endOffset(ctx, topic, part)
	if err != nil || from >= 0 {
		if from >= end {
			end = 0
		}
		return end, err
	}
	first, err := s.firstOffset(ctx, topic, part)
	if err != nil || first >= end {
		return 0, err
	}
	return end, nil
}

// firstOffset returns the offset of the first record of topic/part.
func (s *Store) firstOffset(ctx context.Context, topic string, part int) (int64, error) {
	res, err := s.cl.ListOffsets(ctx, &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{
		topic: {{Partition: part, Timestamp: kafka.FirstOffset}}}})
	if err != nil {
		return 0, fmt.Errorf("kafka: start offset of %s/%d: %w", topic, part, err)
	}
	for _, po := range res.Topics[topic] {
		if po.Partition == part {
			if po.Error != nil {
				return 0, fmt.Errorf("kafka: start offset of %s/%d: %w", topic, part, po.Error)
			}
			return po.FirstOffset, nil
		}
	}
	return 0, fmt.Errorf("kafka: start offset of %s/%d: not in the answer", topic, part)
}

// endOffset returns the offset after the last record of topic/part.
func (s *Store) endOffset(ctx context.Context, topic string, part int) (int64, error) {
	res, err := s.cl.ListOffsets(ctx, &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{
		topic: {{Partition: part, Timestamp: kafka.LastOffset}}}})
	if err != nil {
		return 0, fmt.Errorf("kafka: end offset of %s/%d: %w", topic, part, err)
	}
	for _, po := range res.Topics[topic] {
		if po.Partition == part {
			if po.Error != nil {
				return 0, fmt.Errorf("kafka: end offset of %s/%d: %w", topic, part, po.Error)
			}
			return po.LastOffset, nil
		}
	}
	return 0, fmt.Errorf("kafka: end offset of %s/%d: not in the answer", topic, part)
}
