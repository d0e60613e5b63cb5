// Package server is baton's HTTP adapter: the JSON API under /api/v1, the
// health routes and the pages (package web renders them: /, /jobs/{id},
// /new, /workers, /login), as one http.Handler made by New.
// A Go program mounts it on its own mux with its own store and runner;
// 'baton serve' wires it to a bolt, ZooKeeper or Kafka store.
//
// The routes are one table (Routes): the mux is built from it, and so are
// the documentation and the OpenAPI test. openapi.json, the API's OpenAPI
// 3.1 document, is embedded and served at GET /api/v1/openapi.json; the
// package's tests validate every request and answer against it.
// HTTPServer makes the http.Server that serves the handler, with its
// Limits (timeouts, header bound). Every answer under /api/ is
// JSON: unknown paths, wrong methods and paths with empty, "." or ".."
// segments (which net/http's ServeMux would redirect) are answered with
// RFC 9457 problem details (application/problem+json) like every other
// error, each with a stable code (the Code constants) and the request ID.
//
// What the server can do beyond reading depends on what it is given, found
// the io/fs way: the store's optional capabilities (store.Lister,
// store.Historian, store.Deleter) and the runner's (Submitter, Canceller,
// Signaller, NodeCanceller, Deleter, ActionLister, WorkerLister,
// Readier), each checked by a type assertion; a runner's Deleter is used
// before the store's. A JobSubmitter returns the job it made,
// which the submit's answer is made from; of another Submitter the
// server makes the job again (job.New) to answer.
// A server given only a store is read-only: its write routes answer 405.
//
// Check first, keep after: a submitted workflow is decoded, validated and
// checked for actions no worker runs before the runner stores it, so a
// refused request stores nothing. A resubmission with the same ID and the
// same workflow is a safe retry (200, nothing new); with another workflow
// it is a conflict (409 job_exists).
//
// The pages are routes of their own (Pages), outside Routes and
// openapi.json: HTML answers, errors as pages, the Content-Security-Policy
// web.CSP. docs/pages.md has them and the markup their script and tests
// rely on.
//
// Security: with Options.Tokens every route but /healthz, /readyz,
// /login and the pages' assets needs "Authorization: Bearer TOKEN", of
// the read scope for reads and the write scope for submit, cancel and
// delete, or the session cookie (SessionCookie) that /login sets for a
// token: signed with HMAC-SHA256 under Options.SessionKey, expiring after
// Options.SessionTTL, HttpOnly, SameSite=Strict, Secure under TLS,
// holding a fingerprint of the token and never the token, and worth no
// more than that token is worth now (a token removed from the token file
// ends its sessions). A page asked for without either goes to /login.
// Every state-changing request passes http.CrossOriginProtection: one
// from another origin is refused (403 forbidden). Each presented token is
// compared by SHA-256 digest, in constant time, with every configured
// token. A client address with 20 failed authentications in a minute is
// refused (429) until the minute has passed. Tokens and bodies are never
// logged. Every answer has X-Content-Type-Options: nosniff and
// Referrer-Policy: no-referrer; API answers Cache-Control: no-store.
//
// Live updates: the event streams (GET /api/v1/jobs/{id}/events and GET
// /api/v1/events) and the history's long poll are served by one
// live.Hub (Options.Hub, or one of the server's own that polls the store),
// so a job has one watcher for all of them; the events carry the JSON of
// the job and history routes (api.Job, api.StepEvent, api.Summary,
// api.Changes). Closing Options.Closing shuts the hub down: open streams
// get a shutdown event. docs/live.md has the guarantees.
//
// Metrics without Prometheus here: Options.Metrics is served at /metrics
// behind a read token, Options.Middleware wraps every request inside the
// server once the ServeMux has set its Pattern (the route label), and
// Options.Streams and Options.AuthFailures are counted by the server;
// package metrics gives all four.
//
// Each request is logged in one line: method, route pattern, status,
// duration, bytes, request ID (X-Request-Id if the client sent a sane one),
// job ID where there is one and remote address. LogWriter, under the
// logger's handler, writes them to a file without a request waiting for
// the write ('baton serve' logs through one). A handler that panics is
// answered 500 internal with the request ID; the stack goes to the log
// only, and the server goes on.
//
// All methods of the handler may be called concurrently.
package server
