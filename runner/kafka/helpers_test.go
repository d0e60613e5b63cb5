package kafka_test

import (
	"context"
	"testing"
	"time"

	kafkarunner "github.com/batonwf/baton/runner/kafka"
)

// testConfig returns a configuration with small partition counts under a
// fresh prefix, on the tests' brokers.
func testConfig(t testing.TB) kafkarunner.Config {
	return kafkarunner.Config{Brokers: kafkarunner.Brokers(), Prefix: kafkarunner.NewPrefix(t), Partitions: 4, ActionPartitions: 2}
}

// openStore opens a store on cfg, closed when the test ends.
func openStore(t testing.TB, cfg kafkarunner.Config) *kafkarunner.Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := kafkarunner.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}
