package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/store/bolt"
)

// Workflows whose texts exercise what the API must carry for the CLI to
// print the same as against a store: failures with kinds, in parallel
// branches, clipped messages with control characters, retries and
// deadlines with their timers, names.
const (
	parFailJSON = `{"version":1,"root":{"par":[
		{"act":"fail","payload":"one"},
		{"seq":[{"act":"sleep","payload":"1ms"},{"act":"fail","payload":"two"}]},
		{"act":"sleep","payload":"1ms","name":"nap"}
	]}}`
	retryJSON = `{"version":1,"root":{"seq":[
		{"act":"fail","payload":"again","retry":{"attempts":3,"initial":"1ms","max":"2ms"}},
		{"act":"log","payload":"never"}
	]}}`
	deadlineJSON = `{"version":1,"root":{"seq":[
		{"try":{"act":"sleep","payload":"10s","deadline":"50ms"},"finally":{"act":"sleep","payload":"1ms"}},
		{"act":"sleep","payload":"10s"}]}}`
)

// longFailJSON fails with a message of 300 bytes holding a line break, so
// that every clip and quote shows.
var longFailJSON = fmt.Sprintf(`{"version":1,"root":{"try":{"act":"fail","payload":%q},"finally":{"act":"sleep","payload":"1ms"}}}`,
	"first line\n"+strings.Repeat("é", 150))

// goldenStore makes a store file with settled jobs of every kind above.
func goldenStore(t *testing.T) string {
	t.Helper()
	db := filepath.Join(t.TempDir(), "a.db")
	for _, j := range []struct {
		id, wf string
		code   int
	}{
		{"ok", helloJSON, exitOK}, {"bad", failJSON, exitFailed}, {"par", parFailJSON, exitFailed},
		{"retry", retryJSON, exitFailed}, {"dl", deadlineJSON, exitFailed}, {"long", longFailJSON, exitFailed},
	} {
		baton(t, "run", writeWorkflow(t, j.id+".json", j.wf), "--store", db, "--id", j.id, "--quiet").want(t, j.code)
	}
	return db
}

// copyFile copies the store file src to a new file.
func copyFile(t *testing.T, src string) string {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "b.db")
	if err := os.WriteFile(dst, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return dst
}

// same runs baton with args against the store file (--store db) and
// through the server (--server url), and fails unless both exit with
// code and print the same, once the store's and the server's names are
// both WHERE: the one normalisation, since they name different places.
func same(t *testing.T, db, url string, code int, args ...string) result {
	t.Helper()
	return compare(t, db, url, code, false, args...)
}

// sameButWrites is same for a job changed apart on the file and through
// the server (a cancel made on each): the times of the stores' writes and
// of the cancels differ, and nothing else may.
func sameButWrites(t *testing.T, db, url string, code int, args ...string) result {
	t.Helper()
	return compare(t, db, url, code, true, args...)
}

// writeTimes are the JSON fields that tell when a store wrote a job;
// cancelTime the one that tells when a cancel was made (a cancel made
// apart on each is stamped apart).
var (
	writeTimes = regexp.MustCompile(`"(created|updated)":"[^"]*"`)
	cancelTime = regexp.MustCompile(`("cancel":\{"reason":"(?:[^"\\]|\\.)*","time":)"[^"]*"`)
)

func compare(t *testing.T, db, url string, code int, writes bool, args ...string) result {
	t.Helper()
	direct := baton(t, append(args, "--store", db)...)
	served := baton(t, append(args, "--server", url)...)
	norm := func(s, where, hint string) string {
		s = strings.ReplaceAll(strings.ReplaceAll(s, hint, "HINT"), where, "WHERE")
		if writes {
			s = writeTimes.ReplaceAllString(s, `"$1":"WRITTEN"`)
			s = cancelTime.ReplaceAllString(s, `$1"CANCELLED"`)
		}
		return s
	}
	if direct.code != code || served.code != code {
		t.Errorf("baton %q: exit status %d directly, %d through the server; want %d\ndirect stderr: %s\nserved stderr: %s",
			args, direct.code, served.code, code, direct.stderr, served.stderr)
	}
	for _, s := range []struct{ what, a, b string }{{"stdout", direct.stdout, served.stdout}, {"stderr", direct.stderr, served.stderr}} {
		a, b := norm(s.a, db, "--store "+db), norm(s.b, url, "--server "+url)
		if a != b {
			t.Errorf("baton %q: %s differs\ndirectly:\n%s\nthrough the server:\n%s", args, s.what, a, b)
		}
	}
	return direct
}

// TestServerGolden: status, history and inspect print the same against a
// store file as through 'baton serve' on a copy of it, text and JSON.
func TestServerGolden(t *testing.T) {
	a := goldenStore(t)

	// The text is job.Describe's, rendered from the API's values. The file
	// is copied once it holds every job.
	st, err := bolt.OpenReadOnly(a, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"ok", "bad", "par", "retry", "dl", "long"} {
		j, err := st.Load(t.Context(), job.ID(id))
		if err != nil {
			t.Fatal(err)
		}
		if got := baton(t, "status", "--store", a, id).stdout; got != job.Describe(j) {
			t.Errorf("status %s:\n%s\njob.Describe:\n%s", id, got, job.Describe(j))
		}
	}
	st.Close()
	// An unfinished job, its action running in the server (which resumed
	// it) and waiting for 'baton resume' in the file.
	storeJobs(t, a, map[job.ID]ast.Node{"c": ast.Act("sleep", "1h")})
	b := copyFile(t, a)
	p := startInProcess(t, "baton serve: http", "serve", "--store", b, "--listen", "127.0.0.1:0")
	url := serveURL(t, p)
	eventually(t, 20*time.Second, "c running in the server", func() (bool, string) {
		r := baton(t, "status", "--server", url, "c")
		return strings.Contains(r.stdout, `act sleep "1h": running #1`), r.stdout + r.stderr
	})
	r := same(t, a, url, exitOK, "status")
	contains(t, "status", r.stdout, "ID", "long", "retry")
	same(t, a, url, exitOK, "status", "--json")
	for _, id := range []string{"ok", "bad", "par", "retry", "dl", "long", "c"} {
		r := same(t, a, url, exitOK, "status", id)
		contains(t, "status "+id, r.stdout, "job "+id+" v")
		same(t, a, url, exitOK, "status", "--json", id)
		same(t, a, url, exitOK, "history", id)
		same(t, a, url, exitOK, "history", "--json", id)
		for _, f := range []string{"text", "dot", "mermaid", "svg"} {
			same(t, a, url, exitOK, "inspect", "--format", f, id)
			if id != "c" { // one version
				same(t, a, url, exitOK, "inspect", "--format", f, "--version", "2", id)
			}
		}
		same(t, a, url, exitOK, "inspect", "--json", id)
		same(t, a, url, exitOK, "inspect", "--json", "--version", "1", id)
	}
	// What the golden texts hold, so that equal texts are not equally empty.
	r = same(t, a, url, exitOK, "status", "par")
	contains(t, "status par", r.stdout, "par: failed (par[0])", "par[2] @nap: succeeded", "failed at par[0] (fail): one")
	r = same(t, a, url, exitOK, "status", "long")
	contains(t, "status long", r.stdout, `failed #1: "first line\né`, `é"...`+"\n")
	r = same(t, a, url, exitOK, "history", "retry")
	contains(t, "history retry", r.stdout, "waits: seq[0]@retry#2 due ", "timer fired at ")
	r = same(t, a, url, exitOK, "history", "long")
	contains(t, "history long", r.stdout, `(body (fail): "first line\n`, `é"...)`)
	r = same(t, a, url, exitOK, "status", "dl")
	contains(t, "status dl", r.stdout, "deadline of 50ms exceeded")

	// Errors: the same messages and statuses.
	same(t, a, url, exitError, "status", "nope")
	same(t, a, url, exitError, "history", "nope")
	same(t, a, url, exitError, "inspect", "--version", "99", "ok")
	same(t, a, url, exitError, "inspect", "--format", "dot", "--version", "99", "ok")
	same(t, a, url, exitError, "cancel", "ok")
	same(t, a, url, exitError, "cancel", "nope")
	same(t, a, url, exitError, "signal", "ok", "approval")
	same(t, a, url, exitError, "signal", "nope", "approval")
	same(t, a, url, exitError, "cancel", "--node", "gate", "ok")
	same(t, a, url, exitError, "cancel", "--node", "gate", "nope")
	same(t, a, url, exitError, "cancel", "--node", "gate", "c")

	// Changes: a cancel of the unfinished job, and a delete of a settled
	// one, the same lines; the same job after the cancel.
	same(t, a, url, exitOK, "cancel", "--reason", "not\nneeded", "c")
	same(t, a, url, exitOK, "cancel", "c")
	same(t, a, url, exitOK, "status", "c")
	same(t, a, url, exitOK, "history", "c")
	sameButWrites(t, a, url, exitOK, "status", "--json", "c")
	same(t, a, url, exitOK, "delete", "ok")
	same(t, a, url, exitError, "delete", "ok")
	same(t, a, url, exitOK, "status")
	if code := p.stop(t); code != exitOK {
		t.Errorf("serve exited %d:\n%s", code, p.errOut.String())
	}
}

// TestServerSubmitWait: 'baton submit --server URL --wait' prints what
// 'baton run' prints (the tree and the summary line; the durations are
// normalised) and exits as it does: 0 succeeded, 1 failed or cancelled,
// 2 bad usage or input.
func TestServerSubmitWait(t *testing.T) {
	p := startInProcess(t, "baton serve: http", "serve", "--store", filepath.Join(t.TempDir(), "b.db"), "--listen", "127.0.0.1:0")
	url := serveURL(t, p)
	db := filepath.Join(t.TempDir(), "a.db")
	took := regexp.MustCompile(`, v(\d+), [0-9.]+(ns|µs|ms|s)\n$`)
	for _, c := range []struct {
		id, wf string
		code   int
	}{
		{"nap", `{"version":1,"root":{"seq":[{"act":"sleep","payload":"1ms"},{"act":"sleep","payload":"2ms"}]}}`, exitOK},
		{"bad", `{"version":1,"root":{"seq":[{"act":"sleep","payload":"1ms"},
			{"try":{"act":"fail","payload":"boom"},"finally":{"act":"sleep","payload":"1ms"}}]}}`, exitFailed},
		{"long", longFailJSON, exitFailed},
	} {
		f := writeWorkflow(t, c.id+".json", c.wf)
		ran := baton(t, "run", f, "--store", db, "--id", c.id).want(t, c.code)
		sub := baton(t, "submit", f, "--server", url, "--id", c.id, "--wait").want(t, c.code)
		want := c.id + "\n" + took.ReplaceAllString(ran.stdout, ", v$1, TOOK\n")
		if got := took.ReplaceAllString(sub.stdout, ", v$1, TOOK\n"); got != want {
			t.Errorf("submit --wait %s printed:\n%s\nbaton run:\n%s", c.id, got, want)
		}
		sub = baton(t, "submit", f, "--server", url, "--id", c.id+"-q", "--wait", "--quiet").want(t, c.code)
		if !strings.HasPrefix(sub.stdout, c.id+"-q\njob "+c.id+"-q ") || strings.Count(sub.stdout, "\n") != 2 {
			t.Errorf("submit --wait --quiet printed:\n%s", sub.stdout)
		}
	}
	// Cancelled while it runs: 1, as 'baton run' exits for a job that did
	// not succeed.
	f := writeWorkflow(t, "slow.json", `{"version":1,"root":{"act":"sleep","payload":"1h"}}`)
	done := make(chan result, 1)
	go func() { done <- baton(t, "submit", f, "--server", url, "--id", "slow", "--wait") }()
	eventually(t, 20*time.Second, "slow running", func() (bool, string) {
		r := baton(t, "status", "--server", url, "slow")
		return strings.Contains(r.stdout, `act sleep "1h": running #1`), r.stdout + r.stderr
	})
	r := baton(t, "cancel", "--server", url, "--reason", "enough", "slow").want(t, exitOK)
	if r.stdout != "job slow cancelled at v2\n" {
		t.Errorf("cancel through the server printed %q", r.stdout)
	}
	r = <-done
	r.want(t, exitFailed)
	contains(t, "submit --wait of a cancelled job", r.stdout, "job slow cancelled (enough): 0/1 actions settled, v2")

	// Usage and input: 2; an ID taken by another workflow: 2.
	baton(t, "submit", f, "--server", url, "--store", db).want(t, exitError)
	baton(t, "submit", writeWorkflow(t, "bad.json", `{"version":1}`), "--server", url).want(t, exitError)
	r = baton(t, "submit", writeWorkflow(t, "nope.json", `{"version":1,"root":{"act":"nope"}}`), "--server", url).want(t, exitError)
	contains(t, "stderr", r.stderr, "nope")
	r = baton(t, "submit", f, "--server", url, "--id", "nap").want(t, exitError)
	contains(t, "stderr", r.stderr, "job nap already exists in "+url)
	// The same ID with the same workflow is a safe retry.
	baton(t, "submit", f, "--server", url, "--id", "slow").want(t, exitOK)

	// --json: the API's summary of the job made.
	r = baton(t, "submit", f, "--server", url, "--id", "j", "--json").want(t, exitOK)
	if !strings.HasPrefix(r.stdout, `{"id":"j","status":"running","version":1,`) {
		t.Errorf("submit --json printed %q", r.stdout)
	}
	if code := p.stop(t); code != exitOK {
		t.Errorf("serve exited %d:\n%s", code, p.errOut.String())
	}
}

// TestServerTokens: the token of --server comes from --token-file (the
// first write token for a command that writes, else the first read one)
// or $BATON_TOKEN, never from a flag value; a token file that group or
// others may read is refused; $BATON_SERVER stands for --server when no
// other store is named.
func TestServerTokens(t *testing.T) {
	const read, write = "read-token-0123456789", "write-token-0123456789"
	dir := t.TempDir()
	serverTokens := filepath.Join(dir, "server")
	if err := os.WriteFile(serverTokens, []byte("read "+read+"\nwrite "+write+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "b.db")
	p := startInProcess(t, "baton serve: http", "serve", "--store", db, "--listen", "127.0.0.1:0", "--token-file", serverTokens)
	url := serveURL(t, p)
	slow := writeWorkflow(t, "slow.json", `{"version":1,"root":{"act":"sleep","payload":"1h"}}`)

	r := baton(t, "status", "--server", url).want(t, exitError)
	contains(t, "stderr without a token", r.stderr, "list jobs in "+url)
	r = baton(t, "status", "--server", url, "--token-file", serverTokens).want(t, exitOK)
	contains(t, "stdout", r.stdout, "no jobs in "+url)

	// A file with a read token only: reads, and refuses to write.
	readOnly := filepath.Join(dir, "read")
	if err := os.WriteFile(readOnly, []byte("# mine\nread "+read+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	baton(t, "status", "--server", url, "--token-file", readOnly).want(t, exitOK)
	r = baton(t, "submit", slow, "--server", url, "--token-file", readOnly).want(t, exitError)
	contains(t, "stderr", r.stderr, "has no write token")
	// Its write token writes.
	baton(t, "submit", slow, "--server", url, "--token-file", serverTokens, "--id", "s").want(t, exitOK)

	// Group-readable: refused before anything is sent.
	open := filepath.Join(dir, "open")
	if err := os.WriteFile(open, []byte("write "+write+"\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	r = baton(t, "cancel", "--server", url, "--token-file", open, "s").want(t, exitError)
	contains(t, "stderr", r.stderr, "group or others may read it")

	// $BATON_TOKEN and $BATON_SERVER: a read token cannot cancel (403).
	t.Setenv(serverEnv, url)
	t.Setenv(tokenEnv, read)
	r = baton(t, "status", "s").want(t, exitOK)
	contains(t, "stdout", r.stdout, "job s v1: running")
	r = baton(t, "cancel", "s").want(t, exitError)
	contains(t, "stderr", r.stderr, "cancel job s in "+url)
	t.Setenv(tokenEnv, write)
	r = baton(t, "cancel", "s", "--reason", "done").want(t, exitOK)
	if r.stdout != "job s cancelled at v2\n" {
		t.Errorf("cancel printed %q", r.stdout)
	}
	// Another store named: $BATON_SERVER does not apply.
	r = baton(t, "status", "--store", filepath.Join(dir, "other.db")).want(t, exitError)
	contains(t, "stderr", r.stderr, "other.db")
	// --token-file without a server; --server with --store.
	t.Setenv(serverEnv, "")
	baton(t, "status", "--token-file", serverTokens, "--store", db).want(t, exitError)
	r = baton(t, "status", "--server", url, "--store", db).want(t, exitError)
	contains(t, "stderr", r.stderr, "--server and --store exclude each other")
	if code := p.stop(t); code != exitOK {
		t.Errorf("serve exited %d:\n%s", code, p.errOut.String())
	}
}

// TestServerTooManyJobs: a submit that a server at its --max-unfinished
// refuses (429 too_many_jobs) exits 3, as for a store that cannot take a
// write now: a script may try again later. Once a job finishes, a submit
// passes.
func TestServerTooManyJobs(t *testing.T) {
	p := startInProcess(t, "baton serve: http", "serve", "--store", filepath.Join(t.TempDir(), "b.db"), "--listen", "127.0.0.1:0", "--max-unfinished", "1")
	url := serveURL(t, p)
	f := writeWorkflow(t, "slow.json", `{"version":1,"root":{"act":"sleep","payload":"1h"}}`)
	baton(t, "submit", f, "--server", url, "--id", "first").want(t, exitOK)
	r := baton(t, "submit", f, "--server", url, "--id", "second").want(t, exitStore)
	contains(t, "stderr", r.stderr, "1 job is unfinished")
	baton(t, "cancel", "--server", url, "--reason", "room", "first").want(t, exitOK)
	eventually(t, 20*time.Second, "a submit taken once the first job ended", func() (bool, string) {
		r := baton(t, "submit", f, "--server", url, "--id", "second")
		return r.code == exitOK, r.stdout + r.stderr
	})
	if code := p.stop(t); code != exitOK {
		t.Errorf("serve exited %d:\n%s", code, p.errOut.String())
	}
}
