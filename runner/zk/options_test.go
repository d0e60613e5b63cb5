package zk_test

import (
	"strings"
	"testing"

	"github.com/batonwf/baton/internal/zktest"
	"github.com/batonwf/baton/runner"
	zkrunner "github.com/batonwf/baton/runner/zk"
)

// TestWorkerOptionsChecked: New fills in and checks the options every
// runner shares through runner.WorkerOptions.WithDefaults: a negative
// Workers is refused, naming the field.
func TestWorkerOptionsChecked(t *testing.T) {
	st := openStore(t, zktest.Start(t), zkrunner.Config{})
	_, err := zkrunner.New(zkrunner.Options{WorkerOptions: runner.WorkerOptions{Workers: -1}, Store: st})
	if err == nil || !strings.Contains(err.Error(), "WorkerOptions.Workers") {
		t.Errorf("Workers -1: %v, want an error naming WorkerOptions.Workers", err)
	}
	r, err := zkrunner.New(zkrunner.Options{Store: st})
	if err != nil {
		t.Fatalf("the zero WorkerOptions: %v", err)
	}
	r.Close()
}
