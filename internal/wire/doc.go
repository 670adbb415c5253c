// Package wire is the JSON-RPC message codec of package jsonrpc for the
// rest of mcpkit: the HTTP transports, the authorization middleware and
// the client read and write single messages with it, while jsonrpc's
// public API stays the connection (Conn), the message and error types and
// the limits. It imports jsonrpc and internal/rpchook only; nothing
// outside mcpkit can import it.
package wire

import (
	"github.com/mcpkit/mcpkit/internal/rpchook"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// The codec, typed once at initialization (jsonrpc, imported above, has
// filled the slots by then).
var (
	// Decode parses and checks one JSON-RPC message under lim: on
	// failure the error is a *jsonrpc.Error ready to send back
	// (mcp.CodeParseError or mcp.CodeInvalidRequest), and the message is
	// non-nil when its id could be read.
	Decode = rpchook.Decode.(func(data []byte, lim jsonrpc.Limits) (*jsonrpc.Message, error))
	// DecodeOwned is Decode for bytes the caller hands over and never
	// changes again: the message's raw members (params, result, error
	// data) are slices of data rather than of a copy.
	DecodeOwned = rpchook.DecodeOwned.(func(data []byte, lim jsonrpc.Limits) (*jsonrpc.Message, error))
	// EncodeRequest returns a request (a notification with a zero id)
	// carrying params: nil (omitted), a jsontext.Value or any value json
	// can marshal.
	EncodeRequest = rpchook.EncodeRequest.(func(id mcp.ID, method string, params any) ([]byte, error))
	// EncodeResult returns a successful response.
	EncodeResult = rpchook.EncodeResult.(func(id mcp.ID, result any) ([]byte, error))
	// EncodeError returns an error response (a zero id is left out).
	EncodeError = rpchook.EncodeError.(func(id mcp.ID, e *jsonrpc.Error) []byte)
)
