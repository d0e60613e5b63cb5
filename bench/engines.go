package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/batonwf/baton/store"
)

// pickEngines returns the engines named in list, in the order given, and
// a function that removes what they leave behind.
func pickEngines(list string, workers int) ([]engine, func(), error) {
	var out []engine
	cleanup := func() {}
	for _, name := range strings.Split(list, ",") {
		switch strings.TrimSpace(name) {
		case "floor":
			out = append(out, floorEngine())
		case "memory":
			out = append(out, memoryEngine(workers))
		case "bolt":
			dir, err := os.MkdirTemp("", "baton-bench-")
			if err != nil {
				return nil, cleanup, err
			}
			cleanup = func() { _ = os.RemoveAll(dir) }
			out = append(out, boltEngine(workers, dir))
		default:
			return nil, cleanup, fmt.Errorf("-engines: no engine %q (have floor, memory, bolt)", name)
		}
	}
	return out, cleanup, nil
}

// memoryEngine returns runner/inmem on a fresh store.NewMemory per run.
func memoryEngine(workers int) engine {
	return batonEngine("memory", workers, func(scenario, int) (store.Store, func() storeStats, func() error, error) {
		st := store.NewMemory()
		return st, nil, st.Close, nil
	})
}
