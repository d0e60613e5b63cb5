package main

import (
	"path/filepath"
	"testing"
)

func TestHello(t *testing.T) {
	if err := hello(filepath.Join(t.TempDir(), "baton.db")); err != nil {
		t.Fatal(err)
	}
}
