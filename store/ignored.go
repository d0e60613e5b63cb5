package store

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"time"
	"unicode/utf8"

	"github.com/batonwf/baton/job"
)

// Bounds of the journal of ignored results.
const (
	// MaxIgnored is how many ignored results a store keeps per job: the
	// newest; older ones are dropped as newer ones come. Ignored results
	// are normal under at-least-once delivery (a redelivered result, the
	// late result of an action told to stop), so a job may collect them
	// without end: the bound keeps the journal of one job small whatever
	// happens to it.
	MaxIgnored = 100
	// MaxIgnoredError bounds the error message kept with an ignored
	// result, in bytes (cut at a rune boundary); its output is not kept.
	MaxIgnoredError = 200
)

// Ignored is a result a transition did not apply (job.Transition.Ignored),
// as a store journals it: what the history shows of it.
type Ignored struct {
	// Version is the job's version the result met: the version made by
	// the transition that ignored it, or the job's version when that
	// transition applied nothing.
	Version  uint64
	ActionID string
	Reason   job.IgnoreReason
	Detail   string
	// Failed says the result was a failure; Error is its message,
	// clipped to MaxIgnoredError bytes.
	Failed bool
	Error  string
	// At is the time stamped on the result; zero if none.
	At time.Time
}

// IgnoredOf returns what a store journals of the results a transition
// that left job at version v ignored.
func IgnoredOf(v uint64, ig []job.Ignored) []Ignored {
	out := make([]Ignored, 0, len(ig))
	for _, x := range ig {
		msg := x.Result.Error
		if len(msg) > MaxIgnoredError {
			n := MaxIgnoredError
			for n > 0 && !utf8.RuneStart(msg[n]) {
				n--
			}
			msg = msg[:n]
		}
		out = append(out, Ignored{
			Version: v, ActionID: x.Result.ActionID, Reason: x.Reason, Detail: x.Detail,
			Failed: x.Result.Failed(), Error: msg, At: x.Result.At,
		})
	}
	return out
}

// IgnoreJournal is a store that journals the results its jobs' transitions
// ignored, the newest MaxIgnored of each job, and returns them with the
// job's History (History.Ignored). Deleting the job deletes them.
type IgnoreJournal interface {
	Historian
	// JournalIgnored appends ig to job id's journal of ignored results,
	// dropping the oldest past MaxIgnored. A job that is not stored is
	// ErrNotFound.
	JournalIgnored(ctx context.Context, id job.ID, ig []Ignored) error
}

// JournalIgnored journals ig for job id if s is an IgnoreJournal;
// otherwise an error wrapping errors.ErrUnsupported. Nothing is written
// for an empty ig.
func JournalIgnored(ctx context.Context, s Store, id job.ID, ig []Ignored) error {
	j, ok := s.(IgnoreJournal)
	if !ok {
		return fmt.Errorf("store: %T keeps no ignored results (job %s): %w", s, id, errors.ErrUnsupported)
	}
	if len(ig) == 0 {
		return nil
	}
	return j.JournalIgnored(ctx, id, ig)
}

// ignoredFormat is the first byte of an ignored result's record.
const ignoredFormat = 1

// EncodeIgnored returns the record of one ignored result, the bytes a
// store keeps for it:
//
//	format(1) version(uvarint) actionID reason(1) detail flags(1) error at(varint) crc32c(4)
//
// where actionID, detail and error are a uvarint length and the bytes,
// flags bit 0 is Failed, and at is Unix nanoseconds (0: no time). The
// CRC-32C covers everything before it.
func EncodeIgnored(x Ignored) []byte {
	b := make([]byte, 0, 2+4*binary.MaxVarintLen64+len(x.ActionID)+len(x.Detail)+len(x.Error)+4)
	b = append(b, ignoredFormat)
	b = binary.AppendUvarint(b, x.Version)
	b = appendBytes(b, x.ActionID)
	b = append(b, byte(x.Reason))
	b = appendBytes(b, x.Detail)
	var flags byte
	if x.Failed {
		flags |= 1
	}
	b = append(b, flags)
	b = appendBytes(b, x.Error)
	var at int64
	if !x.At.IsZero() {
		at = x.At.UnixNano()
	}
	b = binary.AppendVarint(b, at)
	return binary.BigEndian.AppendUint32(b, crc32.Checksum(b, crcTable))
}

var crcTable = crc32.MakeTable(crc32.Castagnoli)

func appendBytes(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// DecodeIgnored reads a record EncodeIgnored wrote. A damaged record is
// an error wrapping job.ErrCorrupt.
func DecodeIgnored(b []byte) (Ignored, error) {
	bad := func(what string) (Ignored, error) {
		return Ignored{}, fmt.Errorf("%w: ignored result record: %s", job.ErrCorrupt, what)
	}
	if len(b) < 5 {
		return bad("too short")
	}
	body, sum := b[:len(b)-4], binary.BigEndian.Uint32(b[len(b)-4:])
	if crc32.Checksum(body, crcTable) != sum {
		return bad("checksum mismatch")
	}
	if body[0] != ignoredFormat {
		return bad(fmt.Sprintf("format %d", body[0]))
	}
	r := body[1:]
	var x Ignored
	var ok bool
	uv := func() uint64 {
		v, n := binary.Uvarint(r)
		if n <= 0 {
			ok = false
			return 0
		}
		r = r[n:]
		return v
	}
	str := func() string {
		n := uv()
		if !ok || n > uint64(len(r)) {
			ok = false
			return ""
		}
		s := string(r[:n])
		r = r[n:]
		return s
	}
	one := func() byte {
		if len(r) == 0 {
			ok = false
			return 0
		}
		c := r[0]
		r = r[1:]
		return c
	}
	ok = true
	x.Version = uv()
	x.ActionID = str()
	x.Reason = job.IgnoreReason(one())
	x.Detail = str()
	x.Failed = one()&1 != 0
	x.Error = str()
	at, n := binary.Varint(r)
	if !ok || n <= 0 || n != len(r) {
		return bad("truncated or trailing bytes")
	}
	if at != 0 {
		x.At = time.Unix(0, at).UTC()
	}
	return x, nil
}
