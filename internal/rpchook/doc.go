// Package rpchook holds the slots through which package jsonrpc hands its
// message codec to internal/wire without exporting it: jsonrpc fills them
// in its init, internal/wire types them. It owns nothing else and imports
// nothing, so that jsonrpc can import it.
package rpchook

// Decode, DecodeOwned, EncodeRequest, EncodeResult and EncodeError are
// jsonrpc's functions of the same names, set once by jsonrpc's init.
var Decode, DecodeOwned, EncodeRequest, EncodeResult, EncodeError any
