// Package mcp is the protocol vocabulary of the Model Context Protocol: the
// Go types of every request, result, notification and capability, the method
// names, the error codes and the protocol revisions. It performs no I/O.
//
// One set of types covers every revision from 2024-11-05 to 2026-07-28. A field
// that exists only in some revisions is optional; senders are responsible for
// leaving out what the negotiated revision does not know, which the server
// and client packages of this module do for what they send.
//
// All types marshal with github.com/go-json-experiment/json (JSON v2). Values
// that must survive unchanged, such as tool schemas, tool arguments, structured
// content and _meta values received from a peer, are kept as [jsontext.Value].
// The JSON v2 encoder re-emits such raw values with insignificant whitespace
// removed and string escapes normalized; keys, key order, keywords and number
// spellings are preserved exactly.
//
// Content block unions are Go interfaces ([Content], [ResourceContents]) whose
// implementations write and check their "type" discriminator themselves.
package mcp
