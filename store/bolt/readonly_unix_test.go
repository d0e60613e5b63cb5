//go:build unix

package bolt_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/batonwf/baton/store/bolt"
)

// nobodyChildEnv makes TestReadOnlyUnwritableFile read the file at its
// value, in the subprocess it starts as an unprivileged user.
const nobodyChildEnv = "BATON_BOLT_NOBODY_CHILD"

// A file the process may not write, in a directory it may not write:
// OpenReadOnly reads it, and Open fails. Tests run as root, whom file
// permissions do not stop; then the reading runs in a subprocess as the
// user nobody (uid 65534), for whom they do, so this proves that
// OpenReadOnly opens the file O_RDONLY and creates nothing beside it.
func TestReadOnlyUnwritableFile(t *testing.T) {
	if path := os.Getenv(nobodyChildEnv); path != "" {
		readUnwritable(t, path)
		return
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "baton.db")
	w := open(t, path, &bolt.Options{NoSync: true})
	runPar(t, w, 5, 3, []byte(`"x"`))
	w.Close()
	if err := os.Chmod(path, 0o444); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chmod(dir, 0o700) })
	if os.Geteuid() != 0 {
		readUnwritable(t, path)
		return
	}
	// nobody must be able to reach the file and run the test binary.
	for d := filepath.Dir(dir); d != "/" && strings.HasPrefix(d, os.TempDir()); d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "bolt.test")
	data, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run=^TestReadOnlyUnwritableFile$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), nobodyChildEnv+"="+path, "GOCOVERDIR=", "TMPDIR="+filepath.Dir(bin))
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS") {
		t.Fatalf("reading as nobody: %v\n%s", err, out)
	}
	t.Logf("as nobody:\n%s", out)
}

func readUnwritable(t *testing.T, path string) {
	t.Logf("uid %d", os.Geteuid())
	if f, err := os.OpenFile(path, os.O_RDWR, 0); err == nil {
		f.Close()
		t.Fatalf("%s can be opened for writing: the test proves nothing", path)
	}
	if f, err := os.Create(filepath.Join(filepath.Dir(path), "probe")); err == nil {
		f.Close()
		t.Fatalf("the directory of %s is writable: the test proves nothing", path)
	}
	s, err := bolt.OpenReadOnly(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.Load(context.Background(), "par")
	if err != nil || got.Version() != 4 {
		t.Fatalf("Load: %v, %v", got, err)
	}
	if _, err := bolt.Open(path, &bolt.Options{Timeout: 100 * time.Millisecond}); err == nil || !errors.Is(err, fs.ErrPermission) {
		t.Fatalf("Open for writing: %v; want a permission error", err)
	}
	if names := dirNames(t, filepath.Dir(path)); !slices.Equal(names, []string{"baton.db"}) {
		t.Fatalf("the directory holds %v; want only baton.db", names)
	}
}
