package bolt_test

import (
	"context"
	"errors"
	"io/fs"
	"strings"
	"syscall"
	"testing"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/store/bolt"
)

// TestFileErrorSaysPathOnce: an error of the store's file itself (a full
// disk: "write PATH: no space left on device") names the file once, as
// every error of the store does, not a second time inside; errors.Is
// still finds its cause.
func TestFileErrorSaysPathOnce(t *testing.T) {
	path := tempPath(t)
	st := open(t, path, nil)
	bolt.InjectFaults(st, func(p bolt.FaultPoint, _ job.Job, _ *job.Step) error {
		if p == bolt.FaultCommit {
			return &fs.PathError{Op: "write", Path: path, Err: syscall.ENOSPC}
		}
		return nil
	})
	tr, err := job.New("full", ast.Act("a", nil))
	if err != nil {
		t.Fatal(err)
	}
	err = st.Create(context.Background(), tr.Job)
	if err == nil {
		t.Fatal("a create on a full disk succeeded")
	}
	msg := err.Error()
	if n := strings.Count(msg, path); n != 1 || !strings.Contains(msg, "job full: write: no space left on device") {
		t.Errorf("error %q: want the path once (it has it %d times) and the job, then %q", msg, n, "write: no space left on device")
	}
	if !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("error %q does not wrap ENOSPC", msg)
	}
}
