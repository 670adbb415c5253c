package server

import "net/http"

// The tests of this package that run the protocol over Streamable HTTP
// need server/streamhttp, which imports this package; an internal test
// cannot import it back. carrier_ext_test.go (package server_test, in the
// same test binary) installs NewTestHTTPHandler before any test runs.

// TestHTTPHandler is the Streamable HTTP handler as these tests use it.
type TestHTTPHandler interface {
	http.Handler
	Close() error
	SessionCount() int
}

// HTTPOptions are the handler options these tests set.
type HTTPOptions struct {
	Stateless bool
}

// NewTestHTTPHandler returns a streamhttp.Handler serving s.
var NewTestHTTPHandler func(s *Server, opts *HTTPOptions) TestHTTPHandler

// NewHTTPHandler is NewTestHTTPHandler, under the name the tests use.
func NewHTTPHandler(s *Server, opts *HTTPOptions) TestHTTPHandler {
	if NewTestHTTPHandler == nil {
		panic("carrier_ext_test.go did not install NewTestHTTPHandler")
	}
	return NewTestHTTPHandler(s, opts)
}
