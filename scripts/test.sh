#!/usr/bin/env bash
# Runs every check and test of baton: the README's test command, and what
# CI runs (.ci/run). It installs what it needs on a fresh Debian machine
# with Go: staticcheck through the Go module proxy. Integration tests that
# need a server must not skip here: BATON_REQUIRE_INTEGRATION=1 turns a
# skip into a failure.
set -euo pipefail
cd "$(dirname "$0")/.."

export BATON_REQUIRE_INTEGRATION=1
export GOFLAGS="${GOFLAGS:-} -buildvcs=false"
STATICCHECK_VERSION=v0.8.2

step() { printf '\n== %s\n' "$*"; }

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

step "benchmarks compile and run once"
go test -run '^$' -bench . -benchtime 1x ./... > /tmp/baton-bench-smoke.txt 2>&1 || { cat /tmp/baton-bench-smoke.txt; exit 1; }
echo ok
