package bolt_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/store"
	"github.com/batonwf/baton/store/bolt"
	"github.com/batonwf/baton/store/storetest"
	"go.etcd.io/bbolt"
)

// open opens a store at path for a test and closes it when the test ends.
func open(t *testing.T, path string, opts *bolt.Options) *bolt.Store {
	t.Helper()
	s, err := bolt.Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func tempPath(t *testing.T) string { return filepath.Join(t.TempDir(), "baton.db") }

// withoutTimes returns infos with the times the store stamps cleared, to
// compare with store.InfoOf.
func withoutTimes(infos []store.Info) []store.Info {
	out := slices.Clone(infos)
	for i := range out {
		out[i].Created, out[i].Updated = time.Time{}, time.Time{}
	}
	return out
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		return open(t, tempPath(t), &bolt.Options{NoSync: true})
	})
}

// The suite again with a snapshot at least every 100 steps and no cache,
// so every Load decodes a snapshot and replays a journal.
func TestConformanceNoCache(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		return open(t, tempPath(t), &bolt.Options{NoSync: true, SnapshotEvery: 100, CacheSize: -1})
	})
}

// With the default snapshot rule, the long runs take snapshots too (their
// outputs are padded), so reopening replays a journal after a snapshot.
func TestDurable(t *testing.T) {
	storetest.RunDurable(t, func(t *testing.T, path string) store.Store {
		return open(t, path, &bolt.Options{NoSync: true})
	})
}

func parOf(n int) ast.Node {
	kids := make([]ast.Node, n)
	for i := range kids {
		kids[i] = ast.Act("log", i)
	}
	return ast.Par(kids...)
}

// runPar creates a par of n leaves and finishes the first m of them one
// result per Save, each result with output.
func runPar(t testing.TB, s *bolt.Store, n, m int, output []byte) job.Job {
	t.Helper()
	ctx := context.Background()
	tr, err := job.New("par", parOf(n))
	j, acts := tr.Job, tr.Actions
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Create(ctx, j); err != nil {
		t.Fatal(err)
	}
	for _, a := range acts[:m] {
		tr, err = job.Restart(j, []job.Result{a.Succeed(output)})
		j = tr.Job
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Save(ctx, tr.Job, tr.Step); err != nil {
			t.Fatal(err)
		}
	}
	return j
}

// saveStats is what a run of Saves wrote, per Save.
type saveStats struct {
	step, snap, other, pages float64 // bytes per Save
	snaps                    uint64
}

func perSave(st bolt.Stats) saveStats {
	n := float64(st.Steps)
	return saveStats{
		step:  float64(st.StepBytes) / n,
		snap:  float64(st.SnapshotBytes) / n,
		other: float64(st.BytesWritten-st.StepBytes-st.SnapshotBytes) / n,
		pages: float64(st.PageBytes) / float64(st.WriteTxs),
		snaps: st.Snapshots,
	}
}

func (p saveStats) String() string {
	return fmt.Sprintf("%.1f B step record + %.1f B snapshots + %.1f B meta/origin per Save (%d snapshots); %.1f KB of bbolt pages per transaction",
		p.step, p.snap, p.other, p.snaps, p.pages/1024)
}

// TestStepBytesFlat checks that the bytes a Save writes grow with its
// results, not with the tree.
func TestStepBytesFlat(t *testing.T) {
	// Finishing a few thousand leaves of each is enough for the averages,
	// and keeps the test quick under -race; BenchmarkSave finishes them all.
	sizes := []int{100, 10_000}
	var per []saveStats
	for _, n := range sizes {
		s := open(t, tempPath(t), &bolt.Options{NoSync: true})
		runPar(t, s, n, min(n, 1000), []byte(`{"ok":true}`))
		st := s.Stats()
		if m := uint64(min(n, 1000)); st.Steps != m || st.WriteTxs != m+2 { // + the store's and the job's creation
			t.Fatalf("par(%d): %d steps in %d transactions, want %d in %d", n, st.Steps, st.WriteTxs, m, m+2)
		}
		p := perSave(st)
		t.Logf("par(%d): %v", n, p)
		per = append(per, p)
	}
	// Action IDs grow by a few digits ("par[12]#1" vs "par[1234]#1").
	if per[1].step > per[0].step+4 {
		t.Errorf("step record bytes grow with the tree: %.1f for par(%d), %.1f for par(%d)", per[0].step, sizes[0], per[1].step, sizes[1])
	}
	if per[1].pages > 2*per[0].pages {
		t.Errorf("bbolt page bytes grow with the tree: %.0f per transaction for par(%d), %.0f for par(%d)", per[0].pages, sizes[0], per[1].pages, sizes[1])
	}
}

// TestSnapshotByteRule runs a job whose results are large enough for the
// byte rule to take snapshots, and checks that they stay amortised and
// that a cold Load (no cache, after reopening) equals the live job.
func TestSnapshotByteRule(t *testing.T) {
	path := tempPath(t)
	s := open(t, path, &bolt.Options{NoSync: true})
	out := fmt.Appendf(nil, "%q", strings.Repeat("x", 300))
	live := runPar(t, s, 500, 500, out)
	p := perSave(s.Stats())
	t.Logf("par(500), %d-byte outputs: %v", len(out), p)
	if p.snaps < 2 {
		t.Errorf("%d snapshots; the byte rule should have taken two or more", p.snaps)
	}
	if p.snap > 3*p.step {
		t.Errorf("snapshots cost %.1f B per Save, more than 3 x the %.1f B step records", p.snap, p.step)
	}
	s.Close()
	s = open(t, path, &bolt.Options{CacheSize: -1})
	got, err := s.Load(context.Background(), "par")
	if err != nil {
		t.Fatal(err)
	}
	a, _ := job.Encode(live)
	b, _ := job.Encode(got)
	if !bytes.Equal(a, b) {
		t.Fatalf("cold Load differs from the live job:\n%s\n%s", job.Describe(live), job.Describe(got))
	}
}

// TestSync runs a few Saves with fsync on, the default.
func TestSync(t *testing.T) {
	path := tempPath(t)
	s := open(t, path, nil)
	live := runPar(t, s, 5, 5, nil)
	s.Close()
	s = open(t, path, nil)
	got, err := s.Load(context.Background(), "par")
	if err != nil {
		t.Fatal(err)
	}
	if got.Version() != live.Version() || got.Status() != job.StatusSucceeded {
		t.Fatalf("after reopening: %v, want %v", got, live)
	}
}

func TestLocked(t *testing.T) {
	path := tempPath(t)
	open(t, path, nil)
	start := time.Now()
	s, err := bolt.Open(path, &bolt.Options{Timeout: 50 * time.Millisecond})
	if err == nil {
		s.Close()
		t.Fatal("second Open of a locked file succeeded")
	}
	if !errors.Is(err, bolt.ErrLocked) || !strings.Contains(err.Error(), "store/bolt: "+path+" is locked by another process") {
		t.Fatalf("second Open: %v; want ErrLocked naming %s", err, path)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("second Open took %v", d)
	}
	t.Log(err)
}

func TestNotABoltFile(t *testing.T) {
	for name, data := range map[string][]byte{
		"short":   []byte("hello, I am not a database\n"),
		"garbage": bytes.Repeat([]byte("garbage\x00\xff"), 5000),
	} {
		t.Run(name, func(t *testing.T) {
			path := tempPath(t)
			if err := os.WriteFile(path, data, 0o600); err != nil {
				t.Fatal(err)
			}
			s, err := bolt.Open(path, &bolt.Options{Timeout: time.Second})
			if err == nil {
				s.Close()
				t.Fatal("Open of a garbage file succeeded")
			}
			if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "not a bbolt database") {
				t.Fatalf("Open: %v; want an error naming %s as not a bbolt database", err, path)
			}
			t.Log(err)
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, data) {
				t.Fatalf("Open changed the file: %d bytes, was %d", len(got), len(data))
			}
		})
	}
}

// Another program's bbolt file is refused and left byte for byte as it
// was, even one whose free list bbolt would write on a read-write open.
func TestForeignBoltFile(t *testing.T) {
	path := tempPath(t)
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{NoFreelistSync: true})
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bbolt.Tx) error {
		b, err := tx.CreateBucket([]byte("accounts"))
		if err != nil {
			return err
		}
		return b.Put([]byte("alice"), []byte("100"))
	})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s, err := bolt.Open(path, nil)
	if err == nil {
		s.Close()
		t.Fatal("Open of another program's bbolt file succeeded")
	}
	if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "baton did not make") {
		t.Fatalf("Open: %v", err)
	}
	t.Log(err)
	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Fatal("Open changed another program's bbolt file")
	}
}

// corruptKey saves a job of a few steps, closes the store, lets damage
// change its bucket through bbolt, and reopens the store.
func corruptKey(t *testing.T, opts *bolt.Options, damage func(jb *bbolt.Bucket) error) *bolt.Store {
	t.Helper()
	ctx := context.Background()
	path := tempPath(t)
	s := open(t, path, opts)
	tr, err := job.New("victim", parOf(5))
	j, acts := tr.Job, tr.Actions
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Create(ctx, j); err != nil {
		t.Fatal(err)
	}
	for _, a := range acts[:4] {
		tr, err = job.Restart(j, []job.Result{a.Succeed(nil)})
		j = tr.Job
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Save(ctx, tr.Job, tr.Step); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bbolt.Tx) error {
		return damage(tx.Bucket([]byte("jobs")).Bucket([]byte("victim")))
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return open(t, path, opts)
}

func stepKey(v uint64) []byte { return []byte{0, 0, 0, 0, 0, 0, 0, byte(v)} }

func TestCorruptRecord(t *testing.T) {
	garbage := []byte("\x01 this is not a step record")
	tests := []struct {
		name   string
		damage func(jb *bbolt.Bucket) error
		key    string // named in the error
		hist   bool   // History fails too
	}{
		{"last step", func(jb *bbolt.Bucket) error { return jb.Bucket([]byte("steps")).Put(stepKey(5), garbage) }, "jobs/victim/steps/5", true},
		{"step truncated", func(jb *bbolt.Bucket) error {
			sb := jb.Bucket([]byte("steps"))
			rec := sb.Get(stepKey(5))
			return sb.Put(stepKey(5), append([]byte(nil), rec[:len(rec)-3]...))
		}, "jobs/victim/steps/5", true},
		{"step missing", func(jb *bbolt.Bucket) error { return jb.Bucket([]byte("steps")).Delete(stepKey(4)) }, "jobs/victim/steps/4", true},
		// A well-formed record in the wrong place: it decodes, but does
		// not replay. History does not replay, so only Load sees it.
		{"step copied", func(jb *bbolt.Bucket) error {
			sb := jb.Bucket([]byte("steps"))
			return sb.Put(stepKey(5), append([]byte(nil), sb.Get(stepKey(4))...))
		}, "jobs/victim/steps/", false},
		{"meta", func(jb *bbolt.Bucket) error { return jb.Put([]byte("meta"), garbage) }, "jobs/victim/meta", true},
		{"origin", func(jb *bbolt.Bucket) error {
			return jb.Bucket([]byte("origin")).Put([]byte("job"), []byte(`{"format":1}`))
		}, "jobs/victim/origin/job", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := corruptKey(t, &bolt.Options{NoSync: true}, tt.damage)
			_, err := s.Load(context.Background(), "victim")
			checkCorrupt(t, "Load", err, s.Path(), tt.key)
			if tt.hist {
				_, err = s.History(context.Background(), "victim")
				checkCorrupt(t, "History", err, s.Path(), tt.key)
			}
		})
	}
}

// A damaged snapshot fails Load with the snapshot's key; History, which
// does not read snapshots, still works.
func TestCorruptSnapshot(t *testing.T) {
	s := corruptKey(t, &bolt.Options{NoSync: true, SnapshotEvery: 2}, func(jb *bbolt.Bucket) error {
		return jb.Bucket([]byte("snap")).Put([]byte("job"), []byte(`{"format":1,"id":"victim"}`))
	})
	_, err := s.Load(context.Background(), "victim")
	checkCorrupt(t, "Load", err, s.Path(), "jobs/victim/snap/job")
	// History does not need the snapshot.
	h, err := s.History(context.Background(), "victim")
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Steps) != 4 {
		t.Fatalf("History has %d steps, want 4", len(h.Steps))
	}
}

func checkCorrupt(t *testing.T, what string, err error, path, key string) {
	t.Helper()
	if !errors.Is(err, job.ErrCorrupt) {
		t.Fatalf("%s: %v; want an error wrapping job.ErrCorrupt", what, err)
	}
	for _, part := range []string{path, "job victim", key} {
		if !strings.Contains(err.Error(), part) {
			t.Fatalf("%s: %q does not name %q", what, err, part)
		}
	}
	t.Logf("%s: %v", what, err)
}

// Load after Save in the same process comes from the cache: it costs a
// read transaction, not a decode. With the cache off, Load decodes and
// replays, to the same bytes.
func TestCacheHit(t *testing.T) {
	ctx := context.Background()
	path := tempPath(t)
	s := open(t, path, &bolt.Options{NoSync: true})
	tr, err := job.New("c", parOf(300))
	j, acts := tr.Job, tr.Actions
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Create(ctx, j); err != nil {
		t.Fatal(err)
	}
	for _, a := range acts[:10] {
		tr, err = job.Restart(j, []job.Result{a.Succeed(nil)})
		j = tr.Job
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Save(ctx, tr.Job, tr.Step); err != nil {
			t.Fatal(err)
		}
	}
	load := func(s *bolt.Store) job.Job {
		got, err := s.Load(ctx, "c")
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	warm := load(s)
	hot := testing.AllocsPerRun(20, func() { load(s) })
	s.Close()
	s = open(t, path, &bolt.Options{NoSync: true, CacheSize: -1})
	cold := load(s)
	coldAllocs := testing.AllocsPerRun(2, func() { load(s) })
	t.Logf("allocations per Load: %.0f with the cache, %.0f without", hot, coldAllocs)
	if hot > 100 || coldAllocs < 10*hot {
		t.Errorf("allocations per Load: %.0f with the cache, %.0f without; want a cheap cached Load", hot, coldAllocs)
	}
	a, _ := job.Encode(warm)
	b, _ := job.Encode(cold)
	if !bytes.Equal(a, b) {
		t.Fatalf("cold Load differs from the cached one:\n%s\n%s", a, b)
	}
}

// History decodes a job's origin once per incarnation: a page that reads
// the history again (a reload, a second viewer) costs the steps' records,
// not a decode of the whole tree. A re-created job is another
// incarnation: its own origin is decoded, never the old one returned.
func TestHistoryDecodesTheOriginOnce(t *testing.T) {
	ctx := context.Background()
	s := open(t, tempPath(t), &bolt.Options{NoSync: true})
	mk := func(n int) job.Job {
		tr, err := job.New("h", parOf(n))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Create(ctx, tr.Job); err != nil {
			t.Fatal(err)
		}
		j := tr.Job
		for _, a := range tr.Actions[:3] {
			tr, err := job.Restart(j, []job.Result{a.Succeed(nil)})
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Save(ctx, tr.Job, tr.Step); err != nil {
				t.Fatal(err)
			}
			j = tr.Job
		}
		return j
	}
	history := func(want job.Job) {
		t.Helper()
		h, err := s.History(ctx, "h")
		if err != nil {
			t.Fatal(err)
		}
		got, err := h.Latest()
		if err != nil {
			t.Fatal(err)
		}
		a, _ := job.Encode(got)
		b, _ := job.Encode(want)
		if !bytes.Equal(a, b) || len(h.Steps) != 3 {
			t.Fatalf("History replays to\n%s\nwant\n%s", a, b)
		}
	}
	j := mk(50)
	before := s.Stats().Decodes
	for range 3 {
		history(j)
	}
	if n := s.Stats().Decodes - before; n != 1 {
		t.Errorf("3 Histories of one job decoded %d jobs; want 1 (its origin, once)", n)
	}
	if err := s.Delete(ctx, "h"); err != nil {
		t.Fatal(err)
	}
	j = mk(7) // the same ID, another tree
	before = s.Stats().Decodes
	history(j)
	history(j)
	if n := s.Stats().Decodes - before; n != 1 {
		t.Errorf("2 Histories of the job made again decoded %d jobs; want 1", n)
	}
}
