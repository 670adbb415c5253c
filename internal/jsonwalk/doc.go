// Package jsonwalk reads JSON text byte by byte, strictly, for the fast
// paths that sit in front of the token decoder (jsonrpc's envelope,
// internal/jsonschema's scan, store's task records, the peers'
// broadcasts): a Walker checks the grammar, UTF-8 and
// escapes of what it reads, so a walk that reaches its end has read valid
// JSON. A walk that meets anything it does not read returns false and the
// caller leaves the text to the decoder, which also writes the error.
// The one exception is Skip, which passes over a value of text already
// checked (server's params, after jsonrpc's walk or decoder).
//
// Minimal checks, more strictly still, a value in the form json.Marshal
// writes a jsontext.Value unchanged, for the encoders that copy raw JSON
// (rpccodec's tool results, store's records) and the readers that take
// such JSON as it is.
//
// It imports no mcpkit package.
package jsonwalk
