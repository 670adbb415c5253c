// Package stdio frames JSON-RPC messages as newline-delimited JSON over a
// reader and a writer, as the MCP stdio transport specifies: one message
// per line, no embedded newlines, UTF-8. New serves a process's own stdin
// and stdout (an MCP server launched by a client); NewConn frames any pair
// of streams and is what transport/command builds on.
//
// It imports only the transport package.
package stdio
