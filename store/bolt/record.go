package bolt

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"time"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/store"
)

// Record formats. Each record starts with its format byte and ends with a
// CRC-32C of everything before it, so a torn or overwritten record is
// caught when read, not replayed into a wrong job. Step records are
// job.EncodeStep's.
const (
	metaFormat1 = 1 // up to the first release: no job incarnation, no progress
	metaFormat2 = 2 // no clock
	metaFormat3 = 3 // no times of creation and last write
	metaFormat  = 4
	metaLen1    = 1 + 8 + 8 + 1 + 8 + 8 + 4 + 4 + 4
	metaLen2    = metaLen1 + 8 + 8 + 8 + 8
	metaLen3    = metaLen2 + 8
	metaLen     = metaLen3 + 8 + 8
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func checksum(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// meta is a job's small, fixed-size header, rewritten by every write. It
// holds what List shows, so listing never decodes a job.
type meta struct {
	inc         uint64     // store incarnation: a store-wide sequence number given at Create
	version     uint64     // newest version
	status      job.Status // status of the newest version
	snapVersion uint64     // version of the snapshot; 1 means the origin is the snapshot
	sinceSnap   uint64     // bytes of step records written after the snapshot
	originCRC   uint32     // CRC-32C of the origin record
	snapCRC     uint32     // CRC-32C of the snap record (0 while snapVersion is 1)

	// Format 2 and later; a format 1 record reads as progress unknown
	// (settled and total -1) and job incarnation 0, and is rewritten in
	// the newest format by the next Save.
	jobInc         uint64 // job.Job.Incarnation, checked by Save
	settled, total int64  // job.Job.Progress of the newest version
	stepsSinceSnap uint64 // step records written after the snapshot

	// Format 3 and later; an older record reads as clock unknown (0), and
	// is rewritten in the newest format by the next Save.
	clock int64 // job.Job.Clock of the newest version, Unix nanoseconds; 0 if unknown

	// Format 4 and later; an older record reads as times unknown (0),
	// and the next Save writes its own time as updated (created stays
	// unknown).
	created, updated int64 // when Create and the last write committed, by Options.Now; Unix nanoseconds
}

func (m meta) encode() []byte {
	b := make([]byte, 0, metaLen)
	b = append(b, metaFormat)
	b = binary.BigEndian.AppendUint64(b, m.inc)
	b = binary.BigEndian.AppendUint64(b, m.version)
	b = append(b, byte(m.status))
	b = binary.BigEndian.AppendUint64(b, m.snapVersion)
	b = binary.BigEndian.AppendUint64(b, m.sinceSnap)
	b = binary.BigEndian.AppendUint32(b, m.originCRC)
	b = binary.BigEndian.AppendUint32(b, m.snapCRC)
	b = binary.BigEndian.AppendUint64(b, m.jobInc)
	b = binary.BigEndian.AppendUint64(b, uint64(m.settled))
	b = binary.BigEndian.AppendUint64(b, uint64(m.total))
	b = binary.BigEndian.AppendUint64(b, m.stepsSinceSnap)
	b = binary.BigEndian.AppendUint64(b, uint64(m.clock))
	b = binary.BigEndian.AppendUint64(b, uint64(m.created))
	b = binary.BigEndian.AppendUint64(b, uint64(m.updated))
	return binary.BigEndian.AppendUint32(b, checksum(b))
}

// decodeMeta reads a meta record of any format. Errors wrap job.ErrCorrupt.
func decodeMeta(b []byte) (meta, error) {
	want := metaLen
	switch {
	case len(b) == 0:
		return meta{}, fmt.Errorf("%w: missing", job.ErrCorrupt)
	case b[0] == metaFormat1:
		want = metaLen1
	case b[0] == metaFormat2:
		want = metaLen2
	case b[0] == metaFormat3:
		want = metaLen3
	case b[0] != metaFormat:
		return meta{}, fmt.Errorf("%w: record format %d, want %d to %d", job.ErrCorrupt, b[0], metaFormat1, metaFormat)
	}
	switch {
	case len(b) != want:
		return meta{}, fmt.Errorf("%w: %d bytes, want %d", job.ErrCorrupt, len(b), want)
	case checksum(b[:want-4]) != binary.BigEndian.Uint32(b[want-4:]):
		return meta{}, fmt.Errorf("%w: checksum mismatch", job.ErrCorrupt)
	}
	m := meta{
		inc:         binary.BigEndian.Uint64(b[1:]),
		version:     binary.BigEndian.Uint64(b[9:]),
		status:      job.Status(b[17]),
		snapVersion: binary.BigEndian.Uint64(b[18:]),
		sinceSnap:   binary.BigEndian.Uint64(b[26:]),
		originCRC:   binary.BigEndian.Uint32(b[34:]),
		snapCRC:     binary.BigEndian.Uint32(b[38:]),
		settled:     -1,
		total:       -1,
	}
	if b[0] >= metaFormat2 {
		m.jobInc = binary.BigEndian.Uint64(b[42:])
		m.settled = int64(binary.BigEndian.Uint64(b[50:]))
		m.total = int64(binary.BigEndian.Uint64(b[58:]))
		m.stepsSinceSnap = binary.BigEndian.Uint64(b[66:])
		if m.total < 0 || m.settled < 0 || m.settled > m.total {
			return meta{}, fmt.Errorf("%w: %d of %d actions settled", job.ErrCorrupt, m.settled, m.total)
		}
	} else {
		m.stepsSinceSnap = m.version - m.snapVersion
	}
	if b[0] >= metaFormat3 {
		m.clock = int64(binary.BigEndian.Uint64(b[74:]))
	}
	if b[0] >= metaFormat {
		m.created = int64(binary.BigEndian.Uint64(b[82:]))
		m.updated = int64(binary.BigEndian.Uint64(b[90:]))
	}
	if m.version < 1 || m.snapVersion < 1 || m.snapVersion > m.version || m.status > job.StatusCancelled {
		return meta{}, fmt.Errorf("%w: version %d, snapshot version %d, status %d", job.ErrCorrupt, m.version, m.snapVersion, m.status)
	}
	return m, nil
}

// withJob records j's version, status, incarnation, progress and clock.
func (m meta) withJob(j job.Job) meta {
	settled, total := j.Progress()
	m.version, m.status, m.jobInc = j.Version(), j.Status(), j.Incarnation()
	m.settled, m.total = int64(settled), int64(total)
	m.clock = 0
	if c := j.Clock(); !c.IsZero() {
		m.clock = c.UnixNano()
	}
	return m
}

// info is what List shows of the job id with meta m.
func (m meta) info(id job.ID) store.Info {
	return store.Info{ID: id, Version: m.version, Status: m.status, Settled: int(m.settled), Total: int(m.total),
		Created: unixTime(m.created), Updated: unixTime(m.updated)}
}

// unixTime is the time of Unix nanoseconds n, in UTC; the zero time for 0.
func unixTime(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

// stepKey is the key of the step that made version v: big-endian, so keys
// sort by version.
func stepKey(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }
