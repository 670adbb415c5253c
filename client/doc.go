// Package client is the MCP client: it connects to a server over a
// transport.Conn, negotiates the protocol revision, and offers every
// client→server method with typed parameters and results, iterators over
// paginated lists, handlers for the server's notifications, and handlers
// for the server's requests (elicitation, sampling, roots), each of which
// declares its capability.
//
// Package client imports mcp, jsonrpc and transport. It must not import
// server or any concrete transport.
package client
