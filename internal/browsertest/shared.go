package browsertest

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
)

// shared is the test binary's browser: started by the first test that asks
// for one, shared by the others, closed by Main (or killed with the
// binary). A package-level value because a test binary is the unit that
// shares it; nothing else in the package is global.
var shared struct {
	once    sync.Once
	browser *Browser
	err     error
}

// Shared returns the test binary's browser, starting it the first time.
// With no browser installed it skips t with a loud message, or fails it
// under BATON_REQUIRE_INTEGRATION=1; a browser that fails to start fails t.
func Shared(t testing.TB) *Browser {
	t.Helper()
	shared.once.Do(func() {
		shared.browser, shared.err = Launch(context.Background())
	})
	if errors.Is(shared.err, ErrMissing) {
		missing(t, shared.err)
	}
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.browser
}

// Require skips t (or fails it under BATON_REQUIRE_INTEGRATION=1) when
// there is no browser binary, without starting one: for a test that runs a
// program which starts its own (the bench).
func Require(t testing.TB) {
	t.Helper()
	if _, err := Path(); err != nil {
		missing(t, err)
	}
}

// Main runs a package's tests and then closes the shared browser, if one
// was started, and removes its profile. Call it from TestMain:
//
//	func TestMain(m *testing.M) { browsertest.Main(m) }
func Main(m *testing.M) {
	code := m.Run()
	if shared.browser != nil {
		shared.browser.Close()
	}
	os.Exit(code)
}

// missing skips (or fails) t when there is no browser.
func missing(t testing.TB, err error) {
	t.Helper()
	msg := "\n" + strings.Repeat("*", 78) + "\n" +
		"*** CHROMIUM IS NOT INSTALLED: " + err.Error() + "\n" +
		"*** This test needs a real browser. Install Debian's package:\n" +
		"***     " + installHint + "\n" +
		"*** or name another chromium binary: " + Env + "=/path/to/chromium go test ...\n" +
		"*** (scripts/test.sh installs it, and there a missing browser is a failure.)\n" +
		strings.Repeat("*", 78)
	if os.Getenv("BATON_REQUIRE_INTEGRATION") == "1" {
		t.Fatal("BATON_REQUIRE_INTEGRATION=1 and" + msg)
		return
	}
	t.Skip("SKIPPED:" + msg)
}
