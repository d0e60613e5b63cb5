package kafka

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/segmentio/kafka-go"
)

// topicSpec is a topic baton makes, and what it checks of one that exists.
type topicSpec struct {
	name       string
	partitions int               // when created
	configs    map[string]string // when created
	compacted  bool              // must be compacted (state) or must not be (the others)
}

// topicInfo is what baton learned of a topic.
type topicInfo struct {
	partitions int
	maxMessage int // max.message.bytes; 0 if unknown
}

// admin creates and checks topics.
type admin struct {
	cfg *Config
	cl  *kafka.Client

	mu      sync.Mutex
	known   map[string]topicInfo // topics created or checked
	created map[string]bool      // topics CreateTopics made or said exist
}

// newAdmin returns an admin with a client of its own, whose metadata
// requests wait for the topics it knows exist.
func newAdmin(cfg *Config) *admin {
	a := &admin{cfg: cfg, known: map[string]topicInfo{}, created: map[string]bool{}}
	a.cl = cfg.client(a.exists)
	return a
}

// exists reports whether topic was created or checked: it exists, even
// if the metadata of a transport does not list it yet.
func (a *admin) exists(topic string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	_, ok := a.known[topic]
	return ok || a.created[topic]
}

func (a *admin) specs() (restarter, state, stops topicSpec) {
	c := a.cfg
	restarter = topicSpec{name: c.restarterTopic(), partitions: c.Partitions, configs: map[string]string{"cleanup.policy": "delete"}}
	state = topicSpec{name: c.stateTopic(), partitions: c.Partitions, compacted: true,
		configs: map[string]string{"cleanup.policy": "compact"}}
	stops = topicSpec{name: c.stopsTopic(), partitions: 1,
		configs: map[string]string{"cleanup.policy": "delete", "retention.ms": "3600000"}}
	return
}

func (a *admin) actionSpec(name string) topicSpec {
	return topicSpec{name: a.cfg.actionTopic(name), partitions: a.cfg.ActionPartitions, configs: map[string]string{"cleanup.policy": "delete"}}
}

// MissingTopicsError is the error of Open, and of the creation of an
// action topic, with Config.NoCreate when topics do not exist.
type MissingTopicsError struct {
	Prefix  string   // Config.Prefix
	Brokers []string // Config.Brokers
	Topics  []string // the topics that do not exist, in the order asked
}

func (e *MissingTopicsError) Error() string {
	what := "topic " + e.Topics[0] + " does not exist"
	if len(e.Topics) > 1 {
		what = "topics " + strings.Join(e.Topics, ", ") + " do not exist"
	}
	return fmt.Sprintf("kafka: %s under prefix %s on %s (Config.NoCreate: baton creates none; is the prefix right?)",
		what, e.Prefix, strings.Join(e.Brokers, ","))
}

// ensure creates the topics that do not exist (with Config.NoCreate, it
// fails with a *MissingTopicsError instead) and checks all of them, and
// returns what it learned of each, in order.
func (a *admin) ensure(ctx context.Context, specs ...topicSpec) ([]topicInfo, error) {
	out := make([]topicInfo, len(specs))
	var todo []topicSpec
	a.mu.Lock()
	for _, s := range specs {
		if _, ok := a.known[s.name]; !ok {
			todo = append(todo, s)
		}
	}
	a.mu.Unlock()
	if len(todo) > 0 && !a.cfg.NoCreate {
		req := &kafka.CreateTopicsRequest{}
		for _, s := range todo {
			tc := kafka.TopicConfig{Topic: s.name, NumPartitions: s.partitions, ReplicationFactor: a.cfg.ReplicationFactor}
			for _, k := range slices.Sorted(maps.Keys(s.configs)) {
				tc.ConfigEntries = append(tc.ConfigEntries, kafka.ConfigEntry{ConfigName: k, ConfigValue: s.configs[k]})
			}
			req.Topics = append(req.Topics, tc)
		}
		res, err := a.cl.CreateTopics(ctx, req)
		if err != nil {
			return nil, fmt.Errorf("kafka: create topics %s: %w", names(todo), err)
		}
		for _, s := range todo {
			if err := res.Errors[s.name]; err != nil && !errors.Is(err, kafka.TopicAlreadyExists) {
				return nil, fmt.Errorf("kafka: create topic %s: %w", s.name, err)
			}
		}
		a.mu.Lock()
		for _, s := range todo {
			a.created[s.name] = true
		}
		a.mu.Unlock()
	}
	if len(todo) > 0 {
		infos, err := a.check(ctx, todo)
		if err != nil {
			return nil, err
		}
		a.mu.Lock()
		for i, s := range todo {
			a.known[s.name] = infos[i]
		}
		a.mu.Unlock()
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for i, s := range specs {
		out[i] = a.known[s.name]
	}
	return out, nil
}

// check reads the partition counts and configurations of topics that
// exist, and refuses those whose cleanup policy is wrong for their use.
func (a *admin) check(ctx context.Context, specs []topicSpec) ([]topicInfo, error) {
	req := &kafka.MetadataRequest{}
	dreq := &kafka.DescribeConfigsRequest{}
	for _, s := range specs {
		req.Topics = append(req.Topics, s.name)
		dreq.Resources = append(dreq.Resources, kafka.DescribeConfigRequestResource{
			ResourceType: kafka.ResourceTypeTopic, ResourceName: s.name,
			ConfigNames: []string{"cleanup.policy", "max.message.bytes"}})
	}
	md, err := a.cl.Metadata(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("kafka: metadata of %s: %w", names(specs), err)
	}
	parts := map[string]int{}
	var missing []string
	for _, t := range md.Topics {
		switch {
		case errors.Is(t.Error, kafka.UnknownTopicOrPartition) && a.cfg.NoCreate:
			missing = append(missing, t.Name)
		case t.Error != nil:
			return nil, fmt.Errorf("kafka: metadata of topic %s: %w", t.Name, t.Error)
		}
		parts[t.Name] = len(t.Partitions)
	}
	if len(missing) > 0 {
		return nil, &MissingTopicsError{Prefix: a.cfg.Prefix, Brokers: a.cfg.Brokers, Topics: missing}
	}
	dc, err := a.cl.DescribeConfigs(ctx, dreq)
	if err != nil {
		return nil, fmt.Errorf("kafka: configurations of %s: %w", names(specs), err)
	}
	cfgs := map[string]map[string]string{}
	for _, r := range dc.Resources {
		if r.Error != nil {
			return nil, fmt.Errorf("kafka: configuration of topic %s: %w", r.ResourceName, r.Error)
		}
		m := map[string]string{}
		for _, e := range r.ConfigEntries {
			m[e.ConfigName] = e.ConfigValue
		}
		cfgs[r.ResourceName] = m
	}
	out := make([]topicInfo, len(specs))
	for i, s := range specs {
		n, ok := parts[s.name]
		if !ok || n == 0 {
			return nil, fmt.Errorf("kafka: topic %s has no partitions (the metadata does not list it)", s.name)
		}
		out[i].partitions = n
		policy := cfgs[s.name]["cleanup.policy"]
		compacted := slices.Contains(strings.Split(policy, ","), "compact")
		switch {
		case s.compacted && !compacted:
			return nil, fmt.Errorf("kafka: topic %s has cleanup.policy=%q; baton keeps job state in it and needs \"compact\"", s.name, policy)
		case !s.compacted && compacted:
			return nil, fmt.Errorf("kafka: topic %s has cleanup.policy=%q; compaction would drop messages baton has not read: it needs \"delete\"", s.name, policy)
		}
		if v, err := strconv.Atoi(cfgs[s.name]["max.message.bytes"]); err == nil {
			out[i].maxMessage = v
		}
	}
	return out, nil
}

func names(specs []topicSpec) string {
	var ns []string
	for _, s := range specs {
		ns = append(ns, s.name)
	}
	return strings.Join(ns, ", ")
}
