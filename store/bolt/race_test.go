//go:build race

package bolt_test

const raceEnabled = true
