package kafka_test

import (
	"strings"
	"testing"

	"github.com/batonwf/baton/runner"
	kafkarunner "github.com/batonwf/baton/runner/kafka"
)

// TestWorkerOptionsChecked: New fills in and checks the options every
// runner shares through runner.WorkerOptions.WithDefaults: a negative
// Workers is refused, naming the field, and so is a negative Capacity.
func TestWorkerOptionsChecked(t *testing.T) {
	st := openStore(t, testConfig(t))
	_, err := kafkarunner.New(kafkarunner.Options{WorkerOptions: runner.WorkerOptions{Workers: -1}, Store: st})
	if err == nil || !strings.Contains(err.Error(), "WorkerOptions.Workers") {
		t.Errorf("Workers -1: %v, want an error naming WorkerOptions.Workers", err)
	}
	_, err = kafkarunner.New(kafkarunner.Options{Store: st, Capacity: -1})
	if err == nil || !strings.Contains(err.Error(), "Options.Capacity") {
		t.Errorf("Capacity -1: %v, want an error naming Options.Capacity", err)
	}
	r, err := kafkarunner.New(kafkarunner.Options{Store: st, Role: kafkarunner.RoleClient})
	if err != nil {
		t.Fatalf("the zero WorkerOptions: %v", err)
	}
	r.Close()
}
