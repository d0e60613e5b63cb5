package job

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
)

// stepFormat is the format byte of step records.
const stepFormat = 1

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// EncodeStep returns the record of a step's results, the bytes every store
// appends to a job's journal (Decode/Encode are for whole jobs, this is for
// the steps between them). The record is compact binary:
//
//	format(1) count(uvarint) {actionID output error (each uvarint length + bytes)}* crc32c(4)
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
	if rec[0] != stepFormat {
		return corrupt("record format %d, want %d", rec[0], stepFormat)
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
		st.Results[i] = r
	}
	if len(p) != 0 {
		return corrupt("%d bytes after the results", len(p))
	}
	return st, nil
}
