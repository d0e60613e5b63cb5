package zk

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/batonwf/baton/runner"
)

// Config says how to reach ZooKeeper and where baton's nodes live.
type Config struct {
	// Servers are the ensemble's "host:port" addresses; required.
	Servers []string
	// Root is the node under which baton keeps everything; default
	// "/baton". Runners and stores on the same root share jobs and queue.
	Root string
	// SessionTimeout is the ZooKeeper session timeout: how long after a
	// worker dies (or stops answering) its claims are released; default
	// 10s. The server bounds it to between 2 and 20 of its ticks.
	SessionTimeout time.Duration
	// Auth, when set ("user:password", the password not empty), is a
	// digest credential: the connection authenticates with it and every
	// node baton creates gets an ACL that grants everything to that
	// identity only, so a client without it can neither read nor change
	// baton's nodes. All clients of a root must therefore use the same
	// credentials, or none: Open refuses a root whose nodes' ACL was made
	// for other ones, or without any when Auth is set (AccessError).
	Auth string
	// MustExist makes Open write nothing: the root and baton's nodes
	// under it must exist already, else Open fails with an error wrapping
	// ErrNoRoot that names what is missing. For clients that only read
	// or change existing jobs (status, cancel); a worker or a submitter
	// leaves it false, and Open creates what is missing (but never the
	// root's parent).
	MustExist bool
	// Retention is how long a settled job (succeeded, failed, cancelled)
	// is kept after it settled: the workers on the root (runners with a
	// Registry) delete older ones, with their history and any queue
	// entries or timers left of them (see the package doc, Retention).
	// 0 means DefaultRetention; a negative value keeps settled jobs
	// until someone deletes them. Each worker sweeps with its own: on a
	// root whose workers disagree, the shortest wins.
	Retention time.Duration
	// Backoff paces retries after connection loss and the polls that back
	// up watches. Its zero fields mean ZooKeeper's defaults, not
	// runner.Backoff's: the first wait at most 100 ms, doubling up to
	// 10 s.
	Backoff runner.Backoff
	// SnapshotEvery, when > 0, writes a job's snapshot at least every so
	// many steps (store.SnapshotDue); 0 writes one when the steps since the
	// last weigh as much as it does.
	SnapshotEvery uint64
	// MaxJobBytes bounds a new job's encoded state (its workflow and
	// payloads): ZooKeeper keeps all its data in memory, so large data
	// belongs elsewhere, passed by reference. Default 8 MiB. (Outputs are
	// bounded one by one, by MaxResultBytes: a job may grow past
	// MaxJobBytes as its actions return.)
	MaxJobBytes int
	// Logger receives connection state changes and retries; nil discards.
	Logger *slog.Logger
}

// conn is a ZooKeeper session shared by a Store and the runners on it.
type conn struct {
	client
	l         layout
	every     uint64
	maxJob    int
	retention time.Duration // <= 0: settled jobs are kept

	mu        sync.Mutex
	connected bool
	session   int64           // the session the connection holds now
	watchers  []chan struct{} // woken when a new session starts
	closed    bool
	bucket    string // the settled index's bucket known to exist (ensureBucket)
	done      chan struct{}
}

// dial connects and waits for a session (or ctx), authenticates, then
// opens the root (openRoot): creates its persistent nodes if they are
// missing (unless Config.MustExist), and checks that their ACL admits the
// credentials.
func dial(ctx context.Context, cfg Config) (*conn, error) {
	if len(cfg.Servers) == 0 {
		return nil, errors.New("zk: Config.Servers is empty: give the ensemble's host:port addresses")
	}
	root := cfg.Root
	if root == "" {
		root = "/baton"
	}
	if err := checkRootPath(root); err != nil {
		return nil, err
	}
	user, password, err := splitAuth(cfg.Auth)
	if err != nil {
		return nil, err
	}
	if cfg.SessionTimeout <= 0 {
		cfg.SessionTimeout = 10 * time.Second
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	zc, events, err := zk.Connect(cfg.Servers, cfg.SessionTimeout, zk.WithLogger(zkLogger{log}))
	if err != nil {
		return nil, fmt.Errorf("zk: connect to %s: %w", strings.Join(cfg.Servers, ","), err)
	}
	c := &conn{
		client:    client{c: zc, acl: zk.WorldACL(zk.PermAll), backoff: backoff(cfg.Backoff), log: log},
		l:         layout{root: root},
		every:     cfg.SnapshotEvery,
		maxJob:    cmpOr(cfg.MaxJobBytes, 8<<20),
		retention: cfg.retention(),
		done:      make(chan struct{}),
	}
	first := make(chan struct{})
	go c.watchEvents(events, first)
	select {
	case <-first:
	case <-ctx.Done():
		zc.Close()
		return nil, fmt.Errorf("zk: no session with %s: %w", strings.Join(cfg.Servers, ","), ctx.Err())
	}
	if user != "" {
		if err := zc.AddAuth("digest", []byte(user+":"+password)); err != nil {
			zc.Close()
			return nil, fmt.Errorf("zk: authenticate as %q: %w", user, err)
		}
		c.acl = zk.DigestACL(zk.PermAll, user, password)
	}
	if err := c.openRoot(ctx, cfg.MustExist, user); err != nil {
		zc.Close()
		return nil, err
	}
	return c, nil
}

// watchEvents follows the session's state: it logs outages and new
// sessions, and wakes the runners when a new session starts (their
// ephemeral nodes are gone then).
func (c *conn) watchEvents(events <-chan zk.Event, first chan struct{}) {
	var down time.Time
	for ev := range events {
		if ev.Type != zk.EventSession {
			continue
		}
		switch ev.State {
		case zk.StateHasSession:
			c.mu.Lock()
			newSession := c.session != 0 && c.session != c.c.SessionID()
			c.session = c.c.SessionID()
			c.connected = true
			var ws []chan struct{}
			if newSession {
				ws = c.watchers
			}
			c.mu.Unlock()
			if first != nil {
				close(first)
				first = nil
			}
			if !down.IsZero() {
				c.log.Warn("zookeeper reachable again", "after", time.Since(down).Round(time.Millisecond), "new_session", newSession)
				down = time.Time{}
			}
			for _, w := range ws {
				select {
				case w <- struct{}{}:
				default:
				}
			}
		case zk.StateDisconnected:
			c.mu.Lock()
			c.connected = false
			closing := c.closed
			c.mu.Unlock()
			if down.IsZero() && !closing {
				down = time.Now()
				c.log.Warn("zookeeper unreachable; retrying with back-off")
			}
		case zk.StateExpired:
			c.log.Warn("zookeeper session expired: claims and worker announcements of this process are gone")
		case zk.StateAuthFailed:
			c.log.Error("zookeeper authentication failed")
		}
	}
	close(c.done)
}

// newSessions returns a channel that receives when the connection starts
// a new session (after the old one expired).
func (c *conn) newSessions() <-chan struct{} {
	ch := make(chan struct{}, 1)
	c.mu.Lock()
	c.watchers = append(c.watchers, ch)
	c.mu.Unlock()
	return ch
}

func (c *conn) close() {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	c.mu.Unlock()
	c.c.Close()
	<-c.done
}

// zkPathOK checks a node path for what ZooKeeper refuses: empty, "." or
// ".." components, NUL and the characters it reserves.
func zkPathOK(p string) error {
	for _, part := range strings.Split(p[1:], "/") {
		if err := zkNameOK(part); err != nil {
			return err
		}
	}
	return nil
}

// zkNameOK checks one node name.
func zkNameOK(name string) error {
	switch name {
	case "":
		return errors.New("empty node name")
	case ".", "..":
		return fmt.Errorf("node name %q is not allowed by ZooKeeper", name)
	}
	for _, r := range name {
		if r == 0 || r == '/' || r > 0 && r < 0x1f || r > 0x7f && r < 0x9f || r >= 0xd800 && r <= 0xf8ff || r >= 0xfff0 && r <= 0xffff {
			return fmt.Errorf("node name %q holds %U, which ZooKeeper does not allow", name, r)
		}
	}
	return nil
}

// zkLogger sends go-zookeeper's logs to slog at debug level: they repeat
// what the state events say.
type zkLogger struct{ log *slog.Logger }

func (z zkLogger) Printf(format string, args ...any) {
	z.log.Debug("go-zookeeper: " + fmt.Sprintf(format, args...))
}

// DefaultRetention is Config.Retention's default: a week.
const DefaultRetention = 7 * 24 * time.Hour

func (cfg Config) retention() time.Duration {
	if cfg.Retention == 0 {
		return DefaultRetention
	}
	return cfg.Retention
}

// splitAuth reads Config.Auth: empty, or "user:password" with neither
// empty.
func splitAuth(auth string) (user, password string, err error) {
	if auth == "" {
		return "", "", nil
	}
	user, password, ok := strings.Cut(auth, ":")
	if !ok || user == "" || password == "" {
		return "", "", errors.New("zk: Config.Auth must be \"user:password\", neither empty")
	}
	return user, password, nil
}

func cmpOr(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}
