package kafka_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"

	kafkarunner "github.com/batonwf/baton/runner/kafka"
)

// groupView is a consumer group as its coordinator describes it once
// stable.
type groupView struct {
	owner   map[string]string // "topic/partition" -> the name of the member assigned it
	names   map[string]string // member ID -> name
	members []kafka.GroupMember
	count   map[string]map[string]int // name -> topic -> partitions
}

// describeSettled returns the group's view once it is stable with exactly
// the members named (each announcing its name) and every partition of
// topics (name -> partition count) assigned to one of them.
func describeSettled(t *testing.T, ctx context.Context, cl *kafka.Client, group string, topics map[string]int, names ...string) groupView {
	t.Helper()
	var v groupView
	waitFor(t, fmt.Sprintf("group %s settled on %v", group, names), func() bool {
		dg, err := cl.DescribeGroups(ctx, &kafka.DescribeGroupsRequest{GroupIDs: []string{group}})
		if err != nil || len(dg.Groups) != 1 || dg.Groups[0].Error != nil || dg.Groups[0].GroupState != "Stable" {
			return false
		}
		v = groupView{owner: map[string]string{}, names: map[string]string{}, count: map[string]map[string]int{}}
		for _, m := range dg.Groups[0].Members {
			name, ok := kafkarunner.MemberName(m.MemberMetadata.UserData)
			if !ok {
				return false
			}
			v.names[m.MemberID] = name
			v.members = append(v.members, kafka.GroupMember{ID: m.MemberID, Topics: m.MemberMetadata.Topics})
			v.count[name] = map[string]int{}
			for _, a := range m.MemberAssignments.Topics {
				for _, p := range a.Partitions {
					key := fmt.Sprintf("%s/%d", a.Topic, p)
					if _, dup := v.owner[key]; dup {
						t.Fatalf("group %s: %s assigned twice", group, key)
					}
					v.owner[key] = name
					v.count[name][a.Topic]++
				}
			}
		}
		want := 0
		for _, n := range topics {
			want += n
		}
		got := slices.Sorted(maps.Values(v.names))
		return slices.Equal(got, slices.Sorted(slices.Values(names))) && len(v.owner) == want
	})
	return v
}

// rangeOwners is what kafka-go's range balancer would assign the view's
// members, as "topic/partition" -> name.
func rangeOwners(v groupView, topics map[string]int) map[string]string {
	var ps []kafka.Partition
	for topic, n := range topics {
		for i := range n {
			ps = append(ps, kafka.Partition{Topic: topic, ID: i})
		}
	}
	out := map[string]string{}
	for id, a := range (kafka.RangeGroupBalancer{}).AssignGroups(v.members, ps) {
		for topic, ids := range a {
			for _, p := range ids {
				out[fmt.Sprintf("%s/%d", topic, p)] = v.names[id]
			}
		}
	}
	return out
}

// movedTo counts the partitions whose owner differs, by topic and new
// owner.
func movedTo(before, after map[string]string) map[string]map[string]int {
	out := map[string]map[string]int{}
	for key, o := range after {
		if before[key] == o {
			continue
		}
		topic := key[:strings.LastIndexByte(key, '/')]
		if out[topic] == nil {
			out[topic] = map[string]int{}
		}
		out[topic][o]++
	}
	return out
}

// TestBalancerLive: three runners (restarter and worker each) share a
// prefix whose restarter topic and two action topics have 12 partitions;
// a fourth joins while jobs run: in each group, at most the newcomer's
// share (3 of each topic) moves, all to it (kafka-go's range balancer,
// counted on the same members, is logged beside it); then one leaves and
// only its partitions move. Every job completes, with an exact history.
func TestBalancerLive(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cfg := testConfig(t)
	cfg.Partitions, cfg.ActionPartitions = 12, 12
	clientStore := openStore(t, cfg)
	c := newCounter(t)
	if err := c.reg.Register("pause", func(ctx context.Context, a job.Action) ([]byte, error) {
		time.Sleep(50 * time.Millisecond)
		return nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	runners := map[string]*running{}
	join := func(name string) {
		runners[name] = start(t, kafkarunner.Options{
			WorkerOptions: runner.WorkerOptions{Registry: c.reg, Workers: 4, DrainTimeout: 10 * time.Second, Name: name},
			Store:         openStore(t, cfg)})
	}
	for _, name := range []string{"w-a", "w-b", "w-c"} {
		join(name)
	}
	client := start(t, kafkarunner.Options{Store: clientStore, Role: kafkarunner.RoleClient})
	cl := &kafka.Client{Addr: kafka.TCP(cfg.Brokers...), Timeout: 10 * time.Second}
	groups := map[string]map[string]int{
		cfg.Prefix + ".restarters": {cfg.Prefix + ".restarter": 12},
		cfg.Prefix + ".workers":    {cfg.Prefix + ".action.noop": 12, cfg.Prefix + ".action.pause": 12},
	}
	settle := func(names ...string) map[string]groupView {
		out := map[string]groupView{}
		for g, topics := range groups {
			out[g] = describeSettled(t, ctx, cl, g, topics, names...)
		}
		return out
	}

	three := settle("w-a", "w-b", "w-c")
	for g, v := range three {
		for name, perTopic := range v.count {
			for topic, n := range perTopic {
				if n != 4 {
					t.Errorf("group %s, 3 members: %s has %d partitions of %s; want 4", g, name, n, topic)
				}
			}
		}
	}
	ids, errs := submitAllWith(ctx, client, 60, "join", pausedFanJob)

	join("w-d")
	four := settle("w-a", "w-b", "w-c", "w-d")
	for g, topics := range groups {
		sticky := movedTo(three[g].owner, four[g].owner)
		byRange := movedTo(rangeOwners(three[g], topics), rangeOwners(four[g], topics))
		for topic := range topics {
			n := 0
			for _, k := range sticky[topic] {
				n += k
			}
			r := 0
			for _, k := range byRange[topic] {
				r += k
			}
			t.Logf("group %s, topic %s: a 4th member joins: %d partitions moved (range would move %d)", g, topic, n, r)
			if n > 3 || sticky[topic]["w-d"] != n {
				t.Errorf("group %s, topic %s: a 4th member joins: moved %v; want at most its share (3), all to w-d", g, topic, sticky[topic])
			}
			if got := four[g].count["w-d"][topic]; got != 3 {
				t.Errorf("group %s, topic %s: the newcomer has %d partitions; want its share, 3", g, topic, got)
			}
		}
	}
	ids2, errs2 := submitAllWith(ctx, client, 60, "leave", pausedFanJob)

	runners["w-b"].stop(t)
	left := settle("w-a", "w-c", "w-d")
	for g := range groups {
		for key, o := range four[g].owner {
			if o != "w-b" && left[g].owner[key] != o {
				t.Errorf("group %s: w-b leaves, yet %s moved from %s to %s", g, key, o, left[g].owner[key])
			}
		}
	}

	for err := range errs {
		t.Error(err)
	}
	for err := range errs2 {
		t.Error(err)
	}
	extra := finishAll(t, ctx, client, clientStore, c, append(ids, ids2...))
	t.Logf("%d extra runs of actions (at least once)", extra)
	for name, r := range runners {
		if s := r.Stats(); s.BadMembers != 0 {
			t.Errorf("%s: %d members' user data did not parse", name, s.BadMembers)
		}
	}
}

// TestBalancerDrainingLive: a runner started Draining gets no partition
// in either group while another runner is not draining, runs no action
// and owns no job; Store.Workers lists it as draining, with its capacity.
func TestBalancerDrainingLive(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg := testConfig(t)
	clientStore := openStore(t, cfg)
	idle, busy := newCounter(t), newCounter(t)
	start(t, kafkarunner.Options{WorkerOptions: runner.WorkerOptions{Registry: busy.reg, Name: "w-a"}, Store: openStore(t, cfg)})
	start(t, kafkarunner.Options{WorkerOptions: runner.WorkerOptions{Registry: idle.reg, Workers: 2, Name: "w-b"}, Store: openStore(t, cfg),
		Capacity: 5, Draining: true})
	client := start(t, kafkarunner.Options{Store: clientStore, Role: kafkarunner.RoleClient})
	cl := &kafka.Client{Addr: kafka.TCP(cfg.Brokers...), Timeout: 10 * time.Second}
	for g, topics := range map[string]map[string]int{
		cfg.Prefix + ".restarters": {cfg.Prefix + ".restarter": cfg.Partitions},
		cfg.Prefix + ".workers":    {cfg.Prefix + ".action.noop": cfg.ActionPartitions},
	} {
		v := describeSettled(t, ctx, cl, g, topics, "w-a", "w-b")
		if n := len(v.count["w-b"]); n != 0 {
			t.Errorf("group %s: the draining runner has partitions: %v", g, v.count["w-b"])
		}
	}
	ws, err := clientStore.Workers(ctx)
	if err != nil || len(ws) != 2 || ws[1].Name != "w-b" || !ws[1].Draining || ws[1].Capacity != 5 || ws[0].Draining || ws[0].Capacity != runner.DefaultWorkers {
		t.Errorf("workers: %+v, %v; want w-a (capacity DefaultWorkers) and w-b (capacity 5, draining)", ws, err)
	}
	ids, errs := submitAll(ctx, client, 10, "drain")
	for err := range errs {
		t.Error(err)
	}
	finishAll(t, ctx, client, clientStore, busy, ids)
	idle.mu.Lock()
	defer idle.mu.Unlock()
	if len(idle.runs) != 0 {
		t.Errorf("the draining runner ran %d actions", len(idle.runs))
	}
}
