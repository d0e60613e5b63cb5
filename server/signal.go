package server

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/batonwf/baton/api"
	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/runner"
	"github.com/batonwf/baton/server/web"
)

// Signaller is a runner that sends signals to jobs (job.Signal): a bad
// signal is an error wrapping runner.ErrBadSignal, a missing job
// store.ErrNotFound, a finished one runner.ErrFinished. It may return
// before the signal is applied.
type Signaller interface {
	Signal(ctx context.Context, id job.ID, name, sigID string, payload json.RawMessage) error
}

// signal is POST /api/v1/jobs/{id}/signals/{name}: the body, optional,
// is {"id": "...", "payload": JSON}; without an ID the server makes one
// (it is in the answer: send again with it to retry safely).
func (s *srv) signal(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	name := r.PathValue("name")
	if msg := ast.CheckSignalName(name); msg != "" {
		return newProblem(CodeBadSignal, "signal "+msg+" (in the path)").forJob(string(id))
	}
	body, err := s.readBody(r)
	if err != nil {
		return err
	}
	// api.SignalRequest, with an ID given empty told from none.
	var req struct {
		ID      *string         `json:"id"`
		Payload json.RawMessage `json:"payload"`
	}
	if len(body) > 0 {
		if bytes.HasPrefix(body, byteOrderMark) {
			return newProblem(CodeBadJSON, bomDetail).forJob(string(id))
		}
		if !utf8.Valid(body) {
			return newProblem(CodeBadRequest, "the body is not valid UTF-8").forJob(string(id))
		}
		dec := json.NewDecoder(strings.NewReader(string(body)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil {
			return newProblem(CodeBadJSON, `the body: want {"id": "...", "payload": JSON}: `+err.Error()).forJob(string(id))
		}
		if dec.More() {
			return newProblem(CodeBadJSON, `the body: data after {"id": "...", "payload": JSON}`).forJob(string(id))
		}
	}
	var sigID string
	switch {
	case req.ID == nil:
		var b [8]byte
		_, _ = rand.Read(b[:])
		sigID = "api-" + hex.EncodeToString(b[:])
	case *req.ID == "":
		// Given, and empty: an unset variable, whose retry would make
		// another signal. Only an absent ID is made here.
		return newProblem(CodeBadSignal, `signal `+name+`: the ID is empty (leave "id" out for the server to make one)`).forJob(string(id))
	default:
		sigID = *req.ID
	}
	payload := req.Payload
	if string(payload) == "null" {
		payload = nil
	}
	if len(payload) > job.MaxSignalPayload {
		return newProblem(CodeRequestTooLarge, fmt.Sprintf("the payload is %d bytes, over the limit of %d bytes of a signal's payload", len(payload), job.MaxSignalPayload)).forJob(string(id))
	}
	if err := s.sendSignal(r.Context(), id, name, sigID, payload); err != nil {
		return err
	}
	j, err := s.st.Load(r.Context(), id)
	if err != nil {
		return s.storeProblem(err, id, "load the signalled")
	}
	out := api.SignalSent{Job: string(id), Name: name, ID: sigID, Summary: s.stored(r.Context(), api.SummaryOf(j))}
	kept, taken := j.Signals()
	for _, t := range taken {
		if t.Name == name && t.ID == sigID {
			out.Taken = t.Path
		}
	}
	for _, k := range kept {
		if k.Name == name && k.ID == sigID {
			out.Kept = true
		}
	}
	writeJSON(w, http.StatusAccepted, out)
	return nil
}

// sendSignal checks the signal and that job id is there and unfinished,
// and sends it through the runner; its errors are problems. A finished
// job that applied this very signal (job.Job.SignalSeen) is no error:
// sending it again is a safe retry, at any time, answered as the first
// send was (202, with the wait that took it).
func (s *srv) sendSignal(ctx context.Context, id job.ID, name, sigID string, payload json.RawMessage) error {
	if err := (job.Signal{Name: name, ID: sigID, Payload: payload}).Check(); err != nil {
		return newProblem(CodeBadSignal, strings.TrimPrefix(err.Error(), "job: ")).forJob(string(id))
	}
	j, err := s.st.Load(ctx, id)
	if err != nil {
		return s.storeProblem(err, id, "signal")
	}
	if j.Done() {
		if j.SignalSeen(name, sigID) {
			return nil // a retry: answered as the first was
		}
		return newProblem(CodeJobFinished, fmt.Sprintf("job %s has finished (%s): no wait takes a signal", id, j.Status())).forJob(string(id))
	}
	if s.isClosing() {
		return newProblem(CodeShuttingDown, "the server is shutting down: the signal was not sent; try again later")
	}
	err = s.signaller.Signal(ctx, id, name, sigID, payload)
	switch {
	case errors.Is(err, runner.ErrFinished):
		// A Signaller that does not answer a retry itself (runner.CheckSignal
		// does): the first send was applied before the job finished.
		if j, lerr := s.st.Load(ctx, id); lerr == nil && j.SignalSeen(name, sigID) {
			return nil
		}
		return newProblem(CodeJobFinished, fmt.Sprintf("job %s finished before the signal: no wait takes it", id)).forJob(string(id))
	case errors.Is(err, runner.ErrBadSignal):
		// The runner's own checks: a name no wait of the job takes, a
		// Kafka message's size; the problem names the job.
		return newProblem(CodeBadSignal, runner.BadSignalReason(err)).forJob(string(id))
	case err != nil:
		return s.storeProblem(err, id, "signal")
	}
	return nil
}

// pageSignalID is the ID a job page's signal form sends: one per page
// shown, so that the form posted twice sends one signal.
func pageSignalID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "page-" + hex.EncodeToString(b[:])
}

// signalPage is POST /jobs/{id}/signals/{name}: the signal form of a
// running wait's panel (fields id and payload, JSON, empty for null).
// It sends the signal, then goes back to the job's page.
func (s *srv) signalPage(w http.ResponseWriter, r *http.Request, _ caller) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	name := r.PathValue("name")
	if msg := ast.CheckSignalName(name); msg != "" {
		return newProblem(CodeBadSignal, "signal "+msg+" (in the path)").forJob(string(id))
	}
	if err := r.ParseForm(); err != nil {
		return newProblem(CodeBadRequest, "read the form: "+err.Error()).forJob(string(id))
	}
	sigID := r.PostForm.Get("id")
	if sigID == "" {
		sigID = pageSignalID()
	}
	var payload json.RawMessage
	if p := strings.TrimSpace(r.PostForm.Get("payload")); p != "" {
		payload = json.RawMessage(p)
	}
	if len(payload) > job.MaxSignalPayload {
		return newProblem(CodeRequestTooLarge, fmt.Sprintf("the payload is %d bytes, over the limit of %d bytes of a signal's payload", len(payload), job.MaxSignalPayload)).forJob(string(id))
	}
	if len(payload) > 0 && !json.Valid(payload) {
		return newProblem(CodeBadSignal, "the payload is not JSON (leave it empty for null)").forJob(string(id))
	}
	if err := s.sendSignal(r.Context(), id, name, sigID, payload); err != nil {
		return err
	}
	http.Redirect(w, r, web.JobURL(string(id), 0, ""), http.StatusSeeOther)
	return nil
}
