package kafka_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/batonwf/baton/runner"
	kafkarunner "github.com/batonwf/baton/runner/kafka"
)

// TestQueuesWorkersUnknown: when the workers group cannot be described
// (the broker answers with an error for the group, or closes the
// connection), Queues still says what waits, and says that the workers
// are not known instead of counting none.
func TestQueuesWorkersUnknown(t *testing.T) {
	c := privateCluster(t)
	cfg := testConfig(t)
	cfg.Brokers = c.ListenAddrs()
	st := openStore(t, cfg)
	counter := newCounter(t)
	start(t, kafkarunner.Options{WorkerOptions: runner.WorkerOptions{Registry: counter.reg}, Store: openStore(t, cfg), Role: kafkarunner.RoleWorker})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	queues := func() []kafkarunner.Queue {
		t.Helper()
		qs, err := st.Queues(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return qs
	}
	queue := func() kafkarunner.Queue {
		t.Helper()
		qs := queues()
		if len(qs) != 1 || qs[0].Action != "noop" {
			t.Fatalf("queues %+v, want one of noop", qs)
		}
		return qs[0]
	}
	waitFor(t, "the worker in the workers group", func() bool {
		qs := queues()
		return len(qs) == 1 && qs[0].Workers == 1
	})
	if q := queue(); q.WorkersErr != nil {
		t.Fatalf("queue %+v: WorkersErr set though the group was described", q)
	}

	var mode atomic.Int32 // 1: an error for the group; 2: the connection closed
	mode.Store(1)
	c.ControlKey(int16(kmsg.DescribeGroups), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		switch mode.Load() {
		case 1:
			res := req.ResponseKind().(*kmsg.DescribeGroupsResponse)
			res.SetVersion(req.GetVersion())
			for _, g := range req.(*kmsg.DescribeGroupsRequest).Groups {
				rg := kmsg.NewDescribeGroupsResponseGroup()
				rg.Group, rg.ErrorCode = g, kerr.CoordinatorNotAvailable.Code
				res.Groups = append(res.Groups, rg)
			}
			return res, nil, true
		case 2:
			return nil, errors.New("connection dropped by the test"), true
		}
		return nil, nil, false
	})
	group := cfg.Prefix + ".workers"
	q := queue()
	if q.WorkersErr == nil || !errors.Is(q.WorkersErr, kafka.GroupCoordinatorNotAvailable) || !strings.Contains(q.WorkersErr.Error(), group) {
		t.Errorf("group answered with an error: queue %+v; want WorkersErr naming group %s and wrapping Coordinator Not Available", q, group)
	}
	mode.Store(2)
	if q := queue(); q.WorkersErr == nil || !strings.Contains(q.WorkersErr.Error(), group) {
		t.Errorf("connection closed: queue %+v; want WorkersErr naming group %s", q, group)
	} else {
		t.Logf("WorkersErr: %v", q.WorkersErr)
	}
	mode.Store(0)
	waitFor(t, "the worker counted again", func() bool { q := queue(); return q.WorkersErr == nil && q.Workers == 1 })
}
