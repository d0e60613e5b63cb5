package ast

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
)

// Decode checks the syntax of a document once, before it reads anything
// of it, and then trusts every part of it it reads (a node, a payload),
// since each is a slice of a valid document: no value is checked again.
func TestDecodeChecksSyntaxOnce(t *testing.T) {
	for _, doc := range []string{
		`{"version": 1, "root": {"act": "noop"}}`,
		`{"version": 1, "root": {"seq": [{"act": "a", "payload": {"x": [1, 2]}}, {"par": [{"act": "b"}, {"act": "c"}]}]}}`,
	} {
		d := decoder{}
		if _, err := decodeDocument([]byte(doc), &d); err != nil {
			t.Fatalf("Decode %s: %v", doc, err)
		}
		if d.checks != 1 {
			t.Errorf("Decode %s: %d syntax checks of the document, want 1", doc, d.checks)
		}
	}
}

// compactValid writes what json.Compact writes, for every valid value.
func FuzzCompactValid(f *testing.F) {
	for _, s := range []string{`null`, `1`, ` { "a" : [ 1 , 2.5e3 , "x y\t" ] , "b\"\\ c" : { } } `,
		"\"\\u00e9 \\n\"", `[ true, false , null ]`, "{\"\xe2\x80\xa8\": \"<&>\"}"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, p []byte) {
		if !json.Valid(p) {
			return
		}
		var want bytes.Buffer
		if err := json.Compact(&want, p); err != nil {
			t.Fatal(err)
		}
		if got := compactValid(p); !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("compactValid(%q) = %q, json.Compact %q", p, got, want.Bytes())
		}
	})
}

// readInt reads what json.Unmarshal into an int reads, and fails where it
// fails, with its error.
func FuzzReadInt(f *testing.F) {
	for _, s := range []string{`1`, `-1`, `0`, `-0`, `3`, `1.0`, `1e0`, `"1"`, `null`, `true`, `123456789012345678`,
		`1234567890123456789`, `9223372036854775807`, `9223372036854775808`, `-9223372036854775809`, `99999999999999999999`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !json.Valid(raw) {
			return
		}
		raw = bytes.TrimSpace(raw)
		var want int
		wantErr := json.Unmarshal(raw, &want)
		got, err := readInt(raw)
		if got != want || fmt.Sprint(err) != fmt.Sprint(wantErr) {
			t.Fatalf("readInt(%s) = %d, %v; json.Unmarshal %d, %v", raw, got, err, want, wantErr)
		}
	})
}
