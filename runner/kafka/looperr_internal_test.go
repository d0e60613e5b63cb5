package kafka

import (
	"context"
	"errors"
	"testing"
)

// TestLoopErr: an input that failed while its loop's context ended is
// answered errLoopGone (its sender then hands it to the partition's next
// owner), whatever the failure; one that failed with the loop alive keeps
// its own error. (runnertest's TwoRunnersOneStore failed under load: a
// submit met a rebalance, and its caller got the loop's "context
// canceled" though the next owner would create the job.)
func TestLoopErr(t *testing.T) {
	boom := errors.New("boom")
	live := context.Background()
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	if err := loopErr(live, boom); err != boom {
		t.Errorf("loop alive: %v, want boom", err)
	}
	if err := loopErr(gone, context.Canceled); !errors.Is(err, errLoopGone) {
		t.Errorf("loop gone: %v, want errLoopGone", err)
	}
	if err := loopErr(gone, nil); err != nil {
		t.Errorf("loop gone, no failure: %v", err)
	}
	if err := loopErr(gone, errLoopGone); err != errLoopGone {
		t.Errorf("errLoopGone wrapped again: %v", err)
	}
}
