package jsonrpc

import (
	"errors"
	"fmt"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/mcp"
)

// Error is a JSON-RPC error object. As a Go error it is what a peer
// answered, or what a handler wants answered: a handler that returns an
// *Error (or an error wrapping one) sends exactly that code, message and
// data.
type Error struct {
	Code    int64          `json:"code"`
	Message string         `json:"message"`
	Data    jsontext.Value `json:"data,omitzero"`
}

func (e *Error) Error() string {
	if len(e.Data) > 0 {
		return fmt.Sprintf("jsonrpc error %d: %s (data: %s)", e.Code, e.Message, e.Data)
	}
	return fmt.Sprintf("jsonrpc error %d: %s", e.Code, e.Message)
}

// NewError returns an error with the given code and message.
func NewError(code int64, message string) *Error {
	return &Error{Code: code, Message: message}
}

// Errorf returns an error with the given code and a formatted message.
func Errorf(code int64, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// WithData returns a copy of e whose data is v marshaled to JSON. A value
// that cannot be marshaled leaves data empty.
func (e *Error) WithData(v any) *Error {
	out := *e
	if raw, ok := v.(jsontext.Value); ok {
		out.Data = raw
		return &out
	}
	b, err := json.Marshal(v)
	if err == nil {
		out.Data = b
	}
	return &out
}

// AsError reports whether err is or wraps an *Error and returns it.
func AsError(err error) (*Error, bool) {
	if err == nil {
		return nil, false // without errors.As, whose target escapes: no allocation on success
	}
	var e *Error
	if errors.As(err, &e) {
		return e, true
	}
	return nil, false
}

// ErrMethodNotFound is the canonical "method not found" error; handlers
// return it (or an Errorf with mcp.CodeMethodNotFound) for unknown methods.
var ErrMethodNotFound = NewError(mcp.CodeMethodNotFound, "Method not found")

// ErrUnavailable is the answer of a server that cannot serve a request
// for now because something it depends on is unreachable (the store of a
// rate limiter, for one): -32603 "Service Unavailable: try again later".
// It says nothing of the failure, whose details belong in the server's
// log, not in an answer. A handler or an interceptor returns it (or an
// error wrapping it); the Streamable HTTP server answers it with status
// 503 in both eras, as it does when its session store is unreachable, so
// that the client knows it may try again.
var ErrUnavailable = NewError(mcp.CodeInternalError, "Service Unavailable: try again later")
