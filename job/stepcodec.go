package job

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"time"
)

// Step record formats: 1 holds action IDs, outputs and errors; 2 adds, per
// result, the failure's kind, the Final flag and the time (Result.At); 3
// adds, per result, the name of the worker that made it (Result.Worker).
// EncodeStep writes the oldest format that holds the step's results, so
// records of steps that use none of the later fields stay byte for byte
// what they were, and DecodeStep reads all three.
const (
	stepFormat1 = 1
	stepFormat2 = 2
	stepFormat3 = 3
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// EncodeStep returns the record of a step's results, the bytes every store
// appends to a job's journal (Decode/Encode are for whole jobs, this is for
// the steps between them). The record is compact binary:
//
//	format 1: format(1) count(uvarint) {actionID output error}* crc32c(4)
//	format 2: format(1) count(uvarint) {actionID output error kind flags(1) at(varint)}* crc32c(4)
//	format 3: format(1) count(uvarint) {actionID output error kind flags(1) at(varint) worker}* crc32c(4)
//
// where actionID, output, error, kind and worker are a uvarint length and
// the bytes, flags bit 0 is Final, and at is Unix nanoseconds (0: no time).
//
// The job ID and the version are not in the record: a store keeps them in
// where the record lives (a key, a znode name) and hands them to
// DecodeStep. A one-result step is about 30 bytes, whatever the size of
// the tree. The CRC-32C (Castagnoli) covers everything before it, so a
// torn or overwritten record is caught when read, never replayed into a
// wrong job. An empty output is read back as nil, which encodes the same.
func EncodeStep(st Step) []byte {
	n := 1 + binary.MaxVarintLen64 + 4
	for _, r := range st.Results {
		n += 3*binary.MaxVarintLen64 + len(r.ActionID) + len(r.Output) + len(r.Error)
	}
	format := byte(stepFormat1)
	for _, r := range st.Results {
		if r.Worker != "" {
			format = stepFormat3
			break
		}
		if r.Kind != "" || r.Final || !r.At.IsZero() {
			format = stepFormat2
		}
	}
	if format >= stepFormat2 {
		for _, r := range st.Results {
			n += binary.MaxVarintLen64*3 + 1 + len(r.Kind) + len(r.Worker)
		}
	}
	b := make([]byte, 0, n)
	b = append(b, format)
	b = binary.AppendUvarint(b, uint64(len(st.Results)))
	for _, r := range st.Results {
		b = binary.AppendUvarint(b, uint64(len(r.ActionID)))
		b = append(b, r.ActionID...)
		b = binary.AppendUvarint(b, uint64(len(r.Output)))
		b = append(b, r.Output...)
		b = binary.AppendUvarint(b, uint64(len(r.Error)))
		b = append(b, r.Error...)
		if format >= stepFormat2 {
			b = binary.AppendUvarint(b, uint64(len(r.Kind)))
			b = append(b, r.Kind...)
			var flags byte
			if r.Final {
				flags |= 1
			}
			b = append(b, flags)
			b = binary.AppendVarint(b, unixNano(r.At))
		}
		if format == stepFormat3 {
			b = binary.AppendUvarint(b, uint64(len(r.Worker)))
			b = append(b, r.Worker...)
		}
	}
	return binary.BigEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

// DecodeStep reads a record written by EncodeStep as the step of job id
// that made version v. The results it returns do not share memory with
// rec. A malformed, truncated or altered record is an error wrapping
// ErrCorrupt; DecodeStep never panics. Whether the step applies to the job
// is for Replay to say.
func DecodeStep(id ID, v uint64, rec []byte) (Step, error) {
	corrupt := func(format string, args ...any) (Step, error) {
		return Step{}, fmt.Errorf("%w: step record: %s", ErrCorrupt, fmt.Sprintf(format, args...))
	}
	if len(rec) < 1+1+4 {
		return corrupt("%d bytes is too short", len(rec))
	}
	format := rec[0]
	if format < stepFormat1 || format > stepFormat3 {
		return corrupt("record format %d, want %d to %d", format, stepFormat1, stepFormat3)
	}
	body := rec[:len(rec)-4]
	if crc32.Checksum(body, castagnoli) != binary.BigEndian.Uint32(rec[len(rec)-4:]) {
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
	st := Step{Version: v, Results: make([]Result, count)}
	for i := range st.Results {
		aid, ok1 := field()
		out, ok2 := field()
		msg, ok3 := field()
		if !ok1 || !ok2 || !ok3 {
			return corrupt("result %d of %d is truncated", i, count)
		}
		r := Result{JobID: id, ActionID: string(aid), Error: string(msg)}
		if len(out) > 0 {
			r.Output = append([]byte(nil), out...)
		}
		if format >= stepFormat2 {
			kind, ok := field()
			if !ok || len(p) < 1 {
				return corrupt("result %d of %d is truncated", i, count)
			}
			flags := p[0]
			p = p[1:]
			at, k := binary.Varint(p)
			if k <= 0 || flags&^1 != 0 {
				return corrupt("result %d of %d has bad flags or time", i, count)
			}
			p = p[k:]
			r.Kind, r.Final = string(kind), flags&1 != 0
			if at != 0 {
				r.At = time.Unix(0, at).UTC()
			}
		}
		if format == stepFormat3 {
			worker, ok := field()
			if !ok {
				return corrupt("result %d of %d is truncated", i, count)
			}
			r.Worker = string(worker)
		}
		st.Results[i] = r
	}
	if len(p) != 0 {
		return corrupt("%d bytes after the results", len(p))
	}
	return st, nil
}
