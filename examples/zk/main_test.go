package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/batonwf/baton/internal/zktest"
)

// TestExample runs the example on a ZooKeeper server of its own.
func TestExample(t *testing.T) {
	srv := zktest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var out bytes.Buffer
	if err := example(ctx, srv.Addrs(), srv.Path("example"), &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []string{": hello, world\n", ": resized a.png\n", ": resized b.png\n", ": resized c.png\n",
		": upload of album failed: 503\n", ": uploaded album\n", "seq: succeeded\n", `upload "album" seq[2]: succeeded #2`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the output has no %q:\n%s", want, out.String())
		}
	}
}
