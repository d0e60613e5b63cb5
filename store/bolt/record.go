package bolt

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"

	"github.com/batonwf/baton/job"
)

// Record formats. Each record starts with its format byte and ends with a
// CRC-32C of everything before it, so a torn or overwritten record is
// caught when read, not replayed into a wrong job.
const (
	metaFormat = 1
	stepFormat = 1
	metaLen    = 1 + 8 + 8 + 1 + 8 + 8 + 4 + 4 + 4
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func checksum(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// meta is a job's small, fixed-size header, rewritten by every write.
type meta struct {
	inc         uint64     // incarnation: a store-wide sequence number given at Create
	version     uint64     // newest version
	status      job.Status // status of the newest version
	snapVersion uint64     // version of the snapshot; 1 means the origin is the snapshot
	sinceSnap   uint64     // bytes of step records written after the snapshot
	originCRC   uint32     // CRC-32C of the origin record
	snapCRC     uint32     // CRC-32C of the snap record (0 while snapVersion is 1)
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
	return binary.BigEndian.AppendUint32(b, checksum(b))
}

// decodeMeta reads a meta record. Errors wrap job.ErrCorrupt.
func decodeMeta(b []byte) (meta, error) {
	switch {
	case b == nil:
		return meta{}, fmt.Errorf("%w: missing", job.ErrCorrupt)
	case len(b) != metaLen:
		return meta{}, fmt.Errorf("%w: %d bytes, want %d", job.ErrCorrupt, len(b), metaLen)
	case b[0] != metaFormat:
		return meta{}, fmt.Errorf("%w: record format %d, want %d", job.ErrCorrupt, b[0], metaFormat)
	case checksum(b[:metaLen-4]) != binary.BigEndian.Uint32(b[metaLen-4:]):
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
	}
	if m.version < 1 || m.snapVersion < 1 || m.snapVersion > m.version || m.status > job.StatusCancelled {
		return meta{}, fmt.Errorf("%w: version %d, snapshot version %d, status %d", job.ErrCorrupt, m.version, m.snapVersion, m.status)
	}
	return m, nil
}

// stepKey is the key of the step that made version v: big-endian, so keys
// sort by version.
func stepKey(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }

// encodeStep returns the record of a step's results:
//
//	format(1) count(uvarint) {actionID output error (each uvarint length + bytes)}* crc32c(4)
//
// The job ID and the version are not repeated: the record lives under the
// job's bucket and the version is its key. An empty output is read back as
// nil, which encodes the same.
func encodeStep(st job.Step) []byte {
	n := 1 + binary.MaxVarintLen64 + 4
	for _, r := range st.Results {
		n += 3*binary.MaxVarintLen64 + len(r.ActionID) + len(r.Output) + len(r.Error)
	}
	b := make([]byte, 0, n)
	b = append(b, stepFormat)
	b = binary.AppendUvarint(b, uint64(len(st.Results)))
	for _, r := range st.Results {
		b = binary.AppendUvarint(b, uint64(len(r.ActionID)))
		b = append(b, r.ActionID...)
		b = binary.AppendUvarint(b, uint64(len(r.Output)))
		b = append(b, r.Output...)
		b = binary.AppendUvarint(b, uint64(len(r.Error)))
		b = append(b, r.Error...)
	}
	return binary.BigEndian.AppendUint32(b, checksum(b))
}

// decodeStep reads a step record for job id at version v. The results it
// returns do not share memory with b. Errors wrap job.ErrCorrupt.
func decodeStep(id job.ID, v uint64, b []byte) (job.Step, error) {
	corrupt := func(format string, args ...any) (job.Step, error) {
		return job.Step{}, fmt.Errorf("%w: step record: %s", job.ErrCorrupt, fmt.Sprintf(format, args...))
	}
	if len(b) < 1+1+4 {
		return corrupt("%d bytes is too short", len(b))
	}
	if b[0] != stepFormat {
		return corrupt("record format %d, want %d", b[0], stepFormat)
	}
	body := b[:len(b)-4]
	if checksum(body) != binary.BigEndian.Uint32(b[len(b)-4:]) {
		return corrupt("checksum mismatch")
	}
	p := body[1:]
	count, k := binary.Uvarint(p)
	if k <= 0 || count == 0 || count > uint64(len(p)) {
		return corrupt("bad result count")
	}
	p = p[k:]
	field := func() ([]byte, bool) {
		n, k := binary.Uvarint(p)
		if k <= 0 || n > uint64(len(p)-k) {
			return nil, false
		}
		f := p[k : k+int(n)]
		p = p[k+int(n):]
		return f, true
	}
	st := job.Step{Version: v, Results: make([]job.Result, count)}
	for i := range st.Results {
		aid, ok1 := field()
		out, ok2 := field()
		msg, ok3 := field()
		if !ok1 || !ok2 || !ok3 {
			return corrupt("result %d of %d is truncated", i, count)
		}
		r := job.Result{JobID: id, ActionID: string(aid), Error: string(msg)}
		if len(out) > 0 {
			r.Output = append([]byte(nil), out...)
		}
		st.Results[i] = r
	}
	if len(p) != 0 {
		return corrupt("%d bytes after the results", len(p))
	}
	return st, nil
}
