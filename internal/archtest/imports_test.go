package archtest

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/batonwf/baton"

// pure lists the standard-library packages the pure core (ast, job) may
// import: values only, no randomness, I/O, goroutines or reflection
// machinery. time is there for its values (Duration, Time); reading the
// clock (time.Now) is what the pure core never does, which a check before
// every stop greps for.
var pure = set("bytes", "cmp", "encoding/binary", "encoding/json", "errors", "fmt", "hash/crc32", "hash/fnv", "math",
	"slices", "sort", "strconv", "strings", "time", "unicode", "unicode/utf8")

// layer is where a package sits; a package may import its own layer's
// foundations (the layers listed in may) and nothing of the module above.
type layer struct {
	name string
	may  []string // module packages (or prefixes ending in "/") it may import
	std  map[string]bool
	ext  []string // third-party module prefixes it may import
}

// rules, from the bottom up: ast <- job <- store <- runner <- adapters <-
// cmd, examples, bench; api (the HTTP API's JSON) beside runner, server
// and client among the adapters; placement (pure, importing nothing of
// baton's) beside ast, for the runners. Adapters (store/bolt, runner/inmem, ...) never
// import each other; test kits (storetest, runnertest) are imported by
// tests only.
func rules(pkg string) (layer, bool) {
	rel := strings.TrimPrefix(strings.TrimPrefix(pkg, module), "/")
	switch {
	case rel == "ast":
		return layer{name: rel, std: pure}, true
	case rel == "job":
		return layer{name: rel, may: []string{"ast"}, std: pure}, true
	case rel == "placement": // where work runs: pure like job, and it imports nothing of baton's (the runners use it)
		return layer{name: rel, std: pure}, true
	case rel == "draw": // the drawing of a job: pure like job, writing only to the io.Writer it is given
		return layer{name: rel, may: []string{"ast", "job"}, std: set(append(keys(pure), "io")...)}, true
	case rel == "job/jobtest":
		return layer{name: rel, may: []string{"ast", "job"}}, true
	case rel == "store":
		return layer{name: rel, may: []string{"ast", "job"}}, true
	case rel == "store/storetest":
		return layer{name: rel, may: []string{"ast", "job", "store"}, ext: []string{"github.com/google/go-cmp/"}}, true
	case rel == "store/bolt":
		return layer{name: rel, may: []string{"job", "store"}, ext: []string{"go.etcd.io/bbolt", "golang.org/x/sys/"}}, true
	case rel == "runner":
		return layer{name: rel, may: []string{"ast", "job", "store"}}, true
	case rel == "runner/runnertest":
		return layer{name: rel, may: []string{"ast", "job", "store", "runner"}}, true
	case rel == "runner/inmem":
		return layer{name: rel, may: []string{"ast", "job", "store", "runner"}}, true
	case rel == "runner/zk":
		return layer{name: rel, may: []string{"ast", "job", "store", "runner", "placement"}, ext: []string{"github.com/go-zookeeper/zk"}}, true
	case rel == "runner/kafka":
		return layer{name: rel, may: []string{"ast", "job", "store", "runner", "placement"}, ext: []string{"github.com/segmentio/kafka-go"}}, true
	case rel == "api":
		return layer{name: rel, may: []string{"ast", "job", "store"}}, true
	case rel == "server": // the HTTP adapter: never a runner or a store adapter; those are given to it
		return layer{name: rel, may: []string{"ast", "job", "store", "runner", "api", "internal/render", "server/live", "server/web"}}, true
	case rel == "server/web": // the pages' templates, assets and views: data in, HTML out; no store read, no runner
		return layer{name: rel, may: []string{"ast", "job", "store", "api", "draw"}}, true
	case rel == "client":
		return layer{name: rel, may: []string{"ast", "job", "api", "server/live"}}, true // live: its SSE reader
	case rel == "server/servertest":
		return layer{name: rel, may: []string{"ast", "job", "store", "runner", "api", "server", "server/live", "client"}}, true
	case rel == "metrics": // the only package that imports Prometheus
		return layer{name: rel, may: []string{"ast", "job", "store", "runner"}, ext: []string{"github.com/prometheus/client_golang/"}}, true
	case rel == "server/live": // live updates over HTTP, mounted by the server
		return layer{name: rel, may: []string{"job", "store"}}, true
	case rel == "internal/zktest": // test support: starts ZooKeeper servers for any package's tests, so it imports none of the module
		return layer{name: rel, ext: []string{"github.com/go-zookeeper/zk"}}, true
	case rel == "internal/browsertest": // test support: drives chromium for any package's tests (and bench), so it imports none of the module
		return layer{name: rel, ext: []string{"github.com/chromedp/"}}, true
	case strings.HasPrefix(rel, "cmd/"), strings.HasPrefix(rel, "examples"), rel == "bench", strings.HasPrefix(rel, "internal/"):
		return layer{name: rel, may: []string{""}, ext: []string{""}}, true // the top: anything
	}
	return layer{}, false
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func set(xs ...string) map[string]bool {
	m := map[string]bool{}
	for _, x := range xs {
		m[x] = true
	}
	return m
}

// TestImports checks every package's direct, non-test imports against the
// rules. A new package must be given its place in rules.
func TestImports(t *testing.T) {
	touchSources(t)
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) < 10 {
		t.Fatalf("go list found %d packages; the check would pass vacuously", len(lines))
	}
	for _, line := range lines {
		f := strings.Fields(line)
		pkg, imports := f[0], f[1:]
		l, ok := rules(pkg)
		if !ok {
			t.Errorf("%s has no place in the import rules: add it to rules", pkg)
			continue
		}
		for _, imp := range imports {
			if why := l.check(imp); why != "" {
				t.Errorf("%s imports %s: %s", l.name, imp, why)
			}
		}
	}
}

// check returns why l may not import imp, or "".
func (l layer) check(imp string) string {
	if inModule := imp == module || strings.HasPrefix(imp, module+"/"); inModule {
		rel := strings.TrimPrefix(strings.TrimPrefix(imp, module), "/")
		for _, m := range l.may {
			if m == "" || rel == m || (strings.HasSuffix(m, "/") && strings.HasPrefix(rel, m)) {
				return ""
			}
		}
		return "a package of a higher or sibling layer (allowed: " + strings.Join(l.may, ", ") + ")"
	}
	if !strings.Contains(strings.Split(imp, "/")[0], ".") { // the standard library
		if l.std == nil || l.std[imp] {
			return ""
		}
		return "the pure core imports only value packages of the standard library"
	}
	for _, e := range l.ext {
		if e == "" || imp == strings.TrimSuffix(e, "/") || strings.HasPrefix(imp, e) {
			return ""
		}
	}
	return "a third-party package this layer may not use"
}

// touchSources stats every Go file of the module, so that go test's cache
// knows this test's result depends on them (it reads them through go list,
// in another process, which the cache cannot see).
func touchSources(t *testing.T) {
	root, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}").Output()
	if err != nil {
		t.Fatalf("go list -m: %v", err)
	}
	err = filepath.WalkDir(strings.TrimSpace(string(root)), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if strings.HasSuffix(p, ".go") {
			_, err = os.Stat(p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestNoPrometheusInTheCore: ast, job, store and runner never import
// Prometheus, directly or through any package they import; only package
// metrics (and the programs that wire it) do.
func TestNoPrometheusInTheCore(t *testing.T) {
	touchSources(t)
	core := []string{module + "/ast", module + "/job", module + "/store", module + "/runner"}
	out, err := exec.Command("go", append([]string{"list", "-deps", "-f", "{{.ImportPath}}"}, core...)...).Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 20 {
		t.Fatalf("go list found %d dependencies of the core; the check would pass vacuously", len(deps))
	}
	for _, d := range deps {
		if strings.HasPrefix(d, "github.com/prometheus/") {
			t.Errorf("the core (ast, job, store, runner) depends on %s", d)
		}
	}
}

// TestPureCoreReadsNoClock: the pure packages import time for its values
// only; none of their non-test files reads the clock, sleeps or arms a
// timer (the import rules cannot tell those from Duration).
func TestPureCoreReadsNoClock(t *testing.T) {
	touchSources(t)
	root, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}").Output()
	if err != nil {
		t.Fatalf("go list -m: %v", err)
	}
	clock := []string{"time.Now(", "time.Since(", "time.Until(", "time.Sleep(", "time.After(", "time.AfterFunc(", "time.Tick(", "time.NewTimer(", "time.NewTicker("}
	checked := 0
	for _, pkg := range []string{"ast", "job", "draw", "placement"} {
		files, err := filepath.Glob(filepath.Join(strings.TrimSpace(string(root)), pkg, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			checked++
			for _, c := range clock {
				if strings.Contains(string(src), c) {
					t.Errorf("%s/%s calls %s: the pure core is given time, it never reads it", pkg, filepath.Base(f), strings.TrimSuffix(c, "("))
				}
			}
		}
	}
	if checked < 20 {
		t.Fatalf("checked %d files; the check would pass vacuously", checked)
	}
}
