// Package wire is the single-message JSON-RPC codec for the rest of
// mcpkit, in package jsonrpc's types: the HTTP transports, the
// authorization middleware and the client read and write single messages
// with it, while jsonrpc's public API stays the connection (Conn), the
// message and error types and the limits. The codec itself is
// internal/rpccodec, which jsonrpc's Conn uses too; this package turns its
// Envelope into a *jsonrpc.Message. It imports jsonrpc, mcp and
// internal/rpccodec only; nothing outside mcpkit can import it.
package wire

import (
	"github.com/mcpkit/mcpkit/internal/rpccodec"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// Decode parses and checks one JSON-RPC message under lim: on failure the
// error is a *jsonrpc.Error ready to send back (mcp.CodeParseError or
// mcp.CodeInvalidRequest), and the message is non-nil when its id could
// be read.
func Decode(data []byte, lim jsonrpc.Limits) (*jsonrpc.Message, error) {
	return decode(data, lim, false)
}

// DecodeOwned is Decode for bytes the caller hands over and never changes
// again: the message's raw members (params, result, error data) are
// slices of data rather than of a copy.
func DecodeOwned(data []byte, lim jsonrpc.Limits) (*jsonrpc.Message, error) {
	return decode(data, lim, true)
}

func decode(data []byte, lim jsonrpc.Limits, owned bool) (*jsonrpc.Message, error) {
	maxBytes, maxDepth := lim.MaxBytes, lim.MaxDepth
	if maxBytes <= 0 {
		maxBytes = jsonrpc.DefaultMaxMessageBytes
	}
	if maxDepth <= 0 {
		maxDepth = jsonrpc.DefaultMaxDepth
	}
	env, fail := rpccodec.Decode(data, maxBytes, maxDepth, owned)
	if fail != nil && !env.ID.IsValid() {
		return nil, (*jsonrpc.Error)(fail)
	}
	m := &jsonrpc.Message{ID: env.ID, Method: env.Method, Params: env.Params, Result: env.Result, Error: (*jsonrpc.Error)(env.Error)}
	if fail != nil {
		return m, (*jsonrpc.Error)(fail)
	}
	return m, nil
}

// EncodeRequest returns a request (a notification with a zero id)
// carrying params: nil (omitted), a jsontext.Value or any value json can
// marshal.
func EncodeRequest(id mcp.ID, method string, params any) ([]byte, error) {
	return rpccodec.EncodeRequest(id, method, params)
}

// EncodeResult returns a successful response.
func EncodeResult(id mcp.ID, result any) ([]byte, error) {
	return rpccodec.EncodeResult(id, result)
}

// EncodeError returns an error response (a zero id is left out).
func EncodeError(id mcp.ID, e *jsonrpc.Error) []byte {
	return rpccodec.EncodeError(id, (*rpccodec.Error)(e))
}

// AppendPlainCall appends tools/call params that hold only a name and
// plain arguments as the encoder writes them, without reflection; false
// for any other params, which the caller then encodes (see
// rpccodec.AppendPlainCall).
func AppendPlainCall(b []byte, p *mcp.CallToolParams) ([]byte, bool) {
	return rpccodec.AppendPlainCall(b, p)
}

// DecodeToolResult decodes an everyday tools/call result into a zero *r
// without the struct decoder, meta decoding its top-level _meta (nil:
// json.Unmarshal); false, with *r untouched, for anything it leaves to
// the decoder (see rpccodec.DecodeToolResult).
func DecodeToolResult(raw []byte, r *mcp.CallToolResult, meta func([]byte, *mcp.Meta) error) bool {
	return rpccodec.DecodeToolResult(raw, r, meta)
}

// Identity is what the two ends of a message dropped for its size say of
// it: its id (invalid when neither holds one), whether it named a
// method, and whether it read as a response (see rpccodec.Identity).
func Identity(head, tail []byte) (id mcp.ID, method, response bool) {
	return rpccodec.Identity(head, tail)
}

// Checked is JSON text valid by construction, appended verbatim by the
// encoders without a validity check (see rpccodec.Checked): the client's
// 2026-07-28 envelope around params it appended itself.
type Checked = rpccodec.Checked
