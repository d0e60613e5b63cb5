// Package client is a Go client of baton's HTTP API (package server): one
// method per route, each taking a context and returning the API's values
// (package api). An error answer comes back as an *Error carrying the
// problem, its stable code above all:
//
//	c := client.New("http://127.0.0.1:8080", client.Options{Token: tok})
//	sum, err := c.Submit(ctx, "order-7", workflow)
//	var e *client.Error
//	if errors.As(err, &e) && e.Code == "job_exists" { ... }
//
// A Client is safe for concurrent use.
package client
