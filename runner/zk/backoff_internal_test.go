package zk

import (
	"testing"
	"time"

	"github.com/batonwf/baton/runner"
)

// TestBackoffDefaults: the zero Config.Backoff waits as ZooKeeper's
// retries always did, from at most 100 ms up to 10 s, not with
// runner.Backoff's own defaults; fields given are kept.
func TestBackoffDefaults(t *testing.T) {
	b := backoff(runner.Backoff{})
	if w := b.Wait(1); w < 50*time.Millisecond || w > 100*time.Millisecond {
		t.Errorf("first wait %v, want in [50ms, 100ms]", w)
	}
	if w := b.Wait(100); w < 5*time.Second || w > 10*time.Second {
		t.Errorf("100th wait %v, want in [5s, 10s]", w)
	}
	if got := backoff(runner.Backoff{Base: time.Millisecond, Max: 2 * time.Millisecond}); got.Base != time.Millisecond || got.Max != 2*time.Millisecond {
		t.Errorf("backoff kept %+v, want the fields given", got)
	}
}
