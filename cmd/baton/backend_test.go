package main

import (
	"errors"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Only the backends' files name a store, a runner or a client library:
// every command reaches its store through the backend interface.
func TestOnlyBackendsImportStores(t *testing.T) {
	owners := map[string]bool{
		"backend.go": true, "boltbackend.go": true, "store.go": true,
		"zkbackend.go": true, "zk.go": true, "kafkabackend.go": true, "kafka.go": true, "kafka_place.go": true,
	}
	adapters := []string{
		"github.com/batonwf/baton/store/bolt", "github.com/batonwf/baton/runner/inmem",
		"github.com/batonwf/baton/runner/zk", "github.com/batonwf/baton/runner/kafka",
		"go.etcd.io/bbolt", "github.com/go-zookeeper/zk", "github.com/segmentio/kafka-go",
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") || owners[f] {
			continue
		}
		ast, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range ast.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			for _, a := range adapters {
				if path == a || strings.HasPrefix(path, a+"/") {
					t.Errorf("%s imports %s: only the backends' files may (go through the backend interface)", f, path)
				}
			}
		}
	}
}

// A command's error carries its exit status; main maps it once.
func TestExitCode(t *testing.T) {
	plain := errors.New("x")
	for _, c := range []struct {
		err  error
		want int
	}{
		{nil, exitOK},
		{exitWith(exitOK), exitOK},
		{plain, exitError},
		{exitWith(exitInterrupted), exitInterrupted},
		{withCode(exitStore, plain), exitStore},
		{withCode(exitError, withCode(exitStore, plain)), exitError}, // the outermost status wins
		{withCode(exitStore, nil), exitOK},
	} {
		if got := exitCode(c.err); got != c.want {
			t.Errorf("exitCode(%v) = %d, want %d", c.err, got, c.want)
		}
	}
	if !errors.Is(withCode(exitStore, plain), plain) {
		t.Error("withCode hides its error from errors.Is")
	}
}
