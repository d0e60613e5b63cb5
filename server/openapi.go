package server

import (
	_ "embed"
	"net/http"
)

// openAPI is the OpenAPI 3.1 document of the API, written by hand. The
// tests check that it lists exactly the operations of the route table and
// validate every request and answer of the test suite against it.
//
//go:embed openapi.json
var openAPI []byte

// openapi is GET /api/v1/openapi.json.
func (s *srv) openapi(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(openAPI)
	return nil
}
