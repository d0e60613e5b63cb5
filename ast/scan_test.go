package ast

import (
	"bytes"
	"encoding/json"
	"io"
	"testing"
)

// FuzzReadObject checks the scanner against encoding/json on every valid
// document: readObject finds an object exactly when encoding/json decodes
// one into a map, with the same keys and the same values (encoding/json's
// raw values, byte for byte), and lists a duplicate exactly when the
// document has more members than the map has keys. readArray is checked
// the same way against a slice of raw values.
func FuzzReadObject(f *testing.F) {
	for _, s := range []string{
		`{}`, ` { } `, `{"a":1}`, `{"a":1,"a":2}`, `{"a":1,"\u0061":2,"b":{"a":1,"a":2}}`,
		`{"act":"log","act":"fail"}`, `{"x":"\"}","y":[1,{"z":"]"}],"x":null}`,
		`{"\ud800":1,"\udc00":2}`, "{\"a\"\t:\n-1.5e3 , \"b\" : true}", `null`, `[1,"a",{"b":[]}]`,
		`[]`, ` [ null ] `, `"s"`, `1`, `{"a":[1,2],"b":{"c":"\\"}}`, "{\"\xff\":1,\"\xfe\":2}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return
		}
		var m map[string]json.RawMessage
		err := json.Unmarshal(data, &m)
		fields, dups, ok := readObject(data)
		if ok != (err == nil && m != nil) {
			t.Fatalf("readObject ok %v, encoding/json map %v, err %v", ok, m != nil, err)
		}
		if ok {
			if len(fields) != len(m) {
				t.Fatalf("readObject read %d keys, encoding/json %d", len(fields), len(m))
			}
			for k, v := range m {
				if !bytes.Equal(fields[k], v) {
					t.Fatalf("key %q: readObject %q, encoding/json %q", k, fields[k], v)
				}
			}
			if members := countMembers(t, data); (len(dups) > 0) != (members > len(m)) {
				t.Fatalf("dups %q, but %d members for %d keys", dups, members, len(m))
			}
		}
		var a []json.RawMessage
		err = json.Unmarshal(data, &a)
		items, ok := readArray(data)
		if ok != (err == nil && a != nil) {
			t.Fatalf("readArray ok %v, encoding/json %v, err %v", ok, a != nil, err)
		}
		if len(items) != len(a) {
			t.Fatalf("readArray read %d items, encoding/json %d", len(items), len(a))
		}
		for i := range a {
			if !bytes.Equal(items[i], a[i]) {
				t.Fatalf("item %d: readArray %q, encoding/json %q", i, items[i], a[i])
			}
		}
		var s string
		if err := json.Unmarshal(data, &s); err == nil && data[0] == '"' && data[len(data)-1] == '"' {
			if got, ok := readString(data); !ok || got != s {
				t.Fatalf("readString = %q, %v; encoding/json %q", got, ok, s)
			}
		}
	})
}

// countMembers counts the members of the object data at its top level.
func countMembers(t *testing.T, data []byte) int {
	d := json.NewDecoder(bytes.NewReader(data))
	depth, members := 0, 0
	key := false
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return members
		}
		if err != nil {
			t.Fatalf("token: %v", err)
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
			key = depth == 1 && tok == json.Delim('{')
			continue
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
		if depth == 1 {
			if key {
				members++
			}
			key = !key
		}
	}
}
