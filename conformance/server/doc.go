// Command server is mcpkit's fixture for the official MCP conformance
// suite (see main.go). It uses only the public mcpkit API; nothing in the
// SDK knows about the suite.
package main
