package kafka

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/segmentio/kafka-go"

	"github.com/batonwf/baton/job"
)

// hdrPartition names the header that sends a message to a partition of
// its own choosing (claims, which belong to a partition, not a job).
const hdrPartition = "baton-partition"

// jobBalancer sends a message to the partition of the job its key starts
// with: the murmur2 hash of the key up to its first '/' (the job ID),
// modulo the partition count, as Kafka's Java producer partitions a key.
// A message with a baton-partition header goes to that partition.
type jobBalancer struct{}

var _ kafka.Balancer = jobBalancer{}

func (jobBalancer) Balance(m kafka.Message, partitions ...int) int {
	for _, h := range m.Headers {
		if h.Key == hdrPartition {
			if p, err := strconv.Atoi(string(h.Value)); err == nil && p >= 0 && p < len(partitions) {
				return partitions[p]
			}
		}
	}
	key := m.Key
	if i := bytes.IndexByte(key, '/'); i >= 0 {
		key = key[:i]
	}
	return kafka.Murmur2Balancer{Consistent: true}.Balance(kafka.Message{Key: key}, partitions...)
}

// partitionOf returns the partition of job id among n.
func partitionOf(id job.ID, n int) int {
	parts := make([]int, n)
	for i := range parts {
		parts[i] = i
	}
	return jobBalancer{}.Balance(kafka.Message{Key: []byte(id)}, parts...)
}

// Headers that place an action on its topic's partitions (actionBalancer).
const (
	// hdrAffinity holds the action's affinity key (job.Placement.Key):
	// the actions of one key go to one partition, so to one worker while
	// the group's membership is stable.
	hdrAffinity = "baton-affinity"
	// hdrReplica holds "COPY/OF/GROUP" for a copy of a node with
	// replicas (copy COPY of OF): the copies of one group (GROUP: the job
	// and the race's path) go to consecutive, so distinct, partitions
	// while they are no more than the partitions.
	hdrReplica = "baton-replica"
	// hdrAffinityMode says what of an affinity does not apply on Kafka:
	// "strict", "wait=D" or "strict,wait=D" (absent for a soft key with
	// the default wait). Store.Queues counts such actions.
	hdrAffinityMode = "baton-affinity-mode"
)

// actionBalancer places action messages: a replica copy by its group and
// copy (hdrReplica), a claim to the partition of its action
// (hdrPartition), an action with an affinity key by the murmur2 hash
// of its key (hdrAffinity), any other by the hash of its message key
// (JOB/ACTION-ID), as Kafka's Java producer would.
type actionBalancer struct{}

var _ kafka.Balancer = actionBalancer{}

func (actionBalancer) Balance(m kafka.Message, partitions ...int) int {
	key := m.Key
	for _, h := range m.Headers {
		switch h.Key {
		case hdrPartition:
			if p, err := strconv.Atoi(string(h.Value)); err == nil && p >= 0 && p < len(partitions) {
				return partitions[p]
			}
		case hdrReplica:
			n, _, group, ok := parseReplica(h.Value)
			if !ok {
				continue
			}
			first := kafka.Murmur2Balancer{Consistent: true}.Balance(kafka.Message{Key: []byte(group)}, partitions...)
			i := 0
			for i < len(partitions) && partitions[i] != first {
				i++
			}
			return partitions[(i+n)%len(partitions)]
		case hdrAffinity:
			key = h.Value
		}
	}
	return kafka.Murmur2Balancer{Consistent: true}.Balance(kafka.Message{Key: key}, partitions...)
}

// placeHeaders returns the headers that place action a (actionBalancer).
func placeHeaders(a job.Action) []kafka.Header {
	switch {
	case a.Replica != nil:
		group := string(a.JobID) + "/" + a.Replica.Race
		return []kafka.Header{{Key: hdrReplica, Value: fmt.Appendf(nil, "%d/%d/%s", a.Replica.Copy, a.Replica.Of, group)}}
	case a.Placement != nil && a.Placement.Key != "":
		hs := []kafka.Header{{Key: hdrAffinity, Value: []byte(a.Placement.Key)}}
		var mode []string
		if a.Placement.Strict {
			mode = append(mode, "strict")
		}
		if a.Placement.Wait > 0 {
			mode = append(mode, "wait="+a.Placement.Wait.String())
		}
		if len(mode) > 0 {
			hs = append(hs, kafka.Header{Key: hdrAffinityMode, Value: []byte(strings.Join(mode, ","))})
		}
		return hs
	}
	return nil
}

// parseReplica reads a hdrReplica value.
func parseReplica(v []byte) (copy, of int, group string, ok bool) {
	parts := strings.SplitN(string(v), "/", 3)
	if len(parts) != 3 {
		return 0, 0, "", false
	}
	c, err1 := strconv.Atoi(parts[0])
	n, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil || c < 0 || n < 1 || c >= n {
		return 0, 0, "", false
	}
	return c, n, parts[2], true
}
