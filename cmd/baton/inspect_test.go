package main

import (
	"encoding/xml"
	"io"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/batonwf/baton/api"
	"github.com/batonwf/baton/draw"
	"github.com/batonwf/baton/job"
)

// twoJobs makes a store holding a succeeded job "ok" and a failed job
// "bad".
func twoJobs(t *testing.T) string {
	t.Helper()
	db := filepath.Join(t.TempDir(), "baton.db")
	baton(t, "run", writeWorkflow(t, "hello.json", helloJSON), "--store", db, "--id", "ok").want(t, exitOK)
	baton(t, "run", writeWorkflow(t, "fail.json", failJSON), "--store", db, "--id", "bad").want(t, exitFailed)
	return db
}

func TestStatus(t *testing.T) {
	db := twoJobs(t)
	r := baton(t, "status", "--store", db).want(t, exitOK)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	want := []*regexp.Regexp{
		regexp.MustCompile(`^ID\s+STATUS\s+VERSION\s+SETTLED$`),
		regexp.MustCompile(`^bad\s+failed\s+\d+\s+3/4$`),
		regexp.MustCompile(`^ok\s+succeeded\s+\d+\s+5/6$`),
	}
	if len(lines) != len(want) {
		t.Fatalf("status:\n%s", r.stdout)
	}
	for i, re := range want {
		if !re.MatchString(lines[i]) {
			t.Errorf("line %d %q does not match %s", i, lines[i], re)
		}
	}

	r = baton(t, "status", "--store", db, "bad").want(t, exitOK)
	contains(t, "status bad", r.stdout, "job bad v", ": failed at seq[1].body (fail): boom", "act fail \"boom\" seq[1].body: failed #1: boom")

	r = baton(t, "status", "--store", db, "nope").want(t, exitError)
	contains(t, "stderr", r.stderr, "baton: job nope not found in "+db)

	empty := filepath.Join(t.TempDir(), "empty.db")
	baton(t, "run", writeWorkflow(t, "x.json", `{"version":1,"root":{"act":"nope"}}`), "--store", empty).want(t, exitError)
	baton(t, "run", writeWorkflow(t, "x.json", `{"version":1,"root":{"act":"log","payload":1}}`), "--store", empty, "--id", "x").want(t, exitOK)
}

func TestHistory(t *testing.T) {
	db := twoJobs(t)
	r := baton(t, "history", "--store", db, "bad").want(t, exitOK)
	contains(t, "history", r.stdout,
		"job bad: 4 versions, now failed\n",
		"v1  created: running, 0/4 actions settled, 1 dispatched\n",
		"v4  failed, 3/4 actions settled (seq[1].body (fail): boom)\n")
	// Each attempt names the worker that ran it: 'baton run' is one,
	// named by the one rule (runner.DefaultName: HOST-PID-RANDOM).
	on := `(\S+-\d+-[0-9a-f]{4})`
	for _, re := range []string{
		`v2  running, 1/4 actions settled\n      seq\[0\]#1 log on ` + on + `: ok\n`,
		`      seq\[1\]\.body#1 fail on ` + on + `: failed: boom\n`,
		`\(seq\[1\]\.body \(fail\): boom\)\n      seq\[1\]\.finally#1 log on ` + on + `: ok\n`,
	} {
		if !regexp.MustCompile(re).MatchString(r.stdout) {
			t.Errorf("history does not match %s:\n%s", re, r.stdout)
		}
	}

	r = baton(t, "history", "--store", db, "nope").want(t, exitError)
	contains(t, "stderr", r.stderr, "baton: job nope not found in "+db)
}

func TestHistoryClipsOutput(t *testing.T) {
	if got := outcome(api.Result{OK: true, Output: strings.Repeat("x", 100)}); got != "ok -> "+strings.Repeat("x", 60)+"..." {
		t.Errorf("outcome = %q", got)
	}
	if got := outcome(api.Result{Error: "a\nb"}); got != `failed: "a\nb"` {
		t.Errorf("outcome = %q", got)
	}
}

func TestInspect(t *testing.T) {
	db := twoJobs(t)
	status := baton(t, "status", "--store", db, "ok").want(t, exitOK)
	text := baton(t, "inspect", "--store", db, "ok").want(t, exitOK)
	// The tree as status prints it, then the worker of each attempt, from
	// the history: 'baton run' ran them all.
	ran, ok := strings.CutPrefix(text.stdout, status.stdout)
	if !ok {
		t.Errorf("inspect text:\n%s\nstatus:\n%s", text.stdout, status.stdout)
	}
	if !regexp.MustCompile(`^ran on:\n(  par\[[0-9]\]\S*#1 on \S+-\d+-[0-9a-f]{4}\n){5}$`).MatchString(ran) {
		t.Errorf("inspect text after the tree, want a line per attempt naming its worker:\n%s", ran)
	}
	if v2 := baton(t, "inspect", "--store", db, "--version", "2", "ok").want(t, exitOK).stdout; strings.Count(v2, " on ") != 1 {
		t.Errorf("inspect --version 2 names the workers of %d attempts, want 1 (those applied by v2):\n%s", strings.Count(v2, " on "), v2)
	}

	r := baton(t, "inspect", "--store", db, "--format", "json", "ok").want(t, exitOK)
	j, err := job.Decode([]byte(strings.TrimSpace(r.stdout)))
	if err != nil {
		t.Fatalf("inspect json does not decode: %v\n%s", err, r.stdout)
	}
	if j.ID() != "ok" || j.Status() != job.StatusSucceeded || job.Describe(j) != status.stdout {
		t.Errorf("inspect json decodes to:\n%s", job.Describe(j))
	}

	// ok has 9 nodes: par, log, seq, log, log, try, log, log, log.
	r = baton(t, "inspect", "--store", db, "--format", "dot", "ok").want(t, exitOK)
	if !strings.HasPrefix(r.stdout, `digraph "job ok" {`) || !strings.HasSuffix(r.stdout, "}\n") {
		t.Errorf("dot:\n%s", r.stdout)
	}
	nodes := regexp.MustCompile(`(?m)^  n\d+ \[label=`).FindAllString(r.stdout, -1)
	edges := regexp.MustCompile(`(?m)^  n\d+ -> n\d+`).FindAllString(r.stdout, -1)
	if len(nodes) != 9 || len(edges) != 8 {
		t.Errorf("dot has %d nodes and %d edges, want 9 and 8:\n%s", len(nodes), len(edges), r.stdout)
	}
	contains(t, "dot", r.stdout,
		`n0 [label="par\nsucceeded", fillcolor="#b7e4a7"`,
		`n7 [label="log\npar[2].rescue\nidle", fillcolor="#eeeeee"`,
		`n0 -> n1;`, `n2 -> n3;`, `n5 -> n6 [label="body"];`, `n5 -> n7 [label="rescue"];`, `n5 -> n8 [label="finally"];`)

	r = baton(t, "inspect", "--store", db, "--format", "dot", "bad").want(t, exitOK)
	contains(t, "dot", r.stdout, `label="fail\nseq[1].body\nfailed\nboom", fillcolor="#f4a6a6"`)

	r = baton(t, "inspect", "--store", db, "--format", "mermaid", "ok").want(t, exitOK)
	if !strings.HasPrefix(r.stdout, "flowchart TD\n") {
		t.Errorf("mermaid:\n%s", r.stdout)
	}
	nodes = regexp.MustCompile(`(?m)^  n\d+\["`).FindAllString(r.stdout, -1)
	edges = regexp.MustCompile(`(?m)^  n\d+ -->`).FindAllString(r.stdout, -1)
	if len(nodes) != 9 || len(edges) != 8 {
		t.Errorf("mermaid has %d nodes and %d edges, want 9 and 8:\n%s", len(nodes), len(edges), r.stdout)
	}
	contains(t, "mermaid", r.stdout, `  n0["par<br/>succeeded"]:::succeeded`, "  n5 -->|rescue| n7\n",
		"  classDef idle fill:#eeeeee", "  classDef succeeded fill:#b7e4a7")

	// --version shows the past: at version 1 nothing has settled.
	r = baton(t, "inspect", "--store", db, "--version", "1", "bad").want(t, exitOK)
	contains(t, "inspect v1", r.stdout, "job bad v1: running, 1 outstanding, 0/4 actions settled\n", "seq[0]: running #1\n")
	r = baton(t, "inspect", "--store", db, "--version", "1", "--format", "mermaid", "bad").want(t, exitOK)
	contains(t, "mermaid v1", r.stdout, `n0["seq<br/>running"]:::running`)
	if strings.Contains(r.stdout, "failed") {
		t.Errorf("version 1 shows a failure:\n%s", r.stdout)
	}

	r = baton(t, "inspect", "--store", db, "--version", "99", "bad").want(t, exitError)
	contains(t, "stderr", r.stderr, "baton: job bad in "+db+" has versions 1 to 4, not 99\n")
	r = baton(t, "inspect", "--store", db, "--version", "2", "nope").want(t, exitError)
	contains(t, "stderr", r.stderr, "baton: job nope not found in "+db)
}

// TestInspectSVG: --format svg writes the drawing of package draw, the
// same bytes as draw.Layout of the job: every node drawn with its path and
// state, now and at a past version.
// v3JSON uses workflow version 3: a choice (its gold case skipped), a
// sleep, and a race of a wait and a sleep.
const v3JSON = `{"version": 3, "root": {"seq": [{"act": "log", "payload": "x", "name": "tier"},
 {"choice": {"on": "tier", "cases": [{"when": "gold", "do": {"act": "log", "payload": "gold path"}}], "else": {"act": "log", "payload": "other"}}},
 {"sleep": "20ms"}, {"race": [{"wait": "approval"}, {"sleep": "30ms"}]}, {"act": "log", "payload": "done"}]}}`

func TestInspectSVG(t *testing.T) {
	db := twoJobs(t)
	baton(t, "run", writeWorkflow(t, "v3.json", v3JSON), "--store", db, "--id", "v3").want(t, exitOK)
	for _, c := range []struct {
		id      string
		version string
	}{{"ok", ""}, {"bad", ""}, {"bad", "1"}, {"v3", ""}, {"v3", "3"}} {
		args := []string{"inspect", "--store", db, "--format", "json"}
		if c.version != "" {
			args = append(args, "--version", c.version)
		}
		r := baton(t, append(args, c.id)...).want(t, exitOK)
		j, err := job.Decode([]byte(strings.TrimSpace(r.stdout)))
		if err != nil {
			t.Fatalf("inspect json: %v", err)
		}
		args[4] = "svg"
		r = baton(t, append(args, c.id)...).want(t, exitOK)

		g, err := draw.Layout(j, draw.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var want strings.Builder
		if err := g.SVG(&want); err != nil {
			t.Fatal(err)
		}
		if r.stdout != want.String() {
			t.Errorf("inspect %s v%s --format svg is not draw's drawing:\n%s", c.id, c.version, r.stdout)
		}
		// Every node's path and state, as the job has them.
		states := map[string]string{}
		d := xml.NewDecoder(strings.NewReader(r.stdout))
		for {
			tok, err := d.Token()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("inspect %s --format svg does not parse: %v", c.id, err)
			}
			if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "g" {
				var path, status string
				var has bool
				for _, a := range se.Attr {
					switch a.Name.Local {
					case "data-status":
						status = a.Value
					case "data-path":
						path, has = a.Value, true
					}
				}
				if has && status != "" {
					states[path] = status
				}
			}
		}
		n := 0
		j.Walk(func(ni job.NodeInfo) bool {
			n++
			if states[ni.Path] != ni.Status.String() {
				t.Errorf("inspect %s v%s: node %q drawn %q, is %s", c.id, c.version, ni.Path, states[ni.Path], ni.Status)
			}
			return true
		})
		if len(states) != n {
			t.Errorf("inspect %s: %d nodes drawn, the job has %d", c.id, len(states), n)
		}
	}
	r := baton(t, "inspect", "--store", db, "--format", "png", "ok").want(t, exitError)
	contains(t, "stderr", r.stderr, "text, json, dot, mermaid or svg")
}
