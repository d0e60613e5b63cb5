package ast

import (
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// jsonSpellings draws a JSON text from a small alphabet that holds plain
// values (EqualJSON's fast path) beside other spellings of the same
// values and of close ones: escapes, white space, fractions, exponents,
// leading zeros, -0, non-ASCII and text that is not JSON.
func jsonSpellings() *rapid.Generator[string] {
	return rapid.SampledFrom([]string{
		`"done"`, `"do\u006ee"`, `"done" `, ` "done"`, `"Done"`, `"don"`, `""`, `"a\"b"`, `"a\\b"`,
		`"é"`, `"\u00e9"`, "\"\x7f\"", `"`, `"done`, `done`,
		`0`, `-0`, `0.0`, `1`, `1.0`, `1e0`, `10e-1`, `01`, `-1`, `-01`, `12`, `120e-1`, `-`, `1.`,
		`true`, `false`, `null`, ` true`, `tru`, `nul`,
		`[]`, `[1]`, `{"a":1}`, `{ "a" : 1 }`, ``,
	})
}

// TestEqualJSONPlainAgrees holds EqualJSON, whose plain values skip the
// decoding, to equalDecoded on every pair of spellings.
func TestEqualJSONPlainAgrees(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a, b := jsonSpellings().Draw(t, "a"), jsonSpellings().Draw(t, "b")
		if got, want := EqualJSON([]byte(a), []byte(b)), equalDecoded([]byte(a), []byte(b)); got != want {
			t.Fatalf("EqualJSON(%q, %q) = %v, decoded: %v", a, b, got, want)
		}
	})
}

func TestPlain(t *testing.T) {
	for _, v := range []string{`"done"`, `""`, `"a b"`, `0`, `7`, `-12`, `true`, `false`, `null`} {
		if !plain([]byte(v)) {
			t.Errorf("plain(%q) = false, want true", v)
		}
	}
	for _, v := range []string{`"a\"`, `"é"`, "\"\x01\"", `-0`, `01`, `-01`, `1.0`, `1e2`, `-`, ``, `"`, ` 1`, `[]`, `tru`, strings.Repeat("\"", 3)} {
		if plain([]byte(v)) {
			t.Errorf("plain(%q) = true, want false", v)
		}
	}
}

// A loop's until is read at every iteration: comparing plain values
// must not allocate (decoding both sides cost 14 allocations).
func TestEqualJSONPlainAllocatesNothing(t *testing.T) {
	a, b := []byte(`"running"`), []byte(`"done"`)
	if n := testing.AllocsPerRun(100, func() { EqualJSON(a, b) }); n != 0 {
		t.Errorf("EqualJSON of two plain strings: %v allocations, want 0", n)
	}
}
