package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/batonwf/baton/job"
	zkrunner "github.com/batonwf/baton/runner/zk"
	"github.com/batonwf/baton/store"
)

// Defaults of the ZooKeeper flags.
const (
	defaultZKRoot    = "/baton"
	defaultZKConnect = 10 * time.Second
)

// zkFlags are the flags that put a command's jobs in ZooKeeper instead of
// a store file.
type zkFlags struct {
	fs      *flag.FlagSet
	servers *string
	root    *string
	auth    *string
	connect *time.Duration
}

// addZKFlags adds --zk, --root, --auth and --connect-timeout to fs. With
// optional, --zk is an alternative to --store; otherwise it is required.
func addZKFlags(fs *flag.FlagSet, optional bool) *zkFlags {
	use := "the ZooKeeper servers `HOST:PORT[,HOST:PORT...]` that hold the jobs and the queue (see 'baton worker')"
	if optional {
		use += "; instead of --store"
	}
	return &zkFlags{
		fs:      fs,
		servers: fs.String("zk", "", use),
		root:    fs.String("root", defaultZKRoot, "with --zk, the ZooKeeper node `PATH` under which baton keeps its jobs, queue and workers"),
		auth:    fs.String("auth", "", "with --zk, a digest credential `USER:PASSWORD`: baton's nodes are readable and writable with it only"),
		connect: fs.Duration("connect-timeout", defaultZKConnect, "with --zk or --kafka, how long to wait `D` for a ZooKeeper session, or for the Kafka brokers to answer, before giving up"),
	}
}

// given reports whether flag name was on the command line.
func given(fs *flag.FlagSet, name string) bool {
	found := false
	fs.Visit(func(f *flag.Flag) { found = found || f.Name == name })
	return found
}

// on reports whether --zk was given (the command works on ZooKeeper).
func (z *zkFlags) on() bool { return z != nil && given(z.fs, "zk") }

// check says what is wrong with the ZooKeeper flags, for a usage error:
// --zk given empty or with a bad address, --zk with --store, the other
// flags without --zk. required says --zk must be given.
func (z *zkFlags) check(required bool) error {
	if !z.on() {
		if required {
			return errors.New("--zk is required: the ZooKeeper servers, HOST:PORT[,HOST:PORT...]")
		}
		for _, name := range []string{"root", "auth"} {
			if given(z.fs, name) {
				return fmt.Errorf("--%s needs --zk", name)
			}
		}
		if given(z.fs, "connect-timeout") {
			return errors.New("--connect-timeout needs --zk or --kafka")
		}
		return nil
	}
	if given(z.fs, "store") {
		return errors.New("--zk and --store exclude each other: the jobs are either in ZooKeeper or in a store file")
	}
	if _, err := z.serverList(); err != nil {
		return err
	}
	if r := *z.root; !strings.HasPrefix(r, "/") || r == "/" || strings.HasSuffix(r, "/") {
		return fmt.Errorf("--root %q: want an absolute node path such as /baton (not / itself, no trailing slash)", r)
	}
	if user, _, ok := strings.Cut(*z.auth, ":"); *z.auth != "" && (!ok || user == "") {
		return errors.New("--auth must be USER:PASSWORD")
	}
	if *z.connect <= 0 {
		return fmt.Errorf("--connect-timeout must be positive, got %v", *z.connect)
	}
	return nil
}

// serverList splits --zk into addresses, each HOST:PORT or HOST (port
// 2181).
func (z *zkFlags) serverList() ([]string, error) {
	if strings.TrimSpace(*z.servers) == "" {
		return nil, errors.New("--zk is empty: give the ZooKeeper servers, HOST:PORT[,HOST:PORT...]")
	}
	return hostPorts("zk", "server", *z.servers, "2181")
}

// where names the root on the servers, for messages: "ZooKeeper
// 127.0.0.1:2181 under /baton".
func (z *zkFlags) where() string {
	servers, _ := z.serverList()
	return fmt.Sprintf("ZooKeeper %s under %s", strings.Join(servers, ","), *z.root)
}

// hint is the flags that name the same root again, for the commands a
// message suggests. The credential is never repeated.
func (z *zkFlags) hint() string {
	h := "--zk " + *z.servers
	if *z.root != defaultZKRoot {
		h += " --root " + *z.root
	}
	if *z.auth != "" {
		h += " --auth USER:PASSWORD"
	}
	return h
}

// open connects to ZooKeeper, waiting at most --connect-timeout for a
// session. log gets the connection's outages once it is open: while it
// connects, the error says it all.
func (z *zkFlags) open(ctx context.Context, log *slog.Logger) (*zkrunner.Store, error) {
	servers, err := z.serverList()
	if err != nil {
		return nil, err
	}
	cctx, cancel := context.WithTimeout(ctx, *z.connect)
	defer cancel()
	gate := &gatedHandler{Handler: log.Handler(), open: new(atomic.Bool)}
	st, err := zkrunner.Open(cctx, zkrunner.Config{Servers: servers, Root: *z.root, Auth: *z.auth, Logger: slog.New(gate)})
	gate.open.Store(err == nil)
	switch {
	case err == nil:
		return st, nil
	case errors.Is(err, context.DeadlineExceeded):
		return nil, &storeError{fmt.Sprintf("cannot reach ZooKeeper at %s: no session within %v (is it running? --connect-timeout sets the wait)",
			strings.Join(servers, ","), *z.connect), err}
	case errors.Is(err, zk.ErrNoAuth):
		return nil, &storeError{fmt.Sprintf("%s: %s is not accessible with these credentials (give the --auth it was made with)", z.where(), *z.root), err}
	}
	return nil, fmt.Errorf("%s: %v", z.where(), strings.TrimPrefix(err.Error(), "zk: "))
}

// gatedHandler passes records on once open is set, and drops them before.
type gatedHandler struct {
	slog.Handler
	open *atomic.Bool
}

func (h *gatedHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.open.Load() && h.Handler.Enabled(ctx, l)
}

func (h *gatedHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &gatedHandler{h.Handler.WithAttrs(as), h.open}
}

func (h *gatedHandler) WithGroup(name string) slog.Handler {
	return &gatedHandler{h.Handler.WithGroup(name), h.open}
}

// zkExit is the exit status for an error from zkFlags.open: exitStore when
// ZooKeeper cannot be used (unreachable, refused), else exitError.
func zkExit(err error) int {
	var se *storeError
	if errors.As(err, &se) {
		return exitStore
	}
	return exitError
}

// jobStore is where a command finds its jobs: a store file, ZooKeeper
// with --zk, or Kafka with --kafka.
type jobStore struct {
	st    store.Deleter   // the store: bolt, ZooKeeper or Kafka
	zk    *zkrunner.Store // the ZooKeeper store, nil for a file
	kafka *kafkaJobs      // the Kafka connection, nil unless --kafka
	where string          // how messages name it: the file, the root on the servers, the prefix on the brokers
	hint  string          // the flags that name it: "--store PATH", "--zk HOST:PORT ..." or "--kafka HOST:PORT ..."
}

func (js *jobStore) Close() error {
	if js.kafka != nil {
		js.kafka.closeClient()
	}
	return js.st.Close()
}

// openJobs opens the store the flags choose: ZooKeeper with --zk, Kafka
// with --kafka (whose topics are not created: a command that finds none
// sees no jobs), else the store file (--store, with mode). The flags were
// checked.
func (c *cli) openJobs(ctx context.Context, storeArg string, z *zkFlags, k *kafkaFlags, mode openMode) (*jobStore, int, error) {
	if k.on() {
		kj, err := k.open(ctx, runnerLogger(c.stderr), false)
		if err != nil {
			return nil, engineExit(err), err
		}
		return kj.jobs(), exitOK, nil
	}
	if z.on() {
		st, err := z.open(ctx, runnerLogger(c.stderr))
		if err != nil {
			return nil, zkExit(err), err
		}
		return &jobStore{st: st, zk: st, where: z.where(), hint: z.hint()}, exitOK, nil
	}
	st, path, err := c.openStore(storeArg, mode)
	if err != nil {
		return nil, storeExit(err), err
	}
	return &jobStore{st: st, where: path, hint: "--store " + path}, exitOK, nil
}

// load loads a job, with a message that names the job and the store.
func (js *jobStore) load(ctx context.Context, id job.ID) (job.Job, error) {
	j, err := js.st.Load(ctx, id)
	return j, js.jobError(err, id)
}

// history loads a job's history, with a message that names the job and
// the store.
func (js *jobStore) history(ctx context.Context, id job.ID) (store.History, error) {
	h, err := store.LoadHistory(ctx, js.st, id)
	return h, js.jobError(err, id)
}

// jobError names the job and the store in err, and says how to list the
// jobs when there is no such job.
func (js *jobStore) jobError(err error, id job.ID) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, store.ErrNotFound):
		return fmt.Errorf("job %s not found in %s (run 'baton status %s' for the list)", id, js.where, js.hint)
	default:
		return fmt.Errorf("job %s in %s: %w", id, js.where, err)
	}
}
