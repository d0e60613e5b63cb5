package bolt_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/store"
	"github.com/batonwf/baton/store/bolt"
)

// damageChildEnv, when set, makes TestDamagedFiles run the damaged
// variants itself: it is set only in the subprocess that TestDamagedFiles
// starts, where a fault that the store fails to turn into an error kills
// that process, not the test binary.
const damageChildEnv = "BATON_BOLT_DAMAGE_CHILD"

// fixture is a store with several jobs, and what each should read back:
// as the file is (final), and as it was before its last transaction
// (prev), which is what bbolt reads when the newer meta page is damaged.
type fixture struct {
	path        string
	data        []byte // the file
	final, prev state
}

type state struct {
	jobs map[job.ID]fixtureJob
	list []store.Info
}

type fixtureJob struct {
	enc     []byte         // job.Encode of the newest version
	origin  []byte         // job.Encode of version 1
	steps   int            // steps in the history
	next    job.Transition // the job after one more step, to try a Save with
	nextErr error          // error making next (the job had finished)
}

// buildFixture makes a store of six jobs of various sizes, some with
// snapshots, and closes it.
func buildFixture(t testing.TB, dir string) *fixture {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(dir, "baton.db")
	s, err := bolt.Open(path, &bolt.Options{NoSync: true, SnapshotEvery: 5})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{path: path}
	var (
		out     = fmt.Appendf(nil, "%q", strings.Repeat("o", 100))
		jobs    = map[job.ID]fixtureJob{}
		list    []store.Info
		last    job.Job // the job saved last, before that Save
		lastFix fixtureJob
	)
	fix := func(j job.Job, origin []byte, steps int, pending []job.Action) fixtureJob {
		enc, _ := job.Encode(j)
		fj := fixtureJob{enc: enc, origin: origin, steps: steps, nextErr: errors.New("finished")}
		if len(pending) > 0 {
			fj.next, fj.nextErr = job.Restart(j, []job.Result{pending[0].Succeed(out)})
		}
		return fj
	}
	for i, size := range []int{3, 8, 20, 30, 12, 40} {
		id := job.ID(fmt.Sprintf("job-%d", i))
		tr, err := job.New(id, parOf(size))
		j, pending := tr.Job, tr.Actions
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Create(ctx, j); err != nil {
			t.Fatal(err)
		}
		origin, _ := job.Encode(j)
		steps := min(size, 2+size*2/3)
		for k := 0; k < steps; k++ {
			last, lastFix = j, fix(j, origin, k, pending)
			tr, err = job.Restart(j, []job.Result{pending[0].Succeed(out)})
			if err != nil {
				t.Fatal(err)
			}
			j = tr.Job
			pending = pending[1:]
			if err := s.Save(ctx, j, tr.Step); err != nil {
				t.Fatal(err)
			}
		}
		jobs[id] = fix(j, origin, steps, pending)
		list = append(list, store.InfoOf(j))
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if f.data, err = os.ReadFile(path); err != nil {
		t.Fatal(err)
	}
	f.final = state{jobs: jobs, list: list}
	f.prev = state{jobs: maps.Clone(jobs), list: slices.Clone(list)}
	f.prev.jobs[last.ID()] = lastFix
	f.prev.list[len(list)-1] = store.InfoOf(last)
	return f
}

// variant is a damaged copy of the fixture's file.
type variant struct {
	name string
	data []byte
	// prevOK: the variant damages the newer meta page, so that bbolt may
	// read the file as it was before its last transaction.
	prevOK bool
}

// damagedVariants returns the damaged files to try: truncations; every
// page in use zeroed in turn; the header fields and a few random bytes of
// every page in use XORed with random bytes (the same ones on every run);
// and both meta pages zeroed. every > 1 keeps only every every-th page
// damage, for the race detector's sake.
func damagedVariants(data []byte, pageSize, every int) []variant {
	ne := binary.NativeEndian
	hwm := int(ne.Uint64(data[16+40:])) // both meta pages record it; the older
	newer := 0                          // meta page may be a page short
	if ne.Uint64(data[pageSize+16+48:]) > ne.Uint64(data[16+48:]) {
		newer = 1
		hwm = int(ne.Uint64(data[pageSize+16+40:]))
	}
	var vs []variant
	for _, n := range []int{4097, pageSize * 2, 64 << 10, hwm*pageSize - 1, len(data) / 2, len(data) - 1} {
		if n < len(data) {
			vs = append(vs, variant{name: fmt.Sprintf("truncated to %d bytes", n), data: bytes.Clone(data[:n])})
		}
	}
	d := bytes.Clone(data)
	clear(d[:2*pageSize])
	vs = append(vs, variant{name: "both meta pages zeroed", data: d})
	rng := rand.New(rand.NewPCG(1, 2))
	n := 0
	for p := range hwm {
		// The page header (id, flags, count, overflow), then random
		// offsets in the page, each XORed with a random non-zero byte.
		offsets := []int{-1, 0, 8, 10, 11, 12}
		for range 6 {
			offsets = append(offsets, 16+rng.IntN(pageSize-16))
		}
		for _, off := range offsets {
			x := byte(1 + rng.IntN(255))
			if n++; n%every != 0 {
				continue
			}
			d := bytes.Clone(data)
			v := variant{data: d, prevOK: p == newer}
			if off < 0 {
				clear(d[p*pageSize : (p+1)*pageSize])
				v.name = fmt.Sprintf("page %d zeroed", p)
			} else {
				d[p*pageSize+off] ^= x
				v.name = fmt.Sprintf("page %d byte %d ^= %#02x", p, off, x)
			}
			vs = append(vs, v)
		}
	}
	return vs
}

// outcome tallies what the operations on the damaged variants gave.
type outcome struct {
	variants, ops        int
	right                int // the same answer as from the intact file
	damaged, corrupt     int // errors wrapping bolt.ErrDamaged; job.ErrCorrupt only
	openFailed           int
	saves, savesRejected int
	poisoned             int // Saves refused because an earlier one ran into damage
}

// checkDamageErr fails the test unless err is an error that names the file
// (and the job, if id is not "") and wraps job.ErrCorrupt, which every
// damage error wraps.
func checkDamageErr(t *testing.T, o *outcome, v, what string, err error, path string, id job.ID) {
	t.Helper()
	if !errors.Is(err, job.ErrCorrupt) {
		t.Errorf("%s: %s: %v; want an error wrapping job.ErrCorrupt", v, what, err)
		return
	}
	if !strings.Contains(err.Error(), path) {
		t.Errorf("%s: %s: %q does not name the file %s", v, what, err, path)
	}
	if id != "" && !strings.Contains(err.Error(), "job "+string(id)) {
		t.Errorf("%s: %s: %q does not name job %s", v, what, err, id)
	}
	if isDamaged(err) {
		o.damaged++
	} else {
		o.corrupt++
	}
}

// tryReads opens the store at path with open and reads every job, checking
// that each answer is the intact file's (or, if v.prevOK, the one before
// its last transaction) or a damage error.
func tryReads(t *testing.T, o *outcome, f *fixture, v variant, path string, open func(string) (*bolt.Store, error)) {
	t.Helper()
	ctx := context.Background()
	s, err := open(path)
	if err != nil {
		o.openFailed++
		checkDamageErr(t, o, v.name, "open", err, path, "")
		return
	}
	defer s.Close()
	states := []state{f.final}
	if v.prevOK {
		states = append(states, f.prev)
	}
	o.ops++
	list, err := s.List(ctx, store.Query{})
	switch {
	case err != nil:
		checkDamageErr(t, o, v.name, "List", err, path, "")
	case !slices.ContainsFunc(states, func(st state) bool { return sameList(list, st.list) }):
		t.Errorf("%s: List gave %v, want %v or an error", v.name, list, f.final.list)
	default:
		o.right++
	}
	for _, info := range f.final.list {
		id := info.ID
		o.ops += 2
		j, err := s.Load(ctx, id)
		if err != nil {
			checkDamageErr(t, o, v.name, "Load "+string(id), err, path, id)
		} else if enc, _ := job.Encode(j); !slices.ContainsFunc(states, func(st state) bool { return bytes.Equal(enc, st.jobs[id].enc) }) {
			t.Errorf("%s: Load %s gave a different job:\n%s", v.name, id, job.Describe(j))
		} else {
			o.right++
		}
		h, err := s.History(ctx, id)
		if err != nil {
			checkDamageErr(t, o, v.name, "History "+string(id), err, path, id)
			continue
		}
		origin, _ := job.Encode(h.Origin)
		latest, lerr := h.Latest()
		latestEnc, _ := job.Encode(latest)
		same := func(st state) bool {
			want := st.jobs[id]
			return bytes.Equal(origin, want.origin) && len(h.Steps) == want.steps && lerr == nil && bytes.Equal(latestEnc, want.enc)
		}
		if !slices.ContainsFunc(states, same) {
			t.Errorf("%s: History %s gave a different history (%d steps, want %d; replay: %v)", v.name, id, len(h.Steps), f.final.jobs[id].steps, lerr)
			continue
		}
		o.right++
	}
}

func sum(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// damageSkipEnv, in the subprocess, skips that many variants: for a look
// at the unfixed code, which crashes on the first bad one, variant by
// variant.
const damageSkipEnv = "BATON_BOLT_DAMAGE_SKIP"

// TestDamagedFiles opens damaged copies of a store, read-only and for
// writing, and reads every job from each: every answer must be the intact
// file's (or, where the newer meta page is damaged, the one before the
// last transaction, which is what bbolt then reads), or an error naming
// the file (and the job) and wrapping job.ErrCorrupt; nothing may crash;
// and opening and reading must leave the file byte for byte as it was.
// Then it saves a step of every job into each: that may work or fail, but
// must not crash. The variants run in a subprocess, where a fault that the
// store does not turn into an error (SIGSEGV or SIGBUS in bbolt's memory
// map) kills that process, not the test binary, and fails this test with
// its output.
func TestDamagedFiles(t *testing.T) {
	if dir := os.Getenv(damageChildEnv); dir != "" {
		damagedFilesChild(t, dir)
		return
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, "-test.run=^TestDamagedFiles$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), damageChildEnv+"="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("damage summary:")) {
		// Show where it stopped: the last lines name the variant.
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		t.Fatalf("the subprocess reading damaged files failed (%v); last output:\n%s", err, strings.Join(lines[max(0, len(lines)-40):], "\n"))
	}
	for line := range strings.Lines(string(out)) {
		if strings.Contains(line, "damage summary:") || strings.Contains(line, "fixture:") {
			t.Log(strings.TrimSpace(line))
		}
	}
}

func damagedFilesChild(t *testing.T, dir string) {
	f := buildFixture(t, t.TempDir())
	const pageSize = 4096 // bbolt's default on Linux/amd64; checked below
	if ps := int(binary.NativeEndian.Uint32(f.data[16+8:])); ps != pageSize {
		t.Fatalf("the fixture's page size is %d", ps)
	}
	every := 1
	if raceEnabled {
		every = 6
	}
	vs := damagedVariants(f.data, pageSize, every)
	fmt.Printf("fixture: %d bytes, %d variants\n", len(f.data), len(vs))
	skip, _ := strconv.Atoi(os.Getenv(damageSkipEnv))
	var o outcome
	path := filepath.Join(dir, "damaged.db")
	opens := map[string]func(string) (*bolt.Store, error){
		"read-only": func(p string) (*bolt.Store, error) {
			return bolt.OpenReadOnly(p, &bolt.Options{Timeout: time.Second, CacheSize: -1})
		},
		"read-write": func(p string) (*bolt.Store, error) {
			return bolt.Open(p, &bolt.Options{Timeout: time.Second, CacheSize: -1})
		},
	}
	for i, v := range vs[min(skip, len(vs)):] {
		for _, mode := range []string{"read-only", "read-write"} {
			// Printed first, so that a crash shows which.
			fmt.Printf("variant %d: %s, %s\n", skip+i, v.name, mode)
			if err := os.WriteFile(path, v.data, 0o600); err != nil {
				t.Fatal(err)
			}
			before := sum(t, path)
			o.variants++
			tryReads(t, &o, f, v, path, opens[mode])
			if sum(t, path) != before {
				t.Errorf("%s: opening %s and reading changed the file", v.name, mode)
			}
		}
		fmt.Printf("variant %d: %s, saving\n", skip+i, v.name)
		trySaves(t, &o, f, v.name, path)
	}
	fmt.Printf("damage summary: %d variants x 2 opens, %d operations: %d right answers, %d errors wrapping ErrDamaged, %d other errors wrapping job.ErrCorrupt (%d of them opens); %d of %d Saves refused, %d after a damaged write\n",
		len(vs), o.ops, o.right, o.damaged, o.corrupt, o.openFailed, o.savesRejected, o.saves, o.poisoned)
}

// trySaves saves one more step of every unfinished job into the damaged
// file: it may work or fail, but must not crash, and once a Save fails
// with ErrDamaged every later call must fail.
func trySaves(t *testing.T, o *outcome, f *fixture, v, path string) {
	t.Helper()
	ctx := context.Background()
	s, err := bolt.Open(path, &bolt.Options{Timeout: time.Second, NoSync: true})
	if err != nil {
		return
	}
	defer s.Close()
	var poisoned error
	for _, info := range f.final.list {
		fj := f.final.jobs[info.ID]
		if fj.nextErr != nil {
			continue
		}
		o.saves++
		err := s.Save(ctx, fj.next.Job, fj.next.Step)
		if poisoned != nil && err == nil {
			t.Errorf("%s: Save %s worked after an earlier Save failed with %v", v, info.ID, poisoned)
		}
		if err != nil {
			o.savesRejected++
			if poisoned != nil {
				o.poisoned++
			}
			if isDamaged(err) && poisoned == nil {
				poisoned = err
			}
		}
	}
	if poisoned != nil {
		if _, err := s.List(ctx, store.Query{}); err == nil {
			t.Errorf("%s: List worked after a Save failed with %v", v, poisoned)
		}
	}
}

func isDamaged(err error) bool { return errors.Is(err, bolt.ErrDamaged) }

// sameList reports whether List gave want, but for the times the store
// stamps and for jobs listed as damaged (Info.Damaged wrapping
// job.ErrCorrupt) in their place: a damaged record hides no other job.
func sameList(got, want []store.Info) bool {
	if len(got) != len(want) {
		return false
	}
	for i, in := range withoutTimes(got) {
		if in != want[i] && !(in.ID == want[i].ID && errors.Is(in.Damaged, job.ErrCorrupt)) {
			return false
		}
	}
	return true
}
