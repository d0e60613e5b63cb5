package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/batonwf/baton/api"
	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	"github.com/batonwf/baton/server"
	"github.com/batonwf/baton/server/live"
)

// serveShutdown bounds the wait for the requests in flight at a shutdown
// (a long poll ends at once; submits finish). The HTTP server's own
// limits are server.HTTPServer's defaults.
const serveShutdown = 10 * time.Second

func serveCommand() command {
	return command{
		name:    "serve",
		summary: "serve the jobs over HTTP: a JSON API, and run them",
		usage: "baton serve [--listen HOST:PORT] [--store PATH | --zk HOST:PORT[,...] [--root PATH] |\n" +
			"       --kafka HOST:PORT[,...] [--prefix NAME] [--kafka-tls] [--kafka-tls-ca FILE] [--kafka-tls-cert FILE --kafka-tls-key FILE] [--sasl M --sasl-user U]]\n" +
			"       [--workers N] [--timeout D]\n" +
			"       [--token-file FILE] [--tls-cert FILE --tls-key FILE [--tls-client-ca FILE]] [--insecure-http]\n" +
			"       [--metrics-listen HOST:PORT] [--max-body-bytes N] [--max-unfinished N] [--max-streams N]\n" +
			"       [--read-header-timeout D] [--read-timeout D] [--write-timeout D] [--idle-timeout D] [--max-header-bytes N]",
		about: `
Serves baton's HTTP API (see docs/api.md) on --listen: submit, list,
follow, cancel and delete jobs, and draw them. On a store file (--store, the
default) it also runs the jobs, with the built-in actions of 'baton run',
and first resumes the unfinished ones; while it runs, it holds the file, so
other commands that change its jobs go through it. With --zk it submits to
and reads the jobs in ZooKeeper, and runs actions only with --workers N
(N > 0; 'baton worker' runs them otherwise). With --kafka the same on the
topics under --prefix: a submit goes to the restarters, and --workers N
runs a restarter and a worker here. Since --tls-cert and --tls-key are the
listener's, the Kafka client's TLS flags are --kafka-tls, --kafka-tls-ca,
--kafka-tls-cert and --kafka-tls-key here (--tls, --tls-ca, ... in the
other commands).

It listens on 127.0.0.1:8080 by default. Any other address needs
--token-file, and TLS (--tls-cert and --tls-key) unless --insecure-http
says that TLS ends at a proxy in front. The token file has lines 'read
TOKEN' or 'write TOKEN' (# comments), tokens of at least 16 bytes, and must
not be readable by group or others; SIGHUP reads it again. Clients send
'Authorization: Bearer TOKEN'; a read token lists and shows, a write token
also submits, cancels and deletes. The certificate files are read again
when they change. --tls-client-ca requires client certificates signed by
that CA.

Jobs are followed live through event streams (GET
/api/v1/jobs/{id}/events, at most --max-streams open). Prometheus metrics
are served at /metrics behind a read token, or alone, without a token, on
--metrics-listen (a loopback address).

On SIGINT or SIGTERM it stops accepting, answers the requests in flight
(a submit is done or refused with 503 shutting_down, never half done), lets
the actions in flight finish (for up to 2s on a store file, 10s for --zk
--workers; the others are handed back, to run again), and exits 0.`,
		run: (*cli).serve,
	}
}

// serveFlags are the flags of 'baton serve' beyond the store's.
type serveFlags struct {
	listen, tokenFile, tlsCert, tlsKey, tlsClientCA string
	insecureHTTP                                    bool
	metricsListen                                   string
}

// checkServe says what is wrong with the listening flags: a non-loopback
// address without tokens, or without TLS unless --insecure-http; TLS
// files given by halves; a --metrics-listen that is not loopback (it has
// neither tokens nor TLS).
func checkServe(f serveFlags) error {
	if f.metricsListen != "" {
		host, _, err := net.SplitHostPort(f.metricsListen)
		switch {
		case err != nil:
			return fmt.Errorf("--metrics-listen %q: want HOST:PORT, like 127.0.0.1:9090", f.metricsListen)
		case !loopback(host):
			return fmt.Errorf("--metrics-listen %s is not a loopback address: /metrics alone has no token; leave it out to serve /metrics on --listen behind a read token", f.metricsListen)
		}
	}
	host, _, err := net.SplitHostPort(f.listen)
	if err != nil {
		return fmt.Errorf("--listen %q: want HOST:PORT, like 127.0.0.1:8080", f.listen)
	}
	switch {
	case (f.tlsCert == "") != (f.tlsKey == ""):
		return errors.New("--tls-cert and --tls-key go together")
	case f.tlsClientCA != "" && f.tlsCert == "":
		return errors.New("--tls-client-ca needs --tls-cert and --tls-key")
	case loopback(host):
		return nil
	case f.tokenFile == "":
		return fmt.Errorf("--listen %s is not a loopback address: give --token-file, so that only holders of a token reach the jobs", f.listen)
	case f.tlsCert == "" && !f.insecureHTTP:
		return fmt.Errorf("--listen %s is not a loopback address: give --tls-cert and --tls-key, or --insecure-http if TLS ends at a proxy in front", f.listen)
	}
	return nil
}

// loopback reports whether host (of --listen) is a loopback address:
// "localhost" or a loopback IP. An empty host is every interface.
func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func (c *cli) serve(ctx context.Context, args []string) error {
	cmd := serveCommand()
	fset := flagSet(cmd)
	storeArg := storeFlag(fset)
	z := c.addZKFlags(fset, true)
	k := c.addServeKafkaFlags(fset, z)
	var f serveFlags
	fset.StringVar(&f.listen, "listen", "127.0.0.1:8080", "listen on `HOST:PORT`; an address other than loopback needs --token-file and TLS (or --insecure-http)")
	fset.StringVar(&f.tokenFile, "token-file", "", "the bearer tokens, from `FILE`: lines 'read TOKEN' or 'write TOKEN'; not readable by group or others")
	fset.StringVar(&f.tlsCert, "tls-cert", "", "serve TLS with the certificate chain in `FILE` (PEM), read again when it changes")
	fset.StringVar(&f.tlsKey, "tls-key", "", "the private key of --tls-cert, in `FILE` (PEM)")
	fset.StringVar(&f.tlsClientCA, "tls-client-ca", "", "require client certificates signed by the CAs in `FILE` (PEM)")
	fset.BoolVar(&f.insecureHTTP, "insecure-http", false, "serve plain HTTP on an address other than loopback: TLS ends at a proxy in front")
	workers := fset.Int("workers", 4, "run at most `N` actions at once (with --zk: run actions here only if N > 0; default 0 there)")
	timeout := fset.Duration("timeout", 0, "time limit `D` for each action; 0: none")
	maxBody := fset.Int64("max-body-bytes", server.DefaultMaxBodyBytes, "refuse request bodies over `N` bytes")
	maxUnfinished := fset.Int("max-unfinished", server.DefaultMaxUnfinished, "refuse submits while `N` jobs are unfinished (-1: no limit)")
	maxStreams := fset.Int("max-streams", live.DefaultMaxStreams, "refuse event streams while `N` are open")
	var lim server.Limits
	fset.DurationVar(&lim.ReadHeaderTimeout, "read-header-timeout", server.DefaultReadHeaderTimeout, "close a connection whose request line and headers take longer than `D`")
	fset.DurationVar(&lim.ReadTimeout, "read-timeout", server.DefaultReadTimeout, "cut a request whose body takes longer than `D` to arrive")
	fset.DurationVar(&lim.WriteTimeout, "write-timeout", server.DefaultWriteTimeout, "bound the writing of an answer to `D` (event streams extend theirs per event)")
	fset.DurationVar(&lim.IdleTimeout, "idle-timeout", server.DefaultIdleTimeout, "close a kept-alive connection idle for `D`")
	fset.IntVar(&lim.MaxHeaderBytes, "max-header-bytes", server.DefaultMaxHeaderBytes, "refuse request headers over `N` bytes (431)")
	fset.StringVar(&f.metricsListen, "metrics-listen", "", "serve /metrics alone, without a token, on `HOST:PORT` (loopback); default: on --listen, behind a read token")
	retain := retainFlag(fset)
	pos, code, ok := c.parse(cmd, fset, args)
	switch {
	case !ok:
		return exitWith(code)
	case len(pos) > 0:
		return c.usageError(cmd, "want no arguments, got %d", len(pos))
	case *workers < 0:
		return c.usageError(cmd, "--workers must not be negative, got %d", *workers)
	case *maxBody < 1:
		return c.usageError(cmd, "--max-body-bytes must be positive, got %d", *maxBody)
	case *maxUnfinished == 0 || *maxUnfinished < -1:
		return c.usageError(cmd, "--max-unfinished must be positive or -1, got %d", *maxUnfinished)
	case *maxStreams < 1:
		return c.usageError(cmd, "--max-streams must be positive, got %d", *maxStreams)
	case lim.ReadHeaderTimeout <= 0 || lim.ReadTimeout <= 0 || lim.WriteTimeout <= 0 || lim.IdleTimeout <= 0:
		return c.usageError(cmd, "--read-header-timeout, --read-timeout, --write-timeout and --idle-timeout must be positive")
	case lim.MaxHeaderBytes < 1:
		return c.usageError(cmd, "--max-header-bytes must be positive, got %d", lim.MaxHeaderBytes)
	}
	if err := checkEngines(z, k, false); err != nil {
		return c.usageError(cmd, "%v", err)
	}
	remote := z.on() || k.on()
	if remote && !given(fset, "workers") {
		*workers = 0
	}
	if !remote && *workers == 0 {
		return c.usageError(cmd, "--workers must be at least 1 on a store file: the server runs its jobs")
	}
	if err := checkServe(f); err != nil {
		return c.usageError(cmd, "%v", err)
	}
	var tokens *server.Tokens
	if f.tokenFile != "" {
		var err error
		if tokens, err = server.LoadTokens(f.tokenFile); err != nil {
			return withCode(exitError, err)
		}
	}
	tlsConf, err := serverTLS(f)
	if err != nil {
		return withCode(exitError, err)
	}

	// The address first: a server that cannot listen leaves no store
	// behind, and starts no job.
	ln, err := net.Listen("tcp", f.listen)
	if err != nil {
		return withCode(exitError, fmt.Errorf("listen on %s: %v", f.listen, err))
	}
	defer ln.Close()
	var metricsLn net.Listener
	if f.metricsListen != "" {
		if metricsLn, err = net.Listen("tcp", f.metricsListen); err != nil {
			return withCode(exitError, fmt.Errorf("listen on %s (--metrics-listen): %v", f.metricsListen, err))
		}
		defer metricsLn.Close()
	}

	ctx, stopSignals := c.interruptible(ctx)
	defer stopSignals()
	// The request log (and the server's other lines) through a
	// LogWriter: no request waits for stderr's write.
	logs := server.NewLogWriter(c.stderr)
	defer logs.Close()
	log := runnerLoggerAt(logs, slog.LevelInfo)
	// The backend's own warnings (a submit waits for a restarter) are
	// not serve's: it refuses what would wait (remoteServing.ready).
	b, err := c.openBackend(ctx, *storeArg, z, k, openOptions{mode: create, retain: *retain, stderr: io.Discard, log: runnerLogger(c.stderr)})
	if err != nil {
		return err
	}
	defer b.Close()
	client := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	defer client.CloseIdleConnections()
	acts := builtins(c.stdout, client)
	_, local := b.(localServer)
	obs, err := newServeObs(b.jobs(), acts, local, *maxStreams, log)
	if err != nil {
		return withCode(exitError, err)
	}
	sv, err := c.serving(ctx, b, workerOptions{timed: obs.m.Store, WorkerOptions: runner.WorkerOptions{
		Name: "serve", Registry: acts, Workers: *workers, ActionTimeout: *timeout, Logger: runnerLogger(c.stderr), Hooks: obs.hooks()}})
	if err != nil {
		return withCode(exitCode(err), fmt.Errorf("serve %s: %v", b.where(), err))
	}
	defer sv.Close()

	closing := make(chan struct{})
	so := server.Options{
		Runner: sv.runner(), Tokens: tokens, Logger: log, Now: c.now,
		MaxBodyBytes: *maxBody, MaxUnfinished: *maxUnfinished, Closing: closing,
	}
	obs.serverOptions(&so, f.metricsListen != "")
	h, err := server.New(so)
	if err != nil {
		return withCode(exitError, err)
	}
	if metricsLn != nil {
		defer c.serveMetricsAlone(metricsLn, obs.metricsHandler(), log)()
	}
	hs := server.HTTPServer(h, lim)
	hs.TLSConfig, hs.ErrorLog = tlsConf, slog.NewLogLogger(log.Handler(), slog.LevelWarn)
	scheme := "http"
	if tlsConf != nil {
		scheme = "https"
	}
	ran := make(chan error, 1)
	go func() { ran <- sv.Run(ctx) }()
	served := make(chan error, 1)
	go func() {
		if tlsConf != nil {
			served <- hs.ServeTLS(ln, "", "")
		} else {
			served <- hs.Serve(ln)
		}
	}()
	fmt.Fprintf(c.stderr, "baton serve: %s://%s/api/v1 on %s\n", scheme, ln.Addr(), b.where())
	if a, ok := b.(applier); ok && *workers == 0 {
		if n, missing := a.appliers(ctx); n == 0 {
			fmt.Fprintf(c.stderr, "baton serve: submits and cancels are refused (503) until a restarter runs: %v\n", missing)
		}
	}
	// SIGHUP reads the token file again; without one it is ignored,
	// where its default action would end the server without a drain.
	stopHUP := c.reloadTokensOnHUP(f.tokenFile, tokens)
	defer stopHUP()

	var failed error
	select {
	case <-ctx.Done():
	case err := <-served:
		failed = fmt.Errorf("serve on %s: %v", f.listen, err)
	case err := <-ran:
		if err != nil {
			failed = fmt.Errorf("the runner on %s stopped: %v", b.where(), cause(err))
		}
		ran <- err
	}
	fmt.Fprintf(c.stderr, "baton serve: stopping: answering the requests in flight, then finishing the actions in flight for up to %v\n", drainTimeout)
	close(closing)
	sctx, cancel := context.WithTimeout(context.Background(), serveShutdown)
	defer cancel()
	cut := hs.Shutdown(sctx) != nil
	if cut {
		hs.Close()
	}
	sv.Close()
	if err := <-ran; err != nil && failed == nil {
		failed = fmt.Errorf("the runner on %s stopped: %v", b.where(), cause(err))
	}
	if failed != nil {
		return withCode(exitStore, failed)
	}
	logs.Close() // the request log's last lines before the last one
	if cut {
		fmt.Fprintf(c.stderr, "baton serve: stopped; the requests still unanswered after %v were cut\n", serveShutdown)
	} else {
		fmt.Fprintln(c.stderr, "baton serve: stopped")
	}
	return nil
}

// serveMetricsAlone serves h (/metrics) on ln until stop is called.
func (c *cli) serveMetricsAlone(ln net.Listener, h http.Handler, log *slog.Logger) (stop func()) {
	hs := server.HTTPServer(h, server.Limits{})
	hs.ErrorLog = slog.NewLogLogger(log.Handler(), slog.LevelWarn)
	go func() { _ = hs.Serve(ln) }()
	fmt.Fprintf(c.stderr, "baton serve: http://%s/metrics\n", ln.Addr())
	return func() { hs.Close() }
}

// reloadTokensOnHUP reads the token file again on each SIGHUP into
// tokens; a file that cannot be read keeps the tokens as they were, with
// a message. Without a token file (path "") a SIGHUP is ignored, with a
// message. Call stop to release the signal.
func (c *cli) reloadTokensOnHUP(path string, tokens *server.Tokens) (stop func()) {
	if c.noSignals {
		return func() {}
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-hup:
				if path == "" {
					fmt.Fprintln(c.stderr, "baton serve: SIGHUP: no --token-file to read again; ignored")
					continue
				}
				t, err := server.LoadTokens(path)
				if err != nil {
					c.errorf("serve: SIGHUP: %v; the tokens stay as they were", err)
					continue
				}
				tokens.Replace(t)
				fmt.Fprintf(c.stderr, "baton serve: SIGHUP: tokens read again from %s\n", path)
			case <-done:
				return
			}
		}
	}()
	return func() { signal.Stop(hup); close(done) }
}

// serving is what 'baton serve' runs on a backend: the runner the server
// submits and cancels through (server.Options.Runner), run until its
// context ends.
type serving interface {
	runner() any
	Run(ctx context.Context) error
	Close() error
}

// localServer is a backend that runs its jobs in this process (a store
// file): found the io/fs way, so the backends that do not need no method.
type localServer interface {
	serveLocal(ctx context.Context, o workerOptions) (serving, error)
}

// serving returns what serves b: its own runner on a store file;
// elsewhere a submitter and a canceller of the backend, and with
// o.Workers > 0 a worker of the built-in actions.
func (c *cli) serving(ctx context.Context, b backend, o workerOptions) (serving, error) {
	if l, ok := b.(localServer); ok {
		return l.serveLocal(ctx, o)
	}
	s, err := b.submitter(ctx)
	if err != nil {
		return nil, err
	}
	can, err := b.canceller(ctx)
	if err != nil {
		s.close()
		return nil, err
	}
	rs := &remoteServing{s: s, c: can, b: b}
	if o.Workers > 0 {
		if rs.w, err = b.worker(o); err != nil {
			rs.Close()
			return nil, err
		}
	}
	return rs, nil
}

// remoteServing serves a backend whose runners are elsewhere (ZooKeeper).
type remoteServing struct {
	s submitter
	c canceller
	w workerRunner // nil without --workers
	b backend
}

func (rs *remoteServing) runner() any {
	if wl, ok := rs.b.(workerLister); ok {
		return listingRunner{remoteRunner{rs}, wl}
	}
	return remoteRunner{rs}
}

// workerLister is a backend that knows the live workers of its store
// (ZooKeeper's announcements), found the io/fs way.
type workerLister interface {
	listWorkers(ctx context.Context) ([]api.Worker, error)
}

// listingRunner is a remoteRunner that is also a server.WorkerLister. It
// is no server.ActionLister: a submit naming an action no worker runs yet
// is taken, and waits for one, as with 'baton submit --zk'.
type listingRunner struct {
	remoteRunner
	wl workerLister
}

func (r listingRunner) Workers(ctx context.Context) ([]api.Worker, error) {
	return r.wl.listWorkers(ctx)
}

var _ server.WorkerLister = listingRunner{}

func (rs *remoteServing) Run(ctx context.Context) error {
	if rs.w != nil {
		return rs.w.Run(ctx)
	}
	<-ctx.Done()
	return nil
}

func (rs *remoteServing) Close() error {
	if rs.w != nil {
		rs.w.Close()
	}
	rs.c.close()
	rs.s.close()
	return nil
}

// remoteRunner is a server.Submitter and server.Canceller on a backend.
type remoteRunner struct{ rs *remoteServing }

func (r remoteRunner) Submit(ctx context.Context, id job.ID, root ast.Node) error {
	if err := r.rs.ready(ctx); err != nil {
		return err
	}
	return r.rs.s.submit(ctx, id, root)
}

func (r remoteRunner) Cancel(ctx context.Context, id job.ID, reason string) error {
	if err := r.rs.ready(ctx); err != nil {
		return err
	}
	_, err := r.rs.c.cancel(ctx, id, reason)
	return err
}

func (r remoteRunner) CancelNode(ctx context.Context, id job.ID, name, reason string) error {
	if err := r.rs.ready(ctx); err != nil {
		return err
	}
	_, err := r.rs.c.cancelNode(ctx, id, name, reason)
	return err
}

// Delete deletes a settled job (the server checked) through the
// backend's deleter: on Kafka the restarter that owns the job deletes it,
// which the store's own Delete cannot do from here.
func (r remoteRunner) Delete(ctx context.Context, id job.ID) error {
	if err := r.rs.ready(ctx); err != nil {
		return err
	}
	d, err := r.rs.b.deleter(ctx)
	if err != nil {
		return err
	}
	defer d.close()
	return d.delete(ctx, id)
}

var _ server.Deleter = remoteRunner{}

// applier is a backend whose submits and cancels wait until a process
// elsewhere applies them (Kafka's restarters), found the io/fs way:
// appliers says how many run (n < 0: it cannot tell).
type applier interface {
	appliers(ctx context.Context) (n int, missing error)
}

// ready refuses a submit or a cancel that would wait for an applier none
// runs: a request cannot wait for one (its answer could no longer be
// written, while the job is stored once one comes), so nothing is sent.
// A server that runs its own (--workers) needs no check.
func (rs *remoteServing) ready(ctx context.Context) error {
	a, ok := rs.b.(applier)
	if !ok || rs.w != nil {
		return nil
	}
	if n, missing := a.appliers(ctx); n == 0 {
		return missing
	}
	return nil
}

func (r remoteRunner) Signal(ctx context.Context, id job.ID, name, sigID string, payload json.RawMessage) error {
	_, err := r.rs.c.signal(ctx, id, name, sigID, payload)
	return err
}
