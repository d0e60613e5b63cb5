//go:build race

package zk_test

// raceBuild is true when the tests are built with -race.
const raceBuild = true
