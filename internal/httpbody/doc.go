// Package httpbody reads the body of an HTTP request within a size cap
// and a read time, for the Streamable HTTP server (server/streamhttp) and the
// resource-server middleware that reads the body before it (auth): one
// reader, so that both refuse the same bodies with the same answers.
//
// It imports jsonrpc and mcp (the errors it answers with) and no other
// mcpkit package.
package httpbody
