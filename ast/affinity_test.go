package ast_test

import (
	"strings"
	"testing"

	"github.com/batonwf/baton/ast"
)

// The five forms of affinity decode, validate and encode back to
// their canonical form.
func TestAffinityForms(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`"dataset-42"`, `"dataset-42"`},
		{`{"key":"dataset-42","wait":"2s"}`, `{"key":"dataset-42","wait":"2s"}`},
		{`{"scope":"job"}`, `{"scope":"job"}`},
		{`{"scope":"job","key":"scratch"}`, `{"key":"scratch","scope":"job"}`},
		{`{"key":"dataset-42","strict":true}`, `{"key":"dataset-42","strict":true}`},
		{`{"key":"k","scope":"global"}`, `"k"`},
		{`{"scope":"job","strict":false,"wait":"1m"}`, `{"scope":"job","wait":"1m0s","strict":false}`},
	} {
		doc := `{"version":2,"root":{"act":"a","affinity":` + c.in + `}}`
		n, err := ast.Decode([]byte(doc))
		if err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		b, err := ast.Encode(n)
		if want := `{"version":2,"root":{"act":"a","affinity":` + c.want + `}}`; err != nil || string(b) != want {
			t.Errorf("%s: Encode %s, %v; want %s", c.in, b, err, want)
		}
	}
}

func TestAffinityBadInput(t *testing.T) {
	long := strings.Repeat("k", 257)
	for _, c := range []struct{ root, want string }{
		{`{"act":"a","affinity":""}`, "root: affinity key is empty"},
		{`{"act":"a","affinity":{"key":""}}`, `root: affinity "key" must be a non-empty string`},
		{`{"act":"a","affinity":"` + long + `"}`, "root: affinity key is 257 bytes long (at most 256)"},
		{`{"act":"a","affinity":{"scope":"cluster"}}`, `root: affinity scope "cluster" is not a scope (want "global" or "job")`},
		{`{"act":"a","affinity":{"key":"k","wait":"-1s"}}`, "root: affinity wait -1s is negative"},
		{`{"act":"a","affinity":{"key":"k","wait":"soon"}}`, `root: affinity wait "soon" is not a duration`},
		{`{"act":"a","affinity":{"wait":"1s"}}`, `root: affinity has no "key"`},
		{`{"act":"a","affinity":{"key":"k","zone":"eu"}}`, `root: unknown field "zone" in affinity`},
		{`{"seq":[{"act":"a","replicas":3}],"affinity":{"scope":"job"}}`, "seq[0]: replicas under a pin"},
		{`{"act":"a","replicas":3,"affinity":{"key":"k","strict":true}}`, "root: replicas under a pin"},
	} {
		_, err := ast.Decode([]byte(`{"version":2,"root":` + c.root + `}`))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.root, err, c.want)
		}
	}
	_, err := ast.Decode([]byte(`{"version":1,"root":{"act":"a","affinity":"k"}}`))
	if want := `"affinity" needs workflow version 2 (this document is version 1)`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("version 1: %v, want %q", err, want)
	}
	// Not UTF-8: only the DSL can say it (JSON text decodes to UTF-8).
	if err := ast.Validate(ast.Act("a", nil).WithAffinity(ast.Affinity{Key: "\xff"})); err == nil || !strings.Contains(err.Error(), `affinity key "\xff" is not valid UTF-8`) {
		t.Errorf("a key not UTF-8: %v", err)
	}
	// A soft key over replicas is fine: replicas spread, a soft key prefers.
	if _, err := ast.Decode([]byte(`{"version":2,"root":{"act":"a","replicas":3,"affinity":"k"}}`)); err != nil {
		t.Errorf("replicas under a soft key: %v", err)
	}
}
