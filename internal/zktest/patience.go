package zktest

import (
	"testing"
	"time"
)

// Bounds of Patience.
const (
	patienceMargin  = 30 * time.Second // left to the test's own cleanup
	patienceCap     = 3 * time.Minute  // a wait longer than this is a hang
	patienceDefault = patienceCap      // when the test has no deadline
)

// Patience is how long a test may wait for an event that load only delays
// (a client reconnecting after a restart, an election, a write going
// through): what is left of the test's deadline less 30 s for cleanup, at
// most 3 minutes. A wait bounded by Patience fails only on a hang, never
// because the suite's other packages slowed this machine down; bounds that
// assert speed belong in benchmarks.
func Patience(t testing.TB) time.Duration {
	d := patienceDefault
	if dt, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		if deadline, ok := dt.Deadline(); ok {
			if left := time.Until(deadline) - patienceMargin; left < d {
				d = left
			}
		}
	}
	if d < time.Second {
		d = time.Second
	}
	return d
}

// WaitFor calls cond every 50 ms until it returns nil and fails the test
// with its last error if it has not within Patience(t). what names the
// event in the failure ("the held client reconnected").
func WaitFor(t testing.TB, what string, cond func() error) {
	t.Helper()
	limit := Patience(t)
	begin := time.Now()
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Since(begin) > limit {
			t.Fatalf("zktest: %s: not after %v: %v", what, limit, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
