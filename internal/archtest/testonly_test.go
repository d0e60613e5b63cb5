package archtest

import (
	"os/exec"
	"strings"
	"testing"
)

// testOnly lists the third-party modules only tests may use: no package
// of the module, with its dependencies, may need them to build.
var testOnly = []string{
	"github.com/getkin/kin-openapi/", // server's tests check the API against its OpenAPI document
}

// TestTestOnlyModules checks that no package of the module depends, when
// built (its tests aside), on a module of testOnly.
func TestTestOnlyModules(t *testing.T) {
	touchSources(t)
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list found %d packages; the check would pass vacuously", len(deps))
	}
	for _, dep := range deps {
		for _, m := range testOnly {
			if strings.HasPrefix(dep, m) {
				t.Errorf("%s is a dependency of the module's packages: it is for tests only", dep)
			}
		}
	}
}
