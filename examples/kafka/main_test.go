package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
)

// TestExample runs the example on an in-process Kafka broker of its own
// (kfake: the Kafka protocol on 127.0.0.1).
func TestExample(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var out bytes.Buffer
	start := time.Now()
	if err := example(ctx, c.ListenAddrs(), "example", &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	t.Logf("took %v", time.Since(start))
	for _, want := range []string{": hello, world\n", ": resized a.png\n", ": resized b.png\n", ": resized c.png\n",
		": upload of album failed: 503\n", ": uploaded album\n", "seq: succeeded\n", `upload "album" seq[2]: succeeded #2`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the output has no %q:\n%s", want, out.String())
		}
	}
}
