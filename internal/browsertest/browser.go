package browsertest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"
)

// Env names the environment variable that names another chromium binary.
const Env = "BATON_CHROMIUM"

const installHint = "apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium"

// profilePrefix starts the name of every profile directory Launch makes;
// the process ID that follows it lets a later Launch remove the
// directories of test binaries that died.
const profilePrefix = "baton-browsertest-"

// ErrMissing is returned by Launch when no browser binary can be found.
var ErrMissing = errors.New("browsertest: chromium is not installed")

// Browser is a running chromium. Its methods may be called from any
// goroutine; Close is safe to call twice.
type Browser struct {
	path    string // the binary
	profile string // the user-data-dir, removed by Close

	allocCancel context.CancelFunc
	ctx         context.Context // the browser's context: tabs are its children
	cancel      context.CancelFunc

	closeOnce sync.Once
	out       *tail
}

// Path finds the browser binary: $BATON_CHROMIUM when set, otherwise
// "chromium" on PATH. It returns ErrMissing (wrapped, with what was
// looked for) when there is none.
func Path() (string, error) {
	if p := os.Getenv(Env); p != "" {
		abs, err := exec.LookPath(p)
		if err != nil {
			return "", fmt.Errorf("%w: %s=%s: %v", ErrMissing, Env, p, err)
		}
		return abs, nil
	}
	abs, err := exec.LookPath("chromium")
	if err != nil {
		return "", fmt.Errorf("%w: no chromium on PATH and %s is not set", ErrMissing, Env)
	}
	return abs, nil
}

// Launch starts a headless chromium (see the package doc for its flags)
// and returns once it answers. The browser runs until Close or until ctx
// ends. It returns ErrMissing (wrapped) when there is no binary.
func Launch(ctx context.Context) (*Browser, error) {
	path, err := Path()
	if err != nil {
		return nil, err
	}
	removeStaleProfiles()
	profile, err := os.MkdirTemp("", profilePrefix+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return nil, fmt.Errorf("browsertest: profile directory: %w", err)
	}
	b := &Browser{path: path, profile: profile, out: &tail{max: 32 << 10}}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(1280, 1024),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.CombinedOutput(b.out),
	)
	allocCtx, allocCancel := chromedp.NewExecAllocator(ctx, opts...)
	b.allocCancel = allocCancel
	b.ctx, b.cancel = chromedp.NewContext(allocCtx)
	if err := chromedp.Do(b.ctx); err != nil {
		b.Close()
		return nil, fmt.Errorf("browsertest: start %s: %w\n%s", path, err, b.Output())
	}
	return b, nil
}

// Binary returns the path of the browser's binary.
func (b *Browser) Binary() string { return b.path }

// Version returns the browser's product and version as the DevTools
// protocol names them ("Chrome/156.0.8078.108").
func (b *Browser) Version() (string, error) {
	v, err := chromedp.CallBrowser(b.ctx, browser.GetVersion, cdp.Empty{})
	if err != nil {
		return "", fmt.Errorf("browsertest: version: %w", err)
	}
	return v.Product, nil
}

// Output returns the end of what the browser wrote on stdout and stderr,
// D-Bus complaints left out.
func (b *Browser) Output() string { return b.out.String() }

// NewTab opens a tab in a new browser context (its own cookies, storage
// and cache) and returns its chromedp context, to run actions in, and the
// function that closes it. listeners see every event of the tab from its
// start (chromedp.WithListener's rules hold for them: return fast, run no
// command).
func (b *Browser) NewTab(listeners ...func(ev any)) (context.Context, context.CancelFunc, error) {
	opts := []chromedp.ContextOption{chromedp.WithNewBrowserContext()}
	for _, l := range listeners {
		opts = append(opts, chromedp.WithListener(l))
	}
	ctx, cancel := chromedp.NewContext(b.ctx, opts...)
	if err := chromedp.Do(ctx); err != nil {
		cancel()
		return nil, nil, fmt.Errorf("browsertest: new tab: %w", err)
	}
	return ctx, cancel, nil
}

// Close stops the browser and removes its profile directory. It is safe to
// call twice and from any goroutine.
func (b *Browser) Close() {
	b.closeOnce.Do(func() {
		if b.cancel != nil {
			_ = chromedp.Cancel(b.ctx)
			b.cancel()
		}
		if b.allocCancel != nil {
			b.allocCancel()
		}
		_ = os.RemoveAll(b.profile)
	})
}

// removeStaleProfiles removes the profile directories of test binaries
// that are gone (killed before they could close their browser).
func removeStaleProfiles() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), profilePrefix+"*-*"))
	for _, d := range dirs {
		rest := strings.TrimPrefix(filepath.Base(d), profilePrefix)
		pid, err := strconv.Atoi(rest[:max(strings.IndexByte(rest, '-'), 0)])
		if err != nil || pid == os.Getpid() || alive(pid) {
			continue
		}
		_ = os.RemoveAll(d)
	}
}

// alive reports whether a process pid exists.
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// tail keeps the last max bytes written to it, lines about D-Bus left out
// (chromium prints dozens of them on a machine without a session bus).
type tail struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, line := range strings.SplitAfter(string(p), "\n") {
		if strings.Contains(line, "Failed to connect to the bus") {
			continue
		}
		t.b = append(t.b, line...)
	}
	if len(t.b) > t.max {
		t.b = append(t.b[:0], t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
