//go:build !race

package zk_test

import "testing"

// reconnects: see race_on_test.go; without -race the test runs.
func reconnects(*testing.T) {}
