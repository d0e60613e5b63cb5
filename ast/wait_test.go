package ast_test

import (
	"strings"
	"testing"
	"time"

	"github.com/batonwf/baton/ast"
)

func TestWaitSleepJSON(t *testing.T) {
	w := ast.Race(ast.Wait("approval").OnlyWhileRunning().Named("ok").WithDeadline(time.Hour), ast.Sleep(48*time.Hour))
	root := ast.Seq(w, ast.Act("a", nil))
	data, err := ast.Encode(root)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"seq":[{"race":[{"wait":"approval","transient":true,"name":"ok","deadline":"1h0m0s"},{"sleep":"48h0m0s"}]},{"act":"a"}]}`
	if !strings.Contains(string(data), want) {
		t.Fatalf("encoded %s, want it to hold %s", data, want)
	}
	back, err := ast.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	if !ast.Equal(back, root) {
		t.Fatalf("decoded %+v, want %+v", back, root)
	}
}

func TestWaitSleepInvalid(t *testing.T) {
	for _, tc := range []struct {
		doc, want string
	}{
		{`{"version":3,"root":{"wait":"bad name!"}}`, "wait: signal"},
		{`{"version":3,"root":{"wait":""}}`, "wait has no signal name"},
		{`{"version":3,"root":{"wait":3}}`, `"wait" must be a string`},
		{`{"version":3,"root":{"wait":"x","transient":"yes"}}`, "transient must be true or false"},
		{`{"version":3,"root":{"sleep":"0s"}}`, "sleep must be a duration of at least"},
		{`{"version":3,"root":{"sleep":"soon"}}`, "is not a duration"},
		{`{"version":3,"root":{"sleep":"20000h"}}`, "sleep 20000h0m0s is more than"},
		{`{"version":3,"root":{"sleep":"1h","deadline":"1s"}}`, `unknown field "deadline" in sleep node`},
		{`{"version":2,"root":{"wait":"x"}}`, `"wait" needs workflow version 3`},
		{`{"version":3,"root":{"seq":[{"wait":"x"}],"transient":true}}`, `unknown field "transient"`},
	} {
		_, err := ast.Decode([]byte(tc.doc))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error with %q", tc.doc, err, tc.want)
		}
	}
	if err := ast.Validate(ast.Sleep(time.Hour).WithDeadline(time.Second)); err == nil || !strings.Contains(err.Error(), "deadline on a sleep") {
		t.Errorf("sleep with a deadline: %v", err)
	}
	if err := ast.Validate(ast.Seq(ast.Wait("w").Named("x"), ast.Act("a", nil).WithInputs("x"))); err != nil {
		t.Errorf("an input naming a wait: %v", err)
	}
}
