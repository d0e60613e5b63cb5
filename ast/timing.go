package ast

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Retry, timeout, deadline and delivery: their limits, their checks (for
// Validate) and their JSON form (for Encode and Decode).

// The limits Validate holds the fields to.
const (
	maxAttempts   = 1000
	maxMultiplier = 100
	minDuration   = time.Millisecond // the least timeout or deadline
	maxDuration   = 10000 * time.Hour
	maxKind       = 100 // bytes in a failure kind of NonRetryable

	// maxShown is the most bytes of a value a message quotes.
	maxShown = 40
)

// How messages write the limits.
const (
	limitText       = "10000h"
	attemptsRange   = "(1 to 1000)"
	multiplierRange = "(1 to 100, or 0 for 1)"
	jitterRange     = "(0 to 1)"
)

// retryKeys are the keys of a retry object, in canonical order.
var retryKeys = [...]string{"attempts", "initial", "multiplier", "max", "jitter", "non_retryable"}

// timed reports whether n has any of the fields checked by timing.
func (n *Node) timed() bool {
	return n.Retry != nil || n.Timeout != 0 || n.Deadline != 0 || n.Delivery != AtLeastOnce
}

// misplaced returns the message for the act-only field key ("retry",
// "timeout" or "delivery") on a node of kind k, the same for Validate and
// Decode.
func misplaced(key string, k Kind) string {
	switch key {
	case "retry":
		return fmt.Sprintf("retry on a %s node (only an act is retried)", k)
	case "timeout":
		return fmt.Sprintf("timeout on a %s node (only an act's attempts time out; a deadline bounds any node)", k)
	default:
		return fmt.Sprintf("delivery on a %s node (only an act's attempts are delivered)", k)
	}
}

// timing checks the node's Retry, Timeout, Deadline and Delivery; the
// caller has checked that n is timed and of a known kind.
func (v *validator) timing(n *Node, path *pathRef) {
	act := n.Kind == KindAct
	if n.Retry != nil {
		if act {
			v.retry(n.Retry, path)
		} else {
			v.add(path, "%s", misplaced("retry", n.Kind))
		}
	}
	if n.Timeout != 0 {
		if act {
			v.duration(path, "timeout", n.Timeout)
		} else {
			v.add(path, "%s", misplaced("timeout", n.Kind))
		}
	}
	if n.Deadline != 0 {
		v.duration(path, "deadline", n.Deadline)
	}
	switch {
	case n.Delivery != AtLeastOnce && n.Delivery != AtMostOnce:
		v.add(path, "delivery %s is neither AtLeastOnce nor AtMostOnce", n.Delivery)
	case n.Delivery == AtMostOnce && !act:
		v.add(path, "%s", misplaced("delivery", n.Kind))
	}
}

// duration checks a timeout or a deadline d, which is not 0.
func (v *validator) duration(path *pathRef, field string, d time.Duration) {
	switch {
	case d < minDuration:
		v.add(path, "%s %s is less than %s", field, d, minDuration)
	case d > maxDuration:
		v.add(path, "%s %s is more than %s", field, d, limitText)
	}
}

// retry checks a leaf's retry policy.
func (v *validator) retry(r *Retry, path *pathRef) {
	if r.Attempts < 1 || r.Attempts > maxAttempts {
		v.add(path, "retry.attempts %d is out of range %s", r.Attempts, attemptsRange)
	}
	if r.Initial < 0 {
		v.add(path, "retry.initial %s is negative", r.Initial)
	}
	switch {
	case r.Max < 0:
		v.add(path, "retry.max %s is negative", r.Max)
	case r.Max != 0 && r.Initial >= 0 && r.Max < r.Initial:
		v.add(path, "retry.max %s is less than retry.initial %s (max caps the waits; 0 for no cap)", r.Max, r.Initial)
	}
	// Written so that NaN fails every range.
	switch m := r.Multiplier; {
	case m == 0, m >= 1 && m <= maxMultiplier:
	case m > 0 && m < 1:
		v.add(path, "retry.multiplier %v is below 1, which would shrink the waits %s", m, multiplierRange)
	default:
		v.add(path, "retry.multiplier %v is out of range %s", m, multiplierRange)
	}
	if j := r.Jitter; !(j >= 0 && j <= 1) {
		v.add(path, "retry.jitter %v is out of range %s", j, jitterRange)
	}
	// The first index of each kind, in a map once the list is long
	// enough for a scan of what came before to cost too much.
	var first map[string]int
	if len(r.NonRetryable) > 16 {
		first = make(map[string]int, len(r.NonRetryable))
	}
	for i, k := range r.NonRetryable {
		if msg := checkKind(k); msg != "" {
			v.add(path, "retry.non_retryable[%d] %s", i, msg)
			continue
		}
		j := -1
		if first == nil {
			j = slices.Index(r.NonRetryable[:i], k)
		} else if at, ok := first[k]; ok {
			j = at
		} else {
			first[k] = i
		}
		if j >= 0 {
			v.add(path, "retry.non_retryable[%d] %q is already listed at [%d]", i, k, j)
		}
	}
}

// checkKind returns what is wrong with the failure kind k in
// NonRetryable, as the end of a sentence about it, or "".
// CheckKind returns what is wrong with k as a failure kind (what a handler
// gives a failure, and a retry policy's NonRetryable lists), or nil: a
// kind is 1 to 100 bytes of letters, digits, '_', '-' and '.'.
func CheckKind(k string) error {
	if msg := checkKind(k); msg != "" {
		return fmt.Errorf("failure kind %s", msg)
	}
	return nil
}

func checkKind(k string) string {
	switch {
	case k == "":
		return "is empty (a failure kind is 1 to 100 bytes of letters, digits, '_', '-', '.')"
	case len(k) > maxKind:
		return fmt.Sprintf("is %d bytes long (at most %d)", len(k), maxKind)
	case k == "deadline":
		return `"deadline" is never the failure of an attempt (a deadline fails the node it bounds, which is not retried): listing it is a mistake`
	case k == "cancelled":
		return `"cancelled" is never the failure of an attempt (a cancelled node never runs): listing it is a mistake`
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return fmt.Sprintf("%q has %q at byte %d (allowed: letters, digits, '_', '-', '.')", k, c, i)
		}
	}
	return ""
}

// writeTiming writes the keys of n from "retry" on, in canonical order:
// retry and timeout for an act, deadline for any node, delivery for an
// act.
func writeTiming(b *bytes.Buffer, n *Node) {
	if n.Kind == KindAct && n.Retry != nil {
		b.WriteString(`,"retry":`)
		writeRetry(b, n.Retry)
	}
	if n.Kind == KindAct && n.Timeout != 0 {
		b.WriteString(`,"timeout":"`)
		b.WriteString(n.Timeout.String())
		b.WriteByte('"')
	}
	if n.Deadline != 0 {
		b.WriteString(`,"deadline":"`)
		b.WriteString(n.Deadline.String())
		b.WriteByte('"')
	}
	if n.Kind == KindAct && n.Delivery == AtMostOnce {
		b.WriteString(`,"delivery":"at-most-once"`)
	}
}

// writeRetry writes r with its zero fields left out, but for attempts.
func writeRetry(b *bytes.Buffer, r *Retry) {
	var buf [32]byte
	b.WriteString(`{"attempts":`)
	b.Write(strconv.AppendInt(buf[:0], int64(r.Attempts), 10))
	if r.Initial != 0 {
		b.WriteString(`,"initial":"`)
		b.WriteString(r.Initial.String())
		b.WriteByte('"')
	}
	if r.Multiplier != 0 {
		b.WriteString(`,"multiplier":`)
		b.Write(appendFloat(buf[:0], r.Multiplier))
	}
	if r.Max != 0 {
		b.WriteString(`,"max":"`)
		b.WriteString(r.Max.String())
		b.WriteByte('"')
	}
	if r.Jitter != 0 {
		b.WriteString(`,"jitter":`)
		b.Write(appendFloat(buf[:0], r.Jitter))
	}
	if len(r.NonRetryable) > 0 {
		b.WriteString(`,"non_retryable":`)
		writeStrings(b, r.NonRetryable)
	}
	b.WriteByte('}')
}

// appendFloat appends f as encoding/json writes a float64: the shortest
// decimal that reads back as f, with an exponent only for very small or
// large magnitudes. f is finite (Validate holds it to a range).
func appendFloat(b []byte, f float64) []byte {
	abs := f
	if abs < 0 {
		abs = -abs
	}
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	start := len(b)
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// "1e-07" is written "1e-7".
		if n := len(b); n-start >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// decodeTiming reads the keys "retry", "timeout", "deadline" and
// "delivery" of the node n from fields; the caller has reported those its
// kind does not take, which are not read.
func decodeTiming(fields map[string]json.RawMessage, n *Node, add func(string, ...any)) {
	act := n.Kind == KindAct
	if raw, ok := fields["retry"]; ok && act {
		n.Retry = decodeRetry(raw, add)
	}
	if raw, ok := fields["timeout"]; ok && act {
		n.Timeout = decodeLimit(raw, "timeout", add)
	}
	if raw, ok := fields["deadline"]; ok {
		n.Deadline = decodeLimit(raw, "deadline", add)
	}
	if raw, ok := fields["delivery"]; ok && act && string(raw) != "null" {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			add(`delivery must be a string, "at-least-once" or "at-most-once", got %s`, DescribeJSON(raw))
			return
		}
		switch s {
		case "at-least-once":
			n.Delivery = AtLeastOnce
		case "at-most-once":
			n.Delivery = AtMostOnce
		default:
			add(`delivery %s is not a delivery (want "at-least-once" or "at-most-once")`, quoteShort(s))
		}
	}
}

// decodeLimit reads a timeout or a deadline: a duration string, or null
// for none. A duration of 0 is reported here (0 is no limit in Go, but
// written out it is a mistake); Validate reports the others out of range.
func decodeLimit(raw json.RawMessage, field string, add func(string, ...any)) time.Duration {
	d, ok := decodeDuration(raw, field, `"30s"`, add)
	if ok && d == 0 && string(raw) != "null" {
		add("%s 0s is less than %s (leave %s out for no limit)", field, minDuration, field)
	}
	return d
}

// decodeDuration reads a duration string; nil (absent) and null are 0.
// example is a duration written in messages. It reports anything else and
// returns false.
func decodeDuration(raw json.RawMessage, field, example string, add func(string, ...any)) (time.Duration, bool) {
	if raw == nil || string(raw) == "null" {
		return 0, true
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		add("%s must be a duration string like %s, got %s", field, example, DescribeJSON(raw))
		return 0, false
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		add(`%s %s is not a duration (want one like %s, "1m30s" or "250ms")`, field, quoteShort(s), example)
		return 0, false
	}
	return d, true
}

// decodeRetry reads a retry object, or null for none. A field it reports
// is left at a valid value, so that Validate does not report it again
// (the tree is not returned when anything was reported).
func decodeRetry(raw json.RawMessage, add func(string, ...any)) *Retry {
	if string(raw) == "null" {
		return nil
	}
	fields, dups, ok := readObject(raw)
	if !ok {
		add(`retry must be an object like {"attempts":3,"initial":"1s"}, got %s`, DescribeJSON(raw))
		return nil
	}
	for _, k := range dups {
		add("%s in retry (%s)", duplicate(k), onceOnly)
	}
	for _, k := range sortedKeys(fields) {
		if !slices.Contains(retryKeys[:], k) {
			add("unknown field %q in retry (allowed: %s)", k, strings.Join(retryKeys[:], ", "))
		}
	}
	r := &Retry{Attempts: 1}
	if a, ok := fields["attempts"]; !ok || string(a) == "null" {
		add("retry has no attempts (the number of attempts, the first included: 1 to %d)", maxAttempts)
	} else if f, ok := decodeNumber(a, "retry.attempts", attemptsRange, add); ok {
		switch {
		case f < -1e9 || f > 1e9:
			add("retry.attempts %s is out of range %s", showNumber(a), attemptsRange)
		case f != float64(int64(f)):
			add("retry.attempts must be a whole number, got %s", showNumber(a))
		default:
			r.Attempts = int(f)
		}
	}
	if d, ok := decodeDuration(fields["initial"], "retry.initial", `"1s"`, add); ok {
		r.Initial = d
	}
	if d, ok := decodeDuration(fields["max"], "retry.max", `"1m"`, add); ok {
		r.Max = d
	}
	for _, f := range [...]struct {
		key, span string
		dst       *float64
	}{{"multiplier", multiplierRange, &r.Multiplier}, {"jitter", jitterRange, &r.Jitter}} {
		if x, ok := decodeNumber(fields[f.key], "retry."+f.key, f.span, add); ok {
			*f.dst = x
		}
	}
	if raw, ok := fields["non_retryable"]; ok && string(raw) != "null" {
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			add("retry.non_retryable must be an array of strings (failure kinds), got %s", DescribeJSON(raw))
			return r
		}
		for i, it := range items {
			var s string
			if err := json.Unmarshal(it, &s); err != nil || string(it) == "null" {
				add("retry.non_retryable must be an array of strings (failure kinds), got %s at index %d", DescribeJSON(it), i)
				r.NonRetryable = nil
				return r
			}
			r.NonRetryable = append(r.NonRetryable, s)
		}
	}
	return r
}

// decodeNumber reads a JSON number; nil (absent) and null are 0. It
// reports anything else, and a number out of the range of a float64 (with
// span, the range the field takes), and then returns false.
func decodeNumber(raw json.RawMessage, field, span string, add func(string, ...any)) (float64, bool) {
	if raw == nil || string(raw) == "null" {
		return 0, true
	}
	if DescribeJSON(raw) != "a number" {
		add("%s must be a number, got %s", field, DescribeJSON(raw))
		return 0, false
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil {
		add("%s %s is out of range %s", field, showNumber(raw), span)
		return 0, false
	}
	return f, true
}

// showNumber returns the JSON number raw as written, shortened if long.
func showNumber(raw json.RawMessage) string {
	if len(raw) > maxShown {
		return string(raw[:maxShown]) + "..."
	}
	return string(raw)
}

// quoteShort quotes s for a message, shortened if long.
func quoteShort(s string) string {
	if len(s) > maxShown {
		return strconv.Quote(s[:maxShown]) + "..."
	}
	return strconv.Quote(s)
}
