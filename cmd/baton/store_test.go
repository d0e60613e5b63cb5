package main

import (
	"bytes"
	"fmt"
	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/batonwf/baton/store/bolt"
)

func TestStorePath(t *testing.T) {
	for _, tc := range []struct {
		flag string
		env  map[string]string
		want string
	}{
		{"/f.db", map[string]string{"BATON_STORE": "/e.db", "XDG_STATE_HOME": "/x", "HOME": "/h"}, "/f.db"},
		{"", map[string]string{"BATON_STORE": "/e.db", "XDG_STATE_HOME": "/x", "HOME": "/h"}, "/e.db"},
		{"", map[string]string{"XDG_STATE_HOME": "/x", "HOME": "/h"}, "/x/baton/baton.db"},
		{"", map[string]string{"HOME": "/h"}, "/h/.local/state/baton/baton.db"},
	} {
		c := &cli{getenv: func(k string) string { return tc.env[k] }}
		got, err := c.storePath(tc.flag)
		if err != nil || got != tc.want {
			t.Errorf("storePath(%q) with %v = %q, %v; want %q", tc.flag, tc.env, got, err, tc.want)
		}
	}
	c := &cli{getenv: func(string) string { return "" }}
	if _, err := c.storePath(""); err == nil {
		t.Error("storePath with no flag and no environment: no error")
	}
}

func TestDefaultStoreIsMade(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	t.Setenv("BATON_STORE", "")
	t.Setenv("XDG_STATE_HOME", state)
	baton(t, "run", writeWorkflow(t, "h.json", helloJSON), "--id", "h1").want(t, exitOK)
	if _, err := os.Stat(filepath.Join(state, "baton", "baton.db")); err != nil {
		t.Fatal(err)
	}
	r := baton(t, "status").want(t, exitOK)
	contains(t, "status", r.stdout, "h1 ")
}

func TestStatusWithoutStore(t *testing.T) {
	db := filepath.Join(t.TempDir(), "none.db")
	for _, args := range [][]string{{"status"}, {"history", "j"}, {"inspect", "j"}, {"resume"}} {
		r := baton(t, append(args, "--store", db)...).want(t, exitError)
		contains(t, "stderr", r.stderr, "baton: no store at "+db)
		if _, err := os.Stat(db); err == nil {
			t.Fatalf("%v made a store", args)
		}
	}
}

func TestLockedStore(t *testing.T) {
	db := filepath.Join(t.TempDir(), "baton.db")
	baton(t, "run", writeWorkflow(t, "h.json", helloJSON), "--store", db, "--id", "h1").want(t, exitOK)
	held, err := bolt.Open(db, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	// Commands that write wait for the lock for a second, then give up.
	for _, args := range [][]string{{"run", writeWorkflow(t, "h.json", helloJSON)}, {"resume"}, {"delete", "h1"}} {
		start := time.Now()
		r := baton(t, append(args, "--store", db)...).want(t, exitStore)
		contains(t, "stderr", r.stderr, "baton: store "+db+" is in use by another process")
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%v took %v to give up", args, d)
		}
	}
	// Commands that only read work beside the writer.
	contains(t, "status", baton(t, "status", "--store", db).want(t, exitOK).stdout, "h1  succeeded")
	// How many versions depends on which results ended together (a
	// batch is one step); inspect shows the last of them.
	hist := baton(t, "history", "h1", "--store", db).want(t, exitOK).stdout
	m := regexp.MustCompile(`job h1: (\d+) versions, now succeeded`).FindStringSubmatch(hist)
	if m == nil {
		t.Fatalf("history: want \"job h1: N versions, now succeeded\" in:\n%s", hist)
	}
	contains(t, "inspect", baton(t, "inspect", "h1", "--store", db).want(t, exitOK).stdout, "job h1 v"+m[1]+": succeeded")
}

func TestCorruptStore(t *testing.T) {
	db := filepath.Join(t.TempDir(), "baton.db")
	garbage := bytes.Repeat([]byte("this is not a bolt database\n"), 1000)
	if err := os.WriteFile(db, garbage, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"run", writeWorkflow(t, "h.json", helloJSON)}, {"status"}, {"history", "h1"}, {"inspect", "h1"}, {"resume"},
	} {
		r := baton(t, append(args, "--store", db)...).want(t, exitStore)
		contains(t, "stderr", r.stderr, "baton: cannot open store "+db+": ", "not a bbolt database")
		got, err := os.ReadFile(db)
		if err != nil || !bytes.Equal(got, garbage) {
			t.Fatalf("%v changed the corrupt store file (%v)", args, err)
		}
	}
}

func TestStoreIsADirectory(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"run", writeWorkflow(t, "h.json", helloJSON)}, {"status"}, {"history", "h1"}, {"inspect", "h1"}, {"resume"},
	} {
		r := baton(t, append(args, "--store", dir)...).want(t, exitError)
		contains(t, "stderr", r.stderr, "baton: "+dir+" is a directory, not a store file\n")
		if strings.Contains(r.stderr, "bbolt") {
			t.Errorf("%v: %s", args, r.stderr)
		}
	}
}

// TestStoreDirectoryNotMade checks that only the default store's directory
// is made: a store path given with --store or $BATON_STORE must be in a
// directory that exists.
func TestStoreDirectoryNotMade(t *testing.T) {
	tmp := t.TempDir()
	file := writeWorkflow(t, "h.json", helloJSON)
	db := filepath.Join(tmp, "nope", "a", "b.db")
	r := baton(t, "run", file, "--store", db).want(t, exitError)
	contains(t, "stderr", r.stderr, "directory "+filepath.Join(tmp, "nope", "a")+" does not exist")
	t.Setenv("BATON_STORE", db)
	r = baton(t, "run", file).want(t, exitError)
	contains(t, "stderr", r.stderr, "directory "+filepath.Join(tmp, "nope", "a")+" does not exist")
	if _, err := os.Stat(filepath.Join(tmp, "nope")); err == nil {
		t.Error("made the directory of a store given with --store or $BATON_STORE")
	}

	// The default locations are made.
	t.Setenv("BATON_STORE", "")
	t.Setenv("XDG_STATE_HOME", "")
	t.Setenv("HOME", filepath.Join(tmp, "home"))
	baton(t, "run", file, "--id", "h1").want(t, exitOK)
	if _, err := os.Stat(filepath.Join(tmp, "home", ".local", "state", "baton", "baton.db")); err != nil {
		t.Error(err)
	}
}

// TestStatusListsWithoutLoading: listing a store that holds a job of
// 100,000 actions reads the job's small record, not the job: it allocates a
// small fraction of what loading the job does. (Before, status loaded every
// job in full: 7 s and 1.2 GB for a job of 1,000,000 actions.)
func TestStatusListsWithoutLoading(t *testing.T) {
	db := filepath.Join(t.TempDir(), "baton.db")
	kids := make([]ast.Node, 100000)
	for i := range kids {
		kids[i] = ast.Act("log", i)
	}
	storeJobs(t, db, map[job.ID]ast.Node{"big": ast.Par(kids...), "small": ast.Act("log", "x")})
	allocs := func(f func()) uint64 {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		f()
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	var list, load result
	listing := allocs(func() { list = baton(t, "status", "--store", db) })
	loading := allocs(func() { load = baton(t, "status", "big", "--store", db) })
	list.want(t, exitOK)
	load.want(t, exitOK)
	contains(t, "status", list.stdout, "big    running  1        0/100000", "small  running  1        0/1")
	t.Logf("listing allocates %d bytes; showing the big job %d", listing, loading)
	if listing*20 > loading {
		t.Errorf("listing allocates %d bytes, showing the job %d: listing should not load it", listing, loading)
	}
}

// TestReadOnlyCommandsNeverWrite: status, history and inspect leave an
// empty file empty (they used to make it a store) and report no jobs.
func TestReadOnlyCommandsNeverWrite(t *testing.T) {
	db := filepath.Join(t.TempDir(), "empty.db")
	if err := os.WriteFile(db, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	contains(t, "status", baton(t, "status", "--store", db).want(t, exitOK).stdout, "no jobs in "+db)
	baton(t, "history", "j", "--store", db).want(t, exitError)
	baton(t, "inspect", "j", "--store", db).want(t, exitError)
	if fi, err := os.Stat(db); err != nil || fi.Size() != 0 {
		t.Fatalf("the empty store file after reading: %v, %v; want 0 bytes", fi, err)
	}
}

// TestDamagedStoreFile: a real store cut short or with bytes flipped is a
// clear error naming the file, exit status 3, and the file is left as it
// was; before, baton crashed (a panic, or a fault of the memory map).
func TestDamagedStoreFile(t *testing.T) {
	src := filepath.Join(t.TempDir(), "baton.db")
	for i := range 20 {
		baton(t, "run", writeWorkflow(t, "h.json", helloJSON), "--store", src, "--id", fmt.Sprint("h", i), "--quiet").want(t, exitOK)
	}
	good, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	flipped := bytes.Clone(good)
	for i := 4096 * 2; i < len(flipped); i += 4096 {
		flipped[i+100] ^= 0xff
	}
	for name, data := range map[string][]byte{
		"cut to 12 KiB": good[:12<<10],
		"cut to 5 KiB":  good[:5<<10],
		"meta zeroed":   append(make([]byte, 8192), good[8192:]...),
		"bytes flipped": flipped,
	} {
		db := filepath.Join(t.TempDir(), "baton.db")
		if err := os.WriteFile(db, data, 0o600); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{{"status"}, {"status", "h3"}, {"history", "h3"}, {"resume"}, {"run", writeWorkflow(t, "h.json", helloJSON)}} {
			r := baton(t, append(args, "--store", db)...)
			if r.code == exitOK && name == "bytes flipped" {
				continue // a flip that bbolt and baton's checksums cannot see changed no answer here
			}
			if r.code != exitStore || !strings.Contains(r.stderr, db) {
				t.Errorf("%s: baton %v: exit status %d, want %d with a message naming %s\nstderr: %s", name, args, r.code, exitStore, db, r.stderr)
			}
			if now, _ := os.ReadFile(db); !bytes.Equal(now, data) {
				t.Fatalf("%s: baton %v changed the file", name, args)
			}
		}
	}
}
