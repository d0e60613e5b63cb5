package runner_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
)

// TestInputAs: a handler decodes its inputs by name; every way it can go
// wrong is an error naming the input and the action.
func TestInputAs(t *testing.T) {
	type charge struct {
		ID     string `json:"id"`
		Amount int    `json:"amount"`
	}
	a := job.Action{JobID: "j", ID: "seq[1]#1", Name: "receipt", Attempt: 1, Inputs: []job.Input{
		{Name: "charge", Output: json.RawMessage(`{"id":"ch_1","amount":42}`)},
		{Name: "block", Output: nil},
		{Name: "text", Output: json.RawMessage(`"hello"`)},
	}}
	var got charge
	var errs []error
	reg := runner.NewRegistry()
	if err := reg.Register("receipt", func(ctx context.Context, _ job.Action) ([]byte, error) {
		var err error
		got, err = runner.InputAs[charge](ctx, "charge")
		errs = append(errs, err)
		_, err = runner.InputAs[charge](ctx, "block")
		errs = append(errs, err)
		_, err = runner.InputAs[charge](ctx, "text")
		errs = append(errs, err)
		_, err = runner.InputAs[charge](ctx, "nosuch")
		errs = append(errs, err)
		return nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := runner.Execute(context.Background(), reg, a, runner.ExecOptions{}); err != nil {
		t.Fatal(err)
	}
	if errs[0] != nil || got != (charge{"ch_1", 42}) {
		t.Errorf("charge = %+v, %v", got, errs[0])
	}
	for i, want := range []string{
		`input "block" of action "receipt" has no output`,
		`input "text" of action "receipt": json: cannot unmarshal string`,
		`action "receipt" takes no input "nosuch"`,
	} {
		if err := errs[i+1]; err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %d = %v, want one containing %q", i+1, err, want)
		}
	}
	if _, err := runner.InputAs[charge](context.Background(), "charge"); err == nil || !strings.Contains(err.Error(), "call InputAs from a handler") {
		t.Errorf("outside a handler: %v", err)
	}
}
