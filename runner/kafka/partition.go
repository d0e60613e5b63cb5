package kafka

import (
	"bytes"
	"strconv"

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
