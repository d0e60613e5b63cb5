package runner_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
)

// TestExecuteTimeoutMessage checks that an action that overruns its time
// limit says so once: a handler that returns the context's error, wrapped
// or not, adds nothing; a handler with something else to say keeps it.
func TestExecuteTimeoutMessage(t *testing.T) {
	reg := runner.NewRegistry()
	_ = reg.Register("bare", func(ctx context.Context, _ job.Action) ([]byte, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	})
	_ = reg.Register("wrapped", func(ctx context.Context, _ job.Action) ([]byte, error) {
		<-ctx.Done()
		return nil, fmt.Errorf("sleep 1h: %w", ctx.Err())
	})
	_ = reg.Register("other", func(ctx context.Context, _ job.Action) ([]byte, error) {
		<-ctx.Done()
		return nil, errors.New("gave up half way")
	})
	opts := runner.ExecOptions{Timeout: 20 * time.Millisecond}
	for name, want := range map[string]string{
		"bare":    `action "bare" timed out after 20ms`,
		"wrapped": `action "wrapped" timed out after 20ms`,
		"other":   `action "other" timed out after 20ms: gave up half way`,
	} {
		r, err := runner.Execute(context.Background(), reg, act(name, ""), opts)
		if err != nil || r.Error != want {
			t.Errorf("%s: result %+v, %v; want the failure %q", name, r, err, want)
		}
	}
}
