package ast

import (
	"encoding/json"
	"slices"
)

// The decoder reads objects and arrays with the small scanner below
// instead of encoding/json's map and slice decoding, for two reasons:
// encoding/json keeps the last of two members with the same key and says
// nothing, and a workflow whose {"act":"log","act":"fail"} runs "fail"
// without a word is a mistake the decoder must refuse; and the scanner
// hands out slices of the document where encoding/json copies every
// value at every level of the tree.
//
// The scanner reads only valid JSON: Decode and UnmarshalJSON check the
// whole document with json.Valid before anything is read, so every value
// a caller passes on is valid too. On anything else it reports "not an
// object" or "not an array" rather than guessing.

// readObject reads the members of the JSON object data. It returns ok
// false when data is not an object (null included). Each key is decoded
// as encoding/json decodes it ("\u0061ct" is "act"), and each value is a
// slice of data, not a copy, without the space around it. A key written
// more than once keeps its last value and is listed once in dups, in the
// order of its second appearance.
func readObject(data []byte) (fields map[string]json.RawMessage, dups []string, ok bool) {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return nil, nil, false
	}
	fields = make(map[string]json.RawMessage, 4)
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return fields, nil, true
	}
	for {
		end := stringEnd(data, i)
		if end < 0 {
			return nil, nil, false
		}
		key, kok := readKey(data[i:end])
		if !kok {
			return nil, nil, false
		}
		if i = skipSpace(data, end); i >= len(data) || data[i] != ':' {
			return nil, nil, false
		}
		i = skipSpace(data, i+1)
		vend := valueEnd(data, i)
		if vend < 0 {
			return nil, nil, false
		}
		if _, seen := fields[key]; seen && !slices.Contains(dups, key) {
			dups = append(dups, key)
		}
		fields[key] = data[i:vend:vend]
		if i = skipSpace(data, vend); i >= len(data) {
			return nil, nil, false
		}
		switch data[i] {
		case ',':
			i = skipSpace(data, i+1)
		case '}':
			return fields, dups, true
		default:
			return nil, nil, false
		}
	}
}

// readArray reads the elements of the JSON array data, each a slice of
// data without the space around it. It returns ok false when data is not
// an array (null included).
func readArray(data []byte) (items []json.RawMessage, ok bool) {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '[' {
		return nil, false
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == ']' {
		return []json.RawMessage{}, true
	}
	for {
		end := valueEnd(data, i)
		if end < 0 {
			return nil, false
		}
		items = append(items, data[i:end:end])
		if i = skipSpace(data, end); i >= len(data) {
			return nil, false
		}
		switch data[i] {
		case ',':
			i = skipSpace(data, i+1)
		case ']':
			return items, true
		default:
			return nil, false
		}
	}
}

// readString reads the JSON string raw, which must be a whole value (no
// space around it). It returns ok false for anything else, null included.
// A string without escapes or bytes outside ASCII is taken as written;
// others go through encoding/json, which decodes escapes and replaces
// invalid UTF-8 as it does everywhere else.
func readString(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	body := raw[1 : len(raw)-1]
	for _, c := range body {
		if c == '\\' || c == '"' || c < 0x20 || c >= 0x80 {
			var s string
			if err := json.Unmarshal(raw, &s); err != nil {
				return "", false
			}
			return s, true
		}
	}
	return string(body), true
}

// readKey reads a quoted object key. The keys the decoder knows are
// returned as constants, so that reading a node allocates no key.
func readKey(raw []byte) (string, bool) {
	if len(raw) >= 2 {
		k := raw[1 : len(raw)-1]
		for _, s := range knownKeys {
			if s == string(k) {
				return s, true
			}
		}
	}
	return readString(raw)
}

// knownKeys are every key of the workflow form.
var knownKeys = [...]string{"act", "payload", "name", "seq", "par", "try", "dag",
	"inputs", "retry", "timeout", "deadline", "delivery", "priority",
	"rescue", "finally", "after", "do", "version", "root", "attempts",
	"initial", "multiplier", "max", "jitter", "non_retryable"}

// skipSpace returns the index of the first byte at or after i that is not
// JSON space.
func skipSpace(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// stringEnd returns the index just after the JSON string starting at i,
// or -1 if none starts there.
func stringEnd(data []byte, i int) int {
	if i >= len(data) || data[i] != '"' {
		return -1
	}
	for i++; i < len(data); i++ {
		switch data[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return -1
}

// valueEnd returns the index just after the JSON value starting at i, or
// -1 if none starts there. Objects and arrays are skipped by counting
// brackets outside strings, without recursion, however deep they nest.
func valueEnd(data []byte, i int) int {
	if i >= len(data) {
		return -1
	}
	switch data[i] {
	case '"':
		return stringEnd(data, i)
	case '{', '[':
		depth := 0
		for ; i < len(data); i++ {
			switch data[i] {
			case '"':
				if i = stringEnd(data, i); i < 0 {
					return -1
				}
				i-- // the loop steps past the closing quote
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
		return -1
	case '}', ']', ',', ':':
		return -1
	default: // a number, true, false or null: up to the next delimiter
		j := i
		for j < len(data) {
			switch data[j] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return j
			}
			j++
		}
		return j
	}
}
