// Package browsertest drives a real browser in tests: Debian's chromium,
// started headless through chromedp (the generic API of v0.23), so that a
// test can load the pages of `baton serve` and check what a user would see.
//
// It is a test-support package: _test.go files import it, and so does the
// benchmark program (bench), which starts its browser outside any test with
// Launch and stops it with Close.
//
// # The browser
//
// The binary is $BATON_CHROMIUM when set, otherwise "chromium" found on
// PATH (Debian's /usr/bin/chromium, a wrapper around
// /usr/lib/chromium/chromium). It runs headless, without the sandbox (the
// tests run as root, where chromium refuses to start with it), with the
// network-quieting flags (no background networking, component updates,
// sync or QUIC: nothing reaches outside), a 1280x1024 window, and a fresh
// profile directory of its own (a user-data-dir made for it and removed by
// Close).
//
// A test binary starts one browser, the first time a test asks for a Page,
// and every test of the binary shares it; each Page is a new tab in a new
// browser context (its own cookies, storage and cache), closed when its
// test ends. The shared browser lives until the test binary exits: a
// package may call Main from its TestMain to close it (and remove its
// profile) when its tests are done; without it the browser is killed with
// the test binary (Linux's parent-death signal) and the next Launch removes
// profile directories whose process is gone.
//
// # When the browser is missing
//
// Without the binary, NewPage skips the test with a loud message saying how
// to install chromium; with BATON_REQUIRE_INTEGRATION=1 (scripts/test.sh
// sets it, and installs the package) it fails the test instead.
//
// # What a Page records and checks
//
//   - Every JavaScript dialog (alert, confirm, prompt, beforeunload) is
//     recorded and dismissed, and fails the test when the Page closes: a
//     page that opens one has run script it should not have.
//   - Every request the page makes (Requests), so that a test can prove a
//     URL was never asked for.
//   - The console and uncaught exceptions (Console), printed when the test
//     fails.
//   - Screenshots (Screenshot) are PNG files in the test's temporary
//     directory; when the test fails, the Page takes one more of the page as
//     it is, moves them all into a directory kept after the test
//     ($BATON_ARTIFACTS, or browsertest-artifacts under the system's
//     temporary directory) and prints their paths.
//
// Every wait (Wait, WaitDrawn) polls a condition in the page until it holds
// or the test's deadline (less a margin for the report) has passed; none
// asserts a wall-clock bound. CountColors counts a screenshot's pixels near
// given colours, so a test can check a drawing without a golden image.
package browsertest
