// Package api is the JSON schema of baton's HTTP API: the values the
// server (package server) writes and the client (package client) reads,
// and the functions that make them from jobs, histories and store
// listings. The command line prints the same values with --json, so the
// API, the client and the CLI share one schema.
//
// Field names are snake_case. Times are RFC 3339 in UTC. Text that may be
// long (payloads, outputs, error messages) is clipped to ClipBytes in
// summaries and node lists, with Clipped set; a single node (NodeOf with
// full) carries it up to MaxNodeBytes.
//
// The package is pure: values in, values out, no I/O.
package api
