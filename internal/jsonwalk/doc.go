// Package jsonwalk reads JSON text byte by byte, strictly, for the fast
// paths that sit in front of the token decoder (jsonrpc's envelope,
// internal/jsonschema's scan): a Walker checks the grammar, UTF-8 and
// escapes of what it reads, so a walk that reaches its end has read valid
// JSON. A walk that meets anything it does not read returns false and the
// caller leaves the text to the decoder, which also writes the error.
// The one exception is Skip, which passes over a value of text already
// checked (server's params, after jsonrpc's walk or decoder).
//
// It imports no mcpkit package.
package jsonwalk
