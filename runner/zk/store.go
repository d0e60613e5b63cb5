package zk

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	"github.com/batonwf/baton/store"
)

// Sizes. ZooKeeper refuses a node's data, and a request, over its
// jute.maxbuffer (1 MB by default): a snapshot is cut into chunks, and a
// transition's multi-op is kept under maxMulti.
const (
	chunkSize = 512 << 10 // one snapshot chunk
	maxMulti  = 900 << 10 // one multi-op, all its ops together
	// MaxStepBytes bounds one step record: the results of one transition
	// with their outputs and messages.
	MaxStepBytes = 768 << 10
)

// Store keeps jobs in ZooKeeper (see the package doc for the layout). It
// implements store.Store, store.Lister, store.Historian and
// store.Deleter, and is safe for concurrent use by many processes: Save
// is a compare-and-swap of the job's node, so of two writers of one
// version exactly one wins.
type Store struct {
	c     *conn
	owned bool // Close closes the connection

	mu     sync.Mutex
	cache  map[job.ID]cached
	closed bool
}

// What a Store is: a store with every optional capability but Sweeper
// (the workers sweep the root: see the package doc, Retention),
// and a cache the engine starts from.
var (
	_ store.Store     = (*Store)(nil)
	_ store.Lister    = (*Store)(nil)
	_ store.Stater    = (*Store)(nil)
	_ store.Historian = (*Store)(nil)
	_ store.Deleter   = (*Store)(nil)
	_ runner.Cache    = (*Store)(nil)
)

// cached is a job as loaded or saved here, with the meta record and the
// znode version it was read or written at.
type cached struct {
	j    job.Job
	m    meta
	zver int32
}

// maxCached bounds the jobs the cache holds; beyond it, it starts afresh.
const maxCached = 4096

// Open connects to ZooKeeper and returns a store on cfg.Root, creating
// the root's nodes if they are missing. It waits for a session until ctx
// ends.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	c, err := dial(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return &Store{c: c, owned: true, cache: map[job.ID]cached{}}, nil
}

// Root returns the node the store keeps its jobs under.
func (s *Store) Root() string { return s.c.l.root }

// Close closes the connection. Calls after Close fail with
// store.ErrClosed; a second Close does nothing.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.cache = nil
	s.mu.Unlock()
	if s.owned {
		s.c.close()
	}
	return nil
}

func (s *Store) usable(id job.ID) error {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return store.ErrClosed
	}
	if err := id.Check(); err != nil {
		return err
	}
	return zkNameOK(string(id))
}

func (s *Store) remember(id job.ID, e cached) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cache == nil {
		return
	}
	if len(s.cache) >= maxCached {
		clear(s.cache)
	}
	s.cache[id] = e
}

func (s *Store) recall(id job.ID) (cached, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.cache[id]
	return e, ok
}

// Cached returns the job as this store last loaded or saved it, without
// reading ZooKeeper; it may be stale (runner.Cache): a transition made
// from a stale copy fails to save with store.ErrConflict.
func (s *Store) Cached(id job.ID) (job.Job, bool) {
	e, ok := s.recall(id)
	if !ok || e.m.Version == 0 {
		return job.Job{}, false
	}
	return e.j, true
}

func (s *Store) forget(id job.ID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.cache, id)
}

func newTag() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// chunks cuts data into chunks of at most chunkSize (one, empty, for no
// data).
func chunks(data []byte) [][]byte {
	var cs [][]byte
	for len(data) > chunkSize {
		cs = append(cs, data[:chunkSize])
		data = data[chunkSize:]
	}
	return append(cs, data)
}

// Create stores a job made by job.New: its meta record and its origin
// snapshot in one multi-op, or, for a snapshot too large for one request,
// the node first, then the chunks, then the meta record.
func (s *Store) Create(ctx context.Context, j job.Job) error {
	if err := store.CheckCreate(j); err != nil {
		return err
	}
	id := j.ID()
	if err := s.usable(id); err != nil {
		return err
	}
	enc, err := job.Encode(j)
	if err != nil {
		return err
	}
	ops, m, after, err := s.createOps(ctx, j, enc)
	if err != nil {
		return err
	}
	if _, failed, err := s.c.multi(ctx, "create job "+string(id), ops); err != nil {
		if failed == 0 && errors.Is(err, zk.ErrNodeExists) {
			return fmt.Errorf("job %s: %w", id, store.ErrExists)
		}
		return fmt.Errorf("job %s: create: %w", id, err)
	}
	return after(ctx, m)
}

// createOps returns the multi-op that creates job j (encoded as enc), and
// what to do once it succeeded: for a large snapshot, the multi creates
// the node with an unfinished record, and after writes the chunks and the
// record.
func (s *Store) createOps(ctx context.Context, j job.Job, enc []byte) ([]any, meta, func(context.Context, meta) error, error) {
	id, inc := j.ID(), j.Incarnation()
	if len(enc) > s.c.maxJob {
		return nil, meta{}, nil, fmt.Errorf("job %s: its state is %d bytes encoded, over the limit of %d (Config.MaxJobBytes): keep large payloads outside ZooKeeper and pass references", id, len(enc), s.c.maxJob)
	}
	var m meta
	m.setJob(j)
	tag := newTag()
	cs := chunks(enc)
	m.Snapshot, m.SnapTag, m.Chunks, m.SnapBytes = 1, tag, len(cs), uint64(len(enc))
	m.OriginTag, m.OriginChunks = tag, len(cs)
	if len(enc) <= maxMulti/2 {
		ops := []any{
			s.c.createOp(s.c.l.job(id), encodeMeta(m), 0),
			s.c.createOp(s.c.l.incarnation(id, inc), nil, 0),
		}
		if j.Done() {
			// Settled as made (a workflow with nothing to run): indexed
			// for the retention sweep.
			now := time.Now()
			if err := s.c.ensureBucket(ctx, now); err != nil {
				return nil, meta{}, nil, fmt.Errorf("job %s: create: %w", id, err)
			}
			ops = append(ops, s.c.createOp(s.c.l.settledEntry(now, id), []byte(m.Incarnation), 0))
		}
		for k, c := range cs {
			ops = append(ops, s.c.createOp(s.c.l.snapChunk(id, inc, 1, tag, k), c, 0))
		}
		return ops, m, func(_ context.Context, m meta) error {
			s.remember(id, cached{j: j, m: m, zver: 0})
			return nil
		}, nil
	}
	unfinished := m
	unfinished.Version = 0
	ops := []any{
		s.c.createOp(s.c.l.job(id), encodeMeta(unfinished), 0),
		s.c.createOp(s.c.l.incarnation(id, inc), nil, 0),
	}
	return ops, m, func(ctx context.Context, m meta) error {
		for k, c := range cs {
			if _, err := s.c.create(ctx, s.c.l.snapChunk(id, inc, 1, tag, k), c, 0); err != nil && !errors.Is(err, zk.ErrNodeExists) {
				return fmt.Errorf("job %s: create: write snapshot chunk %d of %d: %w", id, k+1, len(cs), err)
			}
		}
		var st *zk.Stat
		err := s.c.do(ctx, "set "+s.c.l.job(id), func() (err error) {
			st, err = s.c.c.Set(s.c.l.job(id), encodeMeta(m), 0)
			return err
		})
		if err != nil {
			return fmt.Errorf("job %s: create: write its record: %w", id, err)
		}
		s.remember(id, cached{j: j, m: m, zver: st.Version})
		return nil
	}, nil
}

// Save appends step to job j's journal: one multi-op that sets the job's
// record at the version it was read at and creates the step node (and,
// when a snapshot is due, its chunks).
func (s *Store) Save(ctx context.Context, j job.Job, step job.Step) error {
	if err := store.CheckSave(j, step); err != nil {
		return err
	}
	if err := s.usable(j.ID()); err != nil {
		return err
	}
	sv, err := s.prepareSave(ctx, j, step)
	if err != nil {
		return err
	}
	if _, failed, err := s.c.multi(ctx, "save job "+string(j.ID()), sv.ops); err != nil {
		sv.abandon(ctx)
		return sv.mapErr(failed, err)
	}
	sv.done(ctx, sv.old)
	return nil
}

// save is a prepared Save: the ops of its multi-op, first, and what to do
// after it.
type save struct {
	s       *Store
	j       job.Job
	m, old  meta     // the record written, and the one it replaces
	zver    int32    // of the job's node before the write
	ops     []any    // ops[0] sets the record, ops[1] creates the step
	index   int      // the op that indexes a settling job (retention), or -1
	written []string // chunks written ahead of the multi-op
}

// prepareSave reads the job's record (unless the cache holds it at the
// version j was made from), checks that j was made from it, and builds
// the writes. A snapshot larger than a multi-op can carry is written
// ahead, in chunks that the record then makes current; if the multi-op
// fails they are deleted (abandon).
func (s *Store) prepareSave(ctx context.Context, j job.Job, step job.Step) (*save, error) {
	id, inc := j.ID(), j.Incarnation()
	rec := job.EncodeStep(step)
	if len(rec) > MaxStepBytes {
		return nil, fmt.Errorf("job %s v%d: step record of %d bytes is over the limit of %d (ZooKeeper's request size): results too large", id, j.Version(), len(rec), MaxStepBytes)
	}
	e, ok := s.recall(id)
	if !ok || e.m.Version != j.Version()-1 || e.j.Incarnation() != inc {
		data, st, err := s.c.get(ctx, s.c.l.job(id))
		if errors.Is(err, zk.ErrNoNode) {
			return nil, fmt.Errorf("job %s: %w", id, store.ErrNotFound)
		}
		if err != nil {
			return nil, fmt.Errorf("job %s: save: %w", id, err)
		}
		m, err := decodeMeta(id, data)
		if err != nil {
			return nil, err
		}
		e = cached{m: m, zver: st.Version}
	}
	if mi, _ := e.m.incarnation(); mi != inc || e.m.Version != j.Version()-1 {
		return nil, fmt.Errorf("job %s: saving v%d of incarnation %016x, stored v%d of %s: %w", id, j.Version(), inc, e.m.Version, e.m.Incarnation, store.ErrConflict)
	}
	sv := &save{s: s, j: j, zver: e.zver, index: -1}
	m := e.m
	m.setJob(j)
	if stopsActions(step) {
		m.Stops++
	}
	m.SinceSteps++
	m.SinceBytes += uint64(len(rec))
	var snapOps []any
	if store.SnapshotDue(m.SinceSteps, m.SinceBytes, m.SnapBytes, s.c.every) {
		enc, err := job.Encode(j)
		if err != nil {
			return nil, err
		}
		tag := newTag()
		cs := chunks(enc)
		for k, c := range cs {
			p := s.c.l.snapChunk(id, inc, j.Version(), tag, k)
			if len(enc)+len(rec) <= maxMulti/2 {
				snapOps = append(snapOps, s.c.createOp(p, c, 0))
				continue
			}
			if _, err := s.c.create(ctx, p, c, 0); err != nil {
				sv.abandon(ctx)
				if errors.Is(err, zk.ErrNoNode) {
					return nil, fmt.Errorf("job %s: %w (its incarnation is gone)", id, store.ErrConflict)
				}
				return nil, fmt.Errorf("job %s: save: write snapshot chunk %d of %d: %w", id, k+1, len(cs), err)
			}
			sv.written = append(sv.written, p)
		}
		m.Snapshot, m.SnapTag, m.Chunks, m.SnapBytes = j.Version(), tag, len(cs), uint64(len(enc))
		m.SinceSteps, m.SinceBytes = 0, 0
	}
	sv.m, sv.old = m, e.m
	sv.ops = append([]any{
		&zk.SetDataRequest{Path: s.c.l.job(id), Data: encodeMeta(m), Version: e.zver},
		s.c.createOp(s.c.l.step(id, inc, j.Version()), rec, 0),
	}, snapOps...)
	if j.Done() && e.m.Status == job.StatusRunning.String() {
		// It settles: indexed for the retention sweep, by the same write.
		now := time.Now()
		if err := s.c.ensureBucket(ctx, now); err != nil {
			sv.abandon(ctx)
			return nil, fmt.Errorf("job %s: save: %w", id, err)
		}
		sv.index = len(sv.ops)
		sv.ops = append(sv.ops, s.c.createOp(s.c.l.settledEntry(now, id), []byte(m.Incarnation), 0))
	}
	return sv, nil
}

// stopsActions reports whether a step may have stopped actions in flight:
// it applied a cancel or the firing of a deadline.
func stopsActions(step job.Step) bool {
	for _, r := range step.Results {
		if r.ActionID == "@cancel" || strings.HasSuffix(r.ActionID, "@deadline") {
			return true
		}
	}
	return false
}

// opSize estimates the bytes an op adds to a multi-op request.
func opSize(op any) int {
	switch op := op.(type) {
	case *zk.CreateRequest:
		return len(op.Path) + len(op.Data) + 64
	case *zk.SetDataRequest:
		return len(op.Path) + len(op.Data) + 32
	case *zk.DeleteRequest:
		return len(op.Path) + 16
	case *zk.CheckVersionRequest:
		return len(op.Path) + 16
	}
	return 64
}

// mapErr maps the failure of the save's multi-op, whose op failed failed.
func (sv *save) mapErr(failed int, err error) error {
	id := sv.j.ID()
	if failed == sv.index && failed >= 0 {
		// Its index bucket is gone (swept by a worker whose clock is far
		// ahead): made again on the next try.
		sv.s.c.forgetBucket()
	}
	switch {
	case failed == 0 && errors.Is(err, zk.ErrBadVersion), failed == 1 && errors.Is(err, zk.ErrNodeExists):
		// The cached version stays: it is older than the stored one, and
		// the reload reads only the steps after it.
		return fmt.Errorf("job %s: saving v%d: %w", id, sv.j.Version(), store.ErrConflict)
	case failed == 0 && errors.Is(err, zk.ErrNoNode):
		sv.s.forget(id)
		return fmt.Errorf("job %s: %w", id, store.ErrNotFound)
	case failed == 1 && errors.Is(err, zk.ErrNoNode):
		sv.s.forget(id)
		return fmt.Errorf("job %s: saving v%d: %w (its incarnation is gone: deleted and submitted again)", id, sv.j.Version(), store.ErrConflict)
	}
	return fmt.Errorf("job %s: save v%d: %w", id, sv.j.Version(), err)
}

// done records a successful save in the cache and, when it wrote a
// snapshot, deletes the one it replaced (unless that is the origin, which
// History reads): ZooKeeper holds all its data in memory, so a job keeps
// its origin, its newest snapshot and its steps, nothing more.
func (sv *save) done(ctx context.Context, old meta) {
	sv.s.remember(sv.j.ID(), cached{j: sv.j, m: sv.m, zver: sv.zver + 1})
	if sv.m.Snapshot == old.Snapshot || old.Snapshot == 1 {
		return
	}
	id, inc := sv.j.ID(), sv.j.Incarnation()
	ops := make([]any, old.Chunks)
	for k := range old.Chunks {
		ops[k] = &zk.DeleteRequest{Path: sv.s.c.l.snapChunk(id, inc, old.Snapshot, old.SnapTag, k), Version: -1}
	}
	if _, _, err := sv.s.c.multi(context.WithoutCancel(ctx), "delete an old snapshot of job "+string(id), ops); err != nil && !errors.Is(err, zk.ErrNoNode) {
		sv.s.c.log.Warn("could not delete a superseded snapshot", "job", id, "version", old.Snapshot, "err", err)
	}
}

// abandon deletes the chunks written ahead of a multi-op that failed.
func (sv *save) abandon(ctx context.Context) {
	for _, p := range sv.written {
		if err := sv.s.c.delete(context.WithoutCancel(ctx), p, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
			sv.s.c.log.Warn("could not delete an unused snapshot chunk", "node", p, "err", err)
		}
	}
	sv.written = nil
}

// Load returns the newest version of a job: its record, then its newest
// snapshot and the steps after it (from the cache where it can). A
// snapshot deleted under it (a writer replaced it meanwhile) makes it read
// the record again.
func (s *Store) Load(ctx context.Context, id job.ID) (job.Job, error) {
	if err := s.usable(id); err != nil {
		return job.Job{}, err
	}
	for attempt := 1; ; attempt++ {
		j, err := s.load(ctx, id)
		if err == nil || attempt == 5 || !errors.Is(err, errMissing) {
			return j, err
		}
	}
}

// errMissing marks a snapshot chunk or step that was not found.
var errMissing = errors.New("missing")

func (s *Store) load(ctx context.Context, id job.ID) (job.Job, error) {
	data, st, err := s.c.get(ctx, s.c.l.job(id))
	if errors.Is(err, zk.ErrNoNode) {
		return job.Job{}, fmt.Errorf("job %s: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return job.Job{}, fmt.Errorf("job %s: load: %w", id, err)
	}
	m, err := decodeMeta(id, data)
	if err != nil {
		return job.Job{}, err
	}
	inc, _ := m.incarnation()
	e, ok := s.recall(id)
	var j job.Job
	switch {
	case ok && e.j.Incarnation() == inc && e.m.Version == m.Version:
		j = e.j
	case ok && e.j.Incarnation() == inc && e.m.Version >= m.Snapshot && e.m.Version < m.Version:
		j, err = s.replay(ctx, id, inc, e.j, m.Version)
	default:
		var snap job.Job
		snap, err = s.snapshot(ctx, id, inc, m.Snapshot, m.SnapTag, m.Chunks)
		if err == nil {
			j, err = s.replay(ctx, id, inc, snap, m.Version)
		}
	}
	if err != nil {
		return job.Job{}, err
	}
	if j.Version() != m.Version || j.Status().String() != m.Status {
		return job.Job{}, fmt.Errorf("job %s: the journal replays to v%d %s, its record says v%d %s: %w", id, j.Version(), j.Status(), m.Version, m.Status, job.ErrCorrupt)
	}
	s.remember(id, cached{j: j, m: m, zver: st.Version})
	return j, nil
}

// snapshot reads and decodes a snapshot.
func (s *Store) snapshot(ctx context.Context, id job.ID, inc, v uint64, tag string, n int) (job.Job, error) {
	var enc []byte
	for k := range n {
		c, _, err := s.c.get(ctx, s.c.l.snapChunk(id, inc, v, tag, k))
		if err != nil {
			if errors.Is(err, zk.ErrNoNode) {
				return job.Job{}, fmt.Errorf("job %s: snapshot v%d chunk %d of %d is %w: %w", id, v, k+1, n, errMissing, job.ErrCorrupt)
			}
			return job.Job{}, fmt.Errorf("job %s: load snapshot v%d: %w", id, v, err)
		}
		enc = append(enc, c...)
	}
	j, err := job.Decode(enc)
	if err != nil {
		return job.Job{}, fmt.Errorf("job %s: snapshot v%d: %w", id, v, err)
	}
	if j.ID() != id || j.Version() != v || j.Incarnation() != inc {
		return job.Job{}, fmt.Errorf("job %s: snapshot v%d holds job %s v%d of incarnation %016x: %w", id, v, j.ID(), j.Version(), j.Incarnation(), job.ErrCorrupt)
	}
	return j, nil
}

// steps reads the step records of versions from+1 to to, up to 16 reads
// in flight at once (go-zookeeper pipelines requests on one connection).
func (s *Store) steps(ctx context.Context, id job.ID, inc, from, to uint64) ([]job.Step, error) {
	n := int(to - from)
	steps := make([]job.Step, n)
	errs := make([]error, n)
	read := func(i int) {
		v := from + 1 + uint64(i)
		rec, _, err := s.c.get(ctx, s.c.l.step(id, inc, v))
		switch {
		case errors.Is(err, zk.ErrNoNode):
			errs[i] = fmt.Errorf("job %s: step v%d is %w: %w", id, v, errMissing, job.ErrCorrupt)
		case err != nil:
			errs[i] = fmt.Errorf("job %s: load step v%d: %w", id, v, err)
		default:
			steps[i], errs[i] = job.DecodeStep(id, v, rec)
		}
	}
	if n == 1 {
		read(0)
	} else {
		var wg sync.WaitGroup
		sem := make(chan struct{}, 16)
		for i := range n {
			sem <- struct{}{}
			wg.Go(func() {
				defer func() { <-sem }()
				read(i)
			})
		}
		wg.Wait()
	}
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return steps, nil
}

// replay brings j to version to.
func (s *Store) replay(ctx context.Context, id job.ID, inc uint64, j job.Job, to uint64) (job.Job, error) {
	steps, err := s.steps(ctx, id, inc, j.Version(), to)
	if err != nil {
		return job.Job{}, err
	}
	out, err := job.Replay(j, steps)
	if err != nil {
		return job.Job{}, fmt.Errorf("job %s: replay to v%d: %w", id, to, err)
	}
	return out, nil
}

// List returns the jobs q selects, sorted by ID, from their records, with
// the times of their nodes' creation and last change (by the ZooKeeper
// server's clock, in milliseconds) as Info.Created and Updated. A
// job whose record cannot be read (damaged: job.ErrCorrupt; closed to
// these credentials: ErrAccess) is listed with Info.Damaged set and its
// status unknown, so that one such record stops neither a listing nor
// the resuming of the other jobs.
func (s *Store) List(ctx context.Context, q store.Query) ([]store.Info, error) {
	if err := s.usable("list"); err != nil {
		return nil, err
	}
	names, err := s.c.children(ctx, s.c.l.jobs())
	if err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	slices.Sort(names)
	var out []store.Info
	for _, name := range names {
		id := job.ID(name)
		if !strings.HasPrefix(name, q.Prefix) || q.After != "" && id <= q.After {
			continue
		}
		data, zst, err := s.c.get(ctx, s.c.l.job(id))
		if errors.Is(err, zk.ErrNoNode) {
			continue // deleted meanwhile
		}
		if errors.Is(err, zk.ErrNoAuth) {
			// Made by a client with other credentials (before Open
			// checked them): unreadable here, but not the others.
			err = fmt.Errorf("job %s: its node is closed to these credentials (a client with other ones made it): %w", id, ErrAccess)
		} else if err != nil {
			return nil, fmt.Errorf("list jobs: %w", err)
		}
		in := store.Info{ID: id}
		var m meta
		if err == nil {
			m, err = decodeMeta(id, data)
		}
		if err == nil {
			in, err = m.info(id)
		}
		if err == nil && zst != nil {
			// The job's node is made by Create and set by every Save.
			in.Created, in.Updated = time.UnixMilli(zst.Ctime).UTC(), time.UnixMilli(zst.Mtime).UTC()
		}
		if err != nil {
			// One damaged record does not hide the other jobs.
			in = store.Info{ID: id, Damaged: err}
		}
		if !q.Match(in) {
			continue
		}
		out = append(out, in)
		if q.Limit > 0 && len(out) == q.Limit {
			break
		}
	}
	return out, nil
}

// Stat implements store.Stater: the Info of job id from its node alone
// (its record, and the times of its creation and last change), as List
// tells it. A record that cannot be read is an error wrapping
// job.ErrCorrupt.
func (s *Store) Stat(ctx context.Context, id job.ID) (store.Info, error) {
	if err := s.usable(id); err != nil {
		return store.Info{}, err
	}
	data, zst, err := s.c.get(ctx, s.c.l.job(id))
	if errors.Is(err, zk.ErrNoNode) {
		return store.Info{}, fmt.Errorf("job %s: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return store.Info{}, fmt.Errorf("job %s: stat: %w", id, err)
	}
	m, err := decodeMeta(id, data)
	if err != nil {
		return store.Info{}, err
	}
	in, err := m.info(id)
	if err != nil {
		return store.Info{}, err
	}
	in.Created, in.Updated = time.UnixMilli(zst.Ctime).UTC(), time.UnixMilli(zst.Mtime).UTC()
	return in, nil
}

// History returns the job's origin snapshot and every step since.
func (s *Store) History(ctx context.Context, id job.ID) (store.History, error) {
	if err := s.usable(id); err != nil {
		return store.History{}, err
	}
	data, _, err := s.c.get(ctx, s.c.l.job(id))
	if errors.Is(err, zk.ErrNoNode) {
		return store.History{}, fmt.Errorf("job %s: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return store.History{}, fmt.Errorf("job %s: history: %w", id, err)
	}
	m, err := decodeMeta(id, data)
	if err != nil {
		return store.History{}, err
	}
	inc, _ := m.incarnation()
	origin, err := s.snapshot(ctx, id, inc, 1, m.OriginTag, m.OriginChunks)
	if err != nil {
		return store.History{}, err
	}
	steps, err := s.steps(ctx, id, inc, 1, m.Version)
	if err != nil {
		return store.History{}, err
	}
	ignored, err := s.ignoredOf(ctx, id, inc)
	if err != nil {
		return store.History{}, err
	}
	return store.History{Origin: origin, Steps: steps, Ignored: ignored}, nil
}

// Delete removes a job and its history (the nodes under it, then its
// node), then its queue entries, timers and dispatching marker, so that
// no entry is left for ever for an action no worker has a handler for
// (this lists the queue and the timers once).
func (s *Store) Delete(ctx context.Context, id job.ID) error {
	if err := s.usable(id); err != nil {
		return err
	}
	defer s.forget(id)
	p := s.c.l.job(id)
	if ok, err := s.c.exists(ctx, p); err != nil {
		return fmt.Errorf("job %s: delete: %w", id, err)
	} else if !ok {
		return fmt.Errorf("job %s: %w", id, store.ErrNotFound)
	}
	if err := s.c.deleteTree(ctx, p); err != nil {
		return fmt.Errorf("job %s: delete: %w", id, err)
	}
	if err := s.c.dropLeftovers(ctx, map[job.ID]bool{id: true}); err != nil {
		return fmt.Errorf("job %s: deleted, but not all its queue entries and timers: %w", id, err)
	}
	return nil
}
