package ast

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// EqualJSON reports whether a and b are the same JSON value, compared
// canonically: both decoded, numbers as numbers (1, 1.0, 10e-1 and 1e0
// are equal, exactly, whatever their size), object keys in any order.
// Text that is not JSON equals nothing, itself included.
func EqualJSON(a, b []byte) bool {
	// Plain strings and plain integers, the usual values of a loop's
	// until and a case's when, are their own canonical form: compared
	// as bytes, without decoding, which would cost more than the step
	// that reads them.
	if plain(a) && plain(b) {
		return bytes.Equal(a, b)
	}
	return equalDecoded(a, b)
}

// equalDecoded is EqualJSON by decoding both sides.
func equalDecoded(a, b []byte) bool {
	x, ok := decodeJSONValue(a)
	if !ok {
		return false
	}
	y, ok := decodeJSONValue(b)
	return ok && equalValue(x, y)
}

// plain reports whether v is a JSON value whose bytes are its one
// canonical spelling: a string of printable ASCII with no escape, or an
// integer without a leading zero, a fraction or an exponent (and not -0),
// or true, false or null.
// Two plain values are equal exactly when their bytes are.
func plain(v []byte) bool {
	if s := string(v); s == "true" || s == "false" || s == "null" {
		return true
	}
	if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
		for _, c := range v[1 : len(v)-1] {
			if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
				return false
			}
		}
		return true
	}
	d := v
	if len(d) > 0 && d[0] == '-' {
		d = d[1:]
	}
	if len(d) == 0 || len(d) > 1 && d[0] == '0' || len(v) != len(d) && d[0] == '0' {
		return false
	}
	for _, c := range d {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// decodeJSONValue decodes one JSON value, numbers kept as written.
func decodeJSONValue(data []byte) (any, bool) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, false
	}
	if _, err := d.Token(); err == nil {
		return nil, false // more than one value
	}
	return v, true
}

// jsonArray decodes data as a JSON array, its elements as decodeJSONValue
// gives them.
func jsonArray(data []byte) ([]any, bool) {
	v, ok := decodeJSONValue(data)
	if !ok {
		return nil, false
	}
	a, ok := v.([]any)
	return a, ok
}

func equalValue(x, y any) bool {
	switch x := x.(type) {
	case nil:
		return y == nil
	case bool:
		b, ok := y.(bool)
		return ok && x == b
	case string:
		s, ok := y.(string)
		return ok && x == s
	case json.Number:
		n, ok := y.(json.Number)
		return ok && normNumber(string(x)) == normNumber(string(n))
	case []any:
		a, ok := y.([]any)
		if !ok || len(a) != len(x) {
			return false
		}
		for i := range x {
			if !equalValue(x[i], a[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		m, ok := y.(map[string]any)
		if !ok || len(m) != len(x) {
			return false
		}
		for k, v := range x {
			w, ok := m[k]
			if !ok || !equalValue(v, w) {
				return false
			}
		}
		return true
	}
	return false
}

// normNumber writes the JSON number s exactly as "-0.DIGITSeEXP" with no
// leading or trailing zero in DIGITS ("0" for zero), so that two spellings
// of one number give one string.
func normNumber(s string) string {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	mant, exp := s, 0
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		mant = s[:i]
		e := s[i+1:]
		sign := 1
		if e != "" && (e[0] == '+' || e[0] == '-') {
			if e[0] == '-' {
				sign = -1
			}
			e = e[1:]
		}
		for _, c := range e {
			exp = exp*10 + int(c-'0')
			if exp > 1<<30 {
				exp = 1 << 30 // beyond any difference a digit string can make
			}
		}
		exp *= sign
	}
	intPart, frac, _ := strings.Cut(mant, ".")
	digits := intPart + frac
	point := len(intPart) + exp // value = 0.digits * 10^point
	trimmed := strings.TrimLeft(digits, "0")
	point -= len(digits) - len(trimmed)
	trimmed = strings.TrimRight(trimmed, "0")
	if trimmed == "" {
		return "0"
	}
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	b.WriteString("0.")
	b.WriteString(trimmed)
	b.WriteByte('e')
	b.WriteString(strconv.Itoa(point))
	return b.String()
}
