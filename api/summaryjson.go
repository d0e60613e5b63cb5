package api

import (
	"encoding/json"
	"strconv"
	"time"
)

// AppendJSON appends s as encoding/json writes it (HTML characters
// escaped, as json.Encoder does by default), byte for byte, without
// encoding/json's reflection and the compaction of every time's JSON it
// makes: the answer to a submit and to a status read is a summary. A
// summary whose text or times need more than the plain form (a quote, a
// control character, non-ASCII text, a time not in UTC) is written by
// encoding/json itself, whose error (a time out of JSON's range) is
// returned.
func (s Summary) AppendJSON(dst []byte) ([]byte, error) {
	if !s.plain() {
		b, err := json.Marshal(s)
		return append(dst, b...), err
	}
	b := append(dst, `{"id":`...)
	b = appendPlain(b, s.ID)
	b = append(b, `,"status":`...)
	b = appendPlain(b, s.Status)
	b = append(b, `,"version":`...)
	b = strconv.AppendUint(b, s.Version, 10)
	b = append(b, `,"settled":`...)
	b = strconv.AppendInt(b, int64(s.Settled), 10)
	b = append(b, `,"total":`...)
	b = strconv.AppendInt(b, int64(s.Total), 10)
	if s.Outstanding != nil {
		b = append(b, `,"outstanding":`...)
		b = strconv.AppendInt(b, int64(*s.Outstanding), 10)
	}
	if s.Created != nil {
		b = append(b, `,"created":`...)
		b = appendTime(b, *s.Created)
	}
	if s.Updated != nil {
		b = append(b, `,"updated":`...)
		b = appendTime(b, *s.Updated)
	}
	if f := s.Failure; f != nil {
		b = append(b, `,"failure":{"path":`...)
		b = appendPlain(b, f.Path)
		if f.Action != "" {
			b = append(b, `,"action":`...)
			b = appendPlain(b, f.Action)
		}
		if f.Kind != "" {
			b = append(b, `,"kind":`...)
			b = appendPlain(b, f.Kind)
		}
		b = append(b, `,"message":`...)
		b = appendPlain(b, f.Message)
		if f.Clipped {
			b = append(b, `,"clipped":true`...)
		}
		b = append(b, `,"others":`...)
		b = strconv.AppendInt(b, int64(f.Others), 10)
		b = append(b, '}')
	}
	if c := s.Cancel; c != nil {
		b = append(b, `,"cancel":{"reason":`...)
		b = appendPlain(b, c.Reason)
		if c.Time != nil {
			b = append(b, `,"time":`...)
			b = appendTime(b, *c.Time)
		}
		b = append(b, '}')
	}
	if s.Damaged != "" {
		b = append(b, `,"damaged":`...)
		b = appendPlain(b, s.Damaged)
	}
	return append(b, '}'), nil
}

// plain reports whether every text and time of s has the plain form
// AppendJSON writes itself.
func (s *Summary) plain() bool {
	ok := plainText(s.ID) && plainText(s.Status) && plainText(s.Damaged) &&
		plainTime(s.Created) && plainTime(s.Updated)
	if f := s.Failure; f != nil {
		ok = ok && plainText(f.Path) && plainText(f.Action) && plainText(f.Kind) && plainText(f.Message)
	}
	if c := s.Cancel; c != nil {
		ok = ok && plainText(c.Reason) && plainTime(c.Time)
	}
	return ok
}

// plainText reports whether encoding/json writes s as it is, in quotes:
// printable ASCII but for the quote, the backslash and the characters it
// escapes for HTML (<, >, &).
func plainText(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20 || c > 0x7e, c == '"', c == '\\', c == '<', c == '>', c == '&':
			return false
		}
	}
	return true
}

// plainTime reports whether t is nil or a time in UTC within the years
// JSON's form of a time has (0 to 9999).
func plainTime(t *time.Time) bool {
	return t == nil || t.Location() == time.UTC && t.Year() >= 0 && t.Year() <= 9999
}

func appendPlain(b []byte, s string) []byte {
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// appendTime appends t as time.Time's MarshalJSON writes it.
func appendTime(b []byte, t time.Time) []byte {
	b = append(b, '"')
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b, '"')
}
