package web

import (
	"html/template"

	"github.com/batonwf/baton/api"
)

// NewView is the page that validates, draws and submits a workflow.
type NewView struct {
	Page
	// Workflow is the text in the editor; ID the job ID asked for.
	Workflow, ID string
	// Checked says the workflow was validated (a form post): Problems
	// and Preview then tell the outcome.
	Checked  bool
	Problems []api.PathProblem
	// Message is the outcome in one line (an error that has no path, or
	// "valid").
	Message string
	// Preview is the drawn tree of a valid workflow.
	Preview template.HTML
	// Unknown lists actions no worker runs.
	Unknown []string
}

// WorkersView is the workers' page.
type WorkersView struct {
	Page
	// Known is false when the runner cannot tell its workers.
	Known   bool
	Workers []api.Worker
	// Actions are the action names some worker runs (ActionsKnown false
	// when the runner cannot tell).
	Actions      []string
	ActionsKnown bool
}

// LoginView is the login page.
type LoginView struct {
	Page
	// Next is where a successful login goes (a path of this server).
	Next string
	// Error says why the last try failed.
	Error string
	// NoTokens says the server takes no token: there is nothing to log
	// in to.
	NoTokens bool
}

// ErrorView is an error page.
type ErrorView struct {
	Page
	Status int
	// Code is the API's error code.
	Code   string
	Detail string
	// RequestID is the request's ID, as in the server's log.
	RequestID string
}
