package runner_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
)

// TestKinds: a handler's WithKind and Final reach the result; a kind no
// retry policy could name is dropped, and the failure's message says why.
func TestKinds(t *testing.T) {
	for _, tc := range []struct {
		err       error
		kind, msg string
		final     bool
	}{
		{runner.WithKind(errors.New("declined"), "card_declined"), "card_declined", "declined", false},
		{runner.Final(runner.WithKind(errors.New("bad"), "bad_request")), "bad_request", "bad", true},
		{runner.WithKind(runner.Final(errors.New("bad")), "bad.request-2"), "bad.request-2", "bad", true},
		{runner.WithKind(errors.New("x"), "card declined"), "", `x (the handler's failure kind "card declined" has ' ' at byte 4`, false},
		{runner.WithKind(errors.New("x"), "deadline"), "", `x (the handler's failure kind "deadline" is never the failure of an attempt`, false},
		{runner.WithKind(errors.New("x"), strings.Repeat("k", 101)), "", "x (the handler's failure kind is 101 bytes long (at most 100); the failure has no kind)", false},
	} {
		reg := runner.NewRegistry()
		if err := reg.Register("a", func(context.Context, job.Action) ([]byte, error) { return nil, tc.err }); err != nil {
			t.Fatal(err)
		}
		r, err := runner.Execute(context.Background(), reg, act("a", ""), runner.ExecOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if r.Kind != tc.kind || r.Final != tc.final || !strings.HasPrefix(r.Error, tc.msg) {
			t.Errorf("%v: kind %q final %v error %q; want %q %v %q", tc.err, r.Kind, r.Final, r.Error, tc.kind, tc.final, tc.msg)
		}
	}
}
