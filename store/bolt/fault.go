package bolt

import (
	"errors"
	"fmt"
	"runtime/debug"

	"github.com/batonwf/baton/job"
)

// ErrDamaged is wrapped by the errors a Store returns when the file itself
// is damaged: its bbolt pages do not add up (a meta page that points past
// the end of the file, a page that is not what it should be), or reading
// them faulted or panicked inside bbolt. Such errors also wrap
// job.ErrCorrupt, which a damaged record wraps too, so job.ErrCorrupt is
// the test for "the stored data is bad" and ErrDamaged for "the file's
// structure is bad".
var ErrDamaged = errors.New("store/bolt: the file is damaged")

// damageError is a damaged file. Its message does not name the file: the
// caller puts it in an error that does.
type damageError struct{ detail string }

func (e *damageError) Error() string { return "the file is damaged: " + e.detail }

func (e *damageError) Is(target error) bool { return target == ErrDamaged || target == job.ErrCorrupt }

func damagef(format string, args ...any) *damageError {
	return &damageError{detail: fmt.Sprintf(format, args...)}
}

// guard runs fn, which touches bbolt's memory map, so that a damaged file
// fails fn with an error instead of crashing the process: a fault (SIGSEGV
// or SIGBUS on a page of the map, which bbolt trusts) becomes a panic, and
// a panic, bbolt's own assertions included, becomes a *damageError.
// (A panic in baton's own code in fn is reported the same way: it is not
// told apart from damage, but it does not crash the process either.)
// what says what fn does ("reading", "writing", ...).
func guard(what string, fn func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			if f, ok := r.(interface{ Addr() uintptr }); ok {
				err = damagef("%s it faulted at address %#x, as a truncated or damaged file does (%v)", what, f.Addr(), r)
				return
			}
			err = damagef("%s it failed: %v", what, r)
		}
	}()
	return fn()
}
