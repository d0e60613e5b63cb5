package ast_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/batonwf/baton/ast"
)

// astTestPayload is a struct payload for the DSL tests.
type astTestPayload struct {
	SKU   string `json:"sku"`
	Count int    `json:"count"`
}

// astShow renders a tree as its canonical node JSON for diffs, or the
// validation error when it has none.
func astShow(n ast.Node) string {
	b, err := n.MarshalJSON()
	if err != nil {
		return "invalid: " + err.Error()
	}
	return string(b)
}

func TestActPayloads(t *testing.T) {
	tests := []struct {
		name    string
		payload any
		want    string // the payload bytes kept; "" for none
		wantErr string // part of the Validate message; "" for valid
	}{
		{name: "nil", payload: nil},
		{name: "string", payload: "b", want: `"b"`},
		{name: "number", payload: 42, want: `42`},
		{name: "bool", payload: true, want: `true`},
		{name: "struct", payload: astTestPayload{SKU: "A1", Count: 2}, want: `{"sku":"A1","count":2}`},
		{name: "map sorted", payload: map[string]int{"b": 2, "a": 1}, want: `{"a":1,"b":2}`},
		{name: "pointer to struct", payload: &astTestPayload{SKU: "B"}, want: `{"sku":"B","count":0}`},
		{name: "nil pointer marshals to null", payload: (*astTestPayload)(nil)},
		{name: "raw message compacted", payload: json.RawMessage("{ \"x\" : [1, 2 ] }\n"), want: `{"x":[1,2]}`},
		{name: "bytes compacted", payload: []byte(" [ true , null ] "), want: `[true,null]`},
		{name: "raw null is no payload", payload: json.RawMessage("null"), want: ""},
		{name: "empty raw is no payload", payload: json.RawMessage{}, want: ""},
		{name: "empty bytes is no payload", payload: []byte{}, want: ""},
		{name: "raw invalid", payload: json.RawMessage(`{"x":`), wantErr: `root: payload is not valid JSON`},
		{name: "bytes invalid", payload: []byte(`nope`), wantErr: `root: payload is not valid JSON: invalid character 'o'`},
		{name: "bytes only spaces", payload: []byte("  "), wantErr: `root: payload is not valid JSON`},
		{name: "channel", payload: make(chan int), wantErr: `root: payload does not marshal to JSON: json: unsupported type: chan int`},
		{name: "function", payload: func() {}, wantErr: `root: payload does not marshal to JSON: json: unsupported type: func()`},
		{name: "NaN", payload: astNaN(), wantErr: `root: payload does not marshal to JSON: json: unsupported value: NaN`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := ast.Act("charge", tc.payload) // must not panic, whatever the payload
			if n.Kind != ast.KindAct || n.Action != "charge" {
				t.Fatalf("Act gave kind %s action %q", n.Kind, n.Action)
			}
			err := ast.Validate(n)
			if tc.wantErr != "" {
				if err == nil {
					t.Fatalf("Validate = nil, want an error containing %q", tc.wantErr)
				}
				if !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Validate = %q, want it to contain %q", err, tc.wantErr)
				}
				var ae *ast.Error
				if !errors.As(err, &ae) || len(ae.Problems) != 1 || ae.Problems[0].Path != "" {
					t.Fatalf("Validate = %#v, want one *ast.Error problem at the root", err)
				}
				if _, err := ast.Encode(n); err == nil {
					t.Fatalf("Encode of an invalid act succeeded")
				}
				return
			}
			if err != nil {
				t.Fatalf("Validate = %v", err)
			}
			if got := string(n.Payload); got != tc.want {
				t.Fatalf("payload = %q, want %q", got, tc.want)
			}
			if tc.want == "" && n.Payload != nil {
				t.Fatalf("payload = %#v, want nil", n.Payload)
			}
		})
	}
}

// TestPayloadDuplicateKeysKept: a payload is the handler's data, passed on
// byte for byte (compacted): a key written twice in it is not the
// decoder's to refuse or to resolve, so both members reach the handler,
// and a stored job holding such a payload still loads.
func TestPayloadDuplicateKeysKept(t *testing.T) {
	doc := `{"version":1,"root":{"act":"email.send","payload":{ "to":"a", "to":"b", "x":{"k":1,"k":2} }}}`
	n, err := ast.Decode([]byte(doc))
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	if got, want := string(n.Payload), `{"to":"a","to":"b","x":{"k":1,"k":2}}`; got != want {
		t.Fatalf("payload = %s, want %s", got, want)
	}
	enc, err := ast.Encode(n)
	if err != nil {
		t.Fatalf("Encode: %v", err)
	}
	if back, err := ast.Decode(enc); err != nil || !ast.Equal(back, n) {
		t.Fatalf("Decode(Encode(n)) = %v, %v", astShow(back), err)
	}
}

func astNaN() float64 {
	zero := 0.0
	return zero / zero
}

func TestDSLShapes(t *testing.T) {
	a, b, c := ast.Act("a", nil), ast.Act("b", "x"), ast.Act("c", nil)
	tests := []struct {
		name string
		n    ast.Node
		want string
	}{
		{"act", a, `{"act":"a"}`},
		{"seq", ast.Seq(a, b), `{"seq":[{"act":"a"},{"act":"b","payload":"x"}]}`},
		{"par", ast.Par(a, ast.Seq(b, c)), `{"par":[{"act":"a"},{"seq":[{"act":"b","payload":"x"},{"act":"c"}]}]}`},
		{"try body only", ast.Try(a), `{"try":{"act":"a"}}`},
		{"try rescue", ast.Try(a, ast.Rescue(b)), `{"try":{"act":"a"},"rescue":{"act":"b","payload":"x"}}`},
		{"try finally", ast.Try(a, ast.Finally(c)), `{"try":{"act":"a"},"finally":{"act":"c"}}`},
		{"try finally before rescue", ast.Try(a, ast.Finally(c), ast.Rescue(b)),
			`{"try":{"act":"a"},"rescue":{"act":"b","payload":"x"},"finally":{"act":"c"}}`},
		{"rescue of several is a seq", ast.Try(a, ast.Rescue(b, c)),
			`{"try":{"act":"a"},"rescue":{"seq":[{"act":"b","payload":"x"},{"act":"c"}]}}`},
		{"finally of several is a seq", ast.Try(a, ast.Finally(b, c)),
			`{"try":{"act":"a"},"finally":{"seq":[{"act":"b","payload":"x"},{"act":"c"}]}}`},
		{"action name charset", ast.Act("Email.send_v2-x", nil), `{"act":"Email.send_v2-x"}`},
		{"escaped string payload", ast.Act("a", "<&>\u2028"), `{"act":"a","payload":"\u003c\u0026\u003e\u2028"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, astShow(tc.n)); diff != "" {
				t.Fatalf("node JSON (-want +got):\n%s", diff)
			}
			enc, err := ast.Encode(tc.n)
			if err != nil {
				t.Fatalf("Encode: %v", err)
			}
			if want := `{"version":1,"root":` + tc.want + `}`; string(enc) != want {
				t.Fatalf("Encode = %s, want %s", enc, want)
			}
			back, err := ast.Decode(enc)
			if err != nil {
				t.Fatalf("Decode(Encode(n)): %v", err)
			}
			if !ast.Equal(back, tc.n) {
				t.Fatalf("Decode(Encode(n)) = %s, want %s", astShow(back), astShow(tc.n))
			}
		})
	}
}

func TestEqualAndCount(t *testing.T) {
	base := func() ast.Node {
		return ast.Seq(ast.Act("a", 1), ast.Try(ast.Act("b", nil), ast.Rescue(ast.Act("r", nil)), ast.Finally(ast.Act("f", nil))))
	}
	if !ast.Equal(base(), base()) {
		t.Fatalf("Equal of two identical trees is false")
	}
	if got := ast.Count(base()); got != 6 {
		t.Fatalf("Count = %d, want 6", got)
	}
	differ := map[string]ast.Node{
		"payload":      ast.Seq(ast.Act("a", 2), ast.Try(ast.Act("b", nil), ast.Rescue(ast.Act("r", nil)), ast.Finally(ast.Act("f", nil)))),
		"name":         ast.Seq(ast.Act("x", 1), ast.Try(ast.Act("b", nil), ast.Rescue(ast.Act("r", nil)), ast.Finally(ast.Act("f", nil)))),
		"kind":         ast.Par(ast.Act("a", 1), ast.Try(ast.Act("b", nil), ast.Rescue(ast.Act("r", nil)), ast.Finally(ast.Act("f", nil)))),
		"no rescue":    ast.Seq(ast.Act("a", 1), ast.Try(ast.Act("b", nil), ast.Finally(ast.Act("f", nil)))),
		"no finally":   ast.Seq(ast.Act("a", 1), ast.Try(ast.Act("b", nil), ast.Rescue(ast.Act("r", nil)))),
		"rescue moved": ast.Seq(ast.Act("a", 1), ast.Try(ast.Act("b", nil), ast.Rescue(ast.Act("f", nil)), ast.Finally(ast.Act("r", nil)))),
		"extra child":  ast.Seq(ast.Act("a", 1), ast.Try(ast.Act("b", nil), ast.Rescue(ast.Act("r", nil)), ast.Finally(ast.Act("f", nil))), ast.Act("c", nil)),
	}
	for name, n := range differ {
		if ast.Equal(base(), n) || ast.Equal(n, base()) {
			t.Errorf("%s: Equal reports different trees as equal", name)
		}
	}

	// Names, inputs, after and dags.
	dag := func() ast.Node {
		return ast.Dag(ast.Act("a", nil).Named("a"), ast.Act("b", nil).Named("b").WithAfter("a").WithInputs("a"))
	}
	if !ast.Equal(dag(), dag()) {
		t.Fatalf("Equal of two identical dags is false")
	}
	if got := ast.Count(dag()); got != 3 {
		t.Fatalf("Count of a dag = %d, want 3", got)
	}
	differNames := map[string]ast.Node{
		"kind":          ast.Par(ast.Act("a", nil).Named("a"), ast.Act("b", nil).Named("b").WithAfter("a").WithInputs("a")),
		"name":          ast.Dag(ast.Act("a", nil).Named("x"), ast.Act("b", nil).Named("b").WithAfter("a").WithInputs("a")),
		"no name":       ast.Dag(ast.Act("a", nil), ast.Act("b", nil).Named("b").WithAfter("a").WithInputs("a")),
		"dag name":      dag().Named("d"),
		"after":         ast.Dag(ast.Act("a", nil).Named("a"), ast.Act("b", nil).Named("b").WithAfter("a", "a").WithInputs("a")),
		"no after":      ast.Dag(ast.Act("a", nil).Named("a"), ast.Act("b", nil).Named("b").WithInputs("a")),
		"inputs":        ast.Dag(ast.Act("a", nil).Named("a"), ast.Act("b", nil).Named("b").WithAfter("a").WithInputs("b")),
		"no inputs":     ast.Dag(ast.Act("a", nil).Named("a"), ast.Act("b", nil).Named("b").WithAfter("a")),
		"extra child":   ast.Dag(ast.Act("a", nil).Named("a"), ast.Act("b", nil).Named("b").WithAfter("a").WithInputs("a"), ast.Act("c", nil).Named("c")),
		"child differs": ast.Dag(ast.Act("a", 1).Named("a"), ast.Act("b", nil).Named("b").WithAfter("a").WithInputs("a")),
	}
	for name, n := range differNames {
		if ast.Equal(dag(), n) || ast.Equal(n, dag()) {
			t.Errorf("%s: Equal reports different dags as equal", name)
		}
	}
	// WithInputs and WithAfter append, and never to a shared array.
	a := ast.Act("a", nil).WithInputs("x")
	b, c := a.WithInputs("y"), a.WithInputs("z")
	if got := fmt.Sprint(a.Inputs, b.Inputs, c.Inputs); got != "[x] [x y] [x z]" {
		t.Errorf("WithInputs: %s", got)
	}
	d := ast.Act("d", nil).WithAfter("x")
	e, f := d.WithAfter("y"), d.WithAfter("z")
	if got := fmt.Sprint(d.After, e.After, f.After); got != "[x] [x y] [x z]" {
		t.Errorf("WithAfter: %s", got)
	}
}

// TestNodeJSONMethods checks that Node works as a field of other JSON
// documents through MarshalJSON and UnmarshalJSON.
func TestNodeJSONMethods(t *testing.T) {
	type envelope struct {
		Name string   `json:"name"`
		Flow ast.Node `json:"flow"`
	}
	in := envelope{Name: "x", Flow: ast.Par(ast.Act("a", map[string]any{"k": []int{1}}), ast.Try(ast.Act("b", nil), ast.Finally(ast.Act("c", nil))))}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatalf("Marshal: %v", err)
	}
	want := `{"name":"x","flow":{"par":[{"act":"a","payload":{"k":[1]}},{"try":{"act":"b"},"finally":{"act":"c"}}]}}`
	if string(b) != want {
		t.Fatalf("Marshal = %s, want %s", b, want)
	}
	var out envelope
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("Unmarshal: %v", err)
	}
	if !ast.Equal(in.Flow, out.Flow) {
		t.Fatalf("round trip = %s, want %s", astShow(out.Flow), astShow(in.Flow))
	}
	if _, err := json.Marshal(envelope{Flow: ast.Seq()}); err == nil || !strings.Contains(err.Error(), "root: seq has no children") {
		t.Fatalf("Marshal of an invalid node: %v, want the Validate problem", err)
	}
	err = json.Unmarshal([]byte(`{"flow":{"seq":[{"act":"a"},{"par":[]}]}}`), &out)
	if err == nil || !strings.Contains(err.Error(), "seq[1]: par has no children") {
		t.Fatalf("Unmarshal of an invalid node: %v, want the problem with its path", err)
	}
}

// TestCanonicalEncoding checks that Encode(Decode(b)) is the canonical
// form of every spelling of the same tree.
func TestCanonicalEncoding(t *testing.T) {
	canonical := `{"version":1,"root":{"seq":[{"act":"a","payload":{"x":[1,2]}},{"try":{"par":[{"act":"b"},{"act":"c"}]},"rescue":{"act":"r"},"finally":{"act":"f","payload":"s"}}]}}`
	spellings := map[string]string{
		"canonical": canonical,
		"spaces and newlines": "{\n  \"version\": 1,\n  \"root\": {\"seq\": [\n    {\"act\": \"a\", \"payload\": { \"x\" : [ 1, 2 ] }},\n" +
			"    {\"try\": {\"par\": [{\"act\":\"b\"}, {\"act\":\"c\"}]}, \"rescue\": {\"act\":\"r\"}, \"finally\": {\"act\":\"f\",\"payload\":\"s\"}}\n  ]}\n}\n",
		"root before version":     `{"root":{"seq":[{"payload":{"x":[1,2]},"act":"a"},{"finally":{"act":"f","payload":"s"},"rescue":{"act":"r"},"try":{"par":[{"act":"b"},{"act":"c"}]}}]},"version":1}`,
		"null payloads and parts": `{"version":1,"root":{"seq":[{"act":"a","payload":{"x":[1,2]}},{"try":{"par":[{"act":"b","payload":null},{"act":"c"}]},"rescue":{"act":"r"},"finally":{"act":"f","payload":"s"}}]}}`,
		"escaped name":            `{"version":1,"root":{"seq":[{"act":"\u0061","payload":{"x":[1,2]}},{"try":{"par":[{"act":"b"},{"act":"c"}]},"rescue":{"act":"r"},"finally":{"act":"f","payload":"s"}}]}}`,
	}
	for name, doc := range spellings {
		t.Run(name, func(t *testing.T) {
			n, err := ast.Decode([]byte(doc))
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			b, err := ast.Encode(n)
			if err != nil {
				t.Fatalf("Encode: %v", err)
			}
			if diff := cmp.Diff(canonical, string(b)); diff != "" {
				t.Fatalf("Encode(Decode(doc)) (-want +got):\n%s", diff)
			}
			again, err := ast.Decode(b)
			if err != nil || !ast.Equal(again, n) {
				t.Fatalf("Decode(Encode(n)) = %s, %v; want %s", astShow(again), err, astShow(n))
			}
		})
	}
	// A try whose rescue or finally is null has none.
	n, err := ast.Decode([]byte(`{"version":1,"root":{"try":{"act":"a"},"rescue":null,"finally":null}}`))
	if err != nil {
		t.Fatalf("Decode of null parts: %v", err)
	}
	if n.Rescue != nil || n.Finally != nil {
		t.Fatalf("null rescue/finally decoded as %s", astShow(n))
	}
}

// astDeep returns a document nesting depth seq nodes around an act.
func astDeep(depth int) string {
	return `{"version":1,"root":` + strings.Repeat(`{"seq":[`, depth-1) + `{"act":"a"}` + strings.Repeat(`]}`, depth-1) + `}`
}

func astDeepPath(n int) string {
	return strings.TrimSuffix(strings.Repeat("seq[0].", n), ".")
}

// TestDecodeErrors checks every kind of bad document: each error names
// the node's path and says what is wrong.
func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want []string // every string must appear in the message
		// problems, when set, is the exact list of problems the *ast.Error holds.
		problems []ast.Problem
	}{
		{name: "empty input", doc: ``, want: []string{"JSON syntax error at line 1, column 1"}},
		{name: "truncated", doc: `{"version":1,"root":{"act":"a"}`,
			want: []string{"JSON syntax error at line 1, column 31", "unexpected end of JSON input"}},
		{name: "missing colon on line 3", doc: "{\n\"version\":1,\n  \"root\": {\"act\" \"a\"}}",
			want: []string{"JSON syntax error at line 3, column 18", "after object key"}},
		{name: "bad token on line 2", doc: "{\"version\":1,\n\"root\":{\"act\":tru}}",
			want: []string{"JSON syntax error at line 2, column 18", "invalid character '}' in literal true"}},
		{name: "trailing data", doc: `{"version":1,"root":{"act":"a"}} {}`,
			want: []string{"JSON syntax error at line 1, column 34", "after top-level value"}},
		{name: "not an object", doc: `[1]`, want: []string{`workflow: want an object like {"version":1,"root":...}, got an array`}},
		{name: "null", doc: `null`, want: []string{`workflow: want an object like {"version":1,"root":...}, got null`}},
		{name: "missing version", doc: `{"root":{"act":"a"}}`, want: []string{`missing "version"`, "reads version 3"}},
		{name: "future version", doc: `{"version":4,"root":{"act":"a"}}`, want: []string{"version 4 is newer than this baton reads (3)"}},
		{name: "zero version", doc: `{"version":0,"root":{"act":"a"}}`, want: []string{"version 0 is not a valid version"}},
		{name: "negative version", doc: `{"version":-3,"root":{"act":"a"}}`, want: []string{"version -3 is not a valid version"}},
		{name: "version not a number", doc: `{"version":"1","root":{"act":"a"}}`, want: []string{`workflow: "version" must be a whole number like 3, got a string`}},
		{name: "version an object", doc: `{"version":{"v":1},"root":{"act":"a"}}`, want: []string{`workflow: "version" must be a whole number like 3, got an object`}},
		{name: "version a fraction", doc: `{"version":1.5,"root":{"act":"a"}}`, want: []string{`workflow: "version" must be a whole number like 3, got 1.5`}},
		{name: "version too big", doc: `{"version":1e40,"root":{"act":"a"}}`, want: []string{`workflow: "version" must be a whole number like 3, got 1e40`}},
		{name: "missing root", doc: `{"version":1}`, want: []string{`missing "root"`}},
		{name: "null root", doc: `{"version":1,"root":null}`, want: []string{`missing "root"`}},
		{name: "unknown envelope field", doc: `{"version":1,"root":{"act":"a"},"extra":1}`, want: []string{`workflow: unknown field "extra" (allowed: version, root)`}},
		{name: "root not an object", doc: `{"version":1,"root":[1]}`,
			problems: []ast.Problem{{Path: "", Msg: `want a node object like {"act":...}, {"seq":[...]}, {"par":[...]}, {"try":...}, {"dag":[...]}, {"race":[...]}, {"choice":{...}}, {"end":...}, {"map":{...}}, {"loop":{...}}, {"wait":...} or {"sleep":...}, got an array`}}},
		{name: "child not an object", doc: `{"version":1,"root":{"seq":[{"act":"a"},"b"]}}`,
			want: []string{"seq[1]: want a node object", "got a string"}},
		{name: "unknown kind key", doc: `{"version":1,"root":{"seq":[{"act":"a"},{"par":[{"repeat":[]}]}]}}`,
			problems: []ast.Problem{{Path: "seq[1].par[0]", Msg: "node has none of the keys act, seq, par, try, dag, race, choice, end, map, loop, wait, sleep (has: repeat)"}}},
		{name: "empty node", doc: `{"version":1,"root":{"par":[{}]}}`,
			problems: []ast.Problem{{Path: "par[0]", Msg: "node has none of the keys act, seq, par, try, dag, race, choice, end, map, loop, wait, sleep (has: )"}}},
		{name: "two kind keys", doc: `{"version":1,"root":{"try":{"act":"a","seq":[{"act":"b"}]}}}`,
			problems: []ast.Problem{{Path: "body", Msg: "node has more than one kind key: act, seq"}}},
		{name: "unknown field in act", doc: `{"version":1,"root":{"par":[{"act":"a","retries":3}]}}`,
			problems: []ast.Problem{{Path: "par[0]", Msg: `unknown field "retries" in act node (allowed: act, payload, name, inputs, retry, timeout, deadline, delivery, priority)`}}},
		{name: "payload on a try", doc: `{"version":1,"root":{"try":{"act":"a"},"payload":1}}`,
			problems: []ast.Problem{{Path: "", Msg: `unknown field "payload" in try node (allowed: try, rescue, finally, name, deadline)`}}},
		{name: "rescue on a seq", doc: `{"version":1,"root":{"seq":[{"act":"a"}],"rescue":{"act":"b"}}}`,
			problems: []ast.Problem{{Path: "", Msg: `unknown field "rescue" in seq node (allowed: seq, name, deadline)`}}},
		{name: "two unknown fields, sorted", doc: `{"version":1,"root":{"act":"a","z":1,"b":2}}`,
			problems: []ast.Problem{
				{Path: "", Msg: `unknown field "b" in act node (allowed: act, payload, name, inputs, retry, timeout, deadline, delivery, priority)`},
				{Path: "", Msg: `unknown field "z" in act node (allowed: act, payload, name, inputs, retry, timeout, deadline, delivery, priority)`},
			}},
		{name: "empty seq", doc: `{"version":1,"root":{"par":[{"act":"a"},{"seq":[]}]}}`,
			problems: []ast.Problem{{Path: "par[1]", Msg: "seq has no children"}}},
		{name: "empty par", doc: `{"version":1,"root":{"par":[]}}`,
			problems: []ast.Problem{{Path: "", Msg: "par has no children"}}},
		{name: "null seq", doc: `{"version":1,"root":{"seq":null}}`,
			problems: []ast.Problem{{Path: "", Msg: `"seq" must be an array of nodes, got null`}}},
		{name: "seq not an array", doc: `{"version":1,"root":{"seq":{"act":"a"}}}`,
			problems: []ast.Problem{{Path: "", Msg: `"seq" must be an array of nodes, got an object`}}},
		{name: "try without body", doc: `{"version":1,"root":{"seq":[{"try":null,"finally":{"act":"f"}}]}}`,
			problems: []ast.Problem{{Path: "seq[0]", Msg: `try has no body ("try" is null)`}}},
		{name: "empty rescue", doc: `{"version":1,"root":{"try":{"act":"a"},"rescue":{"seq":[]}}}`,
			problems: []ast.Problem{{Path: "rescue", Msg: "seq has no children"}}},
		{name: "bad node in finally", doc: `{"version":1,"root":{"try":{"act":"a"},"finally":{"seq":[{"act":"b"},{"nope":1}]}}}`,
			problems: []ast.Problem{{Path: "finally.seq[1]", Msg: "node has none of the keys act, seq, par, try, dag, race, choice, end, map, loop, wait, sleep (has: nope)"}}},
		{name: "empty action name", doc: `{"version":1,"root":{"seq":[{"act":"a"},{"act":""}]}}`,
			problems: []ast.Problem{{Path: "seq[1]", Msg: "action name is empty"}}},
		{name: "action name with a space", doc: `{"version":1,"root":{"par":[{"act":"send mail"}]}}`,
			problems: []ast.Problem{{Path: "par[0]", Msg: `action name "send mail" has ' ' at byte 4 (allowed: letters, digits, '.', '_', '-')`}}},
		{name: "action name with a slash", doc: `{"version":1,"root":{"act":"a/b"}}`,
			want: []string{`root: action name "a/b" has '/' at byte 1`}},
		{name: "action name not ASCII", doc: `{"version":1,"root":{"act":"café"}}`,
			want: []string{`root: action name "café" has `, ` at byte 3 (allowed: letters, digits, '.', '_', '-')`}},
		{name: "action name too long", doc: `{"version":1,"root":{"act":"` + strings.Repeat("x", ast.MaxActionName+1) + `"}}`,
			want: []string{"root: action name is 201 bytes long (at most 200)"}},
		{name: "action name not a string", doc: `{"version":1,"root":{"act":5}}`,
			problems: []ast.Problem{{Path: "", Msg: `"act" must be a string (the action name), got a number`}}},
		{name: "too deep", doc: astDeep(ast.MaxDepth + 1),
			problems: []ast.Problem{{Path: astDeepPath(ast.MaxDepth), Msg: "tree is deeper than 128 levels"}}},
		{name: "several problems", doc: `{"version":1,"root":{"par":[{"seq":5},{"act":"a","x":1},{"try":{"par":[]},"finally":{"foo":2}}]}}`,
			problems: []ast.Problem{
				{Path: "par[0]", Msg: `"seq" must be an array of nodes, got a number`},
				{Path: "par[1]", Msg: `unknown field "x" in act node (allowed: act, payload, name, inputs, retry, timeout, deadline, delivery, priority)`},
				{Path: "par[2].body", Msg: "par has no children"},
				{Path: "par[2].finally", Msg: "node has none of the keys act, seq, par, try, dag, race, choice, end, map, loop, wait, sleep (has: foo)"},
			}},
		// A key written twice is refused in every object the decoder reads,
		// named with the path of the node it is in; encoding/json alone
		// would keep the last value silently.
		{name: "duplicate kind key", doc: `{"version":1,"root":{"act":"log","act":"fail"}}`,
			problems: []ast.Problem{{Path: "", Msg: `duplicate field "act" in act node (a field may appear once)`}}},
		{name: "duplicate key spelled with an escape", doc: `{"version":1,"root":{"seq":[{"act":"a"},{"act":"log","\u0061ct":"fail"}]}}`,
			problems: []ast.Problem{{Path: "seq[1]", Msg: `duplicate field "act" in act node (a field may appear once)`}}},
		{name: "duplicate keys in nodes, each once", doc: `{"version":1,"root":{"par":[{"act":"b"}],"par":[{"act":"a","name":"x","name":"y","name":"z","timeout":"1s","timeout":"2s"}]}}`,
			problems: []ast.Problem{
				{Path: "", Msg: `duplicate field "par" in par node (a field may appear once)`},
				{Path: "par[0]", Msg: `duplicate field "name" in act node (a field may appear once)`},
				{Path: "par[0]", Msg: `duplicate field "timeout" in act node (a field may appear once)`},
			}},
		{name: "duplicate key in a try's part", doc: `{"version":1,"root":{"try":{"act":"a"},"finally":{"seq":[{"act":"f"}],"deadline":"1s","deadline":"1h"}}}`,
			problems: []ast.Problem{{Path: "finally", Msg: `duplicate field "deadline" in seq node (a field may appear once)`}}},
		{name: "duplicate key in retry", doc: `{"version":1,"root":{"seq":[{"act":"a","retry":{"attempts":1,"attempts":5}}]}}`,
			problems: []ast.Problem{{Path: "seq[0]", Msg: `duplicate field "attempts" in retry (a field may appear once)`}}},
		{name: "duplicate key in a dag entry", doc: `{"version":1,"root":{"dag":[{"name":"a","do":{"act":"a"},"do":{"act":"b"}}]}}`,
			problems: []ast.Problem{{Path: "dag[0]", Msg: `duplicate field "do" in dag entry (a field may appear once)`}}},
		{name: "duplicate root", doc: `{"version":1,"root":{"act":"log"},"root":{"act":"fail"}}`,
			want: []string{`workflow: duplicate field "root" in the document (a field may appear once)`}},
		{name: "duplicate version", doc: `{"version":1,"root":{"act":"log"},"version":1}`,
			want: []string{`workflow: duplicate field "version" in the document (a field may appear once)`}},
		// Decode promises that every problem is reported: a structural
		// problem in one node must not hide a naming problem in another.
		{name: "structural and naming problems together", doc: `{"version":1,"root":{"seq":[{"foo":1},{"act":""}]}}`,
			problems: []ast.Problem{
				{Path: "seq[0]", Msg: "node has none of the keys act, seq, par, try, dag, race, choice, end, map, loop, wait, sleep (has: foo)"},
				{Path: "seq[1]", Msg: "action name is empty"},
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n, err := ast.Decode([]byte(tc.doc))
			if err == nil {
				t.Fatalf("Decode succeeded with %s", astShow(n))
			}
			if !ast.Equal(n, ast.Node{}) {
				t.Errorf("Decode returned a tree with its error: %s", astShow(n))
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "workflow: ") {
				t.Errorf("error %q does not start with \"workflow: \"", msg)
			}
			// Plain words: no Go types, no package prefixes.
			for _, goWords := range []string{"Go ", "struct", "*int", "json.", "json: "} {
				if strings.Contains(msg, goWords) {
					t.Errorf("error %q contains %q", msg, goWords)
				}
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not contain %q", msg, w)
				}
			}
			if tc.problems != nil {
				var ae *ast.Error
				if !errors.As(err, &ae) {
					t.Fatalf("error %q is not an *ast.Error", msg)
				}
				if diff := cmp.Diff(tc.problems, ae.Problems); diff != "" {
					t.Errorf("problems (-want +got):\n%s\nmessage: %s", diff, msg)
				}
				for _, p := range tc.problems {
					if !strings.Contains(msg, ast.ShowPath(p.Path)+": "+p.Msg) {
						t.Errorf("message %q does not show %q", msg, p.String())
					}
				}
			}
		})
	}
}

// TestDecodeDepthLimit checks the deepest tree accepted and the first one
// refused, both built with the DSL and decoded from JSON.
func TestDecodeDepthLimit(t *testing.T) {
	if _, err := ast.Decode([]byte(astDeep(ast.MaxDepth))); err != nil {
		t.Fatalf("a tree of exactly MaxDepth levels: %v", err)
	}
	n := ast.Act("a", nil)
	for i := 1; i < ast.MaxDepth; i++ {
		n = ast.Seq(n)
	}
	if err := ast.Validate(n); err != nil {
		t.Fatalf("DSL tree of MaxDepth levels: %v", err)
	}
	err := ast.Validate(ast.Try(n))
	want := "workflow: " + ast.PartPath("", ast.PartBody) + "." + astDeepPath(ast.MaxDepth-1) + ": tree is deeper than 128 levels"
	if err == nil || err.Error() != want {
		t.Fatalf("Validate of MaxDepth+1 levels = %v, want %q", err, want)
	}
	if _, err := ast.Encode(ast.Try(n)); err == nil {
		t.Fatalf("Encode of a too deep tree succeeded")
	}
	// Far deeper than the limit: still an error, not a stack overflow.
	if _, err := ast.Decode([]byte(astDeep(5000))); err == nil || !strings.Contains(err.Error(), "tree is deeper than 128 levels") {
		t.Fatalf("Decode of 5000 levels: %v", err)
	}
}

// TestValidateDSL checks the problems Validate finds in trees built with
// the DSL or by hand, each with its path.
func TestValidateDSL(t *testing.T) {
	tests := []struct {
		name     string
		n        ast.Node
		problems []ast.Problem
	}{
		{"zero node", ast.Node{}, []ast.Problem{{"", "unknown node kind 0 (want act, seq, par, try, dag, race, choice, end, map, loop, wait or sleep)"}}},
		{"unknown kind", ast.Node{Kind: 99}, []ast.Problem{{"", "unknown node kind 99 (want act, seq, par, try, dag, race, choice, end, map, loop, wait or sleep)"}}},
		{"empty seq", ast.Par(ast.Act("a", nil), ast.Seq()), []ast.Problem{{"par[1]", "seq has no children"}}},
		{"empty par", ast.Seq(ast.Act("a", nil), ast.Act("b", nil), ast.Par()), []ast.Problem{{"seq[2]", "par has no children"}}},
		{"try without body", ast.Node{Kind: ast.KindTry}, []ast.Problem{{"", "try has no body"}}},
		{"empty action name", ast.Seq(ast.Try(ast.Act("", nil))), []ast.Problem{{"seq[0].body", "action name is empty"}}},
		{"bad character", ast.Try(ast.Act("a", nil), ast.Rescue(ast.Act("a\nb", nil))),
			[]ast.Problem{{"rescue", `action name "a\nb" has '\n' at byte 1 (allowed: letters, digits, '.', '_', '-')`}}},
		{"invalid JSON payload", ast.Try(ast.Act("a", nil), ast.Finally(ast.Act("f", []byte("{")))),
			[]ast.Problem{{"finally", "payload is not valid JSON: unexpected end of JSON input"}}},
		{"unmarshalable payload", ast.Par(ast.Act("a", nil), ast.Act("b", make(chan struct{}))),
			[]ast.Problem{{"par[1]", "payload does not marshal to JSON: json: unsupported type: chan struct {}"}}},
		{"hand-built invalid payload", ast.Node{Kind: ast.KindAct, Action: "a", Payload: json.RawMessage("{")},
			[]ast.Problem{{"", `payload of action "a" is not valid JSON`}}},
		{"two rescues", ast.Try(ast.Act("a", nil), ast.Rescue(ast.Act("r", nil)), ast.Rescue(ast.Act("s", nil))),
			[]ast.Problem{{"", "try has more than one rescue"}}},
		{"two finallies", ast.Try(ast.Act("a", nil), ast.Finally(ast.Act("r", nil)), ast.Finally(ast.Act("s", nil))),
			[]ast.Problem{{"", "try has more than one finally"}}},
		{"act with children", ast.Node{Kind: ast.KindAct, Action: "a", Children: []ast.Node{ast.Act("b", nil)}},
			[]ast.Problem{{"", "act node has children"}}},
		{"seq with an action", ast.Node{Kind: ast.KindSeq, Action: "x", Children: []ast.Node{ast.Act("b", nil)}},
			[]ast.Problem{{"", "seq node has fields of another kind (action, payload or try parts)"}}},
		{"try with children", func() ast.Node { n := ast.Try(ast.Act("a", nil)); n.Children = []ast.Node{ast.Act("b", nil)}; return n }(),
			[]ast.Problem{{"", "try node has fields of another kind (action, payload or children)"}}},
		{"every problem, in tree order", ast.Seq(ast.Act("", nil), ast.Par(ast.Seq(), ast.Act("ok", nil), ast.Node{}), ast.Try(ast.Act("x y", nil), ast.Finally(ast.Par()))),
			[]ast.Problem{
				{"seq[0]", "action name is empty"},
				{"seq[1].par[0]", "seq has no children"},
				{"seq[1].par[2]", "unknown node kind 0 (want act, seq, par, try, dag, race, choice, end, map, loop, wait or sleep)"},
				{"seq[2].body", `action name "x y" has ' ' at byte 1 (allowed: letters, digits, '.', '_', '-')`},
				{"seq[2].finally", "par has no children"},
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := ast.Validate(tc.n)
			var ae *ast.Error
			if !errors.As(err, &ae) {
				t.Fatalf("Validate = %v, want an *ast.Error", err)
			}
			if diff := cmp.Diff(tc.problems, ae.Problems); diff != "" {
				t.Fatalf("problems (-want +got):\n%s", diff)
			}
			for _, p := range tc.problems {
				if !strings.Contains(err.Error(), p.String()) {
					t.Errorf("message %q does not show %q", err, p.String())
				}
			}
			if _, encErr := ast.Encode(tc.n); encErr == nil || encErr.Error() != err.Error() {
				t.Fatalf("Encode error = %v, want Validate's %v", encErr, err)
			}
		})
	}
}

func TestErrorMessageForm(t *testing.T) {
	one := &ast.Error{Problems: []ast.Problem{{Path: "", Msg: "m"}}}
	if got, want := one.Error(), "workflow: root: m"; got != want {
		t.Errorf("one problem: %q, want %q", got, want)
	}
	two := &ast.Error{Problems: []ast.Problem{{Path: "seq[0]", Msg: "a"}, {Path: "par[1].body", Msg: "b"}}}
	if got, want := two.Error(), "workflow: 2 problems:\n\tseq[0]: a\n\tpar[1].body: b"; got != want {
		t.Errorf("two problems: %q, want %q", got, want)
	}
}

func TestPaths(t *testing.T) {
	tests := []struct{ got, want string }{
		{ast.ChildPath("", ast.KindSeq, 0), "seq[0]"},
		{ast.ChildPath("seq[0]", ast.KindPar, 12), "seq[0].par[12]"},
		{ast.PartPath("", ast.PartBody), "body"},
		{ast.PartPath("par[1]", ast.PartFinally), "par[1].finally"},
		{ast.ShowPath(""), "root"},
		{ast.ShowPath("rescue"), "rescue"},
		{ast.KindAct.String(), "act"},
		{ast.KindTry.String(), "try"},
		{ast.KindDag.String(), "dag"},
		{ast.ChildPath("seq[1]", ast.KindDag, 3), "seq[1].dag[3]"},
		{ast.KindInvalid.String(), "invalid"},
		{ast.Kind(42).String(), "Kind(42)"},
	}
	for i, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("case %d: %q, want %q", i, tc.got, tc.want)
		}
	}
}

// TestDecodeNestingLimit checks that a document nested deeper than JSON
// decoding allows, in the tree or in a payload, is reported as too deep,
// naming the limit and where it was passed, not as a syntax error.
func TestDecodeNestingLimit(t *testing.T) {
	const limit = 10000
	payload := `{"version":1,"root":{"act":"a",` + "\n" + `"payload":`
	for _, tc := range []struct {
		name, doc string
		line, col int
	}{
		// The envelope and the act are two levels; the payload's arrays
		// pass the limit at its 9,999th bracket.
		{"payload", payload + strings.Repeat("[", limit) + strings.Repeat("]", limit) + "}}", 2, len(`"payload":`) + limit - 1},
		// Brackets in strings do not count; the payload's first array is
		// the third level.
		{"strings", `{"version":1,"root":{"act":"a","payload":["[\"[{\\",` + strings.Repeat("[", limit) + strings.Repeat("]", limit+1) + "}}",
			1, len(`{"version":1,"root":{"act":"a","payload":["[\"[{\\",`) + limit - 2},
		// The envelope is one level and each seq two: the limit is passed
		// at the bracket of the 5,000th seq.
		{"tree", astDeep(limit/2 + 1), 1, len(`{"version":1,"root":`) + (limit/2)*len(`{"seq":[`)},
	} {
		_, err := ast.Decode([]byte(tc.doc))
		want := fmt.Sprintf("workflow: nested more than %d levels deep (the limit) at line %d, column %d", limit, tc.line, tc.col)
		if err == nil || err.Error() != want {
			t.Errorf("%s: Decode error %v, want %q", tc.name, err, want)
		}
	}
	// At the limit, JSON decoding is not what refuses the tree.
	if _, err := ast.Decode([]byte(astDeep(limit / 2))); err == nil || !strings.Contains(err.Error(), "tree is deeper than 128 levels") {
		t.Errorf("Decode of %d JSON levels: %v", limit, err)
	}
	// A syntax error before the limit is passed is still a syntax error.
	doc := `{"version":1,"root":{"act":"a","payload":[1 2` + strings.Repeat("[", limit)
	if _, err := ast.Decode([]byte(doc)); err == nil || !strings.Contains(err.Error(), "JSON syntax error at line 1, column 45") {
		t.Errorf("Decode of a syntax error, then deep nesting: %v", err)
	}
}

// TestCutEdge: CutEdge reads back every edge AppendEdge writes, and refuses
// malformed ones.
func TestCutEdge(t *testing.T) {
	for _, e := range []ast.Edge{{ast.KindSeq, 0}, {ast.KindPar, 12}, {ast.KindSeq, 999999999}, {ast.KindTry, 0}, {ast.KindTry, 1}, {ast.KindTry, 2}, {ast.KindDag, 0}, {ast.KindDag, 31}} {
		p := string(ast.AppendEdge([]byte("par[1]"), e.Kind, e.Index)) + ".seq[3]"
		first, written, rest, ok := ast.CutEdge(p)
		if !ok || first != (ast.Edge{ast.KindPar, 1}) || written != "par[1]" {
			t.Fatalf("CutEdge(%q) = %v %q %q %v", p, first, written, rest, ok)
		}
		got, written, rest, ok := ast.CutEdge(rest)
		if !ok || got != e || written != e.String() || rest != "seq[3]" {
			t.Errorf("CutEdge of %q: %v %q %q %v, want %v", p, got, written, rest, ok, e)
		}
	}
	for _, p := range []string{"seq[01]", "seq[-1]", "seq[]", "seq[1", "seq1]", "act[0]", "Body", "seq[1].", ".seq[1]", "seq[1000000000]", "try[0]", "par[0x1]", "dag[01]", "dag[]", "Dag[1]"} {
		if e, written, _, ok := ast.CutEdge(p); ok {
			t.Errorf("CutEdge(%q) accepted %v (%q)", p, e, written)
		}
	}
}

// TestComparePaths: pre-order, children by index (not by text), a try's
// parts in order, malformed edges last.
func TestComparePaths(t *testing.T) {
	sorted := []string{"", "par[0]", "par[0].body", "par[0].body.seq[2]", "par[0].body.seq[10]", "par[0].body.seq[10].dag[0]", "par[0].body.seq[10].dag[3]", "par[0].body.seq[10].dag[3].par[0]", "par[0].body.seq[10].dag[20]", "par[0].rescue", "par[0].finally", "par[2]", "par[10]", "par[10].seq[0]", "par[x]"}
	for i, a := range sorted {
		for j, b := range sorted {
			want := 0
			switch {
			case i < j:
				want = -1
			case i > j:
				want = 1
			}
			if got := ast.ComparePaths(a, b); got != want {
				t.Errorf("ComparePaths(%q, %q) = %d, want %d", a, b, got, want)
			}
		}
	}
}
