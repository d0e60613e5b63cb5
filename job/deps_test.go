package job_test

import (
	"os/exec"
	"strings"
	"testing"
)

// allowed lists what the pure packages may import: ast and standard-library
// value packages. No context, sync, os, net, log, math/rand, time, runtime
// or reflect-heavy machinery that would let a clock, randomness or I/O in.
var allowed = map[string]map[string]bool{
	"github.com/batonwf/baton/ast": set("bytes", "encoding/json", "errors", "fmt", "sort", "strconv", "strings"),
	"github.com/batonwf/baton/job": set("github.com/batonwf/baton/ast", "bytes", "cmp", "encoding/binary", "encoding/json", "errors", "fmt", "hash/crc32",
		"slices", "sort", "strconv", "strings", "unicode", "unicode/utf8"),
}

func set(xs ...string) map[string]bool {
	m := map[string]bool{}
	for _, x := range xs {
		m[x] = true
	}
	return m
}

// TestImports fails if ast or job import anything outside their allowed
// set (DESIGN.md section 1). It reads the direct imports with go list.
func TestImports(t *testing.T) {
	for pkg, ok := range allowed {
		out, err := exec.Command("go", "list", "-f", "{{join .Imports \"\\n\"}}", pkg).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", pkg, err)
		}
		imports := strings.Fields(string(out))
		if len(imports) == 0 {
			t.Fatalf("go list %s printed no imports; the check would pass vacuously", pkg)
		}
		for _, imp := range imports {
			if !ok[imp] {
				t.Errorf("%s imports %s, which a pure package may not (allowed: %v)", pkg, imp, keys(ok))
			}
		}
	}
}

func keys(m map[string]bool) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}
