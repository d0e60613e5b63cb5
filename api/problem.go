package api

// Problem is an error answer: RFC 9457 problem details
// (application/problem+json) with baton's extensions.
type Problem struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	// Detail is one line naming what is wrong and where.
	Detail string `json:"detail"`
	// Code is stable: part of the API, never renamed (see package server).
	Code      string `json:"code"`
	RequestID string `json:"request_id"`
	JobID     string `json:"job_id,omitempty"`
	// Problems lists what is wrong with an invalid workflow, each with
	// its node path ("" is the root).
	Problems []PathProblem `json:"problems,omitempty"`
}

// PathProblem is one problem of a workflow, at a node.
type PathProblem struct {
	Path    string `json:"path"`
	Message string `json:"message"`
}
