package kafka_test

import (
	"context"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	kafkarunner "github.com/batonwf/baton/runner/kafka"
)

// testConfig returns a configuration with small partition counts under a
// fresh prefix, on a cluster of the test's own (ClusterFor).
func testConfig(t testing.TB) kafkarunner.Config {
	cfg := kafkarunner.Config{Brokers: kafkarunner.ClusterFor(t), Prefix: kafkarunner.NewPrefix(t), Partitions: 4, ActionPartitions: 2}
	if os.Getenv("KAFKA_TEST_LOG") != "" {
		cfg.Logger = slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return cfg
}

// testWriter writes a test's logs (KAFKA_TEST_LOG=1).
type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
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
