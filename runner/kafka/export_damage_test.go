package kafka

import (
	"context"
	"fmt"

	"github.com/segmentio/kafka-go"

	"github.com/batonwf/baton/job"
)

// DamageJob writes, through s, a step record of job id that does not
// decode, at the job's next version and under the claim s holds its
// partition with, as a stray or broken writer could: a Store that reads
// the partition afterwards finds that the job does not replay.
func DamageJob(ctx context.Context, s *Store, id job.ID) error {
	p := s.part(id)
	if err := p.mu.lock(ctx); err != nil {
		return err
	}
	e, tok := p.jobs[id], p.token
	p.mu.unlock()
	if e == nil || tok == 0 {
		return fmt.Errorf("job %s: not held by this store", id)
	}
	v := e.latest.Version() + 1
	return s.write(ctx, []kafka.Message{{Key: []byte(stepKey(id, v, tok)), Value: []byte("\x01 not a step"), Headers: []kafka.Header{tokenHeader(tok)}}})
}
