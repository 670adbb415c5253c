// Package transport defines the seam between mcpkit's JSON-RPC layer and
// the carriers that move bytes: the Conn interface, its concurrency
// contract, the outgoing Message, and the errors every carrier shares.
//
// Carriers live in sub-packages: transport/stdio (newline-delimited JSON
// over a reader and a writer, for servers launched by a client),
// transport/command (a client that launches a server process and shuts it
// down in the order the spec gives), and transport/memory (an in-process
// pair for tests) and transport/streamable (the Streamable HTTP client).
// The HTTP server side is streamhttp.NewHandler: it routes each message
// to the stream of the request it belongs to, which needs the session.
//
// Routes and headers travel as data. Every Write gets a Message: the
// bytes, the id of the peer request the message belongs to and whether it
// is that request's response (filled in by jsonrpc.Conn), and the
// per-message headers its sender asked for (jsonrpc.CallOptions), and
// for a 2026-07-28 request what its writer knows of it (Modern: the
// revision and the Mcp-Name value). A carrier never parses a message to
// find what it was given, and never reads it from a context.
//
// This package imports only mcp (pure vocabulary, for its ID type): it
// sits at the bottom of the tree.
package transport
