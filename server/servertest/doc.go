// Package servertest is the HTTP API's test suite as a kit, like
// store/storetest: Run serves the API (package server) on a store and a
// runner the caller makes, on a loopback listener, and checks every route
// through the Go client (package client) and raw HTTP: submit, retry and
// conflict, cancel, signals, node cancels, delete, past versions, listing
// page by page, long polls, auth, and each bad input of the API,
// asserting the status, the code, the problem's JSON and that the store
// is unchanged.
//
// A store adapter's tests call Run in a few lines with a Config whose Open
// opens a store and a runner of the kit's actions (Actions) on it; its
// Wrap, if set, wraps every server's handler (package server's tests
// validate each request and answer against the OpenAPI document there).
package servertest
