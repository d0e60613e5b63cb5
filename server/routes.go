package server

import "net/http"

// Scope is what a route needs of a token.
type Scope uint8

// Scopes. A write token may do what a read token may.
const (
	ScopeNone  Scope = iota // no token: health routes, /login and the pages' assets
	ScopeRead               // a read or write token
	ScopeWrite              // a write token
)

func (s Scope) String() string {
	switch s {
	case ScopeRead:
		return "read"
	case ScopeWrite:
		return "write"
	}
	return "none"
}

// Route is one route of the API, as Routes lists it.
type Route struct {
	Method  string // GET, POST, DELETE
	Pattern string // the path pattern, with {id} as ServeMux writes it
	Scope   Scope
	// Query lists the query parameters the route takes; any other is
	// refused (400 bad_query).
	Query []string
	// Body says the route reads a JSON body (Content-Type
	// application/json, at most Options.MaxBodyBytes).
	Body bool
	Doc  string
}

// route is a Route with its handler and the condition for serving it.
type route struct {
	Route
	handle func(s *srv, w http.ResponseWriter, r *http.Request) error
	// on says whether this server serves the route (the store or the
	// runner can do it); nil means always.
	on func(s *srv) bool
}

// table is the one route table: the mux, the docs and the OpenAPI test
// read it.
var table = []route{
	{Route{"POST", "/api/v1/jobs", ScopeWrite, []string{"id"}, true,
		"submit the workflow in the body as a new job; 201 with Location, 200 for a retry with the same ID and workflow"},
		(*srv).submit, func(s *srv) bool { return s.submitter != nil }},
	{Route{"GET", "/api/v1/jobs", ScopeRead, []string{"status", "prefix", "limit", "after"}, false,
		"list jobs sorted by ID, summaries only, a page at a time (limit 1-1000, default 100; next is the after of the next page)"},
		(*srv).list, func(s *srv) bool { return s.lister != nil }},
	{Route{"GET", "/api/v1/jobs/{id}", ScopeRead, []string{"version", "nodes"}, false,
		"a job's summary and every node, now or at a past version"},
		(*srv).get, nil},
	{Route{"GET", "/api/v1/jobs/{id}/node", ScopeRead, []string{"path", "version"}, false,
		"one node in full: payload, output and error up to 1 MiB"},
		(*srv).node, nil},
	{Route{"GET", "/api/v1/jobs/{id}/history", ScopeRead, []string{"from", "limit", "wait"}, false,
		"the steps after version from (default 0: from the creation); wait (at most 25s) long-polls for one"},
		(*srv).history, func(s *srv) bool { return s.historian != nil }},
	{Route{"GET", "/api/v1/jobs/{id}/events", ScopeRead, []string{"after"}, false,
		"the job's server-sent events: snapshot, step, end (and shutdown); Last-Event-ID or after=V resumes; 204 when settled and the client has its last version"},
		(*srv).jobEvents, func(s *srv) bool { return s.hub != nil }},
	{Route{"GET", "/api/v1/events", ScopeRead, []string{"after"}, false,
		"the job list's server-sent events: changes (jobs created, statuses changed) and resync; Last-Event-ID or after resumes"},
		(*srv).listEvents, func(s *srv) bool { return s.hub != nil }},
	{Route{"GET", "/api/v1/jobs/{id}/graph", ScopeRead, []string{"format", "version"}, false,
		"the drawing of 'baton inspect': format dot, mermaid or svg (default)"},
		(*srv).graph, nil},
	{Route{"POST", "/api/v1/jobs/{id}/cancel", ScopeWrite, nil, true,
		`cancel a job with {"reason": "..."}: nothing new starts, finally blocks run, it ends cancelled; 202, again 202 keeping the first reason`},
		(*srv).cancel, func(s *srv) bool { return s.canceller != nil }},
	{Route{"POST", "/api/v1/jobs/{id}/signals/{name}", ScopeWrite, nil, true,
		`send a job the signal name with {"id": "...", "payload": JSON} (both optional): a running wait of that name takes it, else the job keeps it; 202, again 202 changing nothing`},
		(*srv).signal, func(s *srv) bool { return s.signaller != nil }},
	{Route{"POST", "/api/v1/jobs/{id}/nodes/{name}/cancel", ScopeWrite, nil, true,
		`cancel the running node called name with {"reason": "..."}: it fails with kind cancelled, which a try around it may rescue; 202 with the node's status, and whether the cancel was sent (a node not running is left as it is)`},
		(*srv).cancelNode, func(s *srv) bool { return s.nodeCanceller != nil }},
	{Route{"DELETE", "/api/v1/jobs/{id}", ScopeWrite, nil, false,
		"delete a settled job and its history; 204"},
		(*srv).delete, func(s *srv) bool { return s.deleter != nil }},
	{Route{"POST", "/api/v1/workflows/validate", ScopeRead, nil, true,
		"decode and validate a workflow, store nothing: the normalized workflow, its nodes, the actions no worker runs; 200 or 422"},
		(*srv).validate, nil},
	{Route{"GET", "/api/v1/workers", ScopeRead, nil, false,
		`the live workers ("known": false where the runner cannot tell)`},
		(*srv).workers, nil},
	{Route{"GET", "/api/v1/actions", ScopeRead, nil, false,
		`the action names some worker runs ("known": false where the runner cannot tell)`},
		(*srv).actions, nil},
	{Route{"GET", "/api/v1/openapi.json", ScopeRead, nil, false,
		"this API's OpenAPI 3.1 document: every route, parameter, value and error code"},
		(*srv).openapi, nil},
	{Route{"GET", "/healthz", ScopeNone, nil, false, "alive: 200"},
		(*srv).healthz, nil},
	{Route{"GET", "/readyz", ScopeNone, nil, false, "ready: the store answers and the runner runs; 200 or 503"},
		(*srv).readyz, nil},
	{Route{"GET", "/metrics", ScopeRead, nil, false, "the Prometheus exposition (OpenMetrics offered)"},
		(*srv).serveMetrics, func(s *srv) bool { return s.metrics != nil }},
}

// Routes returns the routes of the API, served or not: a server serves
// those its store and runner can do (see the package doc). The slice is
// the caller's.
func Routes() []Route {
	out := make([]Route, len(table))
	for i, rt := range table {
		out[i] = rt.Route
	}
	return out
}
