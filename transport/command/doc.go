// Package command is the client side of the stdio transport: it launches
// an MCP server as a child process, talks newline-delimited JSON over the
// child's stdin and stdout, and shuts the child down in the order the
// spec gives (close stdin, wait, SIGTERM, SIGKILL), each step bounded.
//
// It imports only the transport and transport/stdio packages.
package command
