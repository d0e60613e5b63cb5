package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	kafkarunner "github.com/batonwf/baton/runner/kafka"
)

// The -rebalance mode measures what a join costs runner/kafka's workers'
// group, on an in-process broker (kfake): three worker Runners share two
// action topics of 12 partitions each; once the group is stable, a
// fourth joins. Printed, not targeted:
//
//   - moved: the partitions whose owner changed (of 24), with baton's
//     sticky assignor, beside what kafka-go's range assignor would have
//     moved on the same members (computed from the members the
//     coordinator described before and after, as TestBalancerLive does);
//   - pause: from the fourth Runner's start until the group is stable
//     again with every partition assigned, an upper bound on the time
//     the members' partitions were paused (the eager protocol pauses all
//     of them).
//
// Each round uses a prefix of its own; the figures are each round's and
// their median.

const rebalancePartitions = 12

// rebalanceMain runs -rebalance: rounds rounds, a table on stdout.
func rebalanceMain(rounds int, stdout, stderr io.Writer, quiet bool) error {
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		return fmt.Errorf("starting an in-process Kafka broker: %w", err)
	}
	defer c.Close()
	brokers := c.ListenAddrs()
	type result struct {
		sticky, byRange int
		pause           time.Duration
	}
	var res []result
	for i := range rounds {
		s, r, p, err := rebalanceRound(brokers, fmt.Sprintf("rb%d-%d", time.Now().UnixNano()%1e6, i))
		if err != nil {
			return fmt.Errorf("round %d: %w", i+1, err)
		}
		if !quiet {
			fmt.Fprintf(stderr, "rebalance round %d: moved %d (range %d), pause %v\n", i+1, s, r, p.Round(time.Millisecond))
		}
		res = append(res, result{s, r, p})
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(stdout, "A 4th worker joins 3 (two action topics of %d partitions, kfake in process):\n", rebalancePartitions)
	fmt.Fprintln(tw, "round\tmoved, sticky\tmoved, range\tpause\t")
	var pauses []time.Duration
	var st, rg []int
	for i, r := range res {
		fmt.Fprintf(tw, "%d\t%d\t%d\t%v\t\n", i+1, r.sticky, r.byRange, r.pause.Round(time.Millisecond))
		pauses, st, rg = append(pauses, r.pause), append(st, r.sticky), append(rg, r.byRange)
	}
	slices.Sort(pauses)
	slices.Sort(st)
	slices.Sort(rg)
	fmt.Fprintf(tw, "median\t%d\t%d\t%v\t\n", st[len(st)/2], rg[len(rg)/2], pauses[len(pauses)/2].Round(time.Millisecond))
	return tw.Flush()
}

// rebalanceRound runs one round under prefix and returns the partitions
// moved by the sticky assignor and by range, and the pause.
func rebalanceRound(brokers []string, prefix string) (sticky, byRange int, pause time.Duration, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg := kafkarunner.Config{Brokers: brokers, Prefix: prefix, Partitions: 1, ActionPartitions: rebalancePartitions,
		Logger: slog.New(slog.DiscardHandler)}
	reg := runner.NewRegistry()
	for _, name := range []string{"noop", "pause"} {
		if err := reg.Register(name, func(context.Context, job.Action) ([]byte, error) { return nil, nil }); err != nil {
			return 0, 0, 0, err
		}
	}
	var stops []func()
	defer func() {
		for _, stop := range slices.Backward(stops) {
			stop()
		}
	}()
	join := func(name string) error {
		st, err := kafkarunner.Open(ctx, cfg)
		if err != nil {
			return err
		}
		r, err := kafkarunner.New(kafkarunner.Options{Store: st, Role: kafkarunner.RoleWorker,
			WorkerOptions: runner.WorkerOptions{Registry: reg, Name: name}})
		if err != nil {
			st.Close()
			return err
		}
		done := make(chan struct{})
		go func() { _ = r.Run(context.Background()); close(done) }()
		stops = append(stops, func() { _ = r.Close(); <-done; _ = st.Close() })
		return nil
	}
	cl := &kafka.Client{Addr: kafka.TCP(brokers...), Timeout: 10 * time.Second}
	group := prefix + ".workers"
	topics := []string{prefix + ".action.noop", prefix + ".action.pause"}
	for _, n := range []string{"w-a", "w-b", "w-c"} {
		if err := join(n); err != nil {
			return 0, 0, 0, err
		}
	}
	three, err := settled(ctx, cl, group, topics, 3)
	if err != nil {
		return 0, 0, 0, err
	}
	start := time.Now()
	if err := join("w-d"); err != nil {
		return 0, 0, 0, err
	}
	four, err := settled(ctx, cl, group, topics, 4)
	if err != nil {
		return 0, 0, 0, err
	}
	pause = time.Since(start)
	for k, o := range four.owner {
		if three.owner[k] != o {
			sticky++
		}
	}
	r3, r4 := three.rangeOwners(topics), four.rangeOwners(topics)
	for k, o := range r4 {
		if r3[k] != o {
			byRange++
		}
	}
	return sticky, byRange, pause, nil
}

// groupState is a stable group as its coordinator describes it.
type groupState struct {
	owner   map[string]string // "topic/partition" -> member name
	names   map[string]string // member ID -> name
	members []kafka.GroupMember
}

// rangeOwners is what kafka-go's range assignor gives the same members.
func (g groupState) rangeOwners(topics []string) map[string]string {
	var ps []kafka.Partition
	for _, t := range topics {
		for i := range rebalancePartitions {
			ps = append(ps, kafka.Partition{Topic: t, ID: i})
		}
	}
	out := map[string]string{}
	for id, a := range (kafka.RangeGroupBalancer{}).AssignGroups(g.members, ps) {
		for t, ids := range a {
			for _, p := range ids {
				out[fmt.Sprintf("%s/%d", t, p)] = g.names[id]
			}
		}
	}
	return out
}

// settled polls the group until it is stable with n members that
// announce their names and every partition of topics assigned.
func settled(ctx context.Context, cl *kafka.Client, group string, topics []string, n int) (groupState, error) {
	for {
		if g, ok := describeGroup(ctx, cl, group, topics, n); ok {
			return g, nil
		}
		select {
		case <-ctx.Done():
			return groupState{}, fmt.Errorf("group %s not stable with %d members: %w", group, n, ctx.Err())
		case <-time.After(5 * time.Millisecond):
		}
	}
}

func describeGroup(ctx context.Context, cl *kafka.Client, group string, topics []string, n int) (groupState, bool) {
	dg, err := cl.DescribeGroups(ctx, &kafka.DescribeGroupsRequest{GroupIDs: []string{group}})
	if err != nil || len(dg.Groups) != 1 || dg.Groups[0].Error != nil || dg.Groups[0].GroupState != "Stable" || len(dg.Groups[0].Members) != n {
		return groupState{}, false
	}
	g := groupState{owner: map[string]string{}, names: map[string]string{}}
	for _, m := range dg.Groups[0].Members {
		// The member's user data: a version byte, then JSON with its
		// name (runner/kafka's doc, "Balancing the groups").
		ud := m.MemberMetadata.UserData
		var d struct {
			Name string `json:"name"`
		}
		if len(ud) < 2 || json.Unmarshal(ud[1:], &d) != nil || d.Name == "" {
			return groupState{}, false
		}
		g.names[m.MemberID] = d.Name
		g.members = append(g.members, kafka.GroupMember{ID: m.MemberID, Topics: m.MemberMetadata.Topics})
		for _, a := range m.MemberAssignments.Topics {
			for _, p := range a.Partitions {
				g.owner[fmt.Sprintf("%s/%d", a.Topic, p)] = d.Name
			}
		}
	}
	return g, len(g.owner) == len(topics)*rebalancePartitions
}
