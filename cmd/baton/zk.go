package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"

	zkrunner "github.com/batonwf/baton/runner/zk"
)

// Defaults and names of the ZooKeeper flags.
const (
	defaultZKRoot    = "/baton"
	defaultZKConnect = 10 * time.Second
	// defaultZKSession is a worker's ZooKeeper session timeout: how long
	// after it dies its claims are released. The bounds of
	// --zk-session-timeout are wider than any server's clamp (2 to 20
	// of its ticks), which a server applies on top.
	defaultZKSession = 10 * time.Second
	minZKSession     = time.Second
	maxZKSession     = 10 * time.Minute
	// zkPasswordEnv holds the password of --auth's user (never on the
	// command line, where other users of the machine could read it);
	// --auth-file names a file that holds it instead.
	zkPasswordEnv = "BATON_ZK_PASSWORD"
	// maxPasswordFile bounds what --auth-file reads.
	maxPasswordFile = 4096
)

// zkFlags are the flags that put a command's jobs in ZooKeeper instead of
// a store file.
type zkFlags struct {
	fs       *flag.FlagSet
	getenv   func(string) string
	servers  *string
	root     *string
	auth     *string
	authFile *string
	connect  *time.Duration
	retain   *time.Duration // --retain, baton worker's only; nil elsewhere
	session  *time.Duration // --zk-session-timeout, baton worker's only; nil elsewhere

	password string // --auth's, read by check
}

// addZKFlags adds --zk, --root, --auth, --auth-file and --connect-timeout
// to fs. With optional, --zk is an alternative to --store; otherwise it is
// required.
func (c *cli) addZKFlags(fs *flag.FlagSet, optional bool) *zkFlags {
	use := "the ZooKeeper servers `HOST:PORT[,HOST:PORT...]` that hold the jobs and the queue (see 'baton worker')"
	if optional {
		use += "; instead of --store"
	}
	return &zkFlags{
		fs:       fs,
		getenv:   c.getenv,
		servers:  fs.String("zk", "", use),
		root:     fs.String("root", defaultZKRoot, "with --zk, the ZooKeeper node `PATH` under which baton keeps its jobs, queue and workers (only 'baton worker' and 'baton submit' make it)"),
		auth:     fs.String("auth", "", "with --zk, authenticate as the digest user `USER`, with the password in $"+zkPasswordEnv+" or in --auth-file: the nodes baton makes are then readable and writable by that user only, so every client of the root must give the same"),
		authFile: fs.String("auth-file", "", "with --zk and --auth, read the password from `FILE` (its first line) instead of $"+zkPasswordEnv+"; it must not be readable by group or others"),
		connect:  fs.Duration("connect-timeout", defaultZKConnect, "with --zk or --kafka, how long to wait `D` for a ZooKeeper session, or for the Kafka brokers to answer, before giving up"),
	}
}

// addRetain adds baton worker's --retain, which serves --zk and --kafka
// alike (runner/zk's and runner/kafka's defaults are the same week).
func (z *zkFlags) addRetain(fs *flag.FlagSet) {
	z.retain = fs.Duration("retain", zkrunner.DefaultRetention, "with --zk or --kafka, delete the jobs that settled (succeeded, failed, cancelled) longer ago than `D`, with their history; 0 keeps them until 'baton delete' (the workers of a root should agree: the shortest wins; with --kafka, each restarter applies its own to the partitions it owns)")
}

// addSessionTimeout adds baton worker's --zk-session-timeout.
func (z *zkFlags) addSessionTimeout(fs *flag.FlagSet) {
	z.session = fs.Duration("zk-session-timeout", defaultZKSession, fmt.Sprintf("with --zk, the worker's ZooKeeper session timeout `D`, from %v to %v: how long after the worker dies (or stops answering) its claims go to others; the server may clamp it (to 2 to 20 of its ticks: 4s to 40s with its stock tickTime of 2s)", minZKSession, maxZKSession))
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
		for _, name := range []string{"root", "auth", "auth-file", "retain"} {
			if given(z.fs, name) {
				return fmt.Errorf("--%s needs --zk", name)
			}
		}
		if given(z.fs, "connect-timeout") {
			return errors.New("--connect-timeout needs --zk or --kafka")
		}
		if given(z.fs, "zk-session-timeout") {
			return errors.New("--zk-session-timeout needs --zk")
		}
		return nil
	}
	if given(z.fs, "store") {
		return errors.New("--zk and --store exclude each other: the jobs are either in ZooKeeper or in a store file")
	}
	if _, err := z.serverList(); err != nil {
		return err
	}
	if err := zkrunner.CheckRoot(*z.root); err != nil {
		return errors.New("--" + strings.TrimPrefix(err.Error(), "zk: "))
	}
	if err := z.checkAuth(); err != nil {
		return err
	}
	if *z.connect <= 0 {
		return fmt.Errorf("--connect-timeout must be positive, got %v", *z.connect)
	}
	if z.session != nil && (*z.session < minZKSession || *z.session > maxZKSession) {
		return fmt.Errorf("--zk-session-timeout must be from %v to %v, got %v", minZKSession, maxZKSession, *z.session)
	}
	if z.retain != nil && *z.retain < 0 {
		return fmt.Errorf("--retain must not be negative, got %v (0 keeps settled jobs)", *z.retain)
	}
	return nil
}

// checkAuth checks --auth and --auth-file and reads the password.
func (z *zkFlags) checkAuth() error {
	switch {
	case !given(z.fs, "auth"):
		if given(z.fs, "auth-file") {
			return errors.New("--auth-file needs --auth: the user whose password it holds")
		}
		return nil
	case *z.auth == "":
		return errors.New("--auth is empty: give the digest user, with the password in $" + zkPasswordEnv + " or in --auth-file")
	case strings.Contains(*z.auth, ":"):
		return errors.New("--auth takes the user only, not USER:PASSWORD: a password on the command line is visible to every user of the machine; put it in $" + zkPasswordEnv + " or in a file given with --auth-file")
	case given(z.fs, "auth-file"):
		pw, err := readPasswordFile(*z.authFile)
		if err != nil {
			return err
		}
		z.password = pw
	default:
		z.password = z.getenv(zkPasswordEnv)
		if z.password == "" {
			return fmt.Errorf("--auth %s: the password is not set: put it in $%s or in a file given with --auth-file", *z.auth, zkPasswordEnv)
		}
	}
	return nil
}

// readPasswordFile reads the password in the first line of path, a
// regular file that neither group nor others may read or write.
func readPasswordFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("--auth-file: %v", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("--auth-file: %v", err)
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("--auth-file %s is not a regular file", path)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return "", fmt.Errorf("--auth-file %s may be read or changed by group or others (mode %04o): make it its owner's only (chmod 600 %s)", path, perm, path)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxPasswordFile+1))
	if err != nil {
		return "", fmt.Errorf("--auth-file: %v", err)
	}
	if len(data) > maxPasswordFile {
		return "", fmt.Errorf("--auth-file %s is over %d bytes: want the password on its first line", path, maxPasswordFile)
	}
	line, _, _ := strings.Cut(string(data), "\n")
	line = strings.TrimSuffix(line, "\r")
	if line == "" {
		return "", fmt.Errorf("--auth-file %s: the password (its first line) is empty", path)
	}
	return line, nil
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
// message suggests. The password is never on the command line.
func (z *zkFlags) hint() string {
	h := "--zk " + *z.servers
	if *z.root != defaultZKRoot {
		h += " --root " + *z.root
	}
	if *z.auth != "" {
		h += " --auth " + *z.auth
	}
	if *z.authFile != "" {
		h += " --auth-file " + *z.authFile
	}
	return h
}

// open connects to ZooKeeper, waiting at most --connect-timeout for a
// session, and opens the root: with mustExist (every command but worker
// and submit) it writes nothing, and a root that does not exist is an
// error. log gets the connection's outages once it is open: while it
// connects, the error says it all.
func (z *zkFlags) open(ctx context.Context, log *slog.Logger, mustExist bool) (*zkrunner.Store, error) {
	servers, err := z.serverList()
	if err != nil {
		return nil, err
	}
	cctx, cancel := context.WithTimeout(ctx, *z.connect)
	defer cancel()
	gate := &gatedHandler{Handler: log.Handler(), open: new(atomic.Bool)}
	cfg := zkrunner.Config{Servers: servers, Root: *z.root, MustExist: mustExist, Logger: slog.New(gate)}
	if *z.auth != "" {
		cfg.Auth = *z.auth + ":" + z.password
	}
	if z.session != nil {
		cfg.SessionTimeout = *z.session
	}
	if z.retain != nil {
		cfg.Retention = *z.retain
		if cfg.Retention == 0 {
			cfg.Retention = -1 // --retain 0: kept
		}
	}
	st, err := zkrunner.Open(cctx, cfg)
	gate.open.Store(err == nil)
	var ae *zkrunner.AccessError
	var re *zkrunner.RootError
	switch {
	case err == nil:
		return st, nil
	case errors.Is(err, context.DeadlineExceeded):
		return nil, &storeError{fmt.Sprintf("cannot reach ZooKeeper at %s: no session within %v (is it running? --connect-timeout sets the wait)",
			strings.Join(servers, ","), *z.connect), err}
	case errors.As(err, &ae):
		return nil, &storeError{z.accessMessage(ae), err}
	case errors.As(err, &re) && re.Missing == re.Root:
		return nil, fmt.Errorf("%s: root %s does not exist (is --root right? 'baton worker' and 'baton submit' make it)", z.where(), re.Root)
	case errors.Is(err, zk.ErrNoAuth):
		return nil, &storeError{fmt.Sprintf("%s: %s is not accessible with these credentials (give the --auth it was made with)", z.where(), *z.root), err}
	}
	return nil, fmt.Errorf("%s: %v", z.where(), strings.TrimPrefix(err.Error(), "zk: "))
}

// accessMessage says, in the flags' terms, why the root refused these
// credentials.
func (z *zkFlags) accessMessage(ae *zkrunner.AccessError) string {
	where := z.where()
	switch {
	case ae.User == "" && len(ae.Owners) > 0:
		return fmt.Sprintf("%s: the root is protected by the credentials of user %s: give --auth %s, with the password in $%s or --auth-file",
			where, strings.Join(ae.Owners, ", "), ae.Owners[0], zkPasswordEnv)
	case ae.User == "":
		return fmt.Sprintf("%s: the root is protected by credentials: give the --auth it was made with, with the password in $%s or --auth-file", where, zkPasswordEnv)
	case ae.Open:
		return fmt.Sprintf("%s: the root was made without --auth: its nodes are open to every client, and those made with --auth %s would be closed to the workers and commands without it: drop --auth, or choose a root made with it",
			where, ae.User)
	case len(ae.Owners) > 0:
		return fmt.Sprintf("%s: the root belongs to user %s, not %s", where, strings.Join(ae.Owners, ", "), ae.User)
	}
	return fmt.Sprintf("%s: the root does not admit user %s with this password (is $%s or --auth-file right? or the root belongs to another user)", where, ae.User, zkPasswordEnv)
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
