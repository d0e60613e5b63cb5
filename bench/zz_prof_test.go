package main

import (
	"context"
	"os"
	"strings"
	"testing"
)

func TestZZProf(t *testing.T) {
	for _, f := range serveFigures() {
		if strings.Contains(os.Getenv("ZZ"), f.Name) {
			f = f.sized(1)
			res, err := runServeChild(context.Background(), serveSpec{Figure: f, Warm: 3, Dir: t.TempDir()})
			t.Logf("%s %+v %+v %+v %v", f.Name, res, res.Latency, res.Idle, err)
		}
	}
}
