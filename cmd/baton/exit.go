package main

import "errors"

// codeError is an error that carries the exit status it ends a command
// with. A nil err is a status whose messages were printed already.
type codeError struct {
	code int
	err  error
}

func (e *codeError) Error() string {
	if e.err == nil {
		return ""
	}
	return e.err.Error()
}

func (e *codeError) Unwrap() error { return e.err }

// exitWith returns the error that ends a command with exit status code,
// whose messages the command printed already: nil for exitOK.
func exitWith(code int) error {
	if code == exitOK {
		return nil
	}
	return &codeError{code: code}
}

// withCode returns err carrying exit status code; nil for a nil err.
func withCode(code int, err error) error {
	if err == nil {
		return nil
	}
	return &codeError{code, err}
}

// exitCode is the exit status err carries: exitOK for nil, exitError for
// an error that carries none.
func exitCode(err error) int {
	var ce *codeError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ce):
		return ce.code
	}
	return exitError
}
