package bolt_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/store"
	"github.com/batonwf/baton/store/bolt"
	"go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// Environment of the subprocesses that the tests here start by running
// the test binary again.
const (
	writerChildEnv = "BATON_BOLT_WRITER_CHILD" // path,seconds: run the writer
	holderChildEnv = "BATON_BOLT_HOLDER_CHILD" // path: open for writing, hold until stdin closes
)

// child starts the test binary again to run test with env set. It returns
// the lines the child prints, the child's stdin (closing it tells a
// holder to let go), and a function that waits for the child to exit
// (having printed everything) and returns how it did.
func child(t *testing.T, test, env string) (<-chan string, io.WriteCloser, func() error) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^"+test+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), env)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 1000)
	exited := make(chan struct{})
	var exitErr error
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		exitErr = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		_ = stdin.Close()
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
		}
	})
	return lines, stdin, func() error { <-exited; return exitErr }
}

// waitFor reads lines until one equals want.
func waitFor(t *testing.T, lines <-chan string, want string) {
	t.Helper()
	for l := range lines {
		if l == want {
			return
		}
	}
	t.Fatalf("the subprocess ended before saying %q", want)
}

// TestReadOnlyWhileWriting runs a writer in another process, creating,
// saving and deleting jobs as fast as it can for two seconds, while two
// goroutines here open the file read-only again and again and read every
// job: no read may fail (other than a job deleted between List and Load),
// every job must decode and replay, versions seen must never go back, and
// the last read must match what the writer reports at the end.
func TestReadOnlyWhileWriting(t *testing.T) {
	if env := os.Getenv(writerChildEnv); env != "" {
		path, secs, _ := strings.Cut(env, ",")
		n, _ := strconv.ParseFloat(secs, 64)
		writerChild(t, path, time.Duration(n*float64(time.Second)))
		return
	}
	if runtime.GOOS != "linux" {
		t.Skip("readers wait for the writer to close off Linux")
	}
	path := tempPath(t)
	lines, _, wait := child(t, "TestReadOnlyWhileWriting", writerChildEnv+"="+path+",2")
	waitFor(t, lines, "ready")
	var (
		out        []string // the rest of the writer's output
		writerDone = make(chan struct{})
		werr       error
	)
	go func() {
		for l := range lines {
			out = append(out, l)
		}
		werr = wait()
		close(writerDone)
	}()

	// What each reader saw: the newest version of each job (which must
	// never go back in one reader's sequence of reads), and the jobs that
	// Load or History said were not found.
	type seen struct {
		versions map[job.ID]uint64
		missing  map[job.ID]bool
		rounds   int
	}
	readers := []*seen{{map[job.ID]uint64{}, map[job.ID]bool{}, 0}, {map[job.ID]uint64{}, map[job.ID]bool{}, 0}}
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for g := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// The first goroutine opens a Store for each round; the
			// second keeps one (and its cache) for all of them.
			var kept *bolt.Store
			defer func() {
				if kept != nil {
					kept.Close()
				}
			}()
			for round := 0; ; round++ {
				select {
				case <-writerDone:
					return
				default:
				}
				s := kept
				if s == nil {
					var err error
					s, err = bolt.OpenReadOnly(path, &bolt.Options{Timeout: 5 * time.Second})
					if err != nil {
						errs <- fmt.Errorf("OpenReadOnly: %w", err)
						return
					}
					if g == 1 {
						kept = s
					}
				}
				err := readAll(s, readers[g].versions, readers[g].missing)
				if s != kept {
					s.Close()
				}
				if err != nil {
					errs <- fmt.Errorf("reader %d, round %d: %w", g, round, err)
					return
				}
				readers[g].rounds++
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	<-writerDone
	if werr != nil {
		t.Fatalf("writer: %v", werr)
	}
	var (
		final   []store.Info
		deleted = map[job.ID]bool{}
		saves   string
	)
	for _, l := range out {
		f := strings.Fields(l)
		switch {
		case len(f) == 6 && f[0] == "final":
			v, _ := strconv.ParseUint(f[2], 10, 64)
			st, _ := strconv.ParseUint(f[3], 10, 8)
			settled, _ := strconv.Atoi(f[4])
			total, _ := strconv.Atoi(f[5])
			final = append(final, store.Info{ID: job.ID(f[1]), Version: v, Status: job.Status(st), Settled: settled, Total: total})
		case len(f) == 2 && f[0] == "deleted":
			deleted[job.ID(f[1])] = true
		case len(f) > 0 && f[0] == "saves":
			saves = l
		}
	}
	t.Logf("writer: %s, %d jobs left, %d deleted; readers: %d and %d rounds of List, Load and History", saves, len(final), len(deleted), readers[0].rounds, readers[1].rounds)
	for _, r := range readers {
		for id := range r.missing {
			if !deleted[id] {
				t.Errorf("job %s was reported missing, but the writer did not delete it", id)
			}
		}
		for id, v := range r.versions {
			if !deleted[id] && !slices.ContainsFunc(final, func(i store.Info) bool { return i.ID == id && i.Version >= v }) {
				t.Errorf("job %s was read at version %d, newer than the writer's last", id, v)
			}
		}
	}
	s, err := bolt.OpenReadOnly(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.List(context.Background(), store.Query{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(withoutTimes(got), final) {
		t.Fatalf("the last List gave\n%v\nthe writer reported\n%v", got, final)
	}
	for _, info := range final {
		j, err := s.Load(context.Background(), info.ID)
		if err != nil || j.Version() != info.Version || j.Status() != info.Status {
			t.Fatalf("Load %s: v%d %s, %v; want v%d %s", info.ID, j.Version(), j.Status(), err, info.Version, info.Status)
		}
	}
}

// readAll lists the jobs and loads each, and its history, checking what
// it reads and recording in versions the newest version seen of each job.
func readAll(s *bolt.Store, versions map[job.ID]uint64, missing map[job.ID]bool) error {
	ctx := context.Background()
	list, err := s.List(ctx, store.Query{})
	if err != nil {
		return fmt.Errorf("List: %w", err)
	}
	see := func(id job.ID, v uint64, what string) error {
		if v < versions[id] {
			return fmt.Errorf("%s: job %s at version %d after version %d", what, id, v, versions[id])
		}
		versions[id] = v
		return nil
	}
	notFound := func(id job.ID) { missing[id] = true }
	for _, info := range list {
		if err := see(info.ID, info.Version, "List"); err != nil {
			return err
		}
		j, err := s.Load(ctx, info.ID)
		if errors.Is(err, store.ErrNotFound) {
			notFound(info.ID)
			continue
		}
		if err != nil {
			return fmt.Errorf("Load: %w", err)
		}
		if err := see(info.ID, j.Version(), "Load"); err != nil {
			return err
		}
		h, err := s.History(ctx, info.ID)
		if errors.Is(err, store.ErrNotFound) {
			notFound(info.ID)
			continue
		}
		if err != nil {
			return fmt.Errorf("History: %w", err)
		}
		latest, err := h.Latest()
		if err != nil {
			return fmt.Errorf("History %s does not replay: %w", info.ID, err)
		}
		if latest.Version() != uint64(len(h.Steps))+1 {
			return fmt.Errorf("History %s: %d steps replay to version %d", info.ID, len(h.Steps), latest.Version())
		}
		if err := see(info.ID, latest.Version(), "History"); err != nil {
			return err
		}
	}
	return nil
}

// writerChild is the writer of TestReadOnlyWhileWriting: four jobs at a
// time, one result per Save, a finished job deleted or kept in turn and
// replaced by a new one. At the end it prints the jobs it left.
func writerChild(t *testing.T, path string, d time.Duration) {
	ctx := context.Background()
	s, err := bolt.Open(path, &bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println("ready")
	type live struct {
		j       job.Job
		pending []job.Action
	}
	n := 0
	newJob := func() *live {
		n++
		tr, err := job.New(job.ID(fmt.Sprintf("w-%04d", n)), parOf(10+n%30))
		if err != nil {
			t.Fatal(err)
		}
		j, acts := tr.Job, tr.Actions
		if err := s.Create(ctx, j); err != nil {
			t.Fatal(err)
		}
		return &live{j, acts}
	}
	lives := []*live{newJob(), newJob(), newJob(), newJob()}
	out := fmt.Appendf(nil, "%q", strings.Repeat("w", 200))
	saves, deletes := 0, 0
	for i, end := 0, time.Now().Add(d); time.Now().Before(end); i++ {
		l := lives[i%len(lives)]
		if len(l.pending) == 0 {
			if deletes++; deletes%4 != 0 { // keep one in four
				if err := s.Delete(ctx, l.j.ID()); err != nil {
					t.Fatal(err)
				}
				fmt.Println("deleted", l.j.ID())
			}
			lives[i%len(lives)] = newJob()
			continue
		}
		tr, err := job.Restart(l.j, []job.Result{l.pending[0].Succeed(out)})
		if err != nil {
			t.Fatal(err)
		}
		j, acts := tr.Job, tr.Actions
		if err := s.Save(ctx, j, tr.Step); err != nil {
			t.Fatal(err)
		}
		saves++
		l.j, l.pending = j, append(l.pending[1:], acts...)
	}
	list, err := s.List(ctx, store.Query{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for _, info := range list {
		fmt.Println("final", info.ID, info.Version, uint8(info.Status), info.Settled, info.Total)
	}
	fmt.Println("saves", saves, "in", n, "jobs")
}

// A writer and readers in one process: each Store has its own descriptor
// of the file, and the gate's locks belong to descriptors, not processes.
func TestReadOnlySameProcess(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("readers wait for the writer to close off Linux")
	}
	ctx := context.Background()
	path := tempPath(t)
	w := open(t, path, &bolt.Options{NoSync: true})
	tr, err := job.New("same", parOf(200))
	if err != nil {
		t.Fatal(err)
	}
	j, acts := tr.Job, tr.Actions
	if err := w.Create(ctx, j); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for g := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := bolt.OpenReadOnly(path, &bolt.Options{CacheSize: -g}) // one with a cache, one without
			if err != nil {
				t.Error(err)
				return
			}
			defer r.Close()
			last := uint64(0)
			for {
				select {
				case <-stop:
					return
				default:
				}
				got, err := r.Load(ctx, "same")
				if err != nil {
					t.Error(err)
					return
				}
				if got.Version() < last {
					t.Errorf("version %d after %d", got.Version(), last)
					return
				}
				last = got.Version()
				if _, err := r.History(ctx, "same"); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	for _, a := range acts {
		tr, err = job.Restart(j, []job.Result{a.Succeed([]byte(`"ok"`))})
		if err != nil {
			t.Fatal(err)
		}
		j = tr.Job
		if err := w.Save(ctx, j, tr.Step); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	r, err := bolt.OpenReadOnly(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got, err := r.Load(ctx, "same")
	if err != nil || got.Version() != j.Version() || got.Status() != job.StatusSucceeded {
		t.Fatalf("Load after the writes: v%d %s, %v; want v%d succeeded", got.Version(), got.Status(), err, j.Version())
	}
}

// checkNamed fails unless err wraps target and names the file.
func checkNamed(t *testing.T, what string, err, target error, path string) {
	t.Helper()
	if !errors.Is(err, target) || !strings.Contains(err.Error(), path) {
		t.Fatalf("%s: %v; want an error naming %s and wrapping %v", what, err, path, target)
	}
}

// dirNames lists the directory.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// A 0-byte file is a store without jobs to OpenReadOnly, and stays 0
// bytes; Open makes it a new store.
func TestReadOnlyEmptyFile(t *testing.T) {
	ctx := context.Background()
	path := tempPath(t)
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := bolt.OpenReadOnly(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if list, err := s.List(ctx, store.Query{}); err != nil || len(list) != 0 {
		t.Fatalf("List: %v, %v; want nothing", list, err)
	}
	_, err = s.Load(ctx, "nope")
	checkNamed(t, "Load", err, store.ErrNotFound, path)
	_, err = s.History(ctx, "nope")
	checkNamed(t, "History", err, store.ErrNotFound, path)
	tr, err := job.New("new", parOf(2))
	if err != nil {
		t.Fatal(err)
	}
	j := tr.Job
	checkNamed(t, "Create", s.Create(ctx, j), bolt.ErrReadOnly, path)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() != 0 {
		t.Fatalf("after reading: %v, %v; want a 0-byte file", fi, err)
	}
	if names := dirNames(t, filepath.Dir(path)); !slices.Equal(names, []string{"baton.db"}) {
		t.Fatalf("the directory holds %v; want only baton.db", names)
	}
	// Open, for writing, makes it a new store, as before.
	w := open(t, path, &bolt.Options{NoSync: true})
	if err := w.Create(ctx, j); err != nil {
		t.Fatal(err)
	}
}

// A missing file is an error wrapping fs.ErrNotExist, and is not created.
func TestReadOnlyMissingFile(t *testing.T) {
	path := tempPath(t)
	s, err := bolt.OpenReadOnly(path, nil)
	if err == nil {
		s.Close()
		t.Fatal("OpenReadOnly of a missing file succeeded")
	}
	checkNamed(t, "OpenReadOnly", err, fs.ErrNotExist, path)
	if names := dirNames(t, filepath.Dir(path)); len(names) != 0 {
		t.Fatalf("the directory holds %v; want nothing", names)
	}
}

// Create, Save and Delete fail with ErrReadOnly, naming the file and the
// job, and leave the file as it was; Load, History and List give what the
// writer stored.
func TestReadOnlyRefusesWrites(t *testing.T) {
	ctx := context.Background()
	path := tempPath(t)
	w := open(t, path, &bolt.Options{NoSync: true})
	tr, err := job.New("par", parOf(5))
	if err != nil {
		t.Fatal(err)
	}
	live, acts := tr.Job, tr.Actions
	if err := w.Create(ctx, live); err != nil {
		t.Fatal(err)
	}
	for _, a := range acts[:3] {
		if tr, err = job.Restart(live, []job.Result{a.Succeed(nil)}); err != nil {
			t.Fatal(err)
		}
		live = tr.Job
		if err := w.Save(ctx, live, tr.Step); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s, err := bolt.OpenReadOnly(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !s.ReadOnly() || w.ReadOnly() {
		t.Fatal("ReadOnly() is wrong")
	}
	list, err := s.List(ctx, store.Query{})
	if err != nil || !slices.Equal(withoutTimes(list), []store.Info{store.InfoOf(live)}) {
		t.Fatalf("List: %v, %v", list, err)
	}
	got, err := s.Load(ctx, "par")
	if err != nil || got.Version() != live.Version() {
		t.Fatalf("Load: %v, %v", got, err)
	}
	h, err := s.History(ctx, "par")
	if err != nil || len(h.Steps) != 3 {
		t.Fatalf("History: %d steps, %v", len(h.Steps), err)
	}
	trNew, err := job.New("new", parOf(2))
	if err != nil {
		t.Fatal(err)
	}
	j := trNew.Job
	next, err := job.Restart(live, []job.Result{acts[3].Succeed(nil)})
	if err != nil {
		t.Fatal(err)
	}
	for what, err := range map[string]error{
		"Create": s.Create(ctx, j),
		"Save":   s.Save(ctx, next.Job, next.Step),
		"Delete": s.Delete(ctx, "par"),
	} {
		checkNamed(t, what, err, bolt.ErrReadOnly, path)
		if what != "Create" && !strings.Contains(err.Error(), "job par") {
			t.Fatalf("%s: %v does not name the job", what, err)
		}
	}
	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if sha256.Sum256(before) != sha256.Sum256(after) {
		t.Fatal("the read-only store changed the file")
	}
}

// A writer in another process keeps a second writer out (ErrLocked), and
// another program's bbolt writer too, but not readers (on Linux).
func TestWriterExcludesWriters(t *testing.T) {
	if path := os.Getenv(holderChildEnv); path != "" {
		s, err := bolt.Open(path, &bolt.Options{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		fmt.Println("ready")
		_, _ = io.Copy(io.Discard, os.Stdin) // hold until the parent closes stdin
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		return
	}
	path := tempPath(t)
	w := open(t, path, &bolt.Options{NoSync: true})
	runPar(t, w, 3, 2, nil)
	w.Close()
	lines, stdin, wait := child(t, "TestWriterExcludesWriters", holderChildEnv+"="+path)
	waitFor(t, lines, "ready")

	s, err := bolt.Open(path, &bolt.Options{Timeout: 50 * time.Millisecond})
	if err == nil {
		s.Close()
		t.Fatal("a second writer opened the file")
	}
	checkNamed(t, "second Open", err, bolt.ErrLocked, path)
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{Timeout: 100 * time.Millisecond})
	if err == nil {
		db.Close()
		t.Fatal("bbolt opened the file for writing while a baton writer has it")
	}
	if !errors.Is(err, berrors.ErrTimeout) {
		t.Fatalf("bbolt.Open: %v; want a timeout", err)
	}
	r, err := bolt.OpenReadOnly(path, &bolt.Options{Timeout: 100 * time.Millisecond})
	if runtime.GOOS == "linux" {
		if err != nil {
			t.Fatal(err)
		}
		if got, err := r.Load(context.Background(), "par"); err != nil || got.Version() != 3 {
			t.Fatalf("Load: %v, %v", got, err)
		}
		r.Close()
	} else if !errors.Is(err, bolt.ErrLocked) {
		t.Fatalf("OpenReadOnly: %v; want ErrLocked off Linux", err)
	}
	stdin.Close()
	if err := wait(); err != nil {
		t.Fatalf("holder: %v", err)
	}
	// Released at exit: a writer gets in.
	open(t, path, nil)
}
