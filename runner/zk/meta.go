package zk

import (
	"encoding/json"
	"fmt"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/store"
)

// meta is the record a job's node holds: small, JSON, so that an operator
// reads it with zkCli.sh, and so that listing jobs reads no snapshot.
// Every transition sets it once, with the znode version it was read at:
// that is the compare-and-swap of Save. A record of version 0 is a job
// whose creation did not finish (its snapshot was too large for one
// request, and the writer stopped between the writes).
type meta struct {
	Format      int    `json:"format"` // of this record: 1
	Incarnation string `json:"incarnation"`
	Version     uint64 `json:"version"`
	Status      string `json:"status"`
	Settled     int    `json:"settled"`
	Total       int    `json:"total"`
	// The newest snapshot: its version, tag and number of chunks, and its
	// size; the steps written since, and their bytes (store.SnapshotDue).
	Snapshot   uint64 `json:"snapshot"`
	SnapTag    string `json:"snapTag"`
	Chunks     int    `json:"chunks"`
	SnapBytes  uint64 `json:"snapBytes"`
	SinceSteps uint64 `json:"sinceSteps"`
	SinceBytes uint64 `json:"sinceBytes"`
	// Stops counts the transitions that applied a cancel or a deadline's
	// firing, the only ones that stop actions in flight: a worker reloads
	// the job to see whether its action was stopped only when it changed.
	Stops uint64 `json:"stops,omitempty"`
	// The origin snapshot (version 1), kept for History.
	OriginTag    string `json:"originTag"`
	OriginChunks int    `json:"originChunks"`
}

const metaFormat = 1

func (m *meta) incarnation() (uint64, error) {
	var inc uint64
	if _, err := fmt.Sscanf(m.Incarnation, "%016x", &inc); err != nil || len(m.Incarnation) != 16 {
		return 0, fmt.Errorf("incarnation %q is not 16 hex digits", m.Incarnation)
	}
	return inc, nil
}

func (m *meta) setJob(j job.Job) {
	m.Format = metaFormat
	m.Incarnation = fmt.Sprintf("%016x", j.Incarnation())
	m.Version = j.Version()
	m.Status = j.Status().String()
	m.Settled, m.Total = j.Progress()
}

func (m *meta) info(id job.ID) (store.Info, error) {
	st, err := job.ParseStatus(m.Status)
	if err != nil || st == job.StatusIdle {
		return store.Info{}, fmt.Errorf("job %s: meta record has status %q: %w", id, m.Status, job.ErrCorrupt)
	}
	return store.Info{ID: id, Version: m.Version, Status: st, Settled: m.Settled, Total: m.Total}, nil
}

func encodeMeta(m meta) []byte {
	b, err := json.Marshal(m)
	if err != nil {
		panic(err) // plain fields: cannot fail
	}
	return b
}

// decodeMeta reads a meta record, checking what the store relies on.
func decodeMeta(id job.ID, data []byte) (meta, error) {
	var m meta
	if err := json.Unmarshal(data, &m); err != nil {
		return meta{}, fmt.Errorf("job %s: meta record: %w: %v", id, job.ErrCorrupt, err)
	}
	if m.Format != metaFormat {
		return meta{}, fmt.Errorf("job %s: meta record of format %d (this baton reads %d): %w", id, m.Format, metaFormat, job.ErrCorrupt)
	}
	if m.Version == 0 {
		return meta{}, fmt.Errorf("job %s: its creation did not finish (the writer stopped between the writes of a large snapshot); delete it and submit it again: %w", id, job.ErrCorrupt)
	}
	if _, err := m.incarnation(); err != nil || m.Snapshot < 1 || m.Snapshot > m.Version || m.Chunks < 1 || m.OriginChunks < 1 {
		return meta{}, fmt.Errorf("job %s: meta record %s: %w", id, data, job.ErrCorrupt)
	}
	return m, nil
}
