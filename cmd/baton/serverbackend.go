package main

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"unicode"

	"github.com/batonwf/baton/api"
	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/client"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	"github.com/batonwf/baton/server"
	"github.com/batonwf/baton/store"
)

// The environment of --server.
const (
	serverEnv = "BATON_SERVER"
	tokenEnv  = "BATON_TOKEN"
)

// serverFlags are --server and --token-file, of the commands that can
// reach their jobs through 'baton serve': status, history, inspect,
// cancel, delete and submit.
type serverFlags struct {
	fs        *flag.FlagSet
	getenv    func(string) string
	url       *string
	tokenFile *string
}

// addServerFlags adds --server and --token-file to fs.
func (c *cli) addServerFlags(fs *flag.FlagSet) *serverFlags {
	return &serverFlags{
		fs:        fs,
		getenv:    c.getenv,
		url:       fs.String("server", "", "reach the jobs through 'baton serve' at `URL` (like http://127.0.0.1:8080; default $"+serverEnv+" when no --store, --zk or --kafka is given), with the token in $"+tokenEnv+" or --token-file"),
		tokenFile: fs.String("token-file", "", "with --server, the token from `FILE`, in the format of 'baton serve --token-file' (not readable by group or others): its first write token for a command that writes, else its first read token"),
	}
}

// on reports whether the command goes through a server: --server, or
// $BATON_SERVER when the flags name no other store.
func (s *serverFlags) on() bool {
	switch {
	case s == nil:
		return false
	case given(s.fs, "server"):
		return true
	}
	for _, name := range []string{"store", "zk", "kafka"} {
		if given(s.fs, name) {
			return false
		}
	}
	return s.getenv(serverEnv) != ""
}

// check says what is wrong with the flags, for a usage error: --server
// with another store, --token-file without a server.
func (s *serverFlags) check() error {
	if given(s.fs, "server") {
		for _, name := range []string{"store", "zk", "kafka"} {
			if given(s.fs, name) {
				return fmt.Errorf("--server and --%s exclude each other: the jobs are reached either through a server or directly", name)
			}
		}
	}
	if !s.on() {
		if given(s.fs, "token-file") {
			return fmt.Errorf("--token-file needs --server (or $%s)", serverEnv)
		}
		return nil
	}
	u, err := url.Parse(s.base())
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		from := "--server"
		if *s.url == "" {
			from = "$" + serverEnv
		}
		return fmt.Errorf("%s %q: want a URL like http://127.0.0.1:8080", from, s.base())
	}
	return nil
}

// base is the server's URL.
func (s *serverFlags) base() string {
	if *s.url != "" {
		return *s.url
	}
	return s.getenv(serverEnv)
}

// token returns the token to send: --token-file's first write token when
// write (else its first read token), else $BATON_TOKEN without the white
// space around it (a line read with its newline, a file's CRLF), else
// none. A $BATON_TOKEN with a control character inside cannot be sent
// in a header: an error, which does not show the token.
func (s *serverFlags) token(write bool) (string, error) {
	if *s.tokenFile == "" {
		tok := strings.TrimSpace(s.getenv(tokenEnv))
		if i := strings.IndexFunc(tok, unicode.IsControl); i >= 0 {
			return "", fmt.Errorf("$%s has a control character at byte %d: want the token alone, as in a line of 'baton serve --token-file'", tokenEnv, i)
		}
		return tok, nil
	}
	lines, err := server.ReadTokenFile(*s.tokenFile)
	if err != nil {
		return "", err
	}
	want := server.ScopeRead
	if write {
		want = server.ScopeWrite
	}
	for _, l := range lines {
		if l.Scope == want {
			return l.Token, nil
		}
	}
	if write {
		return "", fmt.Errorf("token file %s has no write token: this command writes", *s.tokenFile)
	}
	return lines[0].Token, nil // a write token reads too
}

// serverBackend is 'baton serve' at a URL: the server holds the store and
// runs the jobs; the commands reach them through its API (package
// client), reading them as the API's values (viewer).
type serverBackend struct {
	base string
	http *http.Client
	c    *client.Client
}

var (
	_ backend = (*serverBackend)(nil)
	_ viewer  = (*serverBackend)(nil)
)

// openServerBackend returns the server the flags name, with the token a
// command that writes (or only reads) needs. It connects to nothing yet.
func openServerBackend(s *serverFlags, write bool) (*serverBackend, error) {
	token, err := s.token(write)
	if err != nil {
		return nil, withCode(exitError, err)
	}
	// No timeout: a history long poll waits up to server.MaxWait; the
	// command's context bounds every request.
	hc := &http.Client{Transport: certHint{http.DefaultTransport.(*http.Transport).Clone()}}
	return &serverBackend{base: s.base(), http: hc, c: client.New(s.base(), client.Options{HTTPClient: hc, Token: token})}, nil
}

// certHint is a transport whose errors about a server's certificate
// that no known authority signed say how to trust a private one.
type certHint struct{ t *http.Transport }

func (h certHint) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := h.t.RoundTrip(req)
	var unknown x509.UnknownAuthorityError
	if errors.As(err, &unknown) {
		err = fmt.Errorf("%w (for a certificate that a private CA signed, set SSL_CERT_FILE to the CA's PEM file)", err)
	}
	return resp, err
}

func (h certHint) CloseIdleConnections() { h.t.CloseIdleConnections() }

func (b *serverBackend) where() string { return b.base }
func (b *serverBackend) hint() string  { return "--server " + b.base }

// jobs is nil: the store is the server's. The commands that take
// --server read through view(b), which is b.
func (b *serverBackend) jobs() store.Store { return nil }

func (b *serverBackend) Close() error {
	b.http.CloseIdleConnections()
	return nil
}

// errNotThroughServer is the answer of what a server does not do for a
// client: run actions, resume.
var errNotThroughServer = errors.New("not through --server: 'baton serve' runs its jobs itself")

func (b *serverBackend) worker(workerOptions) (workerRunner, error) { return nil, errNotThroughServer }

func (b *serverBackend) resume(context.Context, *cli, []job.ID, resumeOptions) error {
	return errNotThroughServer
}

// writeStatus prints nothing: the server's workers are its own business
// (GET /api/v1/workers).
func (b *serverBackend) writeStatus(context.Context, io.Writer) error { return nil }

// fail turns an error of the client about job id into the command's:
// job_not_found wraps store.ErrNotFound (and names the job and the
// server, as jobError does), job_exists store.ErrExists; a server that
// cannot be reached, or whose store cannot, carries exitStore.
func (b *serverBackend) fail(err error, id job.ID) error {
	var ce *client.Error
	switch {
	case err == nil:
		return nil
	case !errors.As(err, &ce):
		return withCode(exitStore, fmt.Errorf("job %s in %s: %v", id, b.base, err))
	case ce.Code == "job_not_found":
		return jobError(b, store.ErrNotFound, id)
	case ce.Code == "job_exists":
		return fmt.Errorf("%w: %s", store.ErrExists, ce.Detail)
	}
	return withCode(exitCodeOf(ce), fmt.Errorf("job %s in %s: %s", id, b.base, problemText(ce)))
}

// refusal is fail for a canceller's or a deleter's error, which the
// command prints after naming the job and the server itself ("cancel job
// J in URL: "): the server's reason alone.
func (b *serverBackend) refusal(err error, id job.ID) error {
	var ce *client.Error
	switch {
	case err == nil:
		return nil
	case !errors.As(err, &ce):
		return withCode(exitStore, err)
	case ce.Code != "job_not_found" && ce.Code != "job_exists":
		return withCode(exitCodeOf(ce), errors.New(problemText(ce)))
	}
	return b.fail(err, id)
}

func (b *serverBackend) viewJob(ctx context.Context, id job.ID, version uint64) (api.Job, error) {
	v, err := b.c.Job(ctx, id, client.JobQuery{Version: version})
	if client.Code(err) == "version_not_found" {
		// The versions, to say which there are as against a store.
		if h, herr := b.c.History(ctx, id, 0, 1, 0); herr == nil && len(h.Steps) > 0 {
			return api.Job{}, versionError(b, id, h.Steps[0].Version, h.Latest, version)
		}
	}
	return v, b.fail(err, id)
}

func (b *serverBackend) viewGraph(ctx context.Context, id job.ID, version uint64, format string) (string, error) {
	out, err := b.c.GraphAt(ctx, id, version, format)
	if client.Code(err) == "version_not_found" {
		if _, verr := b.viewJob(ctx, id, version); verr != nil {
			return "", verr
		}
	}
	return out, b.fail(err, id)
}

func (b *serverBackend) viewSummary(ctx context.Context, id job.ID) (api.Summary, error) {
	v, err := b.c.Job(ctx, id, client.JobQuery{NoNodes: true})
	return v.Summary, b.fail(err, id)
}

// viewHistory reads the history a page at a time.
func (b *serverBackend) viewHistory(ctx context.Context, id job.ID) (api.History, error) {
	var out api.History
	var from uint64
	for {
		h, err := b.c.History(ctx, id, from, maxHistoryPage, 0)
		if err != nil {
			return api.History{}, b.fail(err, id)
		}
		steps := append(out.Steps, h.Steps...)
		out, out.Steps = h, steps
		if len(h.Steps) < maxHistoryPage {
			return out, nil
		}
		from = h.Steps[len(h.Steps)-1].Version
	}
}

// maxHistoryPage is the most steps the server gives at once.
const maxHistoryPage = 1000

func (b *serverBackend) viewList(ctx context.Context, prefix string, after job.ID, limit int) ([]api.Summary, error) {
	l, err := b.c.List(ctx, client.ListQuery{Prefix: prefix, After: after, Limit: limit})
	var ce *client.Error
	switch {
	case err == nil:
		return l.Jobs, nil
	case errors.As(err, &ce):
		return nil, withCode(exitCodeOf(ce), fmt.Errorf("list jobs in %s: %s", b.base, problemText(ce)))
	}
	return nil, withCode(exitStore, fmt.Errorf("list jobs in %s: %v", b.base, err))
}

func (b *serverBackend) canceller(context.Context) (canceller, error) { return b, nil }
func (b *serverBackend) deleter(context.Context) (deleter, error)     { return b, nil }
func (b *serverBackend) close()                                       {}

// cancel asks the server to cancel; the server runs the finally blocks.
func (b *serverBackend) cancel(ctx context.Context, id job.ID, reason string) (string, error) {
	s, err := b.c.Cancel(ctx, id, reason)
	if err != nil {
		return "", b.refusal(err, id)
	}
	return cancelLine(s), nil
}

// signal asks the server to send the signal.
func (b *serverBackend) signal(ctx context.Context, id job.ID, name, sigID string, payload json.RawMessage) (string, error) {
	out, err := b.c.Signal(ctx, id, name, sigID, payload)
	if client.Code(err) == "job_finished" {
		return "", fmt.Errorf("job %s: %w", id, runner.ErrFinished)
	}
	if err != nil {
		return "", b.fail(err, id)
	}
	what := fmt.Sprintf("signal %s (id %s)", out.Name, out.ID)
	switch {
	case out.Taken != "":
		return fmt.Sprintf("%s taken by the wait at %s: job %s at v%d", what, out.Taken, id, out.Summary.Version), nil
	case out.Kept:
		return fmt.Sprintf("%s kept by job %s for a wait to come (v%d)", what, id, out.Summary.Version), nil
	}
	return fmt.Sprintf("%s sent to job %s", what, id), nil
}

// cancelNode asks the server to cancel the node.
func (b *serverBackend) cancelNode(ctx context.Context, id job.ID, name, reason string) (string, error) {
	out, err := b.c.CancelNode(ctx, id, name, reason)
	if client.Code(err) == "job_finished" {
		return "", fmt.Errorf("job %s: %w", id, runner.ErrFinished)
	}
	if err != nil {
		return "", b.fail(err, id)
	}
	n := api.Node{Name: out.Node, Path: out.Path, Status: out.Status, Failure: out.Failure}
	if !out.Sent {
		return notRunningLine(id, n), nil
	}
	return nodeCancelLine(id, n, out.Summary.Version, false), nil
}

// cancelLine is the line that says a cancel was saved, the job as it was
// then: done, or with finally blocks that the runner runs.
func cancelLine(s api.Summary) string {
	if s.Status != job.StatusRunning.String() {
		return fmt.Sprintf("job %s cancelled at v%d", s.ID, s.Version)
	}
	return fmt.Sprintf("job %s cancelled at v%d; the server runs its finally blocks, then it ends cancelled", s.ID, s.Version)
}

// delete asks the server to delete a settled job (a running one is
// refused: cancel it first).
func (b *serverBackend) delete(ctx context.Context, id job.ID) error {
	err := b.c.Delete(ctx, id)
	if client.Code(err) == "job_not_found" {
		return fmt.Errorf("job %s: %w", id, store.ErrNotFound)
	}
	return b.refusal(err, id)
}

func (b *serverBackend) submitter(context.Context) (submitter, error) {
	return &serverSubmitter{b: b}, nil
}

// serverSubmitter submits through the server, and follows a job with its
// history's long polls.
type serverSubmitter struct {
	b    *serverBackend
	sent api.Summary // the server's answer to the last submit
}

// answer is the server's answer to the submit of job id: its summary.
func (s *serverSubmitter) answer(id job.ID) (api.Summary, bool) {
	return s.sent, s.sent.ID == string(id)
}

// submit posts the workflow, encoded again; the same ID with the same
// workflow is a safe retry (the server answers 200 and makes nothing).
func (s *serverSubmitter) submit(ctx context.Context, id job.ID, root ast.Node) error {
	data, err := ast.Encode(root)
	if err != nil {
		return err
	}
	s.sent, _, err = s.b.c.Submit(ctx, id, data)
	var ce *client.Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ce) && ce.Code == "job_exists":
		return fmt.Errorf("%w: %s", store.ErrExists, ce.Detail)
	case errors.As(err, &ce):
		return withCode(exitCodeOf(ce), errors.New(problemText(ce)))
	}
	return withCode(exitStore, err)
}

func (s *serverSubmitter) status(ctx context.Context, id job.ID) (api.Summary, error) {
	return s.b.viewSummary(ctx, id)
}

// wait follows the job with the history's long polls (client.Wait) until
// it has finished, and returns it.
func (s *serverSubmitter) wait(ctx context.Context, id job.ID) (api.Job, error) {
	if _, err := s.b.c.Wait(ctx, id); err != nil {
		return api.Job{}, s.b.fail(err, id)
	}
	return s.b.viewJob(ctx, id, 0)
}

// unserved is "": the server refuses a job naming an action no worker
// runs when it can tell (422 unknown_action).
func (*serverSubmitter) unserved(context.Context, ast.Node) string { return "" }
func (*serverSubmitter) close()                                    {}

// exitCodeOf is the exit status of a server's refusal: exitStore when its
// store cannot be used or it is stopping, else exitError.
func exitCodeOf(ce *client.Error) int {
	switch ce.Code {
	case "store_unavailable", "shutting_down", "job_damaged", "too_many_jobs":
		// The server cannot take it now: try again later (a 429's
		// Retry-After says when), as for a store in use or out of reach.
		return exitStore
	}
	return exitError
}

// problemText is a refusal's detail and, for an invalid workflow, every
// problem with its path.
func problemText(ce *client.Error) string {
	s := ce.Detail
	if ce.Code == "unauthorized" || ce.Code == "forbidden" && strings.Contains(s, "token") {
		s += " (the CLI sends the token in $" + tokenEnv + " or the one --token-file names)"
	}
	for _, p := range ce.Problems {
		s += fmt.Sprintf("\n  %s: %s", ast.ShowPath(p.Path), p.Message)
	}
	return s
}

// checkBackendFlags checks the flags that say where the jobs are, for a
// usage error: a server (--server), or else a store file, ZooKeeper or
// Kafka (checkEngines).
func checkBackendFlags(s *serverFlags, z *zkFlags, k *kafkaFlags) error {
	if err := s.check(); err != nil || s.on() {
		return err
	}
	return checkEngines(z, k, false)
}

// jsonFlag adds --json: print the API's JSON instead of text.
func jsonFlag(fs *flag.FlagSet) *bool {
	return fs.Bool("json", false, "print the JSON the HTTP API answers (see docs/api.md) instead of text, whether the jobs are reached directly or through --server")
}
