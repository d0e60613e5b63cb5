#!/usr/bin/env bash
# Runs every check and test of baton: the README's test command, and what
# CI runs (.ci/run). It installs what it needs on a fresh Debian machine
# with Go: staticcheck through the Go module proxy, ZooKeeper (and Java)
# and chromium from Debian's packages. Integration tests that need a server
# or a browser must not skip here: BATON_REQUIRE_INTEGRATION=1 turns a skip
# into a failure.
set -euo pipefail
cd "$(dirname "$0")/.."

export BATON_REQUIRE_INTEGRATION=1
# Every test runs on servers this command starts itself: a real ZooKeeper
# per test (internal/zktest) and an in-process Kafka-protocol broker. Set,
# these would point the tests at outside servers instead, where some
# cannot run (the ensemble, the 30 s outage, the broker's fault
# injection) and would skip.
unset ZK_SERVERS KAFKA_BROKERS
export GOFLAGS="${GOFLAGS:-} -buildvcs=false"
STATICCHECK_VERSION=v0.8.2

step() { printf '\n== %s\n' "$*"; }

step "zookeeper (a real server for runner/zk's tests; issue 8)"
# Debian's package, from which internal/zktest starts every server a test
# needs (this script starts none). CI runs as root with no standard input.
if [ -f /usr/share/java/zookeeper.jar ] && command -v java >/dev/null; then
	echo "installed: $(dpkg-query -W -f '${Version}' zookeeper 2>/dev/null || echo '?')"
else
	if [ "$(id -u)" -eq 0 ]; then
		asroot=()
	elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
		asroot=(sudo -n)
	else
		echo "ZooKeeper is not installed and this user can neither install it (not root) nor use sudo without a password."
		echo "Install it as root:  apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y zookeeper"
		exit 1
	fi
	"${asroot[@]}" apt-get update -q
	"${asroot[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q zookeeper </dev/null
	[ -f /usr/share/java/zookeeper.jar ] || { echo "apt-get installed zookeeper but /usr/share/java/zookeeper.jar is missing"; exit 1; }
fi
java -version 2>&1 || { echo "java does not run: ZooKeeper's tests cannot start a server"; exit 1; }

step "chromium (a real browser for the pages' tests; issue 17)"
# Debian's package, which internal/browsertest drives through chromedp.
# BATON_CHROMIUM names another binary instead; then nothing is installed.
if [ -n "${BATON_CHROMIUM:-}" ]; then
	chromium_bin="$BATON_CHROMIUM"
elif command -v chromium >/dev/null; then
	chromium_bin=chromium
else
	if [ "$(id -u)" -eq 0 ]; then
		asroot=()
	elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
		asroot=(sudo -n)
	else
		echo "chromium is not installed and this user can neither install it (not root) nor use sudo without a password."
		echo "Install it as root:  apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium"
		exit 1
	fi
	"${asroot[@]}" apt-get update -q
	"${asroot[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium </dev/null
	command -v chromium >/dev/null || { echo "apt-get installed chromium but it is not on PATH"; exit 1; }
	chromium_bin=chromium
fi
# As root chromium starts only without its sandbox. Noise left out: the
# D-Bus complaints of a machine without a session bus, and Debian's wrapper
# tripping on /dev/shm listed twice by findmnt ("[: ...: unexpected operator").
"$chromium_bin" --headless --no-sandbox --version 2>&1 | grep -E -v 'Failed to connect to the bus|: unexpected operator' \
	|| { echo "$chromium_bin does not run: the pages' browser tests cannot start it"; exit 1; }

step "go version"
go version

step "modules"
go mod download
go mod verify

step "gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
	echo "gofmt needed on:"; echo "$unformatted"; exit 1
fi
echo ok

step "go vet"
go vet ./...
echo ok

step "staticcheck $STATICCHECK_VERSION"
gobin="$(go env GOPATH)/bin"
if ! "$gobin/staticcheck" -version 2>/dev/null | grep -q "${STATICCHECK_VERSION#v}"; then
	go install "honnef.co/go/tools/cmd/staticcheck@$STATICCHECK_VERSION"
fi
"$gobin/staticcheck" ./...
echo ok

step "go test -race ./..."
go test -race -count=1 -timeout 20m ./...

step "runner/zk's reconnection tests, without -race (go-zookeeper races with itself when it reconnects)"
# These tests kill a server or cut a client's connection. Under -race they
# skip (go-zookeeper v1.0.4 has a data race of its own on reconnection, which
# the race detector reports as the test's failure); here they run, and each
# must pass: a skip is a failure. They are the tests that call
# reconnects(t), found in the sources so that a new one cannot be left out.
reconnecting=($(awk '/^func Test/ { name = $2; sub(/\(.*/, "", name) } /^\treconnects\(t\)/ { print name }' runner/zk/*_test.go))
if [ ${#reconnecting[@]} -lt 7 ]; then
	echo "found ${#reconnecting[@]} reconnection tests in runner/zk (${reconnecting[*]}), want at least 7"; exit 1
fi
out=$(go test -count=1 -run "^($(IFS='|'; echo "${reconnecting[*]}"))\$" -v ./runner/zk) || { echo "$out"; exit 1; }
echo "$out" | grep -E '^(=== RUN|--- |ok|FAIL|PASS)'
for name in "${reconnecting[@]}"; do
	if ! echo "$out" | grep -q -- "--- PASS: $name "; then
		echo "$name did not run and pass (a skip is a failure here)"; exit 1
	fi
done

step "exact allocation counts, without -race (the race detector makes values escape)"
# The allocation guards skip under -race; here they run and must pass: a
# skip is a failure.
for guard in job:TestReducerAllocations job:TestRestartBytes runner:TestApplierBacklogArray placement:TestRanksDecideAllocs server:TestSubmitMakesTheJobOnce server:TestLogWriterReusesBuffers; do
	pkg=${guard%%:*} name=${guard#*:}
	out=$(go test -count=1 -run "^$name\$" -v "./$pkg") || { echo "$out"; exit 1; }
	echo "$out" | grep -E '^(--- |ok|FAIL)'
	echo "$out" | grep -q -- "--- PASS: $name " || { echo "$name did not run and pass (a skip is a failure here)"; exit 1; }
done

step "benchmarks compile and run once"
go test -run '^$' -bench . -benchtime 1x ./... > /tmp/baton-bench-smoke.txt 2>&1 || { cat /tmp/baton-bench-smoke.txt; exit 1; }
echo ok
