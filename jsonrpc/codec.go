package jsonrpc

import (
	"github.com/mcpkit/mcpkit/internal/rpccodec"
	"github.com/mcpkit/mcpkit/mcp"
)

// The single-message codec lives in internal/rpccodec, which internal/wire
// shares; these are its entry points in this package's types. Error has
// rpccodec.Error's fields, so an *Error converts without a copy (and this
// conversion stops compiling if the two ever part).

// decodeMessage parses one JSON-RPC message strictly (rpccodec.Decode).
// On failure the error is an *Error (get it with errors.As) ready to send
// back, and the Message is non-nil when the id could be read, so that the
// error response can carry it.
func decodeMessage(data []byte, lim Limits) (*Message, error) {
	m, e := decode(data, lim)
	if e != nil {
		return m, e
	}
	return m, nil
}

// decodeOwnedMessage is decodeMessage for bytes the caller hands over:
// the Message's raw members (params, result, error data) are slices of
// data, not of a copy, so data must not change afterwards.
func decodeOwnedMessage(data []byte, lim Limits) (*Message, error) {
	m, e := decodeIn(data, lim, true)
	if e != nil {
		return m, e
	}
	return m, nil
}

// decode is decodeMessage with the concrete error type.
func decode(data []byte, lim Limits) (*Message, *Error) { return decodeIn(data, lim, false) }

// decodeIn decodes data, a copy of it unless owned.
func decodeIn(data []byte, lim Limits, owned bool) (*Message, *Error) {
	env, fail := rpccodec.Decode(data, lim.maxBytes(), lim.maxDepth(), owned)
	if fail != nil && !env.ID.IsValid() {
		return nil, (*Error)(fail)
	}
	m := &Message{ID: env.ID, Method: env.Method, Params: env.Params, Result: env.Result, Error: (*Error)(env.Error)}
	return m, (*Error)(fail)
}

// encodeRequest returns the bytes of a request (a notification with a zero
// id) carrying params (rpccodec.EncodeRequest).
func encodeRequest(id mcp.ID, method string, params any) ([]byte, error) {
	return rpccodec.EncodeRequest(id, method, params)
}

// encodeResult returns the bytes of a successful response.
func encodeResult(id mcp.ID, result any) ([]byte, error) {
	return rpccodec.EncodeResult(id, result)
}

// encodeError returns the bytes of an error response (a zero id is left
// out).
func encodeError(id mcp.ID, e *Error) []byte {
	return rpccodec.EncodeError(id, (*rpccodec.Error)(e))
}
