package kafka

import "testing"

// Brokers returns the brokers the package's tests use (TestMain).
func Brokers() []string { return testBrokers }

// NewPrefix returns a topic prefix no other test uses.
func NewPrefix(t testing.TB) string { return testPrefix(t) }
