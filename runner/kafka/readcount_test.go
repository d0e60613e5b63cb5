package kafka

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/protocol/fetch"
	"github.com/segmentio/kafka-go/protocol/listoffsets"

	"github.com/batonwf/baton/ast"
)

// countingTransport counts the fetch and ListOffsets requests that go
// through it.
type countingTransport struct {
	kafka.RoundTripper
	mu                 sync.Mutex
	fetches, endOffset int
}

func (c *countingTransport) RoundTrip(ctx context.Context, addr net.Addr, req kafka.Request) (kafka.Response, error) {
	c.mu.Lock()
	switch req.(type) {
	case *fetch.Request:
		c.fetches++
	case *listoffsets.Request:
		c.endOffset++
	}
	c.mu.Unlock()
	return c.RoundTripper.RoundTrip(ctx, addr, req)
}

func (c *countingTransport) counts() (fetches, endOffset int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.fetches, c.endOffset
}

// TestReadStateOneRoundTrip: reading a partition this Store does not own
// to its end, when what is new fits in one answer, is one fetch, whose
// answer also tells the end: no ListOffsets request before it (a signal
// sent through a runner that does not own its job, a claim, a history
// read all start so).
func TestReadStateOneRoundTrip(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	prefix := testPrefix(t)
	owner := openTestStore(t, prefix, 1)
	if _, _, err := owner.claim(ctx, 0, 1, true, "owner"); err != nil {
		t.Fatal(err)
	}
	tr := mustNew(t, "j", ast.Par(ast.Act("x", 1), ast.Act("y", 2)))
	if err := owner.Create(ctx, tr.Job); err != nil {
		t.Fatal(err)
	}
	reader := openTestStore(t, prefix, 1)
	if _, err := reader.Load(ctx, "j"); err != nil {
		t.Fatal(err)
	}
	step := succeed(t, tr.Job, "par[0]#1", `"x"`)
	if err := owner.Save(ctx, step.Job, step.Step); err != nil {
		t.Fatal(err)
	}
	ct := &countingTransport{RoundTripper: reader.cl.Transport}
	reader.cl.Transport = ct
	j, err := reader.Load(ctx, "j")
	if err != nil || j.Version() != 2 {
		t.Fatalf("the reader loads v%d (%v), want the owner's step, v2", j.Version(), err)
	}
	if fetches, ends := ct.counts(); fetches != 1 || ends != 0 {
		t.Errorf("reading the partition to its end took %d fetches and %d ListOffsets requests, want 1 and 0", fetches, ends)
	}
}
