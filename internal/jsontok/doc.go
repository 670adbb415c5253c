// Package jsontok holds the pieces shared by mcpkit's hand-written JSON
// object decoders (the JSON-RPC envelope, request params): a pooled
// jsontext.Decoder over an in-memory message, member names unescaped only
// when they carry escapes, raw values returned as slices of the message
// itself, and the check that nothing follows the top-level value.
//
// It owns no protocol knowledge and must not import any mcpkit package.
package jsontok
