package ast_test

import (
	"bytes"
	"testing"

	"github.com/batonwf/baton/ast"
)

// fuzzSeeds are valid and invalid documents to start FuzzDecode from; more
// seeds live in testdata/fuzz/FuzzDecode.
var fuzzSeeds = []string{
	`{"version":1,"root":{"act":"a"}}`,
	`{"version":1,"root":{"act":"a","payload":{"x":[1,2.5,"s",null,true]}}}`,
	`{"version":1,"root":{"seq":[{"act":"a"},{"par":[{"act":"b"},{"act":"c","payload":"p"}]}]}}`,
	`{"version":1,"root":{"try":{"seq":[{"act":"a"}]},"rescue":{"act":"r"},"finally":{"par":[{"act":"f"}]}}}`,
	`{"version":1,"root":{"try":{"act":"a"},"rescue":null,"finally":null}}`,
	"{\n  \"root\": {\"act\": \"a\", \"payload\": [ 1 , 2 ]},\n  \"version\": 1\n}\n",
	`{"version":1,"root":{"seq":[]}}`,
	`{"version":1,"root":{"try":null}}`,
	`{"version":1,"root":{"act":"a","seq":[]}}`,
	`{"version":1,"root":{"act":"","x":1}}`,
	`{"version":2,"root":{"act":"a"}}`,
	`{"version":1}`,
	`{"version":1,"root":{"act":"a"}`,
	`{"version":1,"root":[{"act":"a"}]}`,
	`{"version":1,"root":{"par":[{"act":"a"},"x",5,null,{}]}}`,
	`{"version":1,"root":{"act":"a\u0000b"}}`,
	`{"version":1,"root":{"act":"a","payload":"\ud800"}}`,
	`null`,
	``,
}

// FuzzDecode checks that Decode never panics and that whatever it accepts
// round-trips: Encode succeeds, decoding the encoding gives an equal tree,
// and encoding that again gives the same bytes.
func FuzzDecode(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		n, err := ast.Decode(data)
		if err != nil {
			if err.Error() == "" {
				t.Fatalf("empty error message")
			}
			return
		}
		if err := ast.Validate(n); err != nil {
			t.Fatalf("Decode returned a tree Validate rejects: %v", err)
		}
		enc, err := ast.Encode(n)
		if err != nil {
			t.Fatalf("Encode of a decoded tree: %v", err)
		}
		back, err := ast.Decode(enc)
		if err != nil {
			t.Fatalf("Decode(Encode(n)): %v\nencoding: %s", err, enc)
		}
		if !ast.Equal(back, n) {
			t.Fatalf("Decode(Encode(n)) differs from n\nencoding: %s", enc)
		}
		again, err := ast.Encode(back)
		if err != nil {
			t.Fatalf("Encode(Decode(Encode(n))): %v", err)
		}
		if !bytes.Equal(again, enc) {
			t.Fatalf("Encode is not a fixed point:\n first: %s\nsecond: %s", enc, again)
		}
		if got, want := ast.Count(back), ast.Count(n); got != want {
			t.Fatalf("Count %d after the round trip, want %d", got, want)
		}
	})
}
